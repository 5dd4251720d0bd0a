// The HTTP/1.1 tap: one client connection, its lazily opened upstream
// connection (1:1), and the bytes between them passed on unchanged while
// bb's parser (http1-parser.ts) reads a copy and turns it into the facts of
// events.ts (DESIGN "The tap").
//
// Request side: a head is held until it is whole and judged; an accepted
// head goes upstream as received (rewritten only when a flag asks), then
// body bytes flow as they arrive. A refused head is answered by bb (400/431,
// JSON reason) once the responses before it are out, and the connection ends.
//
// Response side: the parser frames each response by the request it answers
// (the queue of exchanges in flight). The end of a message is found before
// the chunk that holds it is forwarded, so exchange-completed reaches the
// journal before the client can see the response complete (the crash rule).
//
// bb speaks only where it must: its 400/431, a 502 for an upstream that
// failed before a response began (a close if the response had begun).
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { now, type EpochMs, type FactBus, type FailureInfo, type SyntheticResponse } from './events.js';
import { badGateway, badRequest, classifyUpstreamError, serializeResponse } from './errors.js';
import type { ConnectionState } from './connection.js';
import { Http1Parser, type FeedOutcome } from './http1-parser.js';
import type { RequestHead, ResponseHead } from './http1-head.js';
import { connectUpstream, type Upstream, type UpstreamTlsOptions } from './upstream.js';
import { outgoingHead } from './request-rewrite.js';
import { handOver, type UpgradeTap } from './upgrade.js';

/** What resolveUpstream is told about a request (http.IncomingMessage has the same fields). */
export interface UpstreamQuery {
  /** The request-target as sent. */
  url: string;
  method: string;
  httpVersion: string;
  rawHeaders: string[];
  /** The client socket (forward mode knows tunnels by it). */
  socket: Duplex;
}

/** Per-proxy settings the tap needs. */
export interface TapSettings {
  bus: FactBus;
  /** Add X-Forwarded-For/-Proto/-Host. */
  xfwd: boolean;
  /** Rewrite Host to the upstream's host. */
  changeOrigin: boolean;
  /** Max wait for the upstream's TCP/TLS connection (0 = none). */
  connectTimeoutMs: number;
  /** Max silence from the upstream while an exchange is under way (0 = none). */
  upstreamTimeoutMs: number;
  /** TLS to https upstreams. */
  tlsOptions: UpstreamTlsOptions;
  /** Largest request head, bytes. */
  maxHeadBytes: number;
  /** Picks the upstream for a request (reverse: fixed; forward: from the request); throws to refuse. */
  resolveUpstream: (req: UpstreamQuery, scheme: 'http' | 'https') => Upstream;
  /** Next exchange id (shared with upgrades, client errors and tunnels). */
  nextExchangeId: () => number;
  /** Reads both directions of each upgraded connection (default: the WebSocket tap for websocket upgrades). */
  tap?: UpgradeTap;
  /** Forward mode: a CONNECT request; the socket is the caller's from here on, `head` the bytes after it. */
  onConnect?: (req: UpstreamQuery, socket: Duplex, head: Buffer) => void;
}

/** How long a client may take to send a whole head once it began one. */
const HEAD_TIMEOUT_MS = 60_000;

/** One request in flight: sent upstream (or answered by bb), its response not finished. */
interface Exchange {
  id: number;
  method: string;
  head: RequestHead;
  upgrade: boolean;
  /** bb answers this one itself (a 502 for a bad target, a 400 for a refused head), when its turn comes. */
  synthetic?: { response: SyntheticResponse; fact: () => void; close: boolean };
  requestEnded: boolean;
  responseStarted: boolean;
  finished: boolean;
}

/** Starts tapping one client connection. */
export function tapConnection(conn: ConnectionState, client: Duplex, settings: TapSettings): void {
  new HttpTap(conn, client, settings).start();
}

class HttpTap {
  private readonly requests: Http1Parser;
  private responses: Http1Parser | undefined;
  private upstream: Socket | undefined;
  private upstreamOrigin = '';
  private upstreamFirstBytes: Buffer | undefined;
  private connectTimer: NodeJS.Timeout | undefined;
  /** Exchanges in order; the front one is being answered. */
  private readonly queue: Exchange[] = [];
  /** The exchange whose request is being received. */
  private sending: Exchange | undefined;
  /** Client bytes of a head not yet whole (the parser holds a copy; these are for a refusal's record). */
  private heldHead: Buffer[] = [];
  /** Client bytes after an upgrade request, kept until the answer says what they are. */
  private afterUpgrade: Buffer[] | undefined;
  /** Client bytes for the next upstream, while the previous one still answers (forward mode, another origin). */
  private outbox: { upstream: Upstream; bytes: Buffer[] } | undefined;
  private cChunk: Buffer = Buffer.alloc(0);
  private cFrom = 0;
  private rChunk: Buffer = Buffer.alloc(0);
  private rFrom = 0;
  private rHead: ResponseHead | undefined;
  private rPendingHead: Buffer | undefined;
  private rHeldHead: Buffer[] = [];
  private rHeadAt: EpochMs = 0;
  private closed = false;
  private headTimer: NodeJS.Timeout | undefined;
  private clientEnded = false;
  private refused = false;

  constructor(
    private readonly conn: ConnectionState,
    private readonly client: Duplex,
    private readonly settings: TapSettings,
  ) {
    this.requests = new Http1Parser('request', {
      head: (head, end) => this.onRequestHead(head as RequestHead, end),
      body: (chunk, start, end) => {
        if (this.sending && !this.sending.synthetic) settings.bus.emit({ type: 'request-body', exchangeId: this.sending.id, time: now(), chunk: chunk.subarray(start, end) });
      },
      end: (end, rawTrailers) => {
        this.forwardUp(this.cChunk, this.cFrom, end);
        this.cFrom = end;
        const ex = this.sending;
        this.sending = undefined;
        if (!ex) return;
        ex.requestEnded = true;
        if (!ex.synthetic) settings.bus.emit({ type: 'request-ended', exchangeId: ex.id, time: now(), rawTrailers });
        if (ex.synthetic && this.queue[0] === ex) this.answerSynthetic();
      },
    }, settings.maxHeadBytes);
  }

  start(): void {
    this.client.on('data', this.onClientData);
    this.client.on('end', this.onClientEnd);
    this.client.on('error', () => {});
    this.client.once('close', this.onClientClose);
  }

  // ---- client → upstream

  private readonly onClientData = (chunk: Buffer): void => {
    if (this.refused) return;
    if (this.afterUpgrade) {
      this.afterUpgrade.push(chunk);
      return;
    }
    this.feedRequests(chunk);
  };

  private feedRequests(chunk: Buffer): void {
    this.cChunk = chunk;
    this.cFrom = 0;
    const out = this.requests.feed(chunk);
    if (out.state === 'ok') {
      if (!this.requests.readingHead) this.forwardUp(chunk, this.cFrom, chunk.length);
      else if (this.cFrom < chunk.length) this.heldHead.push(chunk.subarray(this.cFrom));
      this.armHeadTimer();
    } else if (out.state === 'switched') this.onRequestSwitch(chunk.subarray(out.at));
    else this.onRequestFault(out, chunk);
  }

  /** A client that starts a head must finish it in time (Node's headersTimeout, 60 s): else bb answers 408. */
  private armHeadTimer(): void {
    const partial = this.requests.readingHead && !this.requests.idle;
    if (!partial) {
      clearTimeout(this.headTimer);
      this.headTimer = undefined;
    } else if (!this.headTimer) {
      this.headTimer = setTimeout(() => {
        if (this.closed || this.refused) return;
        const fault = { code: 'ERR_HTTP_REQUEST_TIMEOUT', reason: `the client did not finish its request head within ${HEAD_TIMEOUT_MS / 1000} s` };
        this.cFrom = 0;
        this.onRequestFault({ state: 'error', fault, head: true, tooLarge: false }, Buffer.alloc(0));
      }, HEAD_TIMEOUT_MS);
    }
  }

  private onRequestHead(head: RequestHead, end: number): void {
    this.heldHead = [];
    this.cFrom = end;
    if (head.method === 'CONNECT') {
      // Handled at the switch: a CONNECT never goes upstream.
      this.lastConnect = head;
      return;
    }
    const query: UpstreamQuery = { url: head.target, method: head.method, httpVersion: head.httpVersion, rawHeaders: head.rawHeaders, socket: this.client };
    let upstream: Upstream | undefined;
    let badTarget: string | undefined;
    try {
      upstream = this.settings.resolveUpstream(query, this.conn.scheme);
    } catch (err) {
      badTarget = (err as Error).message;
    }
    const ex: Exchange = { id: this.settings.nextExchangeId(), method: head.method, head, upgrade: head.upgrade, requestEnded: false, responseStarted: false, finished: false };
    this.settings.bus.emit({
      type: 'exchange-started',
      exchangeId: ex.id,
      connectionId: this.conn.id,
      time: now(),
      scheme: this.conn.scheme,
      method: head.method,
      target: head.target,
      httpVersion: head.httpVersion,
      rawHeaders: head.rawHeaders,
      upstream: upstream?.origin ?? 'invalid',
      upgrade: head.upgrade,
    });
    this.conn.active++;
    this.queue.push(ex);
    this.sending = ex;
    if (!upstream) {
      const failure: FailureInfo = { code: 'BB_BAD_TARGET', message: badTarget ?? 'no upstream', phase: 'request' };
      const response = badGateway(failure, 'invalid');
      ex.synthetic = { response, close: false, fact: () => this.settings.bus.emit({ type: 'exchange-failed', exchangeId: ex.id, time: now(), error: failure, response }) };
      return;
    }
    this.route(upstream);
    this.writeUp(outgoingHead(head, upstream, this.settings, this.conn.scheme, (this.client as Socket).remoteAddress ?? ''));
    if (!this.outbox) this.responses!.expect(head.method);
  }

  /** Makes `upstream` the one bytes go to: opened now, or after the current one has answered everything. */
  private route(upstream: Upstream): void {
    if (this.outbox) {
      if (this.outbox.upstream.origin !== upstream.origin) this.outbox = { upstream, bytes: this.outbox.bytes };
      return;
    }
    if (this.upstream && this.upstreamOrigin === upstream.origin && !this.upstream.destroyed) return;
    const busy = this.upstream && !this.upstream.destroyed && this.queue.some((e) => !e.finished && !e.synthetic && e !== this.sending);
    if (busy) {
      this.outbox = { upstream, bytes: [] };
      return;
    }
    this.openUpstream(upstream);
  }

  private writeUp(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.sending?.synthetic) return; // a request bb answers itself: its bytes go nowhere
    if (this.outbox) this.outbox.bytes.push(bytes);
    else this.upstream?.write(bytes);
  }

  private forwardUp(chunk: Buffer, from: number, to: number): void {
    if (to > from) this.writeUp(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to));
  }

  private onRequestSwitch(rest: Buffer): void {
    if (this.lastConnect) {
      this.onConnect(rest);
      return;
    }
    this.afterUpgrade = rest.length > 0 ? [rest] : [];
  }

  private onConnect(rest: Buffer): void {
    const head = this.lastConnect;
    this.detachClient();
    if (!head || !this.settings.onConnect || this.queue.length > 0) {
      this.client.destroy();
      return;
    }
    this.settings.onConnect({ url: head.target, method: head.method, httpVersion: head.httpVersion, rawHeaders: head.rawHeaders, socket: this.client }, this.client, rest);
  }

  private lastConnect: RequestHead | undefined;

  private onRequestFault(out: Extract<FeedOutcome, { state: 'error' }>, chunk: Buffer): void {
    const { fault } = out;
    this.refused = true;
    this.client.pause();
    if (!out.head && this.sending) {
      // The request had begun: its body is broken. Nothing more can be framed; both sides end.
      const ex = this.sending;
      this.finish(ex);
      this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: ex.id, time: now(), by: 'client', phase: 'request', error: { code: fault.code, message: fault.reason, phase: 'parse' } });
      this.destroyAll();
      return;
    }
    const rawPacket = Buffer.concat([...this.heldHead, chunk.subarray(this.cFrom)]);
    this.heldHead = [];
    const response = badRequest(fault.code, fault.reason);
    const id = this.settings.nextExchangeId();
    this.settings.bus.emit({ type: 'client-error', connectionId: this.conn.id, exchangeId: id, time: now(), error: { code: fault.code, message: fault.reason, phase: 'parse' }, rawPacket, response });
    const ex: Exchange = { id, method: '', head: undefined as unknown as RequestHead, upgrade: false, requestEnded: true, responseStarted: false, finished: false, synthetic: { response, close: true, fact: () => {} } };
    this.queue.push(ex);
    this.conn.active++;
    if (this.queue[0] === ex) this.answerSynthetic();
  }

  private readonly onClientEnd = (): void => {
    this.clientEnded = true;
    if (this.closed) return;
    if (this.sending && !this.sending.requestEnded && !this.refused) {
      const ex = this.sending;
      this.finish(ex);
      this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: ex.id, time: now(), by: 'client', phase: 'request' });
      this.destroyAll();
      return;
    }
    // Pass the half-close on: the server sees the client's close behaviour.
    if (this.upstream && !this.upstream.destroyed) this.upstream.end();
    else if (this.queue.length === 0) this.client.end();
  };

  private readonly onClientClose = (): void => {
    this.closed = true;
    clearTimeout(this.headTimer);
    for (const ex of this.queue) {
      if (ex.finished) continue;
      this.finish(ex);
      if (!ex.synthetic) this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: ex.id, time: now(), by: 'client', phase: ex.responseStarted || ex.requestEnded ? 'response' : 'request' });
    }
    this.queue.length = 0;
    this.upstream?.destroy();
  };

  // ---- upstream → client

  private openUpstream(upstream: Upstream): void {
    const old = this.upstream;
    if (old) {
      old.removeAllListeners('close');
      old.destroy();
    }
    const socket = connectUpstream(upstream, this.settings.tlsOptions);
    this.upstream = socket;
    this.upstreamOrigin = upstream.origin;
    this.upstreamFirstBytes = undefined;
    this.responses = new Http1Parser('response', {
      head: (head, end) => this.onResponseHead(head as ResponseHead, end),
      body: (chunk, start, end) => {
        const ex = this.queue[0];
        if (ex && this.rHead && !this.rHead.informational) this.settings.bus.emit({ type: 'response-body', exchangeId: ex.id, time: now(), chunk: chunk.subarray(start, end) });
      },
      end: (end, rawTrailers) => this.onResponseEnd(end, rawTrailers),
    });
    if (this.settings.connectTimeoutMs > 0) {
      this.connectTimer = setTimeout(() => {
        socket.destroy(Object.assign(new Error(`no connection after ${this.settings.connectTimeoutMs} ms`), { code: 'BB_CONNECT_TIMEOUT' }));
      }, this.settings.connectTimeoutMs);
      socket.once(upstream.tls ? 'secureConnect' : 'connect', () => clearTimeout(this.connectTimer));
    }
    if (this.settings.upstreamTimeoutMs > 0) {
      socket.setTimeout(this.settings.upstreamTimeoutMs, () => {
        if (this.queue.some((e) => !e.finished && !e.synthetic)) {
          socket.destroy(Object.assign(new Error(`no data from the upstream for ${this.settings.upstreamTimeoutMs} ms`), { code: 'BB_UPSTREAM_TIMEOUT' }));
        }
      });
    }
    let failure: NodeJS.ErrnoException | undefined;
    socket.on('data', (chunk: Buffer) => this.onUpstreamData(socket, chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (failure ??= err));
    socket.on('end', () => this.onUpstreamGone(socket, undefined, true));
    socket.once('close', () => {
      clearTimeout(this.connectTimer);
      this.onUpstreamGone(socket, failure, false);
    });
  }

  private onUpstreamData(socket: Socket, chunk: Buffer): void {
    if (socket !== this.upstream || !this.responses) return;
    this.upstreamFirstBytes ??= chunk;
    const time = now();
    if (this.responses.idle) this.rHeadAt = time;
    this.rChunk = chunk;
    this.rFrom = 0;
    const out = this.responses.feed(chunk);
    if (out.state === 'ok') {
      if (!this.responses.readingHead) this.forwardDown(chunk.length);
      else if (this.rFrom < chunk.length) this.rHeldHead.push(chunk.subarray(this.rFrom));
    } else if (out.state === 'switched') this.onResponseSwitch(socket, chunk.subarray(out.at));
    else {
      const err = Object.assign(new Error(out.fault.reason), { code: out.fault.code });
      this.upstreamFailed(socket, classifyUpstreamError(err, 'response', this.upstreamFirstBytes));
    }
  }

  private onResponseHead(head: ResponseHead, end: number): void {
    this.rHead = head;
    this.rPendingHead = head.raw;
    this.rHeldHead = [];
    this.rFrom = end;
    if (head.switches) this.lastSwitch = head;
    const ex = this.queue[0];
    if (!ex || head.informational || head.switches) return;
    ex.responseStarted = true;
    this.settings.bus.emit({
      type: 'response-started',
      exchangeId: ex.id,
      time: this.rHeadAt,
      statusCode: head.statusCode,
      statusMessage: head.statusMessage,
      httpVersion: head.httpVersion,
      rawHeaders: head.rawHeaders,
    });
  }

  /** Writes the pending response head and response bytes up to `to` to the client. */
  private forwardDown(to: number): void {
    if (this.rPendingHead) {
      this.client.write(this.rPendingHead);
      this.rPendingHead = undefined;
    }
    if (to > this.rFrom) this.client.write(this.rFrom === 0 && to === this.rChunk.length ? this.rChunk : this.rChunk.subarray(this.rFrom, to));
    this.rFrom = to;
  }

  private onResponseEnd(end: number, rawTrailers: string[]): void {
    const head = this.rHead;
    this.rHead = undefined;
    this.rHeadAt = now();
    if (head?.switches) return; // the switch outcome hands the connection over
    const ex = this.queue[0];
    if (head && !head.informational && ex) {
      this.finish(ex);
      // The crash rule: the record first, then the chunk holding the last byte.
      this.settings.bus.emit({ type: 'exchange-completed', exchangeId: ex.id, time: now(), rawTrailers });
      this.queue.shift();
    }
    if (end >= 0) this.forwardDown(end);
    if (head && !head.informational && ex) this.afterResponse(ex);
  }

  /** After a final response: a refused upgrade reads HTTP again; bb's own answers and a waiting upstream take their turn. */
  private afterResponse(ex: Exchange): void {
    if (ex.upgrade && this.afterUpgrade) {
      const held = this.afterUpgrade;
      this.afterUpgrade = undefined;
      this.requests.resume();
      for (const chunk of held) if (!this.refused) this.feedRequests(chunk);
    }
    if (this.queue[0]?.synthetic) this.answerSynthetic();
    if (this.outbox && !this.queue.some((e) => !e.finished && !e.synthetic && e !== this.sending)) {
      const { upstream, bytes } = this.outbox;
      this.outbox = undefined;
      this.openUpstream(upstream);
      for (const b of bytes) this.upstream!.write(b);
      for (const e of this.queue) if (!e.finished && !e.synthetic) this.responses!.expect(e.method);
    }
  }

  /** Writes bb's own answers at the front of the queue, in turn. */
  private answerSynthetic(): void {
    while (this.queue[0]?.synthetic && this.queue[0].requestEnded) {
      const ex = this.queue.shift()!;
      const { response, fact, close } = ex.synthetic!;
      this.finish(ex);
      fact();
      if (close) {
        this.client.end(serializeResponse(response));
        this.upstream?.end();
        return;
      }
      this.client.write(serializeResponse(response));
    }
  }

  private onResponseSwitch(socket: Socket, upstreamHead: Buffer): void {
    const ex = this.queue.shift();
    const head = this.lastSwitch;
    if (!ex || !head) {
      this.destroyAll();
      return;
    }
    this.finish(ex);
    const clientHead = Buffer.concat(this.afterUpgrade ?? []);
    this.afterUpgrade = undefined;
    this.detachClient();
    socket.removeAllListeners('data');
    socket.removeAllListeners('end');
    socket.removeAllListeners('close');
    socket.setTimeout(0);
    this.settings.bus.emit({
      type: 'upgrade-opened',
      exchangeId: ex.id,
      time: now(),
      statusCode: head.statusCode,
      statusMessage: head.statusMessage,
      httpVersion: head.httpVersion,
      rawHeaders: head.rawHeaders,
      client: this.client,
      upstream: socket,
    });
    handOver({ exchangeId: ex.id, request: ex.head, response: head, client: this.client, upstream: socket, clientHead, upstreamHead, bus: this.settings.bus, tap: this.settings.tap });
  }

  private lastSwitch: ResponseHead | undefined;

  /** The upstream ended (FIN) or closed: finish a close-delimited body, fail what was waiting, and end the client (1:1). */
  private onUpstreamGone(socket: Socket, err: NodeJS.ErrnoException | undefined, fin: boolean): void {
    if (socket !== this.upstream) return;
    if (fin && this.responses) {
      const out = this.responses.finish();
      if (out.state === 'error' && this.queue[0]?.responseStarted) {
        this.upstreamFailed(socket, { code: 'ECONNRESET', message: 'the upstream closed the connection mid-response', phase: 'response' });
        return;
      }
    }
    const waiting = this.queue.some((e) => !e.finished && !e.synthetic);
    if (!waiting) {
      if (!fin) this.upstream = undefined;
      if (!this.closed && !this.outbox && !this.afterUpgrade) this.client.end();
      return;
    }
    // Bytes that never made a head (an HTTP/2-only server's SETTINGS frame) say more than the close does.
    if (!err && this.upstreamFirstBytes && !this.queue[0]?.responseStarted) err = Object.assign(new Error('the upstream closed the connection inside a response head'), { code: 'HPE_INVALID_EOF_STATE' });
    const failure = err
      ? classifyUpstreamError(err, this.queue[0]?.responseStarted ? 'response' : err.code === 'ECONNREFUSED' || err.code === 'BB_CONNECT_TIMEOUT' ? 'connect' : 'request', this.upstreamFirstBytes)
      : { code: this.queue[0]?.responseStarted ? 'ECONNRESET' : 'BB_UPSTREAM_CLOSED', message: this.queue[0]?.responseStarted ? 'the upstream closed the connection mid-response' : 'the upstream closed the connection before answering', phase: (this.queue[0]?.responseStarted ? 'response' : 'request') as FailureInfo['phase'] };
    this.upstreamFailed(socket, failure);
  }

  /** The upstream cannot go on: 502 for each waiting exchange whose response had not begun, a close if one had. */
  private upstreamFailed(socket: Socket, failure: FailureInfo): void {
    socket.destroy();
    if (socket === this.upstream) this.upstream = undefined;
    this.responses = undefined;
    if (this.clientEnded) {
      // The client left first (its FIN reached the server, which closed): the exchanges are the client's aborts.
      for (const ex of this.queue) {
        if (ex.finished) continue;
        this.finish(ex);
        if (!ex.synthetic) this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: ex.id, time: now(), by: 'client', phase: ex.responseStarted ? 'response' : 'request' });
      }
      this.queue.length = 0;
      this.destroyAll();
      return;
    }
    const front = this.queue[0];
    if (front && !front.synthetic && front.responseStarted && !front.finished) {
      this.finish(front);
      this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: front.id, time: now(), by: 'upstream', phase: 'response', error: failure });
      this.destroyAll();
      return;
    }
    for (const ex of this.queue) {
      if (ex.finished || ex.synthetic) continue;
      const response = badGateway(failure, this.upstreamOrigin);
      ex.synthetic = { response, close: false, fact: () => this.settings.bus.emit({ type: 'exchange-failed', exchangeId: ex.id, time: now(), error: failure, response }) };
    }
    this.answerSynthetic();
  }

  private finish(ex: Exchange): void {
    if (ex.finished) return;
    ex.finished = true;
    this.conn.active--;
  }

  private detachClient(): void {
    this.client.pause();
    this.client.off('data', this.onClientData);
    this.client.off('end', this.onClientEnd);
    this.client.off('close', this.onClientClose);
    // As Node's http.Server does for CONNECT and upgrades: whoever adds a 'data' listener next makes it flow.
    (this.client as unknown as { readableFlowing: boolean | null }).readableFlowing = null;
  }

  private destroyAll(): void {
    this.upstream?.destroy();
    this.client.destroy();
  }
}
