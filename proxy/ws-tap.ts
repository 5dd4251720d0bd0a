// The WebSocket tap: parses a copy of an upgraded connection's bytes into
// ws-message facts, without relaying, re-framing or pausing anything.
//
// The proxy relays client <-> upstream raw and hands the tap both sockets.
// Either the relay passes the tap every chunk right after forwarding it (`fed`:
// the proxy's own relay, one 'data' listener per socket), or the tap adds its
// own 'data' listeners beside a pipe. Each direction goes to its own FrameParser
// (ws-frames.ts): client frames must be masked, the upstream's must not. Each
// direction inflates permessage-deflate messages with its own
// MessageInflater (ws-inflate.ts), set up from the sending side's negotiated
// parameters.
//
// A message is never held whole: the tap keeps its first `keep` payload bytes
// (inflated) and counts the rest, so a message larger than that (the peers
// allow what they like) becomes a fact with those bytes and its `size`, and
// the frames behind it are parsed as usual.
//
// ws's Receiver did this job before; a direct parser costs a fraction of it
// (no Writable stream per direction, no copy of every chunk, one pass over the
// headers instead of two) and checks the same things with the same codes.
//
// Failures are facts: a frame the parser rejects becomes one ws-error and
// that direction is no longer parsed; the bytes keep flowing.
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import type { PerMessageDeflate as Deflate, extension as Extension } from 'ws';
import { headerValues, lazyModule } from '../core/index.js';
import { now, type Fact, type WsMessage } from './events.js';
import { FrameError, FrameParser, type ParsedUnit } from './ws-frames.js';
import { MessageInflater, type Inflated } from './ws-inflate.js';

// ws, loaded on the first upgrade: a run without WebSockets never loads it.
const wsLib = lazyModule<{ PerMessageDeflate: typeof Deflate; extension: typeof Extension }>('ws', import.meta.url);

/** What the proxy hands the tap once an upgrade succeeded and both sockets are piped. */
export interface WsTapOptions {
  /** The exchange of the upgrade request; every fact carries it. */
  exchangeId: number;
  /**
   * Client socket (already piped to upstream; read only for the tap). Both
   * sockets are absent for a WebSocket over an HTTP/2 stream (RFC 8441,
   * h2-streams.ts): that tap is fed and told the end (WsTap.end).
   */
  client?: Duplex;
  /** Upstream socket (already piped to client; read only for the tap). */
  upstream?: Duplex;
  /** Bytes the client sent after its upgrade request head (already forwarded). */
  clientHead: Buffer;
  /** Bytes the upstream sent right after the 101 head (already forwarded). */
  upstreamHead: Buffer;
  /** The 101's raw headers (flat [name, value, ...]); Sec-WebSocket-Extensions comes from here. */
  responseHeaders: string[];
  /** Where facts go (FactBus.emit): ws-message, ws-error, upgrade-closed. */
  emit: (fact: Fact) => void;
  /** Payload bytes (inflated) of a message its fact carries; the rest is counted (`size`), not held. Default 64 MiB. */
  keep?: number;
  /** The caller passes every chunk to fromClient()/fromUpstream(); the tap adds no 'data' listeners. */
  fed?: boolean;
}

/** A running tap. */
export interface WsTap {
  /** Detaches from both sockets; no more facts are emitted. Idempotent. */
  stop(): void;
  /** Parses a chunk the client sent, which reached the proxy at `time` (epoch ms); for a `fed` tap. */
  fromClient(chunk: Buffer, time: number): void;
  /** Parses a chunk the upstream sent, which reached the proxy at `time` (epoch ms); for a `fed` tap. */
  fromUpstream(chunk: Buffer, time: number): void;
  /** The connection ended both ways (a tap without sockets): upgrade-closed follows once nothing is inflating. Idempotent. */
  end(): void;
}

/** Default payload bytes of one message the tap keeps (inflated). */
export const DEFAULT_WS_KEEP = 64 * 1024 * 1024;

type Direction = 'send' | 'receive';

/** What the first close frame said, and who sent it. */
interface FirstClose {
  code?: number;
  reason?: string;
  by: 'client' | 'server';
}

/** Starts tapping an upgraded connection. Never throws, never writes to or pauses a socket. */
export function tapWebSocket(opts: WsTapOptions): WsTap {
  const keep = opts.keep ?? DEFAULT_WS_KEEP;
  let stopped = false;
  let firstClose: FirstClose | undefined;
  const emit = (fact: Fact): void => {
    if (stopped) return;
    // The first close in wire order (facts leave in it; a close behind a message still inflating is reported after the other side's reply).
    if (fact.type === 'ws-message' && fact.opcode === 8) {
      firstClose ??= { code: fact.closeCode, reason: fact.closeReason, by: fact.direction === 'send' ? 'client' : 'server' };
    }
    try {
      opts.emit(fact);
    } catch {
      // An observer's failure must not reach the connection (FactBus already isolates; this is for bare callbacks).
    }
  };


  const order = new WireOrder(emit);
  const directions = (['send', 'receive'] as const).map((direction) =>
    new DirectionParser({
      direction,
      exchangeId: opts.exchangeId,
      extensionsHeader: extensionsHeader(opts.responseHeaders),
      keep,
      order,
    }),
  );
  const [send, receive] = directions as [DirectionParser, DirectionParser];

  // Head bytes first, then every chunk, each stamped with its arrival time.
  send.push(opts.clientHead, now());
  receive.push(opts.upstreamHead, now());
  const onClientData = (chunk: Buffer): void => send.push(chunk, now());
  const onUpstreamData = (chunk: Buffer): void => receive.push(chunk, now());
  if (!opts.fed) {
    opts.client?.on('data', onClientData);
    opts.upstream?.on('data', onUpstreamData);
  }

  // upgrade-closed once both sockets have closed (or end() was called) and both
  // parsers have drained (inflate is asynchronous: a message may still be on its way).
  let open = 2;
  let ended = false;
  let closedAt = 0;
  const onSocketClosed = (): void => {
    open -= 1;
    if (open === 0) endConnection();
  };
  const endConnection = (): void => {
    if (ended) return;
    ended = true;
    closedAt = now();
    void Promise.all(directions.map((d) => d.finish())).then(() => {
      emit({
        type: 'upgrade-closed',
        exchangeId: opts.exchangeId,
        time: closedAt,
        code: firstClose?.code,
        reason: firstClose?.reason,
        by: firstClose?.by ?? 'none',
      });
      detach();
    });
  };
  const watchClose = (socket: Duplex): (() => void) => {
    let seen = false;
    const once = (): void => {
      if (seen) return;
      seen = true;
      onSocketClosed();
    };
    if (socket.closed || socket.destroyed) queueMicrotask(once);
    else socket.once('close', once);
    return () => socket.removeListener('close', once);
  };
  const unwatchClient = opts.client ? watchClose(opts.client) : () => {};
  const unwatchUpstream = opts.upstream ? watchClose(opts.upstream) : () => {};

  function detach(): void {
    opts.client?.removeListener('data', onClientData);
    opts.upstream?.removeListener('data', onUpstreamData);
    unwatchClient();
    unwatchUpstream();
    for (const d of directions) d.dispose();
  }

  return {
    stop(): void {
      if (stopped) return;
      stopped = true;
      detach();
    },
    fromClient: (chunk, time) => send.push(chunk, time),
    fromUpstream: (chunk, time) => receive.push(chunk, time),
    end: endConnection,
  };
}

/** What one direction's parser needs. */
interface DirectionOptions {
  direction: Direction;
  exchangeId: number;
  /** The 101's Sec-WebSocket-Extensions values, joined ('' when absent). */
  extensionsHeader: string;
  /** Payload bytes of a message to keep. */
  keep: number;
  /** The connection's one wire order, shared by both directions. */
  order: WireOrder;
}

/**
 * Facts of both directions in the order their bytes arrived. Inflate is
 * asynchronous, so a compressed message is ready after the reply it caused
 * may already be parsed; the capture numbers facts (`_bb.seq`) as they are
 * emitted, so each message takes a ticket when its last frame is parsed and
 * facts leave in ticket order. Every ticket is settled (with nothing when its
 * message is dropped), so one direction never holds up the other for good.
 */
class WireOrder {
  private issued = 0;
  private next = 0;
  private readonly settled = new Map<number, Fact | null>();

  constructor(private readonly emit: (fact: Fact) => void) {}

  /** The next place in wire order. */
  ticket(): number {
    return this.issued++;
  }

  /** The fact (or nothing) for `ticket`; emits every fact whose turn has come. */
  settle(ticket: number, fact: Fact | null): void {
    if (ticket === this.next && this.settled.size === 0) {
      // The usual case (nothing inflating): its turn has come, nothing waits behind it.
      this.next++;
      if (fact) this.emit(fact);
      return;
    }
    this.settled.set(ticket, fact);
    for (let f = this.settled.get(this.next); f !== undefined; f = this.settled.get(this.next)) {
      this.settled.delete(this.next++);
      if (f) this.emit(f);
    }
  }
}

/** A unit (or a parse error) with its place in wire order, waiting for those before it. */
interface Queued {
  ticket: number;
  unit?: ParsedUnit;
  error?: FrameError;
  time: number;
  /** A compressed message: set once it is inflated (or could not be). */
  inflated?: Inflated | Error;
}

/**
 * Parses one direction: a FrameParser for frames and messages, then a
 * MessageInflater for compressed ones, fed piece by piece as they arrive.
 * Inflating is asynchronous, so once a compressed message is waiting for
 * its result, later units (and a parse error) wait behind it in a queue:
 * facts leave in wire order, as ws's Receiver would emit them.
 */
class DirectionParser {
  private readonly opts: DirectionOptions;
  private parser: FrameParser | undefined;
  private inflater: MessageInflater | undefined;
  // Units parsed but not yet reported because a compressed message ahead of them is still inflating, in order.
  private readonly queue: Queued[] = [];
  private idleWaiters: Array<() => void> = [];
  // No more facts from this direction: it failed, or a close frame ended it.
  private done = false;
  private lastChunkTime = 0;

  constructor(opts: DirectionOptions) {
    this.opts = opts;
    const isServer = opts.direction === 'send';
    try {
      this.inflater = inflaterFor(opts.extensionsHeader, isServer, opts.keep);
    } catch (err) {
      this.fail(opts.order.ticket(), now(), 'WS_ERR_INVALID_EXTENSIONS', `the 101's Sec-WebSocket-Extensions cannot be used: ${(err as Error).message}`);
      return;
    }
    const inflater = this.inflater;
    this.parser = new FrameParser(
      { masked: isServer, deflate: inflater !== undefined, keep: opts.keep },
      (unit) => this.unit(unit),
      inflater ? (piece) => inflater.write(piece) : undefined,
    );
  }

  /** Feeds one chunk that arrived at `time`. */
  push(chunk: Buffer, time: number): void {
    const parser = this.parser;
    if (this.done || !parser || parser.ended || chunk.length === 0) return;
    this.lastChunkTime = time;
    try {
      parser.push(chunk, time);
    } catch (err) {
      const error = err instanceof FrameError ? err : new FrameError('WS_ERR_PARSE', (err as Error).message);
      const ticket = this.opts.order.ticket();
      if (this.queue.length > 0) this.queue.push({ ticket, error, time });
      else this.fail(ticket, time, error.code, error.message);
    }
  }

  /** Resolves once no inflate is running and nothing waits to be reported. */
  finish(): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops reporting and frees zlib. */
  dispose(): void {
    this.done = true;
    this.dropQueue();
    this.inflater?.close();
    this.inflater = undefined;
  }

  private unit(unit: ParsedUnit): void {
    const ticket = this.opts.order.ticket();
    if (unit.compressed) {
      const queued: Queued = { ticket, unit, time: unit.time };
      this.queue.push(queued);
      // The inflater may answer at once (it failed before): the entry is queued first.
      this.inflater!.end((result) => {
        queued.inflated = result;
        this.drain();
      });
    } else if (this.queue.length > 0) {
      this.queue.push({ ticket, unit, time: unit.time });
    } else {
      this.report(unit, ticket, unit.data, unit.size, unit.restSha256);
    }
  }

  // Reports queued units in order up to the first compressed one still inflating.
  private drain(): void {
    while (this.queue.length > 0 && !this.done) {
      const next = this.queue[0]!;
      if (next.unit?.compressed && next.inflated === undefined) break;
      this.queue.shift();
      if (next.error) this.fail(next.ticket, next.time, next.error.code, next.error.message);
      else if (next.inflated instanceof Error) {
        const err = next.inflated as Error & { code?: string };
        this.fail(next.ticket, this.lastChunkTime, err.code ?? 'WS_ERR_PARSE', err.message);
      } else if (next.inflated) this.report(next.unit!, next.ticket, next.inflated.data, next.inflated.size, next.inflated.restSha256);
      else this.report(next.unit!, next.ticket, next.unit!.data, next.unit!.size, next.unit!.restSha256);
    }
    if (this.done) this.dropQueue();
    if (this.queue.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  // Units that will never be reported still settle their place, so the other direction goes on.
  private dropQueue(): void {
    for (const q of this.queue.splice(0)) this.opts.order.settle(q.ticket, null);
  }

  private report(unit: ParsedUnit, ticket: number, data: Buffer, size: number | undefined, restSha256: Buffer | undefined): void {
    if (this.done) {
      this.opts.order.settle(ticket, null);
      return;
    }
    const fact: WsMessage = {
      type: 'ws-message',
      exchangeId: this.opts.exchangeId,
      time: unit.time,
      direction: this.opts.direction,
      opcode: unit.opcode,
      data,
      frames: unit.frames,
      compressed: unit.compressed,
    };
    if (size !== undefined && size > data.length) {
      fact.size = size;
      if (restSha256) fact.restSha256 = restSha256;
    }
    if (unit.opcode === 8) {
      // RFC 6455 section 5.5.1: nothing follows a close frame in this direction.
      this.done = true;
      if (data.length >= 2) {
        fact.closeCode = data.readUInt16BE(0);
        fact.closeReason = data.toString('utf8', 2);
      }
    }
    this.opts.order.settle(ticket, fact);
  }

  private fail(ticket: number, time: number, code: string, message: string): void {
    if (this.done) {
      this.opts.order.settle(ticket, null);
      return;
    }
    this.done = true;
    this.dropQueue();
    this.opts.order.settle(ticket, { type: 'ws-error', exchangeId: this.opts.exchangeId, time, direction: this.opts.direction, code, message });
  }
}

/**
 * The inflater for one direction, from the 101's permessage-deflate
 * parameters (undefined when it was not negotiated). ws's PerMessageDeflate
 * reads and checks them, so a 101 ws would refuse is refused here with ws's
 * words; throws then. `isServer` picks the side whose messages this
 * direction inflates: the client's parameters for what the server receives.
 */
function inflaterFor(extensionsHeader: string, isServer: boolean, keep: number): MessageInflater | undefined {
  const { PerMessageDeflate, extension } = wsLib();
  const offers = extensionsHeader ? extension.parse(extensionsHeader)[PerMessageDeflate.extensionName] : undefined;
  if (!offers) return undefined;
  const negotiation = new PerMessageDeflate({ isServer });
  const params = negotiation.accept(offers);
  negotiation.cleanup();
  const sender = isServer ? 'client' : 'server';
  const bits = params[`${sender}_max_window_bits`];
  return new MessageInflater({ windowBits: typeof bits === 'number' ? bits : zlib.constants.Z_DEFAULT_WINDOWBITS, takeover: !params[`${sender}_no_context_takeover`], keep });
}

/** The 101's Sec-WebSocket-Extensions values, joined as one list ('' when absent). */
function extensionsHeader(rawHeaders: string[]): string {
  return headerValues(rawHeaders, 'sec-websocket-extensions').join(', ');
}
