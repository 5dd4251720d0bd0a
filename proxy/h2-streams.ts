// The facts of one tapped h2 connection, stream by stream: H2Session reads
// copies of both byte streams and says what crossed (headers, DATA pieces,
// trailers, resets, pushes); this turns that into the proxy's facts of
// events.ts, one exchange per stream (docs/capture-format.md "HTTP/2 and gRPC
// entries"), so capture/ records h2 as it records HTTP/1.1.
//
// Everything here runs synchronously inside H2Session.fromServer, before the
// tap forwards the chunk it read: the record of a stream's last DATA frame
// reaches the journal before the client can see that frame (the crash rule).
//
// While a connection floods (rapid reset, h2-reset-bursts.ts), a new stream
// is held: no exchange yet, only its head. The first thing that is more than
// a reset (response headers, request body bytes or trailers, bb's own 502,
// the connection ending) starts its exchange with the head's time, so
// nothing of it is lost; a held stream that is only reset is summed into the
// connection's burst instead.
import { now, type FailureInfo, type RawHeaders, type Side, type SyntheticResponse } from './events.js';
import { fedUpgradeTap } from './upgrade.js';
import type { ConnectionState } from './connection.js';
import type { TapSettings } from './tap-settings.js';
import type { H2Fact } from './h2/index.js';
import { BURST_SPAN_MS, ResetBurst, ResetFloodGauge, type HeldHead } from './h2-reset-bursts.js';
import { tapWebSocket, type WsTap } from './ws-tap.js';

const EMPTY = Buffer.alloc(0);

/** A WebSocket over one stream (RFC 8441): its tap once the upstream answered 2xx, and which sides have ended. */
interface StreamWebSocket {
  tap?: WsTap;
  clientEnded: boolean;
  serverEnded: boolean;
}

/** One stream's exchange while it is open. */
interface StreamExchange {
  /** The exchange id; undefined while the stream is held. */
  id: number | undefined;
  /** A held stream's head, until its exchange starts. */
  held?: HeldHead;
  /** When the request ended (held streams emit it when they start). */
  requestEndedAt?: number;
  requestEnded: boolean;
  responseStarted: boolean;
  /** An extended CONNECT asking for a WebSocket (RFC 8441 section 4). */
  ws?: StreamWebSocket;
}

/** An extended CONNECT whose :protocol is websocket (RFC 8441 section 4): the stream carries a WebSocket once answered 2xx. */
function isWebSocketConnect(headers: ReadonlyArray<readonly [string, string]>): boolean {
  return field(headers, ':method') === 'CONNECT' && field(headers, ':protocol')?.toLowerCase() === 'websocket';
}

/** Flattens decoded fields into Node's rawHeaders shape, pseudo-headers first as they came. */
function flat(headers: ReadonlyArray<readonly [string, string]>): RawHeaders {
  const out: RawHeaders = [];
  for (const [name, value] of headers) out.push(name, value);
  return out;
}

function field(headers: ReadonlyArray<readonly [string, string]>, name: string): string | undefined {
  for (const [n, v] of headers) if (n === name) return v;
  return undefined;
}

/** A request's method, target and flat headers, as its exchange starts with them. */
function requestHead(headers: Array<[string, string]>): { method: string; target: string; rawHeaders: RawHeaders } {
  const method = field(headers, ':method') ?? '';
  // CONNECT names an authority, not a path (RFC 9113 section 8.5).
  const target = field(headers, ':path') ?? (method === 'CONNECT' ? field(headers, ':authority') ?? '' : '');
  return { method, target, rawHeaders: flat(headers) };
}

/** The open exchanges of one h2 connection, keyed by stream id. */
export class H2Streams {
  private readonly open = new Map<number, StreamExchange>();
  /** The highest stream id a client request opened (the GOAWAY bb may send names it). */
  highestClientStream = 0;
  /** Streams completed since the last flush (their chunk is not forwarded yet). */
  private unflushed = false;
  private readonly gauge = new ResetFloodGauge();
  /** Held streams reset so far, not yet recorded. */
  private burst: ResetBurst | undefined;
  private burstTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly conn: ConnectionState,
    private readonly settings: TapSettings,
    /** The upstream's origin, as capture records it. */
    private readonly origin: () => string,
  ) {}

  /** Exchanges still open. */
  get size(): number {
    return this.open.size;
  }

  /** The exchange id of an open stream. */
  exchangeOf(streamId: number): number | undefined {
    return this.open.get(streamId)?.id;
  }

  /** One fact of the passive reading. */
  onFact(f: H2Fact): void {
    const bus = this.settings.bus;
    switch (f.type) {
      case 'headers': {
        if (f.from === 'client') {
          if (f.kind === 'request') {
            const ex = this.gauge.flooding(f.time) ? this.hold(f.streamId, f.headers, f.time) : this.begin(f.streamId, f.headers, f.time);
            if (f.endStream) this.requestEnded(f.streamId, ex, []);
          } else {
            const ex = this.open.get(f.streamId);
            if (ex?.ws?.tap) {
              if (f.endStream) this.wsSideEnded(f.streamId, ex, 'client');
            } else if (ex) this.requestEnded(f.streamId, this.started(ex), flat(f.headers));
          }
          return;
        }
        const ex = this.open.get(f.streamId);
        if (!ex) return;
        if (ex.ws?.tap) {
          // Trailers on a WebSocket's stream end the upstream's side.
          if (f.endStream) this.wsSideEnded(f.streamId, ex, 'server');
          return;
        }
        // (A held stream, in a reset flood, knows it is a WebSocket once started.)
        if (f.kind === 'response' && !f.endStream && /^2\d\d$/.test(field(f.headers, ':status') ?? '') && this.started(ex).ws) {
          this.openWebSocket(ex, f.headers, f.time);
          return;
        }
        if (f.kind === 'informational' || f.kind === 'response') {
          // A 1xx head comes before the stream's response; the final one starts it.
          if (f.kind === 'response') ex.responseStarted = true;
          bus.emit({
            type: f.kind === 'response' ? 'response-started' : 'response-informational', exchangeId: this.started(ex).id!, time: f.time,
            statusCode: Number(field(f.headers, ':status') ?? 0), statusMessage: '', httpVersion: '2.0', rawHeaders: flat(f.headers),
          });
          if (f.kind === 'response' && f.endStream) this.complete(f.streamId, ex, []);
        } else if (ex.responseStarted) {
          this.complete(f.streamId, ex, flat(f.headers));
        }
        return;
      }
      case 'data': {
        const ex = this.open.get(f.streamId);
        if (!ex) return;
        const tap = ex.ws?.tap;
        if (tap) {
          // A WebSocket's frames, each direction to its parser (DATA frames need not align with WebSocket frames).
          if (f.data.length > 0) (f.from === 'client' ? tap.fromClient(f.data, f.time) : tap.fromUpstream(f.data, f.time));
          if (f.endStream) this.wsSideEnded(f.streamId, ex, f.from === 'client' ? 'client' : 'server');
          return;
        }
        if (f.from === 'client') {
          if (ex.requestEnded) return;
          if (f.data.length > 0) bus.emit({ type: 'request-body', exchangeId: this.started(ex).id!, time: f.time, chunk: f.data });
          if (f.endStream) this.requestEnded(f.streamId, ex, []);
          return;
        }
        if (!ex.responseStarted) return;
        if (f.data.length > 0) bus.emit({ type: 'response-body', exchangeId: ex.id!, time: f.time, chunk: f.data });
        if (f.endStream) this.complete(f.streamId, ex, []);
        return;
      }
      case 'push': {
        const ex = this.begin(f.promisedStreamId, f.headers, f.time, f.streamId);
        this.requestEnded(f.promisedStreamId, ex, []);
        return;
      }
      case 'reset': {
        const ex = this.open.get(f.streamId);
        if (!ex) return;
        this.end(f.streamId);
        // A WebSocket's stream reset: the connection ends (upgrade-closed, as a socket's error ends an HTTP/1.1 one).
        if (ex.ws?.tap) return ex.ws.tap.end();
        const by: Side = f.from === 'client' ? 'client' : 'upstream';
        if (!ex.responseStarted) this.gauge.resetEarly(f.time);
        if (ex.held) {
          this.addToBurst(ex.held, by, f.error, f.time);
          return;
        }
        bus.emit({
          type: 'exchange-aborted', exchangeId: ex.id!, time: f.time, by,
          phase: ex.responseStarted ? 'response' : 'request', reset: f.error,
        });
        return;
      }
      default:
        return;
    }
  }

  /** bb answered a stream itself (its 502 through node:http2): started here if the reading never saw it. */
  failed(streamId: number, rawHeaders: RawHeaders, failure: FailureInfo, response: SyntheticResponse): void {
    let ex = this.open.get(streamId);
    if (!ex) {
      const pairs: Array<[string, string]> = [];
      for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
      ex = this.begin(streamId, pairs, now());
    }
    this.end(streamId);
    this.settings.bus.emit({ type: 'exchange-failed', exchangeId: this.started(ex).id!, time: now(), error: failure, response });
  }

  /** The connection went away: every open stream ends, aborted by `by`, and the burst so far is recorded. */
  abortAll(by: Side, error?: FailureInfo): void {
    for (const [streamId, ex] of [...this.open]) {
      this.end(streamId);
      if (ex.ws?.tap) {
        ex.ws.tap.end();
        continue;
      }
      this.settings.bus.emit({
        type: 'exchange-aborted', exchangeId: this.started(ex).id!, time: now(), by, phase: ex.responseStarted ? 'response' : 'request',
        ...(error ? { error } : {}),
      });
    }
    this.endBurst();
  }

  /** Records the held streams reset so far as one exchange (the burst is as long or as wide as one may be, or the connection ends). */
  endBurst(): void {
    const burst = this.burst;
    if (!burst) return;
    this.burst = undefined;
    clearTimeout(this.burstTimer);
    this.burstTimer = undefined;
    this.settings.bus.emit({
      type: 'streams-reset', connectionId: this.conn.id, exchangeId: this.settings.nextExchangeId(), time: burst.first.time,
      scheme: this.conn.scheme, ...requestHead(burst.first.headers), upstream: this.origin(), ...burst.summary(),
    });
  }

  private addToBurst(head: HeldHead, by: Side, code: string, time: number): void {
    if (!this.burst) {
      this.burst = new ResetBurst(head, time);
      // A burst is recorded within BURST_SPAN_MS even if the flood stops there and the connection stays open.
      this.burstTimer = setTimeout(() => this.endBurst(), BURST_SPAN_MS).unref();
    }
    this.burst.add(head.streamId, by, code, time);
    if (this.burst.full || time - this.burst.began >= BURST_SPAN_MS) this.endBurst();
  }

  private begin(streamId: number, headers: Array<[string, string]>, time: number, pushedBy?: number): StreamExchange {
    const ex: StreamExchange = { id: undefined, requestEnded: false, responseStarted: false };
    if (pushedBy === undefined) this.highestClientStream = Math.max(this.highestClientStream, streamId);
    this.open.set(streamId, ex);
    this.conn.active++;
    this.emitStart(ex, { streamId, time, headers }, pushedBy);
    return ex;
  }

  /** Opens a flooding connection's stream without an exchange: only its head is kept. */
  private hold(streamId: number, headers: Array<[string, string]>, time: number): StreamExchange {
    const ex: StreamExchange = { id: undefined, held: { streamId, time, headers }, requestEnded: false, responseStarted: false };
    this.highestClientStream = Math.max(this.highestClientStream, streamId);
    this.open.set(streamId, ex);
    this.conn.active++;
    return ex;
  }

  /** The stream's exchange, started now from its held head if it was held. */
  private started(ex: StreamExchange): StreamExchange {
    const held = ex.held;
    if (!held) return ex;
    ex.held = undefined;
    this.emitStart(ex, held, undefined);
    if (ex.requestEndedAt !== undefined) this.settings.bus.emit({ type: 'request-ended', exchangeId: ex.id!, time: ex.requestEndedAt, rawTrailers: [] });
    return ex;
  }

  private emitStart(ex: StreamExchange, head: HeldHead, pushedBy: number | undefined): void {
    ex.id = this.settings.nextExchangeId();
    if (pushedBy === undefined && isWebSocketConnect(head.headers)) ex.ws = { clientEnded: false, serverEnded: false };
    this.settings.bus.emit({
      type: 'exchange-started', exchangeId: ex.id, connectionId: this.conn.id, time: head.time, scheme: this.conn.scheme,
      ...requestHead(head.headers), httpVersion: '2.0', upstream: this.origin(), upgrade: ex.ws !== undefined, stream: head.streamId,
      ...(pushedBy !== undefined ? { pushedBy } : {}),
    });
  }

  /**
   * The upstream answered a WebSocket's extended CONNECT with 2xx: from here the stream's DATA in each direction
   * are WebSocket frames, read by the WebSocket tap (bytes cross as they came, as on HTTP/1.1 after a 101).
   */
  private openWebSocket(ex: StreamExchange, headers: Array<[string, string]>, time: number): void {
    const exchangeId = ex.id!;
    const bus = this.settings.bus;
    ex.responseStarted = true;
    const rawHeaders = flat(headers);
    bus.emit({ type: 'upgrade-opened', exchangeId, time, statusCode: Number(field(headers, ':status')), statusMessage: '', httpVersion: '2.0', rawHeaders });
    const custom = this.settings.tap;
    ex.ws!.tap = custom
      ? fedUpgradeTap(custom, exchangeId, rawHeaders, bus)
      : tapWebSocket({ exchangeId, clientHead: EMPTY, upstreamHead: EMPTY, responseHeaders: rawHeaders, emit: (fact) => bus.emit(fact), fed: true, keep: this.settings.wsKeep });
  }

  /** One side of a WebSocket's stream sent END_STREAM; once both have, the stream and its WebSocket end. */
  private wsSideEnded(streamId: number, ex: StreamExchange, side: 'client' | 'server'): void {
    const ws = ex.ws!;
    if (side === 'client') ws.clientEnded = true;
    else ws.serverEnded = true;
    if (!ws.clientEnded || !ws.serverEnded) return;
    this.end(streamId);
    ws.tap!.end();
  }

  private requestEnded(_streamId: number, ex: StreamExchange, rawTrailers: RawHeaders): void {
    if (ex.requestEnded) return;
    ex.requestEnded = true;
    // A held stream's request end is told when (if ever) its exchange starts.
    if (ex.held) ex.requestEndedAt = now();
    else this.settings.bus.emit({ type: 'request-ended', exchangeId: ex.id!, time: now(), rawTrailers });
  }

  private complete(streamId: number, ex: StreamExchange, rawTrailers: RawHeaders): void {
    this.end(streamId);
    // One server chunk may end a hundred streams: their records reach the OS in one write, at flush().
    this.unflushed = true;
    this.settings.bus.emit({ type: 'exchange-completed', exchangeId: ex.id!, time: now(), rawTrailers, batched: true });
  }

  /** Before forwarding a chunk: the completions read from it become durable (the crash rule), in one write. */
  flush(): void {
    if (!this.unflushed) return;
    this.unflushed = false;
    this.settings.bus.emit({ type: 'flush' });
  }

  private end(streamId: number): void {
    if (this.open.delete(streamId)) this.conn.active--;
  }
}

