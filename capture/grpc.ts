// gRPC and gRPC-Web bodies → their length-prefixed messages
// (docs/capture-format.md "HTTP/2 and gRPC entries"). Pure: recorded chunks
// with their times in, HAR's `_grpcMessages`, the trailers of a gRPC-Web
// trailer frame and the call's status out.
//
// Framing (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md,
// "Length-Prefixed-Message"): 1 byte flags (bit 0: compressed), 4 bytes
// big-endian length, the message. gRPC-Web
// (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md) adds flag
// bit 7 for the trailer frame, whose payload is an HTTP/1 header block, and
// `application/grpc-web-text`, the same frames in base64 (each write may be
// padded on its own, so the text is decoded segment by segment).
import { pairValue, percentDecoded } from '../core/index.js';
import { decodeCoding } from './body.js';
import type { HarGrpcMessage, HarNameValue, HarRequest, HarResponse } from './har.js';
import type { BodyRecord, BodySlice, GrpcSeqRecord } from './journal.js';
import { MESSAGES_LISTED } from './options.js';
import type { Redactor } from './redact.js';

/** Decompressed bytes kept per message: past it the message stays compressed and says so. */
export const GRPC_INFLATE_CAP = 16 * 1024 * 1024;

/** Which gRPC flavour a content-type names, or undefined for anything else. */
export interface GrpcMedia {
  /** gRPC-Web (trailers may come in a trailer frame). */
  web: boolean;
  /** gRPC-Web-text: the frames are base64. */
  text: boolean;
}

/** The gRPC flavour of a content-type (`application/grpc`, `+proto`, `-web`, `-web+proto`, `-web-text`...). */
export function grpcMedia(contentType: string | undefined): GrpcMedia | undefined {
  const m = /^\s*application\/grpc(-web(-text)?)?(\+[\w.-]+)?\s*(;|$)/i.exec(contentType ?? '');
  return m ? { web: m[1] !== undefined, text: m[2] !== undefined } : undefined;
}

/**
 * Counts whole length-prefixed messages of one direction as its bytes stream
 * through, so the recorder can give each its `_bb.seq` in the capture's one
 * order at the moment its last byte crossed. Binary framing only (gRPC-Web-text
 * is base64: its messages are split when the HAR is written, and carry no seq).
 */
export class GrpcMessageCounter {
  private readonly prefix = Buffer.alloc(5);
  private have = 0;
  /** Bytes of the current message still to come; -1 while reading a prefix. */
  private left = -1;
  private trailer = false;
  /** Messages completed so far. */
  completed = 0;

  constructor(private readonly web: boolean) {}

  /** Reads one chunk; returns how many messages (not gRPC-Web trailer frames) it completed. */
  feed(chunk: Buffer): number {
    let done = 0;
    let pos = 0;
    while (pos < chunk.length) {
      if (this.left < 0) {
        const take = Math.min(5 - this.have, chunk.length - pos);
        chunk.copy(this.prefix, this.have, pos, pos + take);
        this.have += take;
        pos += take;
        if (this.have < 5) break;
        this.have = 0;
        this.trailer = this.web && (this.prefix[0]! & 0x80) !== 0;
        this.left = this.prefix.readUInt32BE(1);
      } else {
        const take = Math.min(this.left, chunk.length - pos);
        pos += take;
        this.left -= take;
      }
      if (this.left === 0) {
        if (!this.trailer) done++;
        this.left = -1;
      }
    }
    this.completed += done;
    return done;
  }
}

/**
 * Cuts one direction's length-prefixed messages out of its body chunks as they come (the prefix read as
 * GrpcMessageCounter reads it): each whole frame (its 5-byte prefix and its message) whose message is at most `max`
 * bytes goes to `frame`, copied (a tap's bytes are its own again after the turn); a longer one's bytes go to
 * `passing` as they come, not copied, `done` on the piece that ends it. `rest()` is what came of a frame not complete.
 */
export class GrpcFrames {
  private readonly prefix = Buffer.alloc(5);
  private have = 0;
  /** Bytes of the current message still to come; -1 while reading a prefix. */
  private left = -1;
  /** The current frame while it is kept (allocated whole once its prefix is read), and how much of it came; undefined while one passes. */
  private kept: Buffer | undefined;
  private filled = 0;

  constructor(
    private readonly max: number,
    private readonly on: { frame(frame: Buffer): void; passing(piece: Buffer, done: boolean): void },
  ) {}

  /** More of the body. */
  write(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.left < 0) {
        const take = Math.min(5 - this.have, chunk.length - at);
        chunk.copy(this.prefix, this.have, at, at + take);
        this.have += take;
        at += take;
        if (this.have < 5) return;
        this.have = 0;
        this.left = this.prefix.readUInt32BE(1);
        if (this.left <= this.max) {
          this.kept = Buffer.allocUnsafe(5 + this.left);
          this.filled = this.prefix.copy(this.kept);
        } else this.on.passing(Buffer.from(this.prefix), false);
      } else {
        const take = Math.min(this.left, chunk.length - at);
        if (this.kept) this.filled += chunk.copy(this.kept, this.filled, at, at + take);
        else this.on.passing(chunk.subarray(at, at + take), this.left === take);
        at += take;
        this.left -= take;
      }
      if (this.left === 0) {
        this.left = -1;
        const frame = this.kept;
        this.kept = undefined;
        if (frame) this.on.frame(frame);
      }
    }
  }

  /** The bytes of a frame begun and not complete (its prefix and what came of its message); none while one passes. */
  rest(): Buffer {
    if (this.left < 0) return Buffer.from(this.prefix.subarray(0, this.have));
    return this.kept ? Buffer.from(this.kept.subarray(0, this.filled)) : Buffer.alloc(0);
  }
}

/**
 * A feed of one direction's body chunks that calls `f` with each message as it completes (GrpcFrames): its bytes,
 * decompressed per `encoding` (the direction's grpc-encoding); undefined for one longer than `max` or that does not
 * decompress (it counts in the numbering). bb shadow's relay and bb replay read a call's messages as they cross
 * with it, for the values they issue.
 */
export function grpcMessageFeed(encoding: string | undefined, max: number, f: (message: Uint8Array | undefined) => void): (chunk: Buffer) => void {
  const frames = new GrpcFrames(max, {
    frame: (frame) => {
      const message = frame.subarray(5);
      const read = (frame[0]! & 1) === 1 ? inflateGrpcMessage(message, encoding) : message;
      f(typeof read === 'string' ? undefined : read);
    },
    passing: (_piece, done) => done && f(undefined),
  });
  return (chunk) => frames.write(chunk);
}

/** Recorded body bytes and the time (epoch ms) they were seen. */
export interface GrpcChunk {
  bytes: Buffer;
  ts: number;
}

/** How one direction's body is to be split. */
export interface GrpcSplitOptions {
  type: 'send' | 'receive';
  media: GrpcMedia;
  /** The direction's `grpc-encoding` header (identity when absent). */
  encoding?: string;
  /** Fewer bytes were recorded than crossed (body cap): a cut last message is expected. */
  truncated: boolean;
  /** Redaction on: each message's JWTs masked (Redactor.secretBytes). */
  redactor?: Pick<Redactor, 'secretBytes'>;
  /** Messages listed at most (MESSAGES_LISTED); later whole ones are counted in `unlisted`. */
  listed?: number;
}

/** One direction's messages, the trailer frame's headers, and what a reader should know. */
export interface GrpcSplit {
  messages: HarGrpcMessage[];
  /** Whole messages past the listed. */
  unlisted: number;
  /** gRPC-Web: the trailer frame's headers, in order. */
  trailers?: HarNameValue[];
  /** Sentences for the entry's comment. */
  notes: string[];
}

/** A length-prefixed frame read at `at`: its flags, declared length, payload as far as the bytes go (shorter when cut), where the next begins. */
export interface GrpcFrameRead {
  flags: number;
  length: number;
  payload: Buffer;
  next: number;
}

/** The frame at `at` of a body's bytes; undefined when fewer than its 5-byte prefix are left. */
export function grpcFrameAt(bytes: Buffer, at: number): GrpcFrameRead | undefined {
  if (bytes.length - at < 5) return undefined;
  const length = bytes.readUInt32BE(at + 1);
  const next = at + 5 + length;
  return { flags: bytes[at]!, length, payload: bytes.subarray(at + 5, Math.min(next, bytes.length)), next };
}

/** A body's framed bytes as recorded: gRPC-Web-text's base64 decoded segment by segment, others as they are. */
export function grpcFramedBytes(body: Buffer, media: GrpcMedia): Buffer {
  return media.text ? fromBase64Text([{ bytes: body, ts: 0 }]).bytes : body;
}

/**
 * The whole messages of a recorded body past its first `listed` (those a capture does not list, `_bb.unlisted`):
 * each frame's flags, payload and bytes (prefix included), a gRPC-Web trailer frame being no message. bb diff folds
 * them, bb replay sends them.
 */
export function* grpcMessagesPast(body: Buffer, media: GrpcMedia, listed: number): Generator<{ flags: number; payload: Buffer; frame: Buffer }> {
  const bytes = grpcFramedBytes(body, media);
  let k = 0;
  for (let at = 0, f = grpcFrameAt(bytes, 0); f && f.next <= bytes.length; at = f.next, f = grpcFrameAt(bytes, at)) {
    if (media.web && f.flags & 0x80) continue;
    if (k++ >= listed) yield { flags: f.flags, payload: f.payload, frame: bytes.subarray(at, f.next) };
  }
}

/** Splits one direction's recorded body into gRPC messages, each timed by the chunk that held its last byte. */
export function splitGrpcBody(chunks: GrpcChunk[], opts: GrpcSplitOptions): GrpcSplit {
  const { bytes, timeAt } = opts.media.text ? fromBase64Text(chunks) : joined(chunks);
  // A message is read without a schema, so its secrets have no names: its JWTs are masked, at their length.
  const masked = (b: Buffer) => (opts.redactor ? opts.redactor.secretBytes(b) : b);
  const out: GrpcSplit = { messages: [], unlisted: 0, notes: [] };
  const listed = opts.listed ?? MESSAGES_LISTED;
  let at = 0;
  while (at < bytes.length) {
    const frame = grpcFrameAt(bytes, at);
    if (!frame) {
      out.notes.push(`${opts.type}: ${bytes.length - at} bytes of a message prefix cut short`);
      break;
    }
    const { flags, length, payload } = frame;
    const end = at + 5 + length;
    const have = at + 5 + payload.length;
    const time = timeAt(have - 1) / 1000;
    at = frame.next;
    if (opts.media.web && flags & 0x80) {
      out.trailers = parseTrailerBlock(payload.toString('latin1'));
      continue;
    }
    if (out.messages.length >= listed) {
      // Past the listed: counted, neither decoded nor copied (the body's bytes hold them).
      if (have < end) out.notes.push(`${opts.type}: last message cut short, ${payload.length} of ${length} bytes recorded`);
      else out.unlisted++;
      continue;
    }
    const msg: HarGrpcMessage = { type: opts.type, time, compressed: (flags & 1) === 1, data: '' };
    if (have < end) {
      // Cut short (body cap or a hang-up): keep what came, as it came; never inflate a fragment.
      msg.data = masked(payload).toString('base64');
      msg._bb = { truncated: payload.length, length };
      out.notes.push(`${opts.type}: last message cut short, ${payload.length} of ${length} bytes recorded`);
      out.messages.push(msg);
      break;
    }
    if (msg.compressed) {
      const inflated = inflateGrpcMessage(payload, opts.encoding);
      if (typeof inflated === 'string') {
        msg.data = payload.toString('base64');
        msg._bb = { undecoded: inflated };
        out.notes.push(`${opts.type}: ${inflated}`);
      } else msg.data = masked(inflated).toString('base64');
    } else msg.data = masked(payload).toString('base64');
    out.messages.push(msg);
  }
  if (opts.truncated && !out.notes.some((n) => n.includes('cut short'))) out.notes.push(`${opts.type}: body past the cap, later messages not recorded`);
  if (out.unlisted > 0) out.notes.push(`${opts.type}: ${out.unlisted} messages past the first ${listed} are not listed (the body holds them)`);
  return out;
}

/** Decompresses one message per its grpc-encoding (bounded: GRPC_INFLATE_CAP); a string says why it stays compressed. */
export function inflateGrpcMessage(payload: Buffer, encoding: string | undefined): Buffer | string {
  const coding = (encoding ?? 'identity').trim().toLowerCase();
  if (coding === 'identity') return 'compressed flag set with grpc-encoding identity, kept as sent';
  // grpc-encoding gzip and deflate (zlib-wrapped, RFC 1950; some peers send raw) as HTTP's codings are.
  if (coding !== 'gzip' && coding !== 'deflate') return `grpc-encoding ${coding}: no decoder, kept compressed`;
  try {
    return decodeCoding(payload, coding, { maxOutputLength: GRPC_INFLATE_CAP });
  } catch (err) {
    return `grpc-encoding ${coding}: does not decompress (${(err as Error).message}), kept compressed`;
  }
}

/** A gRPC-Web trailer frame's payload: `name: value` lines (CRLF or LF). */
function parseTrailerBlock(text: string): HarNameValue[] {
  const out: HarNameValue[] = [];
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    out.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
  }
  return out;
}

/** gRPC status code names, by code (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
const GRPC_STATUS_NAMES: readonly string[] = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
];

/** The name of a gRPC status code (`NOT_FOUND` for 5), or undefined for a code outside the table. */
export function grpcStatusName(code: number): string | undefined {
  return Number.isInteger(code) ? GRPC_STATUS_NAMES[code] : undefined;
}

/** grpc-status and grpc-message from the first list that has a status (trailers, trailer frame, trailers-only headers). */
export function grpcStatus(...lists: Array<HarNameValue[] | undefined>): { status: number | null; message?: string } {
  for (const list of lists) {
    const status = pairValue(list, 'grpc-status');
    if (status === undefined) continue;
    const message = pairValue(list, 'grpc-message');
    const n = Number(status.trim());
    const out: { status: number | null; message?: string } = { status: Number.isInteger(n) ? n : null };
    // grpc-message is percent-encoded (PROTOCOL-HTTP2.md "Responses"); a bad escape stays as sent.
    if (message !== undefined && message !== '') out.message = percentDecoded(message);
    return out;
  }
  return { status: null };
}


/** What a gRPC exchange adds to its HAR entry. */
export interface GrpcEntryParts {
  /** Both directions' messages, ordered by time (sends first on a tie). */
  messages: HarGrpcMessage[];
  /** Each direction's whole messages past the listed (GrpcSplit.unlisted). */
  unlisted: { send: number; receive: number };
  /** The status from the trailers, the trailer frame, or trailers-only headers. */
  status: { status: number | null; message?: string };
  /** gRPC-Web: the trailer frame's headers (they become response._trailers). */
  trailers?: HarNameValue[];
  notes: string[];
}

/** The gRPC parts of an exchange whose request or response is `application/grpc*`; undefined otherwise. */
export function grpcEntryParts(
  request: HarRequest, response: HarResponse, reqBody: BodyRecord[], resBody: BodyRecord[], readBody: (s: BodySlice) => Buffer,
  seqs?: GrpcSeqRecord[],
  redactor?: Pick<Redactor, 'secretBytes'>,
): GrpcEntryParts | undefined {
  const reqMedia = grpcMedia(pairValue(request.headers, 'content-type'));
  const resMedia = grpcMedia(pairValue(response.headers, 'content-type')) ?? (response.status === 0 ? reqMedia : undefined);
  if (!reqMedia && !resMedia) return undefined;
  const side = (type: 'send' | 'receive', body: BodyRecord[], media: GrpcMedia | undefined, headers: HarNameValue[]): GrpcSplit => {
    if (!media) return { messages: [], unlisted: 0, notes: [] };
    const chunks = body.filter((c) => c.n > 0).map((c) => ({ bytes: readBody(c), ts: c.ts }));
    const truncated = body.reduce((n, c) => n + c.w - c.n, 0) > 0;
    return splitGrpcBody(chunks, { type, media, encoding: pairValue(headers, 'grpc-encoding'), truncated, ...(redactor ? { redactor } : {}) });
  };
  const sent = side('send', reqBody, reqMedia ?? resMedia, request.headers);
  const received = side('receive', resBody, resMedia, response.headers);
  const numbered = seqs !== undefined && seqs.length > 0 && numberMessages(sent.messages, received.messages, seqs);
  const messages = [...sent.messages, ...received.messages].sort(
    numbered
      ? (a, b) => (a._bb?.seq ?? Infinity) - (b._bb?.seq ?? Infinity) || a.time - b.time
      : (a, b) => a.time - b.time || (a.type === b.type ? 0 : a.type === 'send' ? -1 : 1),
  );
  const parts: GrpcEntryParts = {
    messages,
    unlisted: { send: sent.unlisted, receive: received.unlisted },
    status: grpcStatus(response._trailers, received.trailers, response.headers),
    notes: [...sent.notes, ...received.notes],
  };
  if (received.trailers) parts.trailers = received.trailers;
  return parts;
}

// The k-th whole message of a direction gets the k-th seq the recorder took for it
// (a message cut short never completed, so it has none). True when any was numbered.
function numberMessages(sent: HarGrpcMessage[], received: HarGrpcMessage[], seqs: GrpcSeqRecord[]): boolean {
  const bySide = { send: seqs.filter((r) => r.d === 'send'), receive: seqs.filter((r) => r.d === 'receive') };
  let any = false;
  for (const [list, taken] of [[sent, bySide.send], [received, bySide.receive]] as const) {
    for (let k = 0; k < list.length && k < taken.length; k++) {
      const m = list[k]!;
      if (m._bb?.truncated !== undefined) break;
      m._bb = { seq: taken[k]!.seq, ...m._bb };
      any = true;
    }
  }
  return any;
}

interface Timed {
  bytes: Buffer;
  /** The time of the chunk holding byte `offset` of `bytes`. */
  timeAt(offset: number): number;
}

function timeFinder(ends: number[], times: number[]): (offset: number) => number {
  return (offset) => {
    let lo = 0;
    let hi = ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! > offset) hi = mid;
      else lo = mid + 1;
    }
    return times[lo] ?? 0;
  };
}

function joined(chunks: GrpcChunk[]): Timed {
  const ends: number[] = [];
  const times: number[] = [];
  let total = 0;
  for (const c of chunks) {
    if (c.bytes.length === 0) continue;
    total += c.bytes.length;
    ends.push(total);
    times.push(c.ts);
  }
  return { bytes: Buffer.concat(chunks.map((c) => c.bytes)), timeAt: timeFinder(ends, times) };
}

// Base64 text decoded by segments that end at padding (a gRPC-Web-text peer
// encodes each write on its own); a segment's bytes take the time of the chunk
// holding its last character.
function fromBase64Text(chunks: GrpcChunk[]): Timed {
  const raw = joined(chunks);
  const text = raw.bytes.toString('latin1');
  const parts: Buffer[] = [];
  const ends: number[] = [];
  const times: number[] = [];
  let total = 0;
  const segment = /[A-Za-z0-9+/_-]+={0,2}/g;
  for (let m = segment.exec(text); m !== null; m = segment.exec(text)) {
    const bytes = Buffer.from(m[0], 'base64');
    total += bytes.length;
    ends.push(total);
    times.push(raw.timeAt(m.index + m[0].length - 1));
    parts.push(bytes);
  }
  return { bytes: Buffer.concat(parts), timeAt: timeFinder(ends, times) };
}
