// The public face of bb's TLS pieces: the CA, the leaf factory and TLS termination with ALPN mirrored.
export { loadOrCreateCa, type Ca } from './ca.js';
export { createLeafFactory, type LeafFactory } from './leaf.js';
export { terminateMirrored } from './alpn-mirror.js';
