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

/** Error code names by value (RFC 9113 section 7). */
const ERROR_NAMES = [
  'NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR', 'FLOW_CONTROL_ERROR', 'SETTINGS_TIMEOUT', 'STREAM_CLOSED',
  'FRAME_SIZE_ERROR', 'REFUSED_STREAM', 'CANCEL', 'COMPRESSION_ERROR', 'CONNECT_ERROR', 'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY', 'HTTP_1_1_REQUIRED',
] as const;

/** An RFC 9113 error code name. */
export type H2ErrorName = (typeof ERROR_NAMES)[number];

/** The name of an error code; unknown codes (section 7: no special behaviour) as `0x` and their hex. */
export function errorName(code: number): string {
  return ERROR_NAMES[code] ?? `0x${code.toString(16)}`;
}

/** The value of an error code name, for the GOAWAY or RST_STREAM a caller sends. */
export function errorCode(name: H2ErrorName): number {
  return ERROR_NAMES.indexOf(name);
}

/** The client connection preface (section 3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** SETTINGS_MAX_FRAME_SIZE's initial value and smallest legal value (section 6.5.2). */
export const DEFAULT_MAX_FRAME_SIZE = 16384;

/** Setting identifiers this parser checks (section 6.5.2). */
export const SETTINGS = {
  HEADER_TABLE_SIZE: 1,
  ENABLE_PUSH: 2,
  MAX_CONCURRENT_STREAMS: 3,
  INITIAL_WINDOW_SIZE: 4,
  MAX_FRAME_SIZE: 5,
  MAX_HEADER_LIST_SIZE: 6,
} as const;

/** A connection error: the connection must be closed with GOAWAY(code) (section 5.4.1). */
export interface H2ConnectionError {
  /** The RFC 9113 error code name for the GOAWAY. */
  code: H2ErrorName;
  /** What was wrong, in a sentence. */
  message: string;
}

/** PRIORITY fields of a HEADERS or PRIORITY frame (RFC 9113 section 5.3.2, deprecated but still on the wire). */
export interface Priority {
  /** The E flag. */
  exclusive: boolean;
  /** The stream it depends on. */
  dependency: number;
  /** Weight as sent (0-255, meaning 1-256). */
  weight: number;
}

/** One frame, or one piece of a DATA frame, in wire order. `time` is when its chunk arrived (epoch ms). */
export type H2Frame =
  | {
      type: 'DATA'; streamId: number; time: number;
      /** Payload bytes that arrived in one chunk, padding left out: a subarray of that chunk. */
      data: Buffer;
      /** This piece ends its frame. */
      last: boolean;
      /** END_STREAM, on the frame's last piece only. */
      endStream: boolean;
    }
  | {
      type: 'HEADERS'; streamId: number; time: number; endStream: boolean; priority?: Priority;
      /** The whole header block: the fragments of the HEADERS and its CONTINUATIONs, padding left out. */
      block: Buffer;
      /** How many frames carried it (1 + CONTINUATIONs). */
      frames: number;
    }
  | { type: 'PRIORITY'; streamId: number; time: number; priority: Priority }
  | { type: 'RST_STREAM'; streamId: number; time: number; errorCode: number; error: string }
  | {
      type: 'SETTINGS'; time: number; ack: boolean;
      /** [identifier, value] in the order sent (section 6.5.3: processed in order). */
      settings: Array<[number, number]>;
    }
  | { type: 'PUSH_PROMISE'; streamId: number; time: number; promisedStreamId: number; block: Buffer; frames: number }
  | { type: 'PING'; time: number; ack: boolean; data: Buffer }
  | { type: 'GOAWAY'; time: number; lastStreamId: number; errorCode: number; error: string; debug: Buffer }
  | { type: 'WINDOW_UPDATE'; streamId: number; time: number; increment: number }
  | { type: 'UNKNOWN'; frameType: number; flags: number; streamId: number; time: number; length: number }
  | { type: 'STREAM_ERROR'; streamId: number; time: number; code: H2ErrorName; message: string };

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

const TYPE = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
const NAMES = ['DATA', 'HEADERS', 'PRIORITY', 'RST_STREAM', 'SETTINGS', 'PUSH_PROMISE', 'PING', 'GOAWAY', 'WINDOW_UPDATE', 'CONTINUATION'];
const MAX_WINDOW = 2 ** 31 - 1;
const MAX_FRAME_SIZE_LIMIT = 2 ** 24 - 1;

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
  private readonly maxHeaderBlock: number;
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

  /** Follows the receiving side's SETTINGS_MAX_FRAME_SIZE (section 6.5.2), from the next frame header on. */
  setMaxFrameSize(size: number): void {
    this.maxFrameSize = size;
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
          if (this.headHave === 0) this.time = time;
          const take = Math.min(chunk.length - pos, 9 - this.headHave);
          chunk.copy(this.head, this.headHave, pos, pos + take);
          pos += take;
          this.headHave += take;
          if (this.headHave === 9) {
            this.headHave = 0;
            this.startFrame();
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

  // A frame header is in: check what can be checked before the payload, and
  // choose how to read the payload.
  private startFrame(): void {
    const h = this.head;
    this.length = h.readUIntBE(0, 3);
    this.type = h[3]!;
    this.flags = h[4]!;
    this.streamId = h.readUInt32BE(5) & 0x7fffffff;
    const error = this.checkHeader();
    if (error) {
      this.fail(error[0], error[1]);
      return;
    }
    this.seenFrame = true;
    if (this.type === TYPE.DATA) {
      this.dataLeft = this.length;
      this.padLeft = 0;
      this.state = this.flags & FLAG.PADDED ? State.PadLength : State.Data;
      if (this.state === State.Data && this.length === 0) this.endData(this.head.subarray(0, 0), this.time);
    } else if (this.type > TYPE.CONTINUATION) {
      this.dataLeft = this.length;
      this.state = State.Skip;
      if (this.length === 0) this.endUnknown();
    } else {
      this.state = State.Payload;
      if (this.length === 0) {
        this.state = State.Header;
        this.endFrame(Buffer.alloc(0));
      }
    }
  }

  // The checks of sections 4.2, 6.x and 3.4 that need only the header.
  private checkHeader(): [H2ErrorName, string] | undefined {
    const { length, type, flags, streamId } = this;
    const name = NAMES[type] ?? `frame type 0x${type.toString(16)}`;
    if (length > this.maxFrameSize) {
      return ['FRAME_SIZE_ERROR', `a ${name} frame of ${length} bytes exceeds SETTINGS_MAX_FRAME_SIZE ${this.maxFrameSize} (RFC 9113 section 4.2)`];
    }
    if (!this.seenFrame && (type !== TYPE.SETTINGS || flags & FLAG.ACK)) {
      return ['PROTOCOL_ERROR', `the first frame is ${name}, not SETTINGS (RFC 9113 section 3.4)`];
    }
    //
    // While a header block is open, only its CONTINUATIONs may come (section 6.10).
    //
    const block = this.block;
    if (block && (type !== TYPE.CONTINUATION || streamId !== block.streamId)) {
      return ['PROTOCOL_ERROR', `a ${name} frame on stream ${streamId} interrupts the header block of stream ${block.streamId} (RFC 9113 section 6.10)`];
    }
    switch (type) {
      case TYPE.DATA:
      case TYPE.HEADERS:
      case TYPE.PRIORITY:
      case TYPE.RST_STREAM:
      case TYPE.PUSH_PROMISE:
      case TYPE.CONTINUATION:
        if (streamId === 0) return ['PROTOCOL_ERROR', `a ${name} frame on stream 0 (RFC 9113 section 6)`];
        break;
      case TYPE.SETTINGS:
      case TYPE.PING:
      case TYPE.GOAWAY:
        if (streamId !== 0) return ['PROTOCOL_ERROR', `a ${name} frame on stream ${streamId}, not 0 (RFC 9113 section 6)`];
        break;
    }
    const sizeError = (rule: string): [H2ErrorName, string] => ['FRAME_SIZE_ERROR', `a ${name} frame of ${length} bytes; ${rule}`];
    switch (type) {
      case TYPE.DATA:
        if (flags & FLAG.PADDED && length < 1) return sizeError('a PADDED DATA frame holds at least its pad length (RFC 9113 section 6.1)');
        break;
      case TYPE.RST_STREAM:
        if (length !== 4) return sizeError('RST_STREAM is 4 bytes (RFC 9113 section 6.4)');
        break;
      case TYPE.SETTINGS:
        if (flags & FLAG.ACK && length !== 0) return sizeError('a SETTINGS ACK is empty (RFC 9113 section 6.5)');
        if (length % 6 !== 0) return sizeError('SETTINGS is a multiple of 6 bytes (RFC 9113 section 6.5)');
        break;
      case TYPE.PING:
        if (length !== 8) return sizeError('PING is 8 bytes (RFC 9113 section 6.7)');
        break;
      case TYPE.GOAWAY:
        if (length < 8) return sizeError('GOAWAY is at least 8 bytes (RFC 9113 section 6.8)');
        break;
      case TYPE.WINDOW_UPDATE:
        if (length !== 4) return sizeError('WINDOW_UPDATE is 4 bytes (RFC 9113 section 6.9)');
        break;
      case TYPE.PUSH_PROMISE:
        if (this.fromClient) return ['PROTOCOL_ERROR', 'a client sent PUSH_PROMISE (RFC 9113 section 8.4)'];
        break;
      case TYPE.CONTINUATION:
        if (!block) return ['PROTOCOL_ERROR', `a CONTINUATION frame on stream ${streamId} follows no open header block (RFC 9113 section 6.10)`];
        break;
    }
    //
    // The CONTINUATION flood guard: a header block is held until END_HEADERS,
    // so its size and frame count are capped (RFC 9113 section 10.5).
    //
    if (type === TYPE.HEADERS || type === TYPE.PUSH_PROMISE || type === TYPE.CONTINUATION) {
      if ((block?.size ?? 0) + length > this.maxHeaderBlock) {
        return ['ENHANCE_YOUR_CALM', `the header block of stream ${streamId} exceeds ${this.maxHeaderBlock} bytes (RFC 9113 section 10.5)`];
      }
      if (block && block.frames > this.maxContinuations) {
        return ['ENHANCE_YOUR_CALM', `the header block of stream ${streamId} spans more than ${this.maxContinuations} CONTINUATION frames (RFC 9113 section 10.5)`];
      }
    }
    return undefined;
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
      case TYPE.SETTINGS:
        return this.endSettings(p);
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

  private endSettings(p: Buffer): void {
    const settings: Array<[number, number]> = [];
    for (let at = 0; at < p.length; at += 6) {
      const id = p.readUInt16BE(at);
      const value = p.readUInt32BE(at + 2);
      if (id === SETTINGS.ENABLE_PUSH && value > 1) {
        this.fail('PROTOCOL_ERROR', `SETTINGS_ENABLE_PUSH is ${value}, not 0 or 1 (RFC 9113 section 6.5.2)`);
        return;
      }
      if (id === SETTINGS.INITIAL_WINDOW_SIZE && value > MAX_WINDOW) {
        this.fail('FLOW_CONTROL_ERROR', `SETTINGS_INITIAL_WINDOW_SIZE is ${value}, over 2^31-1 (RFC 9113 section 6.5.2)`);
        return;
      }
      if (id === SETTINGS.MAX_FRAME_SIZE && (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_FRAME_SIZE_LIMIT)) {
        this.fail('PROTOCOL_ERROR', `SETTINGS_MAX_FRAME_SIZE is ${value}, outside 16384..16777215 (RFC 9113 section 6.5.2)`);
        return;
      }
      settings.push([id, value]);
    }
    this.onFrame({ type: 'SETTINGS', time: this.time, ack: (this.flags & FLAG.ACK) !== 0, settings });
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
