// X.509 building blocks shared by the CA and the leaf factory.
//
// node-forge builds the certificate structure (TBSCertificate); node:crypto
// makes keys and signs. forge's pure-JS RSA is slow: keygen takes seconds and
// signing ~30 ms, while node:crypto signs the same bytes in ~0.4 ms.
import { randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type forge from 'node-forge';
import { lazyModule } from '../../core/index.js';

// ~16 ms of a start that needs no TLS (2026-12-05, load ~5, five runs 15.8-16.8 ms):
//   node -e 'const t=process.hrtime.bigint();require("node-forge");console.log(Number(process.hrtime.bigint()-t)/1e6)'
/** node-forge, loaded on first use: a run that intercepts no TLS never loads it. */
export const nodeForge = lazyModule<typeof forge>('node-forge', import.meta.url);

/** A random positive serial number as forge wants it (hex, 16 bytes, high bit clear, no leading zero byte). */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  // RFC 5280 4.1.2.2: positive, at most 20 octets; DER forbids a leading 0x00.
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString('hex');
}

/** A Date `days` days away from `from` (negative = in the past). */
export function daysFrom(from: Date, days: number): Date {
  return new Date(from.getTime() + days * 24 * 60 * 60 * 1000);
}

/**
 * Signs `cert` with an RSA key held by node:crypto (PKCS#1 v1.5, SHA-256) and
 * returns the certificate as PEM. The TBS bytes come from forge, so what is
 * signed is exactly what forge will serialize.
 */
export function signCertificate(cert: forge.pki.Certificate, key: KeyObject): string {
  const { pki, asn1 } = nodeForge();
  // @types/node-forge omits getTBSCertificate, which forge's own cert.sign uses.
  const getTBSCertificate = (pki as unknown as { getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate;
  const sha256WithRSA = pki.oids['sha256WithRSAEncryption']!;
  cert.signatureOid = sha256WithRSA;
  cert.siginfo.algorithmOid = sha256WithRSA;
  const tbs = getTBSCertificate(cert);
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  // crypto.sign with an RSA key and 'sha256' builds the DigestInfo and pads per PKCS#1 v1.5.
  const signature = sign('sha256', tbsDer, key);
  // forge's certificateToAsn1 reuses a cached tbsCertificate, so the signature matches the bytes.
  (cert as forge.pki.Certificate & { tbsCertificate: forge.asn1.Asn1 }).tbsCertificate = tbs;
  cert.signature = signature.toString('binary');
  return pki.certificateToPem(cert);
}

/** The bytes of an IPv4 or IPv6 address in network order (IPv4-mapped IPv6 included), as a binary string. */
export function ipToBytes(ip: string): string {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number)).toString('binary');
  if (!isIPv6(ip)) throw new Error(`not an IP address: ${ip}`);
  let text = ip.split('%')[0]!;
  // An IPv4 tail ("::ffff:1.2.3.4") becomes two hex groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : new Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups];
  const out = Buffer.alloc(16);
  groups.forEach((group, i) => out.writeUInt16BE(parseInt(group, 16), i * 2));
  return out.toString('binary');
}

/** The subjectKeyIdentifier of a forge certificate (SHA-1 of its public key), as a binary string. */
export function subjectKeyId(cert: forge.pki.Certificate): string {
  return cert.generateSubjectKeyIdentifier().getBytes();
}
