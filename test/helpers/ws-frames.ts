// WebSocket bytes for raw-socket tests (RFC 6455 §5): the one frame builder,
// for valid and invalid frames (masked or not, fragmented, reserved opcodes,
// RSV bits, lying lengths, bad deflate data), permessage-deflate payloads
// (one message alone, or a sender's stream keeping its context), the upgrade
// handshake, and a small frame parser to read what a peer received.
import { createHash, randomBytes } from 'node:crypto';
import zlib from 'node:zlib';

/** Opcodes by name (RFC 6455 §5.2); 3-7 and 11-15 are reserved. */
export const OP = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/** What a frame is made of; every field can be set to something invalid on purpose. */
export interface FrameSpec {
  /** 0-15; default 1 (text). */
  opcode?: number;
  /** The payload (already compressed when rsv1 means deflate). */
  payload?: string | Buffer;
  /** FIN bit; default true. */
  fin?: boolean;
  /** RSV1 (permessage-deflate's "compressed" bit). */
  rsv1?: boolean;
  rsv2?: boolean;
  rsv3?: boolean;
  /** true: mask with a random key (client → server); a Buffer: mask with that 4-byte key; default false. */
  mask?: boolean | Buffer;
  /** Announce this payload length instead of the real one (an oversized or lying frame). */
  lengthOverride?: number;
}

/** Builds one frame exactly as specified. */
export function wsFrame(spec: FrameSpec = {}): Buffer {
  const payload = Buffer.isBuffer(spec.payload) ? spec.payload : Buffer.from(spec.payload ?? '');
  const opcode = spec.opcode ?? OP.text;
  const len = spec.lengthOverride ?? payload.length;
  let b0 = opcode & 0x0f;
  if (spec.fin ?? true) b0 |= 0x80;
  if (spec.rsv1) b0 |= 0x40;
  if (spec.rsv2) b0 |= 0x20;
  if (spec.rsv3) b0 |= 0x10;
  const key = spec.mask === true ? randomBytes(4) : Buffer.isBuffer(spec.mask) ? spec.mask : undefined;
  const maskBit = key ? 0x80 : 0;
  let head: Buffer;
  if (len < 126) head = Buffer.from([b0, maskBit | len]);
  else if (len < 65536) {
    head = Buffer.alloc(4);
    head[0] = b0;
    head[1] = maskBit | 126;
    head.writeUInt16BE(len, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = b0;
    head[1] = maskBit | 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  if (!key) return Buffer.concat([head, payload]);
  const masked = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) masked[i] = payload[i]! ^ key[i & 3]!;
  return Buffer.concat([head, key, masked]);
}

/** A message split into `parts` frames (first carries the opcode, the rest are continuations). */
export function wsFragments(opcode: number, payload: string | Buffer, parts: number, mask: boolean): Buffer[] {
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const size = Math.ceil(bytes.length / parts);
  const out: Buffer[] = [];
  for (let i = 0; i < parts; i++) {
    out.push(wsFrame({
      opcode: i === 0 ? opcode : OP.continuation,
      payload: bytes.subarray(i * size, (i + 1) * size),
      fin: i === parts - 1,
      mask,
    }));
  }
  return out;
}

/** A close frame with a code and reason. */
export function wsClose(code: number, reason = '', mask = false): Buffer {
  const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2);
  return wsFrame({ opcode: OP.close, payload, mask });
}

/** A fixed mask key for client frames, so a test's bytes are the same on every run. */
export const MASK = Buffer.from('37fa213d', 'hex');

/** permessage-deflate's payload for a message (RFC 7692 §7.2.1: the trailing 00 00 ff ff removed). */
export function deflatePayload(data: string | Buffer): Buffer {
  const out = zlib.deflateRawSync(Buffer.isBuffer(data) ? data : Buffer.from(data), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  return out.subarray(0, out.length - 4);
}

/** A permessage-deflate compressor for one sender, with its own window and context choice. */
export class Compressor {
  private readonly deflate: zlib.DeflateRaw;
  private out: Buffer[] = [];
  constructor(
    windowBits: number,
    private readonly noContextTakeover: boolean,
  ) {
    this.deflate = zlib.createDeflateRaw({ windowBits });
    this.deflate.on('data', (c: Buffer) => this.out.push(c));
  }
  /** Compresses one whole message (RFC 7692 section 7.2.1: sync flush, trailer removed). */
  async message(data: Buffer | string): Promise<Buffer> {
    this.deflate.write(Buffer.from(data));
    await new Promise<void>((resolve) => this.deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve()));
    const all = Buffer.concat(this.out);
    this.out = [];
    if (this.noContextTakeover) this.deflate.reset();
    return all.subarray(0, all.length - 4);
  }
  close(): void {
    this.deflate.close();
  }
}

/** A fresh Sec-WebSocket-Key. */
export function wsKey(): string {
  return randomBytes(16).toString('base64');
}

/** The Sec-WebSocket-Accept for a key (RFC 6455 §4.2.2). */
export function wsAccept(key: string): string {
  return createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
}

/** The client's upgrade request head. */
export function upgradeRequest(path: string, host: string, key: string, extensions?: string): string {
  return (
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n` +
    (extensions ? `Sec-WebSocket-Extensions: ${extensions}\r\n` : '') +
    '\r\n'
  );
}

/** The server's 101 head for a key. */
export function upgradeResponse(key: string, extensions?: string): string {
  return (
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Accept: ${wsAccept(key)}\r\n` +
    (extensions ? `Sec-WebSocket-Extensions: ${extensions}\r\n` : '') +
    '\r\n'
  );
}

/** A parsed frame. */
export interface ParsedFrame {
  fin: boolean;
  rsv: number;
  opcode: number;
  masked: boolean;
  /** Unmasked payload. */
  payload: Buffer;
}

/** Parses whole frames from `bytes` (after any HTTP head); returns them and the bytes left over. */
export function parseFrames(bytes: Buffer): { frames: ParsedFrame[]; rest: Buffer } {
  const frames: ParsedFrame[] = [];
  let at = 0;
  for (;;) {
    if (bytes.length - at < 2) break;
    const b0 = bytes[at]!;
    const b1 = bytes[at + 1]!;
    let len = b1 & 0x7f;
    let off = at + 2;
    if (len === 126) {
      if (bytes.length < off + 2) break;
      len = bytes.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      if (bytes.length < off + 8) break;
      len = Number(bytes.readBigUInt64BE(off));
      off += 8;
    }
    const masked = (b1 & 0x80) !== 0;
    const key = masked ? bytes.subarray(off, off + 4) : undefined;
    if (masked) off += 4;
    if (bytes.length < off + len) break;
    const payload = Buffer.from(bytes.subarray(off, off + len));
    if (key) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ key[i & 3]!;
    frames.push({ fin: (b0 & 0x80) !== 0, rsv: (b0 >> 4) & 7, opcode: b0 & 0x0f, masked, payload });
    at = off + len;
  }
  return { frames, rest: bytes.subarray(at) };
}

/** The bytes after the first HTTP head (the frames that followed a 101). */
export function afterHead(bytes: Buffer): Buffer {
  const end = bytes.indexOf('\r\n\r\n');
  return end < 0 ? Buffer.alloc(0) : bytes.subarray(end + 4);
}
