// The WebSocket tap: parses a copy of an upgraded connection's bytes into
// ws-message facts, without relaying, re-framing or pausing anything.
//
// The proxy relays client <-> upstream raw and hands the tap both sockets.
// Either the relay passes the tap every chunk right after forwarding it (`fed`:
// the proxy's own relay, one 'data' listener per socket), or the tap adds its
// own 'data' listeners beside a pipe. Each direction goes to its own FrameParser
// (ws-frames.ts): client frames must be masked, the upstream's must not. Each
// direction inflates permessage-deflate messages with its own ws
// PerMessageDeflate, whose isServer flag picks the right side's negotiated
// parameters.
//
// ws's Receiver did this job before; a direct parser costs a fraction of it
// (no Writable stream per direction, no copy of every chunk, one pass over the
// headers instead of two) and checks the same things with the same codes.
//
// Failures are facts: a frame the parser rejects becomes one ws-error and
// that direction is no longer parsed; the bytes keep flowing.
import type { Duplex } from 'node:stream';
import { PerMessageDeflate, extension } from 'ws';
import { headerValues } from '../core/index.js';
import { now, type Fact, type WsMessage } from './events.js';
import { FrameError, FrameParser, type ParsedUnit } from './ws-frames.js';

/** What the proxy hands the tap once an upgrade succeeded and both sockets are piped. */
export interface WsTapOptions {
  /** The exchange of the upgrade request; every fact carries it. */
  exchangeId: number;
  /** Client socket (already piped to upstream; read only for the tap). */
  client: Duplex;
  /** Upstream socket (already piped to client; read only for the tap). */
  upstream: Duplex;
  /** Bytes the client sent after its upgrade request head (already forwarded). */
  clientHead: Buffer;
  /** Bytes the upstream sent right after the 101 head (already forwarded). */
  upstreamHead: Buffer;
  /** The 101's raw headers (flat [name, value, ...]); Sec-WebSocket-Extensions comes from here. */
  responseHeaders: string[];
  /** Where facts go (FactBus.emit): ws-message, ws-error, upgrade-closed. */
  emit: (fact: Fact) => void;
  /** Messages larger than this (bytes, inflated) become an error row; default 64 MiB. */
  maxPayload?: number;
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
}

/** Default cap on one message's inflated size. */
export const DEFAULT_WS_MAX_PAYLOAD = 64 * 1024 * 1024;

type Direction = 'send' | 'receive';

/** What the first close frame said, and who sent it. */
interface FirstClose {
  code?: number;
  reason?: string;
  by: 'client' | 'server';
}

/** Starts tapping an upgraded connection. Never throws, never writes to or pauses a socket. */
export function tapWebSocket(opts: WsTapOptions): WsTap {
  // ws keeps the cap in an int32 (`| 0`).
  const maxPayload = Math.min(opts.maxPayload ?? DEFAULT_WS_MAX_PAYLOAD, 2 ** 31 - 1);
  let stopped = false;
  let firstClose: FirstClose | undefined;
  const emit = (fact: Fact): void => {
    if (stopped) return;
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
      maxPayload,
      order,
      onClose: (code, reason) => {
        firstClose ??= { code, reason, by: direction === 'send' ? 'client' : 'server' };
      },
    }),
  );
  const [send, receive] = directions as [DirectionParser, DirectionParser];

  // Head bytes first, then every chunk, each stamped with its arrival time.
  send.push(opts.clientHead, now());
  receive.push(opts.upstreamHead, now());
  const onClientData = (chunk: Buffer): void => send.push(chunk, now());
  const onUpstreamData = (chunk: Buffer): void => receive.push(chunk, now());
  if (!opts.fed) {
    opts.client.on('data', onClientData);
    opts.upstream.on('data', onUpstreamData);
  }

  // upgrade-closed once both sockets have closed and both parsers have drained
  // (inflate is asynchronous: a message may still be on its way).
  let open = 2;
  let closedAt = 0;
  const onSocketClosed = (): void => {
    open -= 1;
    if (open > 0) return;
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
  const unwatchClient = watchClose(opts.client);
  const unwatchUpstream = watchClose(opts.upstream);

  function detach(): void {
    opts.client.removeListener('data', onClientData);
    opts.upstream.removeListener('data', onUpstreamData);
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
  };
}

/** What one direction's parser needs. */
interface DirectionOptions {
  direction: Direction;
  exchangeId: number;
  /** The 101's Sec-WebSocket-Extensions values, joined ('' when absent). */
  extensionsHeader: string;
  maxPayload: number;
  /** The connection's one wire order, shared by both directions. */
  order: WireOrder;
  /** Called for every close frame, in order (the tap keeps the first). */
  onClose: (code: number | undefined, reason: string | undefined) => void;
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

/** A parsed unit with its place in wire order. */
interface QueuedUnit {
  unit: ParsedUnit;
  ticket: number;
}

/** A parse error waiting behind messages that are still being inflated. */
interface QueuedError {
  error: FrameError;
  time: number;
  ticket: number;
}

/**
 * Parses one direction: a FrameParser for frames and messages, then
 * PerMessageDeflate for compressed ones. Inflate is asynchronous, so once a
 * compressed message is being inflated, later units (and a parse error) wait
 * in a queue: facts leave in wire order, as ws's Receiver would emit them.
 */
class DirectionParser {
  private readonly opts: DirectionOptions;
  private parser: FrameParser | undefined;
  private deflate: PerMessageDeflate | undefined;
  // Units parsed but not yet emitted because an inflate runs ahead of them, in order.
  private readonly queue: Array<QueuedUnit | QueuedError> = [];
  private inflating = false;
  private idleWaiters: Array<() => void> = [];
  // No more facts from this direction: it failed, or a close frame ended it.
  private done = false;
  private lastChunkTime = 0;

  constructor(opts: DirectionOptions) {
    this.opts = opts;
    const isServer = opts.direction === 'send';
    try {
      // Parsed here, once per direction: accept() mutates what it is given.
      const offers = opts.extensionsHeader ? extension.parse(opts.extensionsHeader)[PerMessageDeflate.extensionName] : undefined;
      if (offers) {
        // isServer picks which side's parameters (window bits, context takeover) inflate.
        const deflate = new PerMessageDeflate({ isServer, maxPayload: opts.maxPayload });
        deflate.accept(offers);
        this.deflate = deflate;
      }
    } catch (err) {
      this.fail(opts.order.ticket(), now(), 'WS_ERR_INVALID_EXTENSIONS', `the 101's Sec-WebSocket-Extensions cannot be used: ${(err as Error).message}`);
      return;
    }
    this.parser = new FrameParser(
      { masked: isServer, deflate: this.deflate !== undefined, maxPayload: opts.maxPayload },
      (unit) => this.unit(unit),
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
      if (this.inflating || this.queue.length > 0) this.queue.push({ error, time, ticket });
      else this.fail(ticket, time, error.code, error.message);
    }
  }

  /** Resolves once no inflate is running and nothing waits to be reported. */
  finish(): Promise<void> {
    if (!this.inflating) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops reporting and frees zlib once it is idle. */
  dispose(): void {
    this.done = true;
    this.dropQueue();
    // Closing zlib under a pending inflate makes ws's flush callback throw
    // (it reads the closed stream): wait for the inflate to finish first.
    void this.finish().then(() => {
      this.deflate?.cleanup();
      this.deflate = undefined;
    });
  }

  private unit(unit: ParsedUnit): void {
    const ticket = this.opts.order.ticket();
    if (this.inflating || this.queue.length > 0) this.queue.push({ unit, ticket });
    else if (unit.compressed) this.inflate({ unit, ticket });
    else this.report(unit, ticket, unit.data);
  }

  // Inflates one compressed message; the queue behind it moves on when it is done.
  private inflate(queued: QueuedUnit): void {
    this.inflating = true;
    this.deflate!.decompress(queued.unit.data, true, (err, data) => {
      this.inflating = false;
      if (err) this.fail(queued.ticket, this.lastChunkTime, (err as Error & { code?: string }).code ?? 'WS_ERR_PARSE', err.message);
      else this.report(queued.unit, queued.ticket, data!);
      this.drain();
      if (!this.inflating) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    });
  }

  // Reports queued units in order until the next compressed one starts inflating.
  private drain(): void {
    while (this.queue.length > 0 && !this.done && !this.inflating) {
      const next = this.queue.shift()!;
      if ('error' in next) this.fail(next.ticket, next.time, next.error.code, next.error.message);
      else if (next.unit.compressed) this.inflate(next);
      else this.report(next.unit, next.ticket, next.unit.data);
    }
    if (this.done) this.dropQueue();
  }

  // Units that will never be reported still settle their place, so the other direction goes on.
  private dropQueue(): void {
    for (const q of this.queue.splice(0)) this.opts.order.settle(q.ticket, null);
  }

  private report(unit: ParsedUnit, ticket: number, data: Buffer): void {
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
    if (unit.opcode === 8) {
      // RFC 6455 section 5.5.1: nothing follows a close frame in this direction.
      this.done = true;
      if (data.length >= 2) {
        fact.closeCode = data.readUInt16BE(0);
        fact.closeReason = data.toString('utf8', 2);
      }
    }
    this.opts.order.settle(ticket, fact);
    if (unit.opcode === 8) this.opts.onClose(fact.closeCode, fact.closeReason);
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

/** The 101's Sec-WebSocket-Extensions values, joined as one list ('' when absent). */
function extensionsHeader(rawHeaders: string[]): string {
  return headerValues(rawHeaders, 'sec-websocket-extensions').join(', ');
}
