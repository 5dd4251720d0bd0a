// One lane's connection to the recording proxy: bb's own head writer
// (request.ts's wireRequest) on a plain socket, and bb's own HTTP/1.1 parser
// reading the answer, so nothing between the capture and the wire
// normalizes the head (a client library lower-cases names and adds a
// Connection the client never sent). The socket is kept for the lane's next
// request unless the exchange ended it (Connection: close, HTTP/1.0, a body
// delimited by the close, a cut).
//
// An exchange can be cut: after the original client's patience (it aborted
// at that time), by --timeout, or by Ctrl-C. The socket is then destroyed,
// which the recording proxy records as the client aborting, as it was.
import { connect, type Socket } from 'node:net';
import { EventStreamParser, headerValue } from '../../core/index.js';
import { Http1Parser, type Http1Head } from '../../proxy/index.js';
import { BIND_READ_BYTES } from '../../diff/index.js';
import type { WireRequest } from './request.js';

/** Why an exchange was cut: as the original client did, --timeout, or Ctrl-C. */
export type CutReason = 'client' | 'timeout' | 'interrupted';

/** What of a response had arrived: its head and its body's start (AnswerStart), `truncated` when more came. */
export interface ResponsePart {
  /** HTTP status. */
  status: number;
  /** The response's headers, as name/value pairs flattened. */
  rawHeaders: string[];
  /** The body as far as it is kept. */
  body: Buffer;
  /** More of the body came (or, cut, would have) than `body` holds. */
  truncated?: boolean;
}

/** How one exchange on the socket ended. */
export type ExchangeOutcome =
  /** A whole response (whatever its status). */
  | ({ kind: 'response' } & ResponsePart)
  /** Cut before the response ended, after `afterMs`; `partial` is what of the response had arrived by then (an event stream's first events). */
  | { kind: 'cut'; why: CutReason; afterMs: number; partial?: ResponsePart }
  /** The connection failed (refused, reset, not HTTP), in a few words. */
  | { kind: 'failed'; reason: string };

/**
 * What an answer's body keeps: its first BIND_READ_BYTES, all that binding reads of it (the capture records the
 * answer; this copy is the replay's and the shadow's mirrors' own). The rest is counted, not held: a 1 GiB download
 * replayed or mirrored held 1 GiB, times the mirrors in flight.
 */
export class AnswerStart {
  private readonly parts: Buffer[] = [];
  private kept = 0;
  private cut = false;

  /** A chunk of the body, as it came (kept as far as there is room: not copied). */
  add(chunk: Buffer): void {
    const room = BIND_READ_BYTES - this.kept;
    if (chunk.length > room) this.cut = true;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.parts.push(part);
    this.kept += part.length;
  }

  /** The outcome's body and whether it is a start only. */
  body(): { body: Buffer; truncated?: boolean } {
    return { body: Buffer.concat(this.parts), ...(this.cut ? { truncated: true } : {}) };
  }
}

/** When an exchange is cut. */
export interface ExchangeLimits {
  /** The original client aborted after this many ms: cut at the same time (with `clientRead`, the latest the cut waits). */
  clientAbortMs?: number;
  /**
   * What the original client had read of the response when it aborted: body bytes, and for an event stream
   * its events. The cut then comes once the target has sent as much (the client read that, then left), not
   * after the same time, which a target a little slower or faster would cut at another event.
   */
  clientRead?: { bytes: number; events?: number };
  /** Cut after this many ms whatever happens (--timeout). */
  timeoutMs: number;
  /** Ctrl-C: cut at once. */
  signal?: AbortSignal;
  /** Each body chunk as it arrives (bb shadow reads an event stream's events while it goes on). */
  onBody?: (chunk: Buffer) => void;
}

/** What an event's lines may hold while clientReadUpTo counts events (it reads none of them). */
const COUNTED_EVENT_CHARS = 64 * 1024;

/** Whether a response has given what the original client had read before it aborted (ExchangeLimits.clientRead): feed it each body chunk. */
export function clientReadUpTo(read: { bytes: number; events?: number } | undefined): ((chunk: Buffer) => boolean) | undefined {
  if (!read) return undefined;
  let bytes = 0;
  let seen = 0;
  // Counted, not held: an event's text past COUNTED_EVENT_CHARS is not kept (a target's endless event is one event).
  const events = read.events !== undefined ? new EventStreamParser(() => seen++, COUNTED_EVENT_CHARS) : undefined;
  return (chunk) => {
    bytes += chunk.length;
    if (!events) return bytes >= read.bytes;
    events.push(chunk, Date.now());
    return seen >= read.events!;
  };
}

/** setTimeout's largest delay; a longer bound is no bound. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Arms an exchange's cut: after the original client's patience or --timeout, whichever comes first. `cut` is told
 * the bound too: a timer may fire a little before it by performance.now() (libuv counts from the loop's cached
 * time), and the cut is reported as after the bound it kept.
 */
export function armCut(limits: ExchangeLimits, cut: (why: CutReason, boundMs?: number) => void): NodeJS.Timeout {
  const client = limits.clientAbortMs;
  const bound = Math.min(client ?? Infinity, limits.timeoutMs);
  return setTimeout(() => cut(client !== undefined && client <= limits.timeoutMs ? 'client' : 'timeout', bound), Math.min(Math.max(0, bound), MAX_TIMER_MS));
}

/** Whether the connection outlives this exchange (RFC 9112 §9.3). */
function persists(req: WireRequest, res: Extract<Http1Head, { kind: 'response' }>): boolean {
  if (res.framing === 'close' || res.switches) return false;
  if (/\bclose\b/i.test(headerValue(res.rawHeaders, 'connection') ?? '')) return false;
  // The request's own Connection and version, read from the head it sent.
  const head = req.head.toString('latin1');
  if (/\r\nconnection:[^\r]*\bclose\b/i.test(head)) return false;
  const http10 = head.slice(0, head.indexOf('\r\n')).endsWith('HTTP/1.0');
  return res.httpVersion === '1.1' && (!http10 || /\r\nconnection:[^\r]*\bkeep-alive\b/i.test(head));
}

/** One lane's connection: requests one after the other, the socket reused while it lasts. */
export class LaneConnection {
  private socket: Socket | undefined;

  /** `host` and `port` of the recording proxy. */
  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** The local port of the open socket (what the proxy's connection-opened fact calls remotePort), once connected. */
  get localPort(): number | undefined {
    return this.socket?.localPort;
  }

  /** Sends one request and reads its response to the end; never throws. */
  exchange(req: WireRequest, limits: ExchangeLimits): Promise<ExchangeOutcome> {
    if (limits.signal?.aborted) return Promise.resolve({ kind: 'cut', why: 'interrupted', afterMs: 0 });
    const socket = this.socket && !this.socket.destroyed ? this.socket : this.open();
    return new Promise<ExchangeOutcome>((resolve) => {
      const started = performance.now();
      let response: Extract<Http1Head, { kind: 'response' }> | undefined;
      const answer = new AnswerStart();
      let settled = false;
      const finish = (outcome: ExchangeOutcome, keep = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        limits.signal?.removeEventListener('abort', onAbort);
        socket.off('data', onData).off('end', onEnd).off('close', onEnd).off('error', onError);
        // A cut exchange's connection is reset, not closed: a FIN after a whole request reads as a client that
        // half-closed and still waits for the answer, so the proxy in between (bb shadow's recording proxy of a
        // target) kept the exchange open until the run's end when the target never answered (--timeout did not cut
        // it there: a probe's stopped candidate). An RST says the client is gone.
        if (!keep) this.drop(socket, outcome.kind === 'cut');
        resolve(outcome);
      };
      const cut = (why: CutReason, boundMs = 0) => finish({
        kind: 'cut',
        why,
        afterMs: Math.max(boundMs, Math.round(performance.now() - started)),
        ...(response ? { partial: { status: response.statusCode, rawHeaders: response.rawHeaders, ...answer.body(), truncated: true } } : {}),
      });
      const readAll = clientReadUpTo(limits.clientRead);
      const parser = new Http1Parser('response', {
        head: (head) => {
          if (head.kind === 'response' && !head.informational) response = head;
        },
        body: (chunk, start, end) => {
          if (!response) return;
          const part = Buffer.from(chunk.subarray(start, end));
          answer.add(part);
          limits.onBody?.(part);
          if (readAll?.(part)) cut('client');
        },
        end: () => {
          if (response) finish({ kind: 'response', status: response.statusCode, rawHeaders: response.rawHeaders, ...answer.body() }, persists(req, response));
        },
      });
      parser.expect(req.method);
      const onData = (chunk: Buffer) => {
        const outcome = parser.feed(chunk);
        if (outcome.state === 'error') finish({ kind: 'failed', reason: `the answer is not HTTP/1.1 (${outcome.fault.reason})` });
      };
      const onEnd = () => {
        parser.finish();
        finish({ kind: 'failed', reason: 'the connection closed before the response ended' });
      };
      const onError = (err: NodeJS.ErrnoException) => finish({ kind: 'failed', reason: `the request failed (${err.code ?? err.message})` });
      const onAbort = () => cut('interrupted');
      const timer = armCut(limits, cut);
      limits.signal?.addEventListener('abort', onAbort, { once: true });
      socket.on('data', onData).once('end', onEnd).once('close', onEnd).once('error', onError);
      socket.write(req.body.length ? Buffer.concat([req.head, req.body]) : req.head);
    });
  }

  /** Closes the connection (the lane is done). */
  close(): void {
    if (this.socket) this.drop(this.socket);
  }

  private open(): Socket {
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    // Between exchanges nobody listens: an idle socket's error only ends it.
    socket.on('error', () => {});
    socket.once('close', () => {
      if (this.socket === socket) this.socket = undefined;
    });
    this.socket = socket;
    return socket;
  }

  private drop(socket: Socket, reset = false): void {
    if (reset && !socket.destroyed) socket.resetAndDestroy();
    else socket.destroy();
    if (this.socket === socket) this.socket = undefined;
  }
}
