// The passive reading of one tapped h2 connection: both directions' frame
// parsers and HPACK decoders, kept in step with the SETTINGS each side sends,
// turned into per-stream facts (request and response headers, DATA pieces,
// trailers, resets, pushes, GOAWAY). It reads copies of the bytes the proxy
// pipes and never changes one.
//
// Which SETTINGS bind which parser (RFC 9113 section 6.5, RFC 7541 section 4.2):
// a SETTINGS frame states what its sender is willing to RECEIVE. So the
// client's SETTINGS_MAX_FRAME_SIZE, SETTINGS_HEADER_TABLE_SIZE and
// SETTINGS_MAX_HEADER_LIST_SIZE bound the frames and header blocks the
// SERVER sends: they go to the server→client parser and decoder, and the
// server's go to the client→server ones. A value binds from the moment the
// peer acknowledges it: the ACK travels in the very direction it governs
// (the server acknowledges the client's SETTINGS in server→client bytes), so
// every frame after the ACK in that byte stream is bound by the new value and
// every frame before it may still use the old one. Until the ACK, the parser
// allows the larger of the old and the announced value (a passive reader
// must accept whatever the real peer may still legally send), and SETTINGS
// are acknowledged in the order sent (section 6.5.3), so a queue per side
// pairs each ACK with its SETTINGS. The HPACK table itself changes size only
// through the encoder's size updates; a limit lowered below it shrinks it
// when acknowledged (see HpackDecoder.setTableSizeLimit).
import { H2FrameParser, SETTINGS, DEFAULT_MAX_FRAME_SIZE, type H2ConnectionError, type H2ErrorName, type H2Frame } from './frames.js';
import { DEFAULT_HEADER_TABLE_SIZE, HpackDecoder } from './hpack.js';

/** Which endpoint sent something. */
export type H2Side = 'client' | 'server';

/** What a HEADERS block is, by its place in its stream (RFC 9113 section 8.1). */
export type HeadersKind = 'request' | 'informational' | 'response' | 'trailers';

/** One fact about the connection, in the wire order of its direction. `time` is when its chunk arrived (epoch ms). */
export type H2Fact =
  | {
      type: 'headers'; from: H2Side; streamId: number; time: number; kind: HeadersKind;
      /** Decoded fields in wire order, pseudo-headers as sent. */
      headers: Array<[string, string]>;
      /** Positions in `headers` sent never-indexed. */
      neverIndexed: number[];
      /** END_STREAM was set on the HEADERS frame. */
      endStream: boolean;
    }
  | {
      type: 'data'; from: H2Side; streamId: number; time: number;
      /** Payload bytes as they arrived: a subarray of the socket chunk (empty only when it just ends the stream). */
      data: Buffer;
      /** The piece ends the stream in this direction. */
      endStream: boolean;
    }
  | {
      type: 'push'; streamId: number; time: number;
      /** The pushed stream the promise reserves. */
      promisedStreamId: number;
      /** The promised request's fields. */
      headers: Array<[string, string]>;
      neverIndexed: number[];
    }
  | { type: 'reset'; from: H2Side; streamId: number; time: number; errorCode: number; error: string }
  | { type: 'goaway'; from: H2Side; time: number; lastStreamId: number; errorCode: number; error: string; debug: Buffer }
  | { type: 'settings'; from: H2Side; time: number; ack: boolean; settings: Array<[number, number]> }
  | { type: 'stream-error'; from: H2Side; streamId: number; time: number; code: H2ErrorName; message: string }
  | {
      type: 'error'; from: H2Side; time: number;
      /** The code for the GOAWAY the caller closes the connection with. */
      code: H2ErrorName;
      message: string;
    };

/** Limits of the passive reading. */
export interface H2SessionOptions {
  /**
   * How far over a side's advertised SETTINGS_MAX_HEADER_LIST_SIZE a header
   * list may decode before the connection is refused (the HPACK bomb guard):
   * the cap is this factor times the advertised size; default 4.
   */
  headerListFactor?: number;
  /** The cap when a side advertised no SETTINGS_MAX_HEADER_LIST_SIZE (unlimited in the RFC); default 1 MiB. */
  defaultHeaderListCap?: number;
}

// How many SETTINGS of one side may wait for their ACK.
const MAX_PENDING_SETTINGS = 64;

// The values of one side's SETTINGS this reader follows.
interface Limits {
  maxFrameSize: number;
  headerTableSize: number;
  maxHeaderListSize: number | undefined;
  enablePush: boolean;
}

// Reads one direction: its parser, its decoder, and the SETTINGS of the side
// that receives it (acknowledged, and sent but not yet acknowledged).
interface Direction {
  from: H2Side;
  parser: H2FrameParser;
  decoder: HpackDecoder;
  receiverAcked: Limits;
  receiverPending: Limits[];
  error: H2ConnectionError | undefined;
}

// What the reader remembers of a stream: enough to name each HEADERS block.
interface StreamState {
  requested: boolean;
  responded: boolean;
  clientEnded: boolean;
  serverEnded: boolean;
}

/** Reads both directions of one h2 connection into H2Facts; feed each direction's chunks in order. */
export class H2Session {
  private readonly onFact: (fact: H2Fact) => void;
  private readonly listFactor: number;
  private readonly defaultListCap: number;
  private readonly client: Direction;
  private readonly server: Direction;
  private readonly streams = new Map<number, StreamState>();
  // The highest stream id opened so far, odd (client) and even (pushed):
  // ids only grow (section 5.1.1), so a smaller one not in `streams` is closed.
  private readonly lastOpened = [0, 0];

  constructor(opts: H2SessionOptions, onFact: (fact: H2Fact) => void) {
    this.onFact = onFact;
    this.listFactor = opts.headerListFactor ?? 4;
    this.defaultListCap = opts.defaultHeaderListCap ?? 1024 * 1024;
    this.client = this.direction('client');
    this.server = this.direction('server');
  }

  /** Streams the reader still holds state for (ended or reset ones are dropped). */
  get openStreams(): number {
    return this.streams.size;
  }

  /** True when the client's byte stream stands between whole frames (bb may add one of its own). */
  get clientAtFrameBoundary(): boolean {
    return !this.client.error && this.client.parser.atFrameBoundary;
  }

  /** True when the server's byte stream stands between whole frames. */
  get serverAtFrameBoundary(): boolean {
    return !this.server.error && this.server.parser.atFrameBoundary;
  }

  /** Reads bytes the client sent; returns the connection error of that direction, if any. */
  fromClient(chunk: Buffer, time: number): H2ConnectionError | undefined {
    return this.read(this.client, chunk, time);
  }

  /** Reads bytes the server sent; returns the connection error of that direction, if any. */
  fromServer(chunk: Buffer, time: number): H2ConnectionError | undefined {
    return this.read(this.server, chunk, time);
  }

  private read(dir: Direction, chunk: Buffer, time: number): H2ConnectionError | undefined {
    if (dir.error) return dir.error;
    const error = dir.parser.push(chunk, time);
    if (error && !dir.error) this.fail(dir, time, error.code, error.message);
    return dir.error;
  }

  private direction(from: H2Side): Direction {
    const defaults: Limits = { maxFrameSize: DEFAULT_MAX_FRAME_SIZE, headerTableSize: DEFAULT_HEADER_TABLE_SIZE, maxHeaderListSize: undefined, enablePush: true };
    const cap = this.listCap(undefined);
    const dir: Direction = {
      from,
      parser: new H2FrameParser({ fromClient: from === 'client', maxHeaderBlock: cap }, (frame) => this.onFrame(dir, frame)),
      decoder: new HpackDecoder({ maxHeaderListSize: cap }),
      receiverAcked: defaults,
      receiverPending: [],
      error: undefined,
    };
    return dir;
  }

  private listCap(advertised: number | undefined): number {
    return advertised === undefined ? this.defaultListCap : Math.max(advertised * this.listFactor, 16 * 1024);
  }

  private other(dir: Direction): Direction {
    return dir === this.client ? this.server : this.client;
  }

  private onFrame(dir: Direction, frame: H2Frame): void {
    if (dir.error) return;
    const from = dir.from;
    switch (frame.type) {
      case 'SETTINGS': {
        const governed = this.other(dir);
        if (frame.ack) {
          // This side acknowledges the other side's oldest unacknowledged SETTINGS:
          // from here on, this direction is bound by it.
          const acked = dir.receiverPending.shift();
          if (acked) dir.receiverAcked = acked;
          this.applyLimits(dir);
        } else {
          // A side that keeps sending SETTINGS its peer never acknowledges
          // would grow this queue without end (the peer times out, section 6.5.3).
          if (governed.receiverPending.length >= MAX_PENDING_SETTINGS) {
            return this.fail(dir, frame.time, 'ENHANCE_YOUR_CALM', `more than ${MAX_PENDING_SETTINGS} SETTINGS frames wait for their ACK (RFC 9113 section 10.5)`);
          }
          const base = governed.receiverPending.at(-1) ?? governed.receiverAcked;
          governed.receiverPending.push(withSettings(base, frame.settings));
          this.applyLimits(governed);
        }
        this.onFact({ type: 'settings', from, time: frame.time, ack: frame.ack, settings: frame.settings });
        return;
      }
      case 'HEADERS': {
        const decoded = dir.decoder.decode(frame.block);
        if ('code' in decoded) return this.fail(dir, frame.time, decoded.code, decoded.message);
        const stream = this.stream(frame.streamId);
        const kind = this.kindOf(from, stream, decoded.headers);
        this.onFact({ type: 'headers', from, streamId: frame.streamId, time: frame.time, kind, headers: decoded.headers, neverIndexed: decoded.neverIndexed, endStream: frame.endStream });
        if (frame.endStream) this.ended(from, frame.streamId, stream);
        return;
      }
      case 'PUSH_PROMISE': {
        //
        // A client that turned push off (and has no SETTINGS turning it back
        // on in flight) must treat a promise as PROTOCOL_ERROR (section 6.5.2).
        //
        if (![dir.receiverAcked, ...dir.receiverPending].some((l) => l.enablePush)) {
          return this.fail(dir, frame.time, 'PROTOCOL_ERROR', `a PUSH_PROMISE on stream ${frame.streamId} after the client set SETTINGS_ENABLE_PUSH to 0 (RFC 9113 section 6.5.2)`);
        }
        const decoded = dir.decoder.decode(frame.block);
        if ('code' in decoded) return this.fail(dir, frame.time, decoded.code, decoded.message);
        // The promised stream's request is the promise; the client sends nothing on it.
        this.streams.set(frame.promisedStreamId, { requested: true, responded: false, clientEnded: true, serverEnded: false });
        this.lastOpened[0] = Math.max(this.lastOpened[0]!, frame.promisedStreamId);
        this.onFact({ type: 'push', streamId: frame.streamId, time: frame.time, promisedStreamId: frame.promisedStreamId, headers: decoded.headers, neverIndexed: decoded.neverIndexed });
        return;
      }
      case 'DATA': {
        if (frame.data.length === 0 && !frame.endStream) return;
        this.onFact({ type: 'data', from, streamId: frame.streamId, time: frame.time, data: frame.data, endStream: frame.endStream });
        if (frame.endStream) this.ended(from, frame.streamId, this.stream(frame.streamId));
        return;
      }
      case 'RST_STREAM':
        this.streams.delete(frame.streamId);
        this.onFact({ type: 'reset', from, streamId: frame.streamId, time: frame.time, errorCode: frame.errorCode, error: frame.error });
        return;
      case 'GOAWAY':
        this.onFact({ type: 'goaway', from, time: frame.time, lastStreamId: frame.lastStreamId, errorCode: frame.errorCode, error: frame.error, debug: frame.debug });
        return;
      case 'STREAM_ERROR':
        this.onFact({ type: 'stream-error', from, streamId: frame.streamId, time: frame.time, code: frame.code, message: frame.message });
        return;
      default:
        // PRIORITY, PING, WINDOW_UPDATE and unknown types carry no fact of the exchange.
        return;
    }
  }

  // Sets a direction's parser and decoder to what its receiver allows now:
  // the acknowledged values, widened by any still waiting for their ACK.
  private applyLimits(dir: Direction): void {
    const all = [dir.receiverAcked, ...dir.receiverPending];
    dir.parser.setMaxFrameSize(Math.max(...all.map((l) => l.maxFrameSize)));
    dir.decoder.setTableSizeLimit(Math.max(...all.map((l) => l.headerTableSize)));
    const lists = all.map((l) => l.maxHeaderListSize);
    const widest = lists.includes(undefined) ? undefined : Math.max(...(lists as number[]));
    dir.decoder.setHeaderListCap(this.listCap(widest));
    dir.parser.setMaxHeaderBlock(this.listCap(widest));
  }

  // A stream's state; frames on a closed stream (a DATA racing a RST_STREAM)
  // get a throwaway one, so closed streams are never held again.
  private stream(id: number): StreamState {
    const known = this.streams.get(id);
    if (known) return known;
    const stream = { requested: false, responded: false, clientEnded: false, serverEnded: false };
    if (id <= this.lastOpened[id % 2]!) return { ...stream, requested: true };
    this.lastOpened[id % 2] = id;
    this.streams.set(id, stream);
    return stream;
  }

  // Names a HEADERS block by what came before it on its stream (RFC 9113 section 8.1).
  private kindOf(from: H2Side, stream: StreamState, headers: Array<[string, string]>): HeadersKind {
    if (from === 'client') {
      if (stream.requested) return 'trailers';
      stream.requested = true;
      return 'request';
    }
    if (stream.responded) return 'trailers';
    const status = headers.find(([name]) => name === ':status')?.[1] ?? '';
    if (/^1\d\d$/.test(status)) return 'informational';
    stream.responded = true;
    return 'response';
  }

  private ended(from: H2Side, id: number, stream: StreamState): void {
    if (from === 'client') stream.clientEnded = true;
    else stream.serverEnded = true;
    if (stream.clientEnded && stream.serverEnded) this.streams.delete(id);
  }

  private fail(dir: Direction, time: number, code: H2ErrorName, message: string): void {
    dir.error = { code, message };
    this.onFact({ type: 'error', from: dir.from, time, code, message });
  }
}

// A side's limits after one SETTINGS frame, applied in order (section 6.5.3).
function withSettings(base: Limits, settings: Array<[number, number]>): Limits {
  const next = { ...base };
  for (const [id, value] of settings) {
    if (id === SETTINGS.MAX_FRAME_SIZE) next.maxFrameSize = value;
    else if (id === SETTINGS.HEADER_TABLE_SIZE) next.headerTableSize = value;
    else if (id === SETTINGS.MAX_HEADER_LIST_SIZE) next.maxHeaderListSize = value;
    else if (id === SETTINGS.ENABLE_PUSH) next.enablePush = value === 1;
  }
  return next;
}
