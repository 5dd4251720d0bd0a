// The client side of the HTTP tap: each request head is held until whole and
// judged (http1/parser.ts), then goes upstream as received (rewritten only
// when a flag asks); body bytes follow as they arrive. A refused head gets
// bb's 400/431/408 once the responses before it are out, and the connection
// ends. CONNECT and upgrades stop the parser: what follows is not HTTP.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { now } from './events.js';
import { badRequest } from './errors.js';
import type { ConnectionState } from './connection.js';
import { Http1Parser, type FeedOutcome } from './http1/parser.js';
import type { RequestHead } from './http1/head.js';
import type { Upstream } from './upstream.js';
import { outgoingHead } from './request-rewrite.js';
import { TapState } from './tap-state.js';
import { HEAD_TIMEOUT_MS, type Exchange, type PreconnectedUpstream, type TapSettings, type UpstreamQuery } from './tap-settings.js';
import { startsLikeH2, tapH2 } from './h2-tap.js';

/** Reads the client's requests and passes them upstream; the upstream side is the subclass's (http-tap.ts). */
export abstract class TapRequests extends TapState {
  protected readonly requests: Http1Parser;

  constructor(conn: ConnectionState, client: Duplex, settings: TapSettings, preconnected?: PreconnectedUpstream) {
    super(conn, client, settings, preconnected);
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

  /** Opens (or replaces) the upstream connection bytes go to. */
  protected abstract openUpstream(upstream: Upstream): void;

  /** Starts reading the client. */
  start(): void {
    this.client.on('data', this.onClientData);
    this.client.on('end', this.onClientEnd);
    this.client.on('error', () => {});
    this.client.once('close', this.onClientClose);
  }

  // ---- client → upstream

  protected readonly onClientData = (chunk: Buffer): void => {
    if (this.refused) return;
    if (this.afterUpgrade) {
      this.afterUpgrade.push(chunk);
      return;
    }
    this.feedRequests(chunk);
  };

  protected feedRequests(chunk: Buffer): void {
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
  protected armHeadTimer(): void {
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

  protected onRequestHead(head: RequestHead, end: number): void {
    this.heads++;
    this.heldHead = [];
    this.cFrom = end;
    if (head.method === 'CONNECT') {
      // Handled at the switch: a CONNECT never goes upstream.
      this.lastConnect = head;
      return;
    }
        let upstream: Upstream | undefined;
    let badTarget: string | undefined;
    try {
      upstream = this.settings.resolveUpstream(this.queryOf(head), this.conn.scheme);
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
      this.failWith502(ex, { code: 'BB_BAD_TARGET', message: badTarget ?? 'no upstream', phase: 'request' }, 'invalid');
      return;
    }
    this.route(upstream);
    this.writeUp(outgoingHead(head, upstream, this.settings, this.conn.scheme, (this.client as Socket).remoteAddress ?? ''));
    if (!this.outbox) this.responses!.expect(head.method);
  }

  /** Makes `upstream` the one bytes go to: opened now, or after the current one has answered everything. */
  protected route(upstream: Upstream): void {
    if (this.outbox) {
      if (this.outbox.upstream.origin !== upstream.origin) this.outbox = { upstream, bytes: this.outbox.bytes };
      return;
    }
    if (this.upstream && this.upstreamOrigin === upstream.origin && !this.upstream.destroyed) return;
    const busy = this.upstream && !this.upstream.destroyed && this.awaitingUpstream(this.sending);
    if (busy) {
      this.outbox = { upstream, bytes: [] };
      return;
    }
    this.openUpstream(upstream);
  }

  protected writeUp(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.sending?.synthetic) return; // a request bb answers itself: its bytes go nowhere
    if (this.outbox) this.outbox.bytes.push(bytes);
    else if (this.upstream && !this.upstream.write(bytes)) {
      // Backpressure: a slow server slows the client down, nothing piles up in bb.
      const up = this.upstream;
      this.client.pause();
      up.once('drain', () => {
        if (!this.refused && up === this.upstream) this.client.resume();
      });
    }
  }

  protected forwardUp(chunk: Buffer, from: number, to: number): void {
    if (to > from) this.writeUp(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to));
  }

  /** A request as resolveUpstream and onConnect see it. */
  protected queryOf(head: RequestHead): UpstreamQuery {
    return { url: head.target, method: head.method, httpVersion: head.httpVersion, rawHeaders: head.rawHeaders, socket: this.client };
  }

  protected onRequestSwitch(rest: Buffer): void {
    // What follows is not read as HTTP: a head timer armed by this request's first bytes must not answer 408 into it later.
    clearTimeout(this.headTimer);
    this.headTimer = undefined;
    if (this.lastConnect) {
      this.onConnect(rest);
      return;
    }
    this.afterUpgrade = rest.length > 0 ? [rest] : [];
  }

  protected onConnect(rest: Buffer): void {
    const head = this.lastConnect;
    this.detachClient();
    if (!head || !this.settings.onConnect || this.queue.length > 0) {
      this.client.destroy();
      return;
    }
    this.settings.onConnect(this.queryOf(head), this.client, rest);
  }

  protected onRequestFault(out: Extract<FeedOutcome, { state: 'error' }>, chunk: Buffer): void {
    const { fault } = out;
    // "PRI * HTTP/2.0" as a connection's first head is no HTTP/1.1 request but the h2 preface (h2c with prior knowledge).
    if (out.head && this.settings.h2c && this.queue.length === 0 && this.heads === 0) {
      const bytes = this.heldHead.length > 0 ? Buffer.concat([...this.heldHead, chunk]) : chunk;
      if (startsLikeH2(bytes)) {
        this.detachClient();
        clearTimeout(this.headTimer);
        tapH2({ conn: this.conn, client: this.client, head: bytes, settings: this.settings });
        return;
      }
    }
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

  protected readonly onClientEnd = (): void => {
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

  protected readonly onClientClose = (): void => {
    this.closed = true;
    clearTimeout(this.headTimer);
    for (const ex of this.queue) {
      if (ex.finished) continue;
      this.finish(ex);
      if (!ex.synthetic) this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: ex.id, time: now(), by: 'client', phase: ex.responseStarted || ex.requestEnded ? 'response' : 'request' });
    }
    this.queue.length = 0;
    this.upstream?.destroy();
    this.preconnected?.socket.destroy();
  };

  protected detachClient(): void {
    this.client.pause();
    this.client.off('data', this.onClientData);
    this.client.off('end', this.onClientEnd);
    this.client.off('close', this.onClientClose);
    // As Node's http.Server does for CONNECT and upgrades: whoever adds a 'data' listener next makes it flow.
    (this.client as unknown as { readableFlowing: boolean | null }).readableFlowing = null;
  }
}
