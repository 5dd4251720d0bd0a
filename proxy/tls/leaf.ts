// Leaf certificates minted on the fly, one per host, signed by bb's CA.
//
// One leaf key (RSA-2048, node:crypto) serves every leaf, as mitmproxy does:
// keygen is the slow part (~100 ms), building and signing a leaf ~1 ms.
// Leaves carry what modern clients check: SAN (DNS, or IP for IP hosts),
// extKeyUsage serverAuth, keyUsage, a random serial, ~1 year of validity from
// two days back, and the CA's key id. The served chain is leaf + CA: Chromium's
// --ignore-certificate-errors-spki-list only matches keys in the chain sent.
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type forge from 'node-forge';
import type { Ca } from './ca.js';
import { daysFrom, ipToBytes, nodeForge, randomSerial, signCertificate } from './x509.js';

/** How many hosts keep a ready SecureContext (least recently used ones are dropped). */
export const DEFAULT_LEAF_CACHE_SIZE = 200;

/** One host's leaf, PEM. */
export interface LeafPem {
  /** The normalized host the leaf names (lower case, no brackets, no trailing dot). */
  host: string;
  /** The leaf certificate alone. */
  certPem: string;
  /** Leaf then CA certificate: what a TLS server should send. */
  chainPem: string;
  /** The leaf private key (shared by all leaves of this factory). */
  keyPem: string;
}

/** Mints and caches leaf certificates. */
export interface LeafFactory {
  /** A TLS server context for `host` (DNS name or IP), made once and cached. */
  contextFor(host: string): Promise<SecureContext>;
  /** The PEM material behind contextFor(host). */
  pemFor(host: string): Promise<LeafPem>;
  /** Counters: leaves minted, and lookups served from the cache. */
  readonly stats: { issued: number; cached: number };
}

/** Options of createLeafFactory. */
export interface LeafFactoryOptions {
  /** Cache capacity in hosts (default 200). */
  cacheSize?: number;
  /** The leaf key to use (default: a fresh RSA-2048 key). */
  leafKey?: KeyObject;
}

interface Leaf {
  pem: LeafPem;
  context: SecureContext;
}

/** Builds a leaf factory for `ca`. Makes the shared leaf key now (about 100 ms). */
export function createLeafFactory(ca: Ca, options: LeafFactoryOptions = {}): LeafFactory {
  const capacity = options.cacheSize ?? DEFAULT_LEAF_CACHE_SIZE;
  const leafKey = options.leafKey ?? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const keyPem = leafKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const publicKey = nodeForge().pki.publicKeyFromPem(createPublicKey(leafKey).export({ type: 'spki', format: 'pem' }) as string);
  // A Map iterates in insertion order: re-inserting on a hit makes the first key the least recently used.
  const cache = new Map<string, Promise<Leaf>>();
  const stats = { issued: 0, cached: 0 };

  function leafFor(rawHost: string): Promise<Leaf> {
    const host = normalizeHost(rawHost);
    const hit = cache.get(host);
    if (hit) {
      stats.cached++;
      cache.delete(host);
      cache.set(host, hit);
      return hit;
    }
    // The promise is cached before any await, so concurrent first requests share one leaf.
    const made = Promise.resolve().then(() => {
      const certPem = buildLeafCertificate(ca, host, publicKey);
      stats.issued++;
      const chainPem = certPem + ca.certPem;
      const pem: LeafPem = { host, certPem, chainPem, keyPem };
      return { pem, context: createSecureContext({ key: keyPem, cert: chainPem }) };
    });
    made.catch(() => {
      if (cache.get(host) === made) cache.delete(host);
    });
    cache.set(host, made);
    while (cache.size > capacity) cache.delete(cache.keys().next().value as string);
    return made;
  }

  return {
    contextFor: async (host) => (await leafFor(host)).context,
    pemFor: async (host) => (await leafFor(host)).pem,
    stats,
  };
}

/** Lower-cases a host and strips IPv6 brackets and a trailing dot; throws on what cannot be a host name. */
export function normalizeHost(raw: string): string {
  let host = raw.trim().toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (isIP(host)) return host;
  // RFC 1123 names, plus '_' which real hosts use; SNI names are ASCII (IDNs arrive as punycode).
  if (host.length === 0 || host.length > 253 || !/^[a-z0-9_*-]+(\.[a-z0-9_*-]+)*$/.test(host)) {
    throw new Error(`cannot make a certificate for host ${JSON.stringify(raw)}`);
  }
  return host;
}

/** Builds and signs one leaf for a normalized `host` with the shared leaf public key. */
export function buildLeafCertificate(ca: Ca, host: string, publicKey: forge.pki.PublicKey, at = new Date()): string {
  const cert = nodeForge().pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = daysFrom(at, -2);
  cert.validity.notAfter = daysFrom(at, 365);
  // CN is limited to 64 characters (RFC 5280 ub-common-name); clients match the SAN anyway.
  cert.setSubject(host.length <= 64 ? [{ name: 'commonName', value: host }, { name: 'organizationName', value: 'bb' }] : [{ name: 'organizationName', value: 'bb' }]);
  cert.setIssuer(ca.cert.subject.attributes);
  const altName = isIP(host) ? { type: 7, value: ipToBytes(host) } : { type: 2, value: host };
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [altName] },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.keyId },
  ]);
  return signCertificate(cert, ca.key);
}
