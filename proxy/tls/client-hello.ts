// A small strict reader of a TLS ClientHello: the server name (SNI) and the
// ALPN list a client offers, read from the records it sends before bb's
// TLS stack sees them, so bb can ask the upstream the same thing first.
//
// Strict on purpose: bytes that do not form exactly one well-formed
// ClientHello are refused with a reason, never guessed at, and the caller
// then terminates TLS as if it had not looked.
//
// - Records (RFC 8446 §5.1): type 22 (handshake), legacy version 0x0301 to
//   0x0303, length 1 to 2^14. The ClientHello may span several records (and
//   several TCP segments); nothing may follow it inside its last record.
// - ClientHello (RFC 8446 §4.1.2): version, random, session id (≤ 32),
//   cipher suites (even, ≥ 2), compression methods (≥ 1), then extensions
//   (optional before TLS 1.3), each type once (§4.2), filling the message exactly.
// - server_name (RFC 6066 §3): one host_name entry, 1 to 255 visible ASCII bytes.
// - application_layer_protocol_negotiation (RFC 7301 §3.1): a non-empty
//   list of non-empty names, none truncated.

/** What bb reads from a ClientHello. */
export interface ClientHelloInfo {
  /** The host name the client asked for (SNI), when it sent one. */
  servername?: string;
  /** The ALPN protocol names the client offers, in its order (latin1, one char per byte); absent when it sent no ALPN extension. */
  alpn?: string[];
}

/** The outcome of reading the first bytes of a connection as a ClientHello. */
export type ClientHelloOutcome =
  | { state: 'partial' }
  | { state: 'ok'; hello: ClientHelloInfo; /** Bytes of the records that held the ClientHello. */ length: number }
  | { state: 'refused'; reason: string };

/** Largest ClientHello bb reads (a post-quantum key share makes ~1.8 KiB; OpenSSL's own cap is larger, bb needs no more). */
export const MAX_CLIENT_HELLO_BYTES = 16 * 1024;

const RECORD_HEADER = 5;
const MAX_RECORD = 1 << 14;
const HANDSHAKE = 22;
const CLIENT_HELLO = 1;
const EXT_SERVER_NAME = 0;
const EXT_ALPN = 16;

class Refusal extends Error {}

/** Reads `bytes` (the start of a connection) as TLS records holding one ClientHello. */
export function parseClientHello(bytes: Buffer, maxBytes = MAX_CLIENT_HELLO_BYTES): ClientHelloOutcome {
  const fragments: Buffer[] = [];
  let collected = 0;
  let at = 0;
  let messageLength = -1;
  while (true) {
    if (bytes.length < at + RECORD_HEADER) return { state: 'partial' };
    const type = bytes[at]!;
    const version = bytes.readUInt16BE(at + 1);
    const length = bytes.readUInt16BE(at + 3);
    if (type !== HANDSHAKE) return refused(`record type ${type} where a handshake record (22) was due`);
    if (version < 0x0301 || version > 0x0303) return refused(`record version 0x${version.toString(16).padStart(4, '0')} (0x0301 to 0x0303 expected)`);
    if (length === 0 || length > MAX_RECORD) return refused(`record length ${length} (1 to ${MAX_RECORD})`);
    // The header alone says how long the message is: refuse an oversized one before waiting for its bytes.
    if (collected === 0 && length >= 4 && bytes.length >= at + RECORD_HEADER + 4) {
      const declared = bytes.readUIntBE(at + RECORD_HEADER + 1, 3);
      if (bytes[at + RECORD_HEADER] === CLIENT_HELLO && declared + 4 > maxBytes) return refused(`a ClientHello of ${declared} bytes is over bb's ${maxBytes}`);
    }
    if (bytes.length < at + RECORD_HEADER + length) return { state: 'partial' };
    const fragment = bytes.subarray(at + RECORD_HEADER, at + RECORD_HEADER + length);
    at += RECORD_HEADER + length;
    fragments.push(fragment);
    collected += length;
    if (messageLength < 0 && collected >= 4) {
      const head = fragments.length === 1 ? fragment : Buffer.concat(fragments);
      if (head[0] !== CLIENT_HELLO) return refused(`handshake message type ${head[0]} where a ClientHello (1) was due`);
      messageLength = head.readUIntBE(1, 3) + 4;
      if (messageLength > maxBytes) return refused(`a ClientHello of ${messageLength - 4} bytes is over bb's ${maxBytes}`);
    }
    if (messageLength >= 0 && collected >= messageLength) {
      if (collected > messageLength) return refused('bytes follow the ClientHello inside its record');
      const message = fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments);
      try {
        return { state: 'ok', hello: readClientHelloBody(message.subarray(4)), length: at };
      } catch (err) {
        if (err instanceof Refusal) return refused(err.message);
        throw err;
      }
    }
  }
}

function refused(reason: string): ClientHelloOutcome {
  return { state: 'refused', reason };
}

/** A bounds-checked reader over one message; every overrun is a refusal. */
class Reader {
  private at = 0;
  constructor(private readonly bytes: Buffer, private readonly what: string) {}
  get left(): number {
    return this.bytes.length - this.at;
  }
  u8(): number {
    return this.take(1)[0]!;
  }
  u16(): number {
    return this.take(2).readUInt16BE(0);
  }
  take(n: number): Buffer {
    if (n > this.left) throw new Refusal(`${this.what} is cut short`);
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  /** A vector with a 1- or 2-byte length prefix, its length within [min, max]. */
  vector(prefix: 1 | 2, min: number, max: number, name: string): Buffer {
    const n = prefix === 1 ? this.u8() : this.u16();
    if (n < min || n > max) throw new Refusal(`${name} of ${n} bytes (${min} to ${max})`);
    return this.take(n);
  }
  end(): void {
    if (this.left !== 0) throw new Refusal(`${this.left} stray bytes after ${this.what}`);
  }
}

/** The ClientHello after its 4-byte handshake header. */
function readClientHelloBody(body: Buffer): ClientHelloInfo {
  const r = new Reader(body, 'the ClientHello');
  const version = r.u16();
  if (version >> 8 !== 3) throw new Refusal(`ClientHello version 0x${version.toString(16)}`);
  r.take(32); // random
  r.vector(1, 0, 32, 'session id');
  const suites = r.vector(2, 2, 0xfffe, 'cipher suites');
  if (suites.length % 2 !== 0) throw new Refusal('cipher suites of an odd length');
  r.vector(1, 1, 0xff, 'compression methods');
  const info: ClientHelloInfo = {};
  // Before TLS 1.3 a ClientHello may end here, with no extensions at all.
  if (r.left === 0) return info;
  const extensions = new Reader(r.vector(2, 0, 0xffff, 'extensions'), 'the extensions');
  r.end();
  const seen = new Set<number>();
  while (extensions.left > 0) {
    const type = extensions.u16();
    const data = extensions.vector(2, 0, 0xffff, `extension ${type}`);
    if (seen.has(type)) throw new Refusal(`extension ${type} appears twice`);
    seen.add(type);
    if (type === EXT_SERVER_NAME) info.servername = readServerName(data);
    else if (type === EXT_ALPN) info.alpn = readAlpn(data);
  }
  return info;
}

/** RFC 6066 §3: ServerNameList holding one host_name. */
function readServerName(data: Buffer): string {
  const ext = new Reader(data, 'server_name');
  const list = new Reader(ext.vector(2, 1, 0xffff, 'server name list'), 'the server name list');
  ext.end();
  const nameType = list.u8();
  if (nameType !== 0) throw new Refusal(`server name type ${nameType} (only host_name, 0)`);
  const name = list.vector(2, 1, 255, 'host name');
  if (list.left !== 0) throw new Refusal('more than one server name');
  for (const byte of name) if (byte < 0x21 || byte > 0x7e) throw new Refusal('a host name with a byte that is not visible ASCII');
  return name.toString('latin1');
}

/** RFC 7301 §3.1: ProtocolNameList, non-empty, of non-empty names. */
function readAlpn(data: Buffer): string[] {
  const ext = new Reader(data, 'application_layer_protocol_negotiation');
  const list = new Reader(ext.vector(2, 2, 0xffff, 'protocol name list'), 'the protocol name list');
  ext.end();
  const names: string[] = [];
  while (list.left > 0) names.push(list.vector(1, 1, 0xff, 'protocol name').toString('latin1'));
  return names;
}
