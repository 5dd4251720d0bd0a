// The public face of bb's TLS pieces: the CA and the leaf factory.
export { loadOrCreateCa, buildCaCertificate, CA_CERT_FILE, CA_KEY_FILE, CA_COMMON_NAME, type Ca } from './ca.js';
export {
  createLeafFactory,
  normalizeHost,
  DEFAULT_LEAF_CACHE_SIZE,
  type LeafFactory,
  type LeafFactoryOptions,
  type LeafPem,
} from './leaf.js';
