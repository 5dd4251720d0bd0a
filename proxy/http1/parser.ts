// bb's incremental HTTP/1.1 parser: reads a copy of the bytes crossing the
// tap and says where each message's head ends, which bytes are body and
// where the message ends, without copying body bytes (listeners get offsets
// into the chunk they were fed).
//
// One parser reads one direction of one connection. The request side judges
// every head (head.ts) before the tap lets it go upstream. The response
// side frames each response by the request it answers: the tap calls
// expect(method) as each request goes upstream, which is the queue of
// requests in flight that pipelining, HEAD and CONNECT need (RFC 9112 §6.3).
//
// States are named numbers; a chunk is walked once. Heads and trailers are
// line blocks (lines.ts): collected until an empty line, then parsed
// whole (capped).
import type { RawHeaders } from '../events.js';
import {
  parseFieldLines,
  parseRequestHead,
  parseResponseHead,
  isHttp1Fault,
  isTchar,
  judgeTrailers,
  type Http1Fault,
  type Http1Head,
} from './head.js';
import { LineBlock } from './lines.js';

/** The largest request head (start line, fields, blank line) or trailer block bb reads: 16 KiB, Node's default. */
export const MAX_HEAD_BYTES = 16 * 1024;
/**
 * The largest response head or trailer block bb reads: 256 KiB, what Chromium takes. A server's answer is the
 * tap's to pass on, not to judge: a 20 KB Content-Security-Policy reached the client as bb's 502 at 16 KiB.
 */
export const MAX_RESPONSE_HEAD_BYTES = 256 * 1024;
/** How every response this parser accepts begins. */
const STATUS_PREFIX = Buffer.from('HTTP/1.', 'latin1');
/** The longest chunk-size line (size and extensions) bb reads. */
const MAX_CHUNK_LINE = 4096;

/** What a parser tells its owner, synchronously, while it is fed. */
export interface Http1Listener {
  /** A head was read and accepted; `end` is the offset in the current chunk just past its blank line. */
  head(head: Http1Head, end: number): void;
  /** Body bytes chunk[start, end) (chunk framing excluded). A view: copy it to keep it. */
  body(chunk: Buffer, start: number, end: number): void;
  /** The message ended; `end` is the offset in the current chunk just past its last byte (-1 at EOF). */
  end(end: number, rawTrailers: RawHeaders): void;
}

/** How a feed ended. */
export type FeedOutcome =
  /** Every byte was read. */
  | { state: 'ok' }
  /** The bytes are not acceptable HTTP/1.1; the parser reads nothing more. `head` is true while a head was being read. */
  | { state: 'error'; fault: Http1Fault; head: boolean; tooLarge: boolean }
  /** A message switched protocols (upgrade, CONNECT): bytes from `at` on are not HTTP. */
  | { state: 'switched'; at: number };

const OK: FeedOutcome = { state: 'ok' };

const enum S {
  Head,
  LengthBody,
  CloseBody,
  ChunkSize,
  ChunkExtNameStart,
  ChunkExtName,
  ChunkExtValueStart,
  ChunkExtToken,
  ChunkExtQuoted,
  ChunkExtQuotedEscape,
  ChunkExtQuotedEnd,
  ChunkSizeLf,
  ChunkData,
  ChunkDataCr,
  ChunkDataLf,
  Trailers,
  Switched,
  Dead,
}

const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[0x41 + i] = 10 + i;
  HEX[0x61 + i] = 10 + i;
}
const isQdtext = (c: number): boolean => c === 0x09 || c === 0x20 || c === 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e) || c >= 0x80;

/** An incremental, strict HTTP/1.1 parser for one direction of one connection. */
export class Http1Parser {
  private state = S.Head;
  private readonly block: LineBlock;
  private remaining = 0;
  private chunkLine = 0;
  private sizeDigits = 0;
  private readonly inFlight: string[] = [];
  private current: Http1Head | undefined;
  private failure: FeedOutcome | undefined;

  /** `side` says which direction this parser reads; `maxHeadBytes` caps heads and trailer blocks (by default MAX_HEAD_BYTES for requests, MAX_RESPONSE_HEAD_BYTES for responses). */
  constructor(
    readonly side: 'request' | 'response',
    private readonly listener: Http1Listener,
    maxHeadBytes = side === 'response' ? MAX_RESPONSE_HEAD_BYTES : MAX_HEAD_BYTES,
  ) {
    this.block = new LineBlock(maxHeadBytes);
  }

  /** Response side: a request with `method` went upstream; its response comes after those already expected. */
  expect(method: string): void {
    this.inFlight.push(method);
  }

  /** Requests sent whose final response has not begun. */
  get pending(): number {
    return this.inFlight.length;
  }

  /** True while a head is being read (or awaited): its bytes so far are held by the parser, not yet judged. */
  get readingHead(): boolean {
    return this.state === S.Head;
  }

  /** True between messages (nothing of a next message read yet). */
  get idle(): boolean {
    return this.state === S.Head && this.block.length === 0;
  }

  /** After a switch that did not happen (the upgrade was answered without 101): read HTTP again. */
  resume(): void {
    if (this.state === S.Switched) this.state = S.Head;
  }

  /** Reads one chunk, calling the listener as heads, body bytes and ends are found. */
  feed(chunk: Buffer): FeedOutcome {
    if (this.failure) return this.failure;
    let p = 0;
    const len = chunk.length;
    while (p < len) {
      switch (this.state) {
        case S.Head: {
          // A response that does not start like one is refused at once, as llhttp does, not after 16 KiB.
          if (this.side === 'response' && this.block.length < STATUS_PREFIX.length && !this.block.couldStartWith(STATUS_PREFIX, chunk, p)) {
            return this.fail({ code: 'HPE_INVALID_CONSTANT', reason: 'the response does not start with HTTP/1.' }, true);
          }
          const end = this.block.scan(chunk, p);
          if (end === -1) return OK;
          if (typeof end !== 'number') return this.fail(end, true);
          const outcome = this.onHead(end);
          if (outcome) return outcome;
          p = end;
          if (this.switched()) return { state: 'switched', at: p };
          break;
        }
        case S.LengthBody: {
          const n = Math.min(this.remaining, len - p);
          this.remaining -= n;
          this.listener.body(chunk, p, p + n);
          p += n;
          if (this.remaining === 0) {
            this.complete(p, []);
            if (this.switched()) return { state: 'switched', at: p };
          }
          break;
        }
        case S.CloseBody:
          this.listener.body(chunk, p, len);
          return OK;
        case S.ChunkData: {
          const n = Math.min(this.remaining, len - p);
          this.remaining -= n;
          this.listener.body(chunk, p, p + n);
          p += n;
          if (this.remaining === 0) this.state = S.ChunkDataCr;
          break;
        }
        case S.Trailers: {
          const end = this.block.scan(chunk, p);
          if (end === -1) return OK;
          if (typeof end !== 'number') return this.fail(end, false);
          const block = this.block.bytes().toString('latin1');
          this.block.reset();
          const rawTrailers: RawHeaders = [];
          const bad = parseFieldLines(block, 0, block.length - 2, rawTrailers) ?? judgeTrailers(rawTrailers);
          if (bad) return this.fail(bad, false);
          p = end;
          this.complete(p, rawTrailers);
          if (this.switched()) return { state: 'switched', at: p };
          break;
        }
        case S.Switched:
          return { state: 'switched', at: p };
        case S.Dead:
          return this.failure ?? OK;
        default: {
          const outcome = this.chunkFraming(chunk, p);
          if (typeof outcome !== 'number') return outcome;
          p = outcome;
        }
      }
    }
    return OK;
  }

  /** The connection ended: completes a close-delimited body; mid-message, an error. */
  finish(): FeedOutcome {
    if (this.failure) return this.failure;
    if (this.state === S.CloseBody) {
      this.complete(-1, []);
      return OK;
    }
    if (this.idle || this.state === S.Switched) return OK;
    return this.fail({ code: 'HPE_INVALID_EOF_STATE', reason: 'the connection ended in the middle of a message' }, this.state === S.Head);
  }

  // A method, so TypeScript does not narrow `state` across the calls that change it.
  private switched(): boolean {
    return this.state === S.Switched;
  }

  private fail(fault: Http1Fault, head: boolean): FeedOutcome {
    this.state = S.Dead;
    this.failure = { state: 'error', fault, head, tooLarge: fault.code === 'HPE_HEADER_OVERFLOW' };
    return this.failure;
  }

  /** A head's bytes are complete: judge it and set up its body. Returns an outcome only on refusal. */
  private onHead(end: number): FeedOutcome | undefined {
    const raw = this.block.bytes();
    const text = raw.toString('latin1');
    let head: Http1Head | Http1Fault;
    if (this.side === 'request') head = parseRequestHead(text, raw);
    else {
      const method = this.inFlight[0];
      if (method === undefined) return this.fail({ code: 'HPE_UNEXPECTED_RESPONSE', reason: 'the server sent a response to no request' }, true);
      head = parseResponseHead(text, raw, method);
    }
    this.block.reset();
    if (isHttp1Fault(head)) return this.fail(head, true);
    if (head.kind === 'response' && !head.informational) this.inFlight.shift();
    this.current = head;
    this.listener.head(head, end);
    if (this.state === S.Dead) return this.failure;
    switch (head.framing) {
      case 'none':
        this.complete(end, []);
        break;
      case 'length':
        this.remaining = head.contentLength;
        this.state = S.LengthBody;
        break;
      case 'chunked':
        this.startChunkLine();
        break;
      case 'close':
        this.state = S.CloseBody;
        break;
    }
    return undefined;
  }

  private complete(end: number, rawTrailers: RawHeaders): void {
    const head = this.current;
    this.current = undefined;
    this.state = S.Head;
    this.listener.end(end, rawTrailers);
    if (head === undefined) return;
    // After an upgrade request or a switching response the bytes are another protocol's.
    if ((head.kind === 'request' && head.upgrade) || (head.kind === 'response' && head.switches)) this.state = S.Switched;
  }

  private startChunkLine(): void {
    this.state = S.ChunkSize;
    this.remaining = 0;
    this.sizeDigits = 0;
    this.chunkLine = 0;
  }

  /** Walks the chunk-size line and the CRLF after chunk data (RFC 9112 §7.1). Returns the next offset or an outcome. */
  private chunkFraming(chunk: Buffer, from: number): number | FeedOutcome {
    let p = from;
    const len = chunk.length;
    while (p < len) {
      const c = chunk[p]!;
      switch (this.state) {
        case S.ChunkSize: {
          const v = HEX[c]!;
          if (v >= 0) {
            // 12 hex digits is 256 TiB: more is a number JavaScript (and any sane body) cannot hold.
            if (++this.sizeDigits > 12) return this.chunkFault('the chunk size is too large');
            this.remaining = this.remaining * 16 + v;
          } else if (this.sizeDigits === 0) return this.chunkFault('a chunk size must be hex digits');
          else if (c === 0x3b) this.state = S.ChunkExtNameStart;
          else if (c === 13) this.state = S.ChunkSizeLf;
          else return this.chunkFault('a chunk size must be hex digits');
          break;
        }
        case S.ChunkExtNameStart:
          if (!isTchar(c)) return this.chunkFault('a chunk extension needs a name');
          this.state = S.ChunkExtName;
          break;
        case S.ChunkExtName:
          if (c === 0x3d) this.state = S.ChunkExtValueStart;
          else if (!this.extEnd(c) && !isTchar(c)) return this.chunkFault('a chunk extension name has a bad character');
          break;
        case S.ChunkExtValueStart:
          if (c === 0x22) this.state = S.ChunkExtQuoted;
          else if (isTchar(c)) this.state = S.ChunkExtToken;
          else return this.chunkFault('a chunk extension value must be a token or a quoted string');
          break;
        case S.ChunkExtToken:
          if (!this.extEnd(c) && !isTchar(c)) return this.chunkFault('a chunk extension value has a bad character');
          break;
        case S.ChunkExtQuoted:
          if (c === 0x22) this.state = S.ChunkExtQuotedEnd;
          else if (c === 0x5c) this.state = S.ChunkExtQuotedEscape;
          else if (!isQdtext(c)) return this.chunkFault('a quoted chunk extension has a control character');
          break;
        case S.ChunkExtQuotedEscape:
          if (c !== 0x09 && (c < 0x20 || c === 0x7f)) return this.chunkFault('a quoted chunk extension escapes a control character');
          this.state = S.ChunkExtQuoted;
          break;
        case S.ChunkExtQuotedEnd:
          if (!this.extEnd(c)) return this.chunkFault('a quoted chunk extension is followed by a bad character');
          break;
        case S.ChunkSizeLf:
          if (c !== 10) return this.chunkFault('a chunk-size line must end with CRLF');
          p++;
          if (this.remaining === 0) {
            this.state = S.Trailers;
            return p;
          }
          this.state = S.ChunkData;
          return p;
        case S.ChunkDataCr:
          if (c !== 13) return this.chunkFault('chunk data must be followed by CRLF');
          this.state = S.ChunkDataLf;
          break;
        case S.ChunkDataLf:
          if (c !== 10) return this.chunkFault('chunk data must be followed by CRLF');
          this.startChunkLine();
          p++;
          continue;
        default:
          return p;
      }
      p++;
      if (++this.chunkLine > MAX_CHUNK_LINE) return this.chunkFault('a chunk-size line is too long');
    }
    return p;
  }

  /** In an extension: ';' starts the next one, CR ends the line. */
  private extEnd(c: number): boolean {
    if (c === 0x3b) this.state = S.ChunkExtNameStart;
    else if (c === 13) this.state = S.ChunkSizeLf;
    else return false;
    return true;
  }

  private chunkFault(reason: string): FeedOutcome {
    return this.fail({ code: 'HPE_INVALID_CHUNK_SIZE', reason }, false);
  }
}
