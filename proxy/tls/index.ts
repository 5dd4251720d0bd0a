// The public face of bb's TLS pieces: the CA, the leaf factory, the ClientHello reader and TLS termination with ALPN mirrored.
export { loadOrCreateCa, buildCaCertificate, CA_CERT_FILE, CA_KEY_FILE, CA_COMMON_NAME, type Ca } from './ca.js';
export {
  createLeafFactory,
  normalizeHost,
  DEFAULT_LEAF_CACHE_SIZE,
  type LeafFactory,
  type LeafFactoryOptions,
  type LeafPem,
} from './leaf.js';
export { parseClientHello, MAX_CLIENT_HELLO_BYTES, type ClientHelloInfo, type ClientHelloOutcome } from './client-hello.js';
export { terminateMirrored, readClientHello, NO_APPLICATION_PROTOCOL, type MirrorOptions, type TerminatedTls } from './alpn-mirror.js';
