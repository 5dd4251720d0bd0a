// An incremental, validating WebSocket frame parser for one direction of a
// tapped connection (RFC 6455 section 5).
//
// It reads a copy-free view of the bytes the proxy pipes: frame headers are
// read straight from the socket's chunks (collected into a small buffer only
// when a header is split), and each frame's payload is handed out as
// - a subarray of the chunk when the frame is unmasked and whole in it (socket
//   chunks are fresh buffers nobody writes to again, so the view stays valid);
// - a new buffer otherwise: masked payloads are unmasked into it (the one copy
//   we need: the original bytes are still on their way to the other side) and
//   payloads split across chunks are gathered into it.
// Fragments are assembled into whole messages, but never more than `keep`
// bytes of one: past that its bytes are only counted (the unit says `size`),
// so a message of any length costs at most `keep` bytes of memory. A
// compressed message (permessage-deflate) is not gathered at all: each piece
// of its payload goes to `onCompressed` as it arrives, for the caller to
// inflate as a stream (its unit then carries no data).
//
// It reports one `ParsedUnit` per message or control frame, in wire order of
// completion: a data message when its FIN frame has fully arrived, a control
// frame when it has (control frames may sit between the fragments of a data
// message, section 5.4). It checks everything ws's Receiver checks, with the
// same error codes and messages, except UTF-8 (the tap records bytes as they
// are; the peers judge them). After a close frame, or an error, it reads no
// further (section 5.5.1: nothing follows a close).
//
// The bytes of a message past `keep` are not held but hashed as they pass
// (SHA-256 of the unmasked payload, the unit's `restSha256`), so a capture can
// still tell two messages apart past its body cap; a message under `keep`
// costs no hashing.
import { createHash, type Hash } from 'node:crypto';

/** Fragments of one message held as views before they are gathered into one copy. */
const FRAGMENTS_GATHERED = 1024;

/** One whole message or control frame. */
export interface ParsedUnit {
  /** 1 text, 2 binary (the first frame's opcode), 8 close, 9 ping, 10 pong. */
  opcode: number;
  /** When the first byte of its first frame arrived (epoch ms). */
  time: number;
  /** How many frames carried it. */
  frames: number;
  /** RSV1 on its first frame: permessage-deflate compressed it. */
  compressed: boolean;
  /** The unmasked payload of all its frames, at most `keep` bytes of it; empty when `compressed` (the bytes went to onCompressed). */
  data: Buffer;
  /** Payload bytes of all its frames, when `data` holds only the first `keep` of them (absent when `data` is whole). */
  size?: number;
  /** With `size`: the SHA-256 digest of its unmasked payload bytes past the first `keep`. */
  restSha256?: Buffer;
}

/** What one direction's parser enforces. */
export interface FrameParserOptions {
  /** Frames must be masked (client → server) or must not be (server → client), section 5.1. */
  masked: boolean;
  /** permessage-deflate was negotiated: RSV1 may mark a message's first frame (RFC 7692 section 6). */
  deflate: boolean;
  /** Payload bytes of a message handed out in its unit (Infinity = all); the rest is counted, not kept. */
  keep: number;
}

/** A frame the parser refuses; `code` is ws's (WS_ERR_...). */
export class FrameError extends Error {
  /** Stable code, the same as ws's Receiver uses. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Where the parser is within a frame. */
const enum State {
  /** Waiting for the two fixed header bytes. */
  Info,
  /** Waiting for the 16-bit extended length. */
  Length16,
  /** Waiting for the 64-bit extended length. */
  Length64,
  /** Waiting for the 4 masking-key bytes. */
  Mask,
  /** Reading payload bytes. */
  Payload,
}

const EMPTY = Buffer.alloc(0);

/** Parses one direction; feed it every chunk, in order. push() throws a FrameError on a bad frame. */
export class FrameParser {
  private readonly opts: FrameParserOptions;
  private readonly onUnit: (unit: ParsedUnit) => void;
  private state = State.Info;
  // Header bytes of a header split across chunks (at most 8).
  private readonly header = Buffer.alloc(8);
  private headerHave = 0;
  // Where take() made the wanted header bytes readable: the chunk itself or `header`.
  private src: Buffer = this.header;
  private srcAt = 0;
  // The frame being read.
  private frameTime = 0;
  private fin = false;
  private opcode = 0;
  private rsv1 = false;
  private masked = false;
  private length = 0;
  // The masking key as one 32-bit word in the machine's byte order (see unmask()).
  private mask = 0;
  // Payload bytes of the frame read so far, and how many of them are kept
  // (the frame's first `frameKeep`: all of a control frame, what fits under
  // `keep` of a data message, none of a compressed one).
  private payloadHave = 0;
  private frameKeep = 0;
  // The kept bytes: a view (or unmasked copy) when they were whole in one
  // chunk, else gathered (still masked) into `payload` across chunks.
  private direct: Buffer | undefined;
  private payload: Buffer | undefined;
  // The running hash of the data message's bytes past `keep` (made at the first such byte).
  private rest: Hash | undefined;
  // The data message being assembled (opcode 0 = none in progress).
  private messageOpcode = 0;
  private messageTime = 0;
  private messageFrames = 0;
  private messageCompressed = false;
  // Payload bytes of its frames so far, and how many of them are kept.
  private messageBytes = 0;
  private messageKept = 0;
  private fragments: Buffer[] = [];
  /** How many leading `fragments` are gathered copies (FRAGMENTS_GATHERED frames each); the rest are the frames' own views. */
  private gathered = 0;
  private readonly onCompressed: (piece: Buffer) => void;
  /** True after a close frame or an error: nothing more is read. */
  ended = false;

  /** `onCompressed` gets each piece of a compressed message's payload, unmasked, in order, as it arrives. */
  constructor(opts: FrameParserOptions, onUnit: (unit: ParsedUnit) => void, onCompressed: (piece: Buffer) => void = () => {}) {
    this.opts = opts;
    this.onUnit = onUnit;
    this.onCompressed = onCompressed;
  }

  /** Parses one chunk that arrived at `time`, reporting each unit it completes. */
  push(chunk: Buffer, time: number): void {
    const end = chunk.length;
    let at = 0;
    try {
      while (at < end && !this.ended) {
        switch (this.state) {
          case State.Info:
            if (this.headerHave === 0) this.frameTime = time;
            at = this.take(chunk, at, 2);
            if (this.headerHave === 0) this.info(this.src[this.srcAt]!, this.src[this.srcAt + 1]!);
            break;
          case State.Length16:
            at = this.take(chunk, at, 2);
            if (this.headerHave === 0) this.haveLength(this.src.readUInt16BE(this.srcAt));
            break;
          case State.Length64:
            at = this.take(chunk, at, 8);
            if (this.headerHave === 0) {
              const high = this.src.readUInt32BE(this.srcAt);
              // Past 2^53 - 1 a JavaScript number cannot hold the length.
              if (high > 2 ** 21 - 1) {
                throw this.error('WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH', 'Unsupported WebSocket frame: payload length > 2^53 - 1');
              }
              this.haveLength(high * 2 ** 32 + this.src.readUInt32BE(this.srcAt + 4));
            }
            break;
          case State.Mask:
            at = this.take(chunk, at, 4);
            if (this.headerHave === 0) {
              this.mask = maskWord(this.src, this.srcAt);
              this.startPayload();
            }
            break;
          case State.Payload:
            at = this.readPayload(chunk, at);
            break;
        }
      }
    } finally {
      // Do not pin the chunk until the next one arrives.
      this.src = this.header;
    }
  }

  // Makes `n` header bytes readable at src[srcAt]: in place when the chunk
  // holds them all, else gathered into `header` across calls. headerHave is 0
  // once they are all there. Returns the new chunk offset.
  private take(chunk: Buffer, at: number, n: number): number {
    if (this.headerHave === 0 && chunk.length - at >= n) {
      this.src = chunk;
      this.srcAt = at;
      return at + n;
    }
    const k = Math.min(n - this.headerHave, chunk.length - at);
    chunk.copy(this.header, this.headerHave, at, at + k);
    this.headerHave += k;
    if (this.headerHave === n) {
      this.headerHave = 0;
      this.src = this.header;
      this.srcAt = 0;
    }
    return at + k;
  }

  // The two fixed header bytes: the checks ws's Receiver makes, in its order.
  private info(b0: number, b1: number): void {
    if ((b0 & 0x30) !== 0) throw this.error('WS_ERR_UNEXPECTED_RSV_2_3', 'Invalid WebSocket frame: RSV2 and RSV3 must be clear');
    const rsv1 = (b0 & 0x40) !== 0;
    if (rsv1 && !this.opts.deflate) throw this.error('WS_ERR_UNEXPECTED_RSV_1', 'Invalid WebSocket frame: RSV1 must be clear');
    const fin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    const length = b1 & 0x7f;
    if (opcode === 0x00) {
      if (rsv1) throw this.error('WS_ERR_UNEXPECTED_RSV_1', 'Invalid WebSocket frame: RSV1 must be clear');
      if (this.messageOpcode === 0) throw this.error('WS_ERR_INVALID_OPCODE', 'Invalid WebSocket frame: invalid opcode 0');
    } else if (opcode === 0x01 || opcode === 0x02) {
      if (this.messageOpcode !== 0) throw this.error('WS_ERR_INVALID_OPCODE', `Invalid WebSocket frame: invalid opcode ${opcode}`);
    } else if (opcode >= 0x08 && opcode <= 0x0a) {
      if (!fin) throw this.error('WS_ERR_EXPECTED_FIN', 'Invalid WebSocket frame: FIN must be set');
      if (rsv1) throw this.error('WS_ERR_UNEXPECTED_RSV_1', 'Invalid WebSocket frame: RSV1 must be clear');
      // Control payloads fit in the 7-bit length (section 5.5); a close payload has a 2-byte code or nothing.
      if (length > 0x7d || (opcode === 0x08 && length === 1)) {
        throw this.error('WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH', `Invalid WebSocket frame: invalid payload length ${length}`);
      }
    } else {
      throw this.error('WS_ERR_INVALID_OPCODE', `Invalid WebSocket frame: invalid opcode ${opcode}`);
    }
    const masked = (b1 & 0x80) !== 0;
    if (this.opts.masked && !masked) throw this.error('WS_ERR_EXPECTED_MASK', 'Invalid WebSocket frame: MASK must be set');
    if (!this.opts.masked && masked) throw this.error('WS_ERR_UNEXPECTED_MASK', 'Invalid WebSocket frame: MASK must be clear');
    this.fin = fin;
    this.opcode = opcode;
    this.rsv1 = rsv1;
    this.masked = masked;
    if (length === 126) this.state = State.Length16;
    else if (length === 127) this.state = State.Length64;
    else this.haveLength(length);
  }

  private haveLength(length: number): void {
    this.length = length;
    if (this.opcode >= 0x08) this.frameKeep = length;
    else if (this.opcode === 0 ? this.messageCompressed : this.rsv1) this.frameKeep = 0;
    else this.frameKeep = Math.min(length, Math.max(0, this.opts.keep - this.messageKept));
    if (this.opcode < 0x08) this.messageBytes += length;
    if (this.masked) this.state = State.Mask;
    else this.startPayload();
  }

  private startPayload(): void {
    if (this.length === 0) this.frameDone(EMPTY);
    else this.state = State.Payload;
  }

  // Payload bytes from `at`; returns the new chunk offset.
  private readPayload(chunk: Buffer, at: number): number {
    const length = this.length;
    const have = this.payloadHave;
    const k = Math.min(length - have, chunk.length - at);
    if (this.frameKeep === 0 && this.opcode < 0x08 && (this.opcode === 0 ? this.messageCompressed : this.rsv1)) {
      // A compressed message: every piece goes on to be inflated, none is kept here.
      this.onCompressed(this.masked ? unmask(chunk, at, k, rotateMask(this.mask, have)) : chunk.subarray(at, at + k));
    } else {
      if (have < this.frameKeep) {
        const want = Math.min(this.frameKeep - have, k);
        if (have === 0 && want === this.frameKeep) {
          // The usual case: every kept byte is in this chunk.
          this.direct = this.masked ? unmask(chunk, at, want, this.mask) : chunk.subarray(at, at + want);
        } else {
          this.payload ??= Buffer.allocUnsafe(this.frameKeep);
          chunk.copy(this.payload, have, at, at + want);
        }
      }
      if (have + k > this.frameKeep) this.hashRest(chunk, at, have, k);
    }
    this.payloadHave = have + k;
    if (this.payloadHave === length) {
      const data = this.direct ?? this.payload ?? EMPTY;
      if (this.payload !== undefined && this.masked) unmaskInPlace(data, this.mask);
      this.direct = undefined;
      this.payload = undefined;
      this.payloadHave = 0;
      this.frameDone(data);
    }
    return at + k;
  }

  // The frame's bytes [have, have + k) sit at chunk[at…]: hashes those past frameKeep, unmasked.
  private hashRest(chunk: Buffer, at: number, have: number, k: number): void {
    const from = Math.max(have, this.frameKeep);
    const start = at + from - have;
    const length = have + k - from;
    const bytes = this.masked ? unmask(chunk, start, length, rotateMask(this.mask, from)) : chunk.subarray(start, start + length);
    (this.rest ??= createHash('sha256')).update(bytes);
  }

  // The digest of the message's bytes past `keep`, if any; the next message starts a fresh hash.
  private takeRest(unit: ParsedUnit): void {
    if (this.rest === undefined) return;
    unit.restSha256 = this.rest.digest();
    this.rest = undefined;
  }

  // A frame has fully arrived: report the unit it completes, if any.
  private frameDone(data: Buffer): void {
    this.state = State.Info;
    const opcode = this.opcode;
    if (opcode >= 0x08) {
      if (opcode === 0x08) {
        if (data.length >= 2) {
          const code = data.readUInt16BE(0);
          if (!isValidCloseCode(code)) throw this.error('WS_ERR_INVALID_CLOSE_CODE', `Invalid WebSocket frame: invalid status code ${code}`);
        }
        this.ended = true;
      }
      this.onUnit({ opcode, time: this.frameTime, frames: 1, compressed: false, data });
      return;
    }
    if (opcode !== 0 && this.fin) {
      // The usual message: one frame, nothing to assemble.
      const unit: ParsedUnit = { opcode, time: this.frameTime, frames: 1, compressed: this.rsv1, data };
      if (!this.rsv1 && this.length > data.length) unit.size = this.length;
      this.takeRest(unit);
      this.messageBytes = 0;
      this.onUnit(unit);
      return;
    }
    if (opcode !== 0) {
      this.messageOpcode = opcode;
      this.messageTime = this.frameTime;
      this.messageCompressed = this.rsv1;
    }
    this.messageFrames++;
    this.messageKept += data.length;
    if (data.length > 0) {
      this.fragments.push(data);
      // A peer's message in thousands of tiny frames: a frame's view costs ~100 bytes and holds its read's whole
      // buffer, so each thousand are gathered into one copy (10M one-byte frames held 10M views).
      if (this.fragments.length - this.gathered >= FRAGMENTS_GATHERED) {
        this.fragments.push(Buffer.concat(this.fragments.splice(this.gathered)));
        this.gathered = this.fragments.length;
      }
    }
    if (!this.fin) return;
    const fragments = this.fragments;
    const unit: ParsedUnit = {
      opcode: this.messageOpcode,
      time: this.messageTime,
      frames: this.messageFrames,
      compressed: this.messageCompressed,
      data: fragments.length === 1 ? fragments[0]! : fragments.length === 0 ? EMPTY : Buffer.concat(fragments),
    };
    if (!this.messageCompressed && this.messageBytes > this.messageKept) unit.size = this.messageBytes;
    this.takeRest(unit);
    this.messageOpcode = 0;
    this.messageFrames = 0;
    this.messageBytes = 0;
    this.messageKept = 0;
    this.messageCompressed = false;
    this.fragments = fragments.length === 0 ? fragments : [];
    this.gathered = 0;
    this.onUnit(unit);
  }

  private error(code: string, message: string): FrameError {
    this.ended = true;
    this.payload = undefined;
    this.direct = undefined;
    this.rest = undefined;
    this.fragments = [];
    this.gathered = 0;
    return new FrameError(code, message);
  }
}

/** Close codes a peer may send (RFC 6455 section 7.4; ws's isValidStatusCode). */
function isValidCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

// Section 5.3: byte i of the payload is XORed with byte i mod 4 of the key.
//
// The key is kept as one 32-bit word in the machine's byte order: the bytes
// are written to (and the word read from) a 4-byte Int32Array's own memory,
// so word and payload views agree on byte order everywhere. Small payloads
// (the usual chat-sized message) are unmasked byte by byte: making an
// Int32Array view costs more than it saves below a few hundred bytes.
const keyBytes = new Uint8Array(4);
const keyWord = new Int32Array(keyBytes.buffer);
const WORDWISE_FROM = 512;

function maskWord(src: Buffer, at: number): number {
  keyBytes[0] = src[at]!;
  keyBytes[1] = src[at + 1]!;
  keyBytes[2] = src[at + 2]!;
  keyBytes[3] = src[at + 3]!;
  return keyWord[0]!;
}

// The unmasked payload in a new buffer (the bytes in `src` are still on their way to the other side).
/** The key word for a payload piece that starts `offset` bytes into its frame (the key's byte offset mod 4 goes first). */
function rotateMask(mask: number, offset: number): number {
  const shift = offset & 3;
  if (shift === 0) return mask;
  keyWord[0] = mask;
  const b = [keyBytes[0]!, keyBytes[1]!, keyBytes[2]!, keyBytes[3]!];
  for (let i = 0; i < 4; i++) keyBytes[i] = b[(i + shift) & 3]!;
  return keyWord[0]!;
}

function unmask(src: Buffer, at: number, length: number, mask: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  if (length >= WORDWISE_FROM) {
    src.copy(out, 0, at, at + length);
    unmaskInPlace(out, mask);
    return out;
  }
  keyWord[0] = mask;
  const m0 = keyBytes[0]!, m1 = keyBytes[1]!, m2 = keyBytes[2]!, m3 = keyBytes[3]!;
  let i = 0;
  for (; i + 3 < length; i += 4) {
    out[i] = src[at + i]! ^ m0;
    out[i + 1] = src[at + i + 1]! ^ m1;
    out[i + 2] = src[at + i + 2]! ^ m2;
    out[i + 3] = src[at + i + 3]! ^ m3;
  }
  for (; i < length; i++) out[i] = src[at + i]! ^ keyBytes[i & 3]!;
  return out;
}

function unmaskInPlace(buf: Buffer, mask: number): void {
  keyWord[0] = mask;
  let i = 0;
  // allocUnsafe's pool slices start on 8-byte boundaries and larger buffers at 0, so the view is aligned.
  if (buf.length >= WORDWISE_FROM && (buf.byteOffset & 3) === 0) {
    const words = new Int32Array(buf.buffer, buf.byteOffset, buf.length >>> 2);
    for (let w = 0; w < words.length; w++) words[w] ^= mask;
    i = words.length * 4;
  }
  for (; i < buf.length; i++) buf[i] = buf[i]! ^ keyBytes[i & 3]!;
}
