// ClientHello bytes for tests: the RFC 8448 §3 literal, and a builder for
// hellos with chosen extensions, wrapped in records split where a test wants.

/**
 * The ClientHello of RFC 8448 §3 ("Simple 1-RTT Handshake", "{client}
 * construct a ClientHello handshake message", 196 octets): TLS 1.3, SNI
 * "server", no ALPN.
 */
export const RFC8448_CLIENT_HELLO = Buffer.from(
  `01 00 00 c0 03 03 cb 34 ec b1 e7 81 63 ba 1c 38 c6 da cb 19 6a 6d ff a2 1a 8d 99 12 ec 18 a2 ef 62 83
   02 4d ec e7 00 00 06 13 01 13 03 13 02 01 00 00 91 00 00 00 0b 00 09 00 00 06 73 65 72 76 65 72 ff 01
   00 01 00 00 0a 00 14 00 12 00 1d 00 17 00 18 00 19 01 00 01 01 01 02 01 03 01 04 00 23 00 00 00 33 00
   26 00 24 00 1d 00 20 99 38 1d e5 60 e4 bd 43 d2 3d 8e 43 5a 7d ba fe b3 c0 6e 51 c1 3c ae 4d 54 13 69
   1e 52 9a af 2c 00 2b 00 03 02 03 04 00 0d 00 20 00 1e 04 03 05 03 06 03 02 03 08 04 08 05 08 06 04 01
   05 01 06 01 02 01 04 02 05 02 06 02 02 02 00 2d 00 02 01 01 00 1c 00 02 40 01`.replace(/\s+/g, ''),
  'hex',
);

const u16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff]);
const u24 = (n: number): Buffer => Buffer.from([n >> 16, (n >> 8) & 0xff, n & 0xff]);
const vec16 = (b: Buffer): Buffer => Buffer.concat([u16(b.length), b]);

/** One extension: type and its data. */
export function extension(type: number, data: Buffer): Buffer {
  return Buffer.concat([u16(type), vec16(data)]);
}

/** The server_name extension naming `hosts` (one entry each, host_name type unless `nameType`). */
export function sniExtension(hosts: string[], nameType = 0): Buffer {
  const list = Buffer.concat(hosts.map((h) => Buffer.concat([Buffer.of(nameType), vec16(Buffer.from(h, 'latin1'))])));
  return extension(0, vec16(list));
}

/** The ALPN extension offering `names`. */
export function alpnExtension(names: string[]): Buffer {
  const list = Buffer.concat(names.map((n) => Buffer.concat([Buffer.of(n.length), Buffer.from(n, 'latin1')])));
  return extension(16, vec16(list));
}

/** Parts of a ClientHello body; defaults make a small valid TLS 1.2-style hello. */
export interface HelloParts {
  version?: number;
  sessionId?: Buffer;
  suites?: Buffer;
  compression?: Buffer;
  /** Extensions in order; undefined = no extensions block at all. */
  extensions?: Buffer[];
}

/** A ClientHello handshake message (type 1, 24-bit length) from parts. */
export function clientHello(parts: HelloParts = {}): Buffer {
  const body = Buffer.concat([
    u16(parts.version ?? 0x0303),
    Buffer.alloc(32, 7),
    Buffer.concat([Buffer.of((parts.sessionId ?? Buffer.alloc(0)).length), parts.sessionId ?? Buffer.alloc(0)]),
    vec16(parts.suites ?? Buffer.from('13011302c02f', 'hex')),
    Buffer.concat([Buffer.of((parts.compression ?? Buffer.of(0)).length), parts.compression ?? Buffer.of(0)]),
    parts.extensions ? vec16(Buffer.concat(parts.extensions)) : Buffer.alloc(0),
  ]);
  return Buffer.concat([Buffer.of(1), u24(body.length), body]);
}

/** Wraps a handshake message in handshake records, split after each offset in `cuts`. */
export function records(message: Buffer, cuts: number[] = [], version = 0x0301): Buffer {
  const edges = [0, ...cuts, message.length];
  const out: Buffer[] = [];
  for (let i = 0; i + 1 < edges.length; i++) {
    const fragment = message.subarray(edges[i], edges[i + 1]);
    out.push(Buffer.concat([Buffer.of(22), u16(version), u16(fragment.length), fragment]));
  }
  return Buffer.concat(out);
}
