// The facts of one tapped h2 connection, stream by stream: H2Session reads
// copies of both byte streams and says what crossed (headers, DATA pieces,
// trailers, resets, pushes); this turns that into the proxy's facts of
// events.ts, one exchange per stream (docs/capture-format.md "HTTP/2 and gRPC
// entries"), so capture/ records h2 as it records HTTP/1.1.
//
// Everything here runs synchronously inside H2Session.fromServer, before the
// tap forwards the chunk it read: the record of a stream's last DATA frame
// reaches the journal before the client can see that frame (the crash rule).
import { now, type FailureInfo, type RawHeaders, type Side, type SyntheticResponse } from './events.js';
import type { ConnectionState } from './connection.js';
import type { TapSettings } from './tap-settings.js';
import type { H2Fact } from './h2/index.js';

/** One stream's exchange while it is open. */
interface StreamExchange {
  id: number;
  requestEnded: boolean;
  responseStarted: boolean;
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

/** The open exchanges of one h2 connection, keyed by stream id. */
export class H2Streams {
  private readonly open = new Map<number, StreamExchange>();
  /** The highest stream id a client request opened (the GOAWAY bb may send names it). */
  highestClientStream = 0;
  /** Streams completed since the last flush (their chunk is not forwarded yet). */
  private unflushed = false;

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
            const ex = this.begin(f.streamId, f.headers, f.time);
            if (f.endStream) this.requestEnded(f.streamId, ex, []);
          } else {
            const ex = this.open.get(f.streamId);
            if (ex) this.requestEnded(f.streamId, ex, flat(f.headers));
          }
          return;
        }
        const ex = this.open.get(f.streamId);
        if (!ex || f.kind === 'informational') return;
        if (f.kind === 'response') {
          ex.responseStarted = true;
          bus.emit({
            type: 'response-started', exchangeId: ex.id, time: f.time,
            statusCode: Number(field(f.headers, ':status') ?? 0), statusMessage: '', httpVersion: '2.0', rawHeaders: flat(f.headers),
          });
          if (f.endStream) this.complete(f.streamId, ex, []);
        } else if (ex.responseStarted) {
          this.complete(f.streamId, ex, flat(f.headers));
        }
        return;
      }
      case 'data': {
        const ex = this.open.get(f.streamId);
        if (!ex) return;
        if (f.from === 'client') {
          if (ex.requestEnded) return;
          if (f.data.length > 0) bus.emit({ type: 'request-body', exchangeId: ex.id, time: f.time, chunk: f.data });
          if (f.endStream) this.requestEnded(f.streamId, ex, []);
          return;
        }
        if (!ex.responseStarted) return;
        if (f.data.length > 0) bus.emit({ type: 'response-body', exchangeId: ex.id, time: f.time, chunk: f.data });
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
        bus.emit({
          type: 'exchange-aborted', exchangeId: ex.id, time: f.time, by: f.from === 'client' ? 'client' : 'upstream',
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
    this.settings.bus.emit({ type: 'exchange-failed', exchangeId: ex.id, time: now(), error: failure, response });
  }

  /** The connection went away: every open stream ends, aborted by `by`. */
  abortAll(by: Side, error?: FailureInfo): void {
    for (const [streamId, ex] of [...this.open]) {
      this.end(streamId);
      this.settings.bus.emit({
        type: 'exchange-aborted', exchangeId: ex.id, time: now(), by, phase: ex.responseStarted ? 'response' : 'request',
        ...(error ? { error } : {}),
      });
    }
  }

  private begin(streamId: number, headers: Array<[string, string]>, time: number, pushedBy?: number): StreamExchange {
    const ex: StreamExchange = { id: this.settings.nextExchangeId(), requestEnded: false, responseStarted: false };
    if (pushedBy === undefined) this.highestClientStream = Math.max(this.highestClientStream, streamId);
    this.open.set(streamId, ex);
    this.conn.active++;
    const method = field(headers, ':method') ?? '';
    this.settings.bus.emit({
      type: 'exchange-started', exchangeId: ex.id, connectionId: this.conn.id, time, scheme: this.conn.scheme,
      method,
      // CONNECT names an authority, not a path (RFC 9113 section 8.5).
      target: field(headers, ':path') ?? (method === 'CONNECT' ? field(headers, ':authority') ?? '' : ''),
      httpVersion: '2.0', rawHeaders: flat(headers), upstream: this.origin(), upgrade: false, stream: streamId,
      ...(pushedBy !== undefined ? { pushedBy } : {}),
    });
    return ex;
  }

  private requestEnded(_streamId: number, ex: StreamExchange, rawTrailers: RawHeaders): void {
    if (ex.requestEnded) return;
    ex.requestEnded = true;
    this.settings.bus.emit({ type: 'request-ended', exchangeId: ex.id, time: now(), rawTrailers });
  }

  private complete(streamId: number, ex: StreamExchange, rawTrailers: RawHeaders): void {
    this.end(streamId);
    // One server chunk may end a hundred streams: their records reach the OS in one write, at flush().
    this.unflushed = true;
    this.settings.bus.emit({ type: 'exchange-completed', exchangeId: ex.id, time: now(), rawTrailers, batched: true });
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
