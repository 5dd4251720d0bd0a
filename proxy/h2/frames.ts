// An incremental h2 frame parser for one direction of a tapped connection
// (RFC 9113 sections 3.4, 4 and 6).
//
// It reads the bytes the proxy pipes and never changes or keeps them beyond
// what a frame needs: a DATA frame's payload is handed out as subarrays of
// the socket's chunks as they arrive (socket chunks are fresh buffers nobody
// writes to again, so the views stay valid), padding left out; other frames
// are gathered (a subarray when whole in one chunk, else a copy: they are
// small and bounded by SETTINGS_MAX_FRAME_SIZE). A header block is reported
// once, whole, when its END_HEADERS frame has arrived, as one buffer made of
// the HEADERS or PUSH_PROMISE fragment and its CONTINUATIONs.
//
// Errors are values: the first connection error (RFC 9113 section 5.4.1)
// is returned by push() with the error code's name, so the caller can close
// the connection with GOAWAY carrying it; after one the parser reads no
// further. Stream errors (section 5.4.2) are reported as STREAM_ERROR facts
// and parsing goes on: the peer answers them with RST_STREAM.
import { CLIENT_PREFACE, DEFAULT_MAX_FRAME_SIZE, errorName, type H2ConnectionError, type H2ErrorName, type H2Frame, type Priority } from './frame-types.js';
import { FLAG, NAMES, TYPE, checkFrameHeader, readSettings } from './frame-rules.js';

export * from './frame-types.js';

/** What one direction's parser enforces. */
export interface H2FrameParserOptions {
  /** These bytes come from the client: they start with the preface, and PUSH_PROMISE is forbidden (section 8.4). */
  fromClient: boolean;
  /** SETTINGS_MAX_FRAME_SIZE of the receiving side; default 16384. Changed later by setMaxFrameSize(). */
  maxFrameSize?: number;
  /** Largest header block, in payload bytes of its frames (CONTINUATION flood guard); default 256 KiB. */
  maxHeaderBlock?: number;
  /** Most CONTINUATION frames in one header block (empty ones grow nothing); default 1024. */
  maxContinuations?: number;
}

/** The payload of a frame with none (zero-length frames are frequent: SETTINGS acks, empty DATA with END_STREAM). */
const EMPTY = Buffer.alloc(0);

/** Where the parser is. */
const enum State {
  /** Matching the client preface. */
  Preface,
  /** Waiting for the 9-byte frame header. */
  Header,
  /** DATA: waiting for the pad length byte. */
  PadLength,
  /** DATA: handing out payload bytes. */
  Data,
  /** DATA: skipping padding. */
  Padding,
  /** Any other known frame: gathering its payload. */
  Payload,
  /** An unknown frame type: skipping its payload (section 5.5). */
  Skip,
  /** A connection error was found: nothing more is read. */
  Failed,
}

// A header block still waiting for CONTINUATION frames.
interface OpenBlock {
  type: typeof TYPE.HEADERS | typeof TYPE.PUSH_PROMISE;
  streamId: number;
  time: number;
  endStream: boolean;
  priority?: Priority;
  promisedStreamId: number;
  fragments: Buffer[];
  size: number;
  frames: number;
}

/** Parses one direction; feed it every chunk in order. push() returns the connection error, once found. */
export class H2FrameParser {
  private readonly fromClient: boolean;
  private maxHeaderBlock: number;
  private readonly maxContinuations: number;
  private readonly onFrame: (frame: H2Frame) => void;
  private maxFrameSize: number;
  private state: State;
  private prefaceHave = 0;
  private seenFrame = false;
  private readonly head = Buffer.alloc(9);
  private headHave = 0;
  // The frame being read.
  private length = 0;
  private type = 0;
  private flags = 0;
  private streamId = 0;
  private time = 0;
  private dataLeft = 0;
  private padLeft = 0;
  private payload: Buffer | undefined;
  private payloadHave = 0;
  private block: OpenBlock | undefined;
  private failure: H2ConnectionError | undefined;

  constructor(opts: H2FrameParserOptions, onFrame: (frame: H2Frame) => void) {
    this.fromClient = opts.fromClient;
    this.maxFrameSize = opts.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE;
    this.maxHeaderBlock = opts.maxHeaderBlock ?? 256 * 1024;
    this.maxContinuations = opts.maxContinuations ?? 1024;
    this.onFrame = onFrame;
    this.state = opts.fromClient ? State.Preface : State.Header;
  }

  /** The connection error found, if any. */
  get error(): H2ConnectionError | undefined {
    return this.failure;
  }

  /**
   * True between whole frames (the preface read, no frame or header block
   * half read): where a frame of bb's own (a GOAWAY) may go into this byte stream.
   */
  get atFrameBoundary(): boolean {
    return this.state === State.Header && this.headHave === 0 && this.block === undefined;
  }

  /** Follows the receiving side's SETTINGS_MAX_FRAME_SIZE (section 6.5.2), from the next frame header on. */
  setMaxFrameSize(size: number): void {
    this.maxFrameSize = size;
  }

  /** Sets the header block cap (the CONTINUATION flood guard), from the next frame header on. */
  setMaxHeaderBlock(size: number): void {
    this.maxHeaderBlock = size;
  }

  /** Reads one chunk that arrived at `time`; returns the connection error if there is one (now or before). */
  push(chunk: Buffer, time: number): H2ConnectionError | undefined {
    let pos = 0;
    while (pos < chunk.length && this.state !== State.Failed) {
      switch (this.state) {
        case State.Preface: {
          //
          // Compare byte by byte, so a client speaking anything else (an
          // HTTP/1.1 request line, TLS) is refused at its first wrong byte.
          //
          const take = Math.min(chunk.length - pos, CLIENT_PREFACE.length - this.prefaceHave);
          for (let i = 0; i < take; i++) {
            if (chunk[pos + i] !== CLIENT_PREFACE[this.prefaceHave + i]) {
              return this.fail('PROTOCOL_ERROR', 'the connection does not start with the h2 client preface (RFC 9113 section 3.4)');
            }
          }
          pos += take;
          this.prefaceHave += take;
          if (this.prefaceHave === CLIENT_PREFACE.length) this.state = State.Header;
          break;
        }
        case State.Header: {
          if (this.headHave === 0) {
            this.time = time;
            // A frame header whole in this chunk (nearly all) is read where it is: no copy, no native call.
            if (chunk.length - pos >= 9) {
              pos += 9;
              this.startFrame(chunk, pos - 9);
              break;
            }
          }
          const take = Math.min(chunk.length - pos, 9 - this.headHave);
          chunk.copy(this.head, this.headHave, pos, pos + take);
          pos += take;
          this.headHave += take;
          if (this.headHave === 9) {
            this.headHave = 0;
            this.startFrame(this.head, 0);
          }
          break;
        }
        case State.PadLength: {
          this.padLeft = chunk[pos++]!;
          if (this.padLeft >= this.length) return this.fail('PROTOCOL_ERROR', `a DATA frame on stream ${this.streamId} has more padding than payload (RFC 9113 section 6.1)`);
          this.dataLeft = this.length - 1 - this.padLeft;
          this.state = State.Data;
          if (this.dataLeft === 0 && this.padLeft === 0) this.endData(chunk.subarray(pos, pos), time);
          break;
        }
        case State.Data: {
          const take = Math.min(chunk.length - pos, this.dataLeft);
          const piece = chunk.subarray(pos, pos + take);
          pos += take;
          this.dataLeft -= take;
          if (this.dataLeft > 0) {
            this.onFrame({ type: 'DATA', streamId: this.streamId, time, data: piece, last: false, endStream: false });
            break;
          }
          // The data is all here: skip what padding this chunk holds, so the
          // frame's last piece carries END_STREAM when the frame is whole.
          const skip = Math.min(chunk.length - pos, this.padLeft);
          pos += skip;
          this.padLeft -= skip;
          if (this.padLeft === 0) this.endData(piece, time);
          else {
            if (piece.length > 0) this.onFrame({ type: 'DATA', streamId: this.streamId, time, data: piece, last: false, endStream: false });
            this.state = State.Padding;
          }
          break;
        }
        case State.Padding: {
          const skip = Math.min(chunk.length - pos, this.padLeft);
          pos += skip;
          this.padLeft -= skip;
          if (this.padLeft === 0) this.endData(chunk.subarray(pos, pos), time);
          break;
        }
        case State.Payload: {
          const need = this.length - this.payloadHave;
          if (this.payloadHave === 0 && chunk.length - pos >= need) {
            this.payload = chunk.subarray(pos, pos + need);
            pos += need;
          } else {
            if (!this.payload) this.payload = Buffer.allocUnsafe(this.length);
            const take = Math.min(chunk.length - pos, need);
            chunk.copy(this.payload, this.payloadHave, pos, pos + take);
            pos += take;
            this.payloadHave += take;
            if (this.payloadHave < this.length) break;
          }
          const payload = this.payload;
          this.payload = undefined;
          this.payloadHave = 0;
          this.state = State.Header;
          this.endFrame(payload);
          break;
        }
        case State.Skip: {
          const skip = Math.min(chunk.length - pos, this.dataLeft);
          pos += skip;
          this.dataLeft -= skip;
          if (this.dataLeft === 0) this.endUnknown();
          break;
        }
      }
    }
    return this.failure;
  }

  private fail(code: H2ErrorName, message: string): H2ConnectionError {
    this.failure = { code, message };
    this.state = State.Failed;
    return this.failure;
  }

  /**
   * A frame header is in, its 9 bytes at `at` of `h` (the chunk, or `head` when it came split): check what can be
   * checked before the payload, and choose how to read the payload.
   */
  private startFrame(h: Buffer, at: number): void {
    this.length = (h[at]! << 16) | (h[at + 1]! << 8) | h[at + 2]!;
    this.type = h[at + 3]!;
    this.flags = h[at + 4]!;
    // The first bit is reserved: ignored on receipt (RFC 9113 section 4.1).
    this.streamId = ((h[at + 5]! & 0x7f) << 24) | (h[at + 6]! << 16) | (h[at + 7]! << 8) | h[at + 8]!;
    const error = checkFrameHeader({
      length: this.length, type: this.type, flags: this.flags, streamId: this.streamId, maxFrameSize: this.maxFrameSize,
      seenFrame: this.seenFrame, fromClient: this.fromClient, block: this.block,
      maxHeaderBlock: this.maxHeaderBlock, maxContinuations: this.maxContinuations,
    });
    if (error) {
      this.fail(error[0], error[1]);
      return;
    }
    this.seenFrame = true;
    if (this.type === TYPE.DATA) {
      this.dataLeft = this.length;
      this.padLeft = 0;
      this.state = this.flags & FLAG.PADDED ? State.PadLength : State.Data;
      if (this.state === State.Data && this.length === 0) this.endData(EMPTY, this.time);
    } else if (this.type > TYPE.CONTINUATION) {
      this.dataLeft = this.length;
      this.state = State.Skip;
      if (this.length === 0) this.endUnknown();
    } else {
      this.state = State.Payload;
      if (this.length === 0) {
        this.state = State.Header;
        this.endFrame(EMPTY);
      }
    }
  }

  private endData(piece: Buffer, time: number): void {
    this.state = State.Header;
    this.onFrame({ type: 'DATA', streamId: this.streamId, time, data: piece, last: true, endStream: (this.flags & FLAG.END_STREAM) !== 0 });
  }

  private endUnknown(): void {
    this.state = State.Header;
    this.onFrame({ type: 'UNKNOWN', frameType: this.type, flags: this.flags, streamId: this.streamId, time: this.time, length: this.length });
  }

  // A whole payload of a frame other than DATA is in.
  private endFrame(p: Buffer): void {
    const { type, flags, streamId, time } = this;
    switch (type) {
      case TYPE.HEADERS:
      case TYPE.PUSH_PROMISE: {
        const padded = (flags & FLAG.PADDED) !== 0;
        const hasPriority = type === TYPE.HEADERS && (flags & FLAG.PRIORITY) !== 0;
        const fixed = (padded ? 1 : 0) + (hasPriority ? 5 : 0) + (type === TYPE.PUSH_PROMISE ? 4 : 0);
        if (p.length < fixed) {
          this.fail('FRAME_SIZE_ERROR', `a ${NAMES[type]} frame of ${p.length} bytes is too short for its flags (RFC 9113 section 6.2)`);
          return;
        }
        const padLength = padded ? p[0]! : 0;
        if (padLength > p.length - fixed) {
          this.fail('PROTOCOL_ERROR', `a ${NAMES[type]} frame on stream ${streamId} has more padding than payload (RFC 9113 section 6.2)`);
          return;
        }
        let at = padded ? 1 : 0;
        let priority: Priority | undefined;
        if (hasPriority) {
          priority = readPriority(p, at);
          at += 5;
          if (priority.dependency === streamId) this.streamError(`stream ${streamId} depends on itself (RFC 9113 section 5.3.1)`);
        }
        const promisedStreamId = type === TYPE.PUSH_PROMISE ? p.readUInt32BE(at) & 0x7fffffff : 0;
        if (type === TYPE.PUSH_PROMISE) at += 4;
        this.block = {
          type, streamId, time, priority, promisedStreamId,
          endStream: type === TYPE.HEADERS && (flags & FLAG.END_STREAM) !== 0,
          fragments: [p.subarray(at, p.length - padLength)],
          size: p.length,
          frames: 1,
        };
        if (flags & FLAG.END_HEADERS) this.endBlock();
        return;
      }
      case TYPE.CONTINUATION: {
        const block = this.block!;
        block.fragments.push(p);
        block.size += p.length;
        block.frames++;
        if (flags & FLAG.END_HEADERS) this.endBlock();
        return;
      }
      case TYPE.PRIORITY: {
        if (p.length !== 5) return this.streamError(`a PRIORITY frame of ${p.length} bytes; PRIORITY is 5 bytes (RFC 9113 section 6.3)`, 'FRAME_SIZE_ERROR');
        const priority = readPriority(p, 0);
        if (priority.dependency === streamId) return this.streamError(`stream ${streamId} depends on itself (RFC 9113 section 5.3.1)`);
        this.onFrame({ type: 'PRIORITY', streamId, time, priority });
        return;
      }
      case TYPE.RST_STREAM: {
        const code = p.readUInt32BE(0);
        this.onFrame({ type: 'RST_STREAM', streamId, time, errorCode: code, error: errorName(code) });
        return;
      }
      case TYPE.SETTINGS: {
        const settings = readSettings(p);
        if ('code' in settings) this.fail(settings.code, settings.message);
        else this.onFrame({ type: 'SETTINGS', time, ack: (flags & FLAG.ACK) !== 0, settings });
        return;
      }
      case TYPE.PING:
        this.onFrame({ type: 'PING', time, ack: (flags & FLAG.ACK) !== 0, data: p });
        return;
      case TYPE.GOAWAY: {
        const code = p.readUInt32BE(4);
        this.onFrame({ type: 'GOAWAY', time, lastStreamId: p.readUInt32BE(0) & 0x7fffffff, errorCode: code, error: errorName(code), debug: p.subarray(8) });
        return;
      }
      case TYPE.WINDOW_UPDATE: {
        const increment = p.readUInt32BE(0) & 0x7fffffff;
        if (increment === 0) {
          const message = `a WINDOW_UPDATE on stream ${streamId} with increment 0 (RFC 9113 section 6.9)`;
          if (streamId === 0) this.fail('PROTOCOL_ERROR', message);
          else this.streamError(message);
          return;
        }
        this.onFrame({ type: 'WINDOW_UPDATE', streamId, time, increment });
        return;
      }
    }
  }

  private endBlock(): void {
    const b = this.block!;
    this.block = undefined;
    const block = b.fragments.length === 1 ? b.fragments[0]! : Buffer.concat(b.fragments);
    if (b.type === TYPE.HEADERS) {
      this.onFrame({ type: 'HEADERS', streamId: b.streamId, time: b.time, endStream: b.endStream, ...(b.priority ? { priority: b.priority } : {}), block, frames: b.frames });
    } else {
      this.onFrame({ type: 'PUSH_PROMISE', streamId: b.streamId, time: b.time, promisedStreamId: b.promisedStreamId, block, frames: b.frames });
    }
  }

  private streamError(message: string, code: H2ErrorName = 'PROTOCOL_ERROR'): void {
    this.onFrame({ type: 'STREAM_ERROR', streamId: this.streamId, time: this.time, code, message });
  }
}

function readPriority(p: Buffer, at: number): Priority {
  const word = p.readUInt32BE(at);
  return { exclusive: word >= 0x80000000, dependency: word & 0x7fffffff, weight: p[at + 4]! };
}
