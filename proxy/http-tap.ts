// The HTTP/1.1 tap: one client connection, its lazily opened upstream
// connection (1:1), and the bytes between them passed on unchanged while
// bb's parser (http1/parser.ts) reads a copy and turns it into the facts of
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
import { now, type FailureInfo } from './events.js';
import { classifyUpstreamError } from './errors.js';
import type { ConnectionState } from './connection.js';
import { Http1Parser } from './http1/parser.js';
import type { ResponseHead } from './http1/head.js';
import { armConnectTimeout, armSilenceTimeout, connectUpstream, type Upstream } from './upstream.js';
import { handOver } from './upgrade.js';
import { TapRequests } from './tap-requests.js';
import type { Exchange, PreconnectedUpstream, TapSettings } from './tap-settings.js';

export type { PreconnectedUpstream, TapSettings, UpstreamQuery } from './tap-settings.js';

/** Starts tapping one client connection; `upstream` is one already connected for it (TLS interception with ALPN mirrored), used for its first exchange. */
export function tapConnection(conn: ConnectionState, client: Duplex, settings: TapSettings, upstream?: PreconnectedUpstream): void {
  new HttpTap(conn, client, settings, upstream).start();
}

/** The upstream side: frames each response by the request it answers and passes it on, facts first. */
class HttpTap extends TapRequests {
  // ---- upstream → client

  protected openUpstream(upstream: Upstream): void {
    const old = this.upstream;
    if (old) {
      old.removeAllListeners('close');
      old.destroy();
    }
    const preconnected = this.takePreconnected(upstream.origin);
    const socket = preconnected ?? connectUpstream(upstream, this.settings.tlsOptions);
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
    if (!preconnected) armConnectTimeout(socket, this.settings.connectTimeoutMs, upstream.tls ? 'secureConnect' : 'connect');
    armSilenceTimeout(socket, this.settings.upstreamTimeoutMs, () => this.awaitingUpstream());
    let failure: NodeJS.ErrnoException | undefined;
    socket.on('data', (chunk: Buffer) => this.onUpstreamData(socket, chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (failure ??= err));
    socket.on('end', () => this.onUpstreamGone(socket, undefined, true));
    socket.once('close', () => {
      this.onUpstreamGone(socket, failure, false);
    });
  }

  protected onUpstreamData(socket: Socket, chunk: Buffer): void {
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

  protected onResponseHead(head: ResponseHead, end: number): void {
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
  protected forwardDown(to: number): void {
    let ok = true;
    if (this.rPendingHead) {
      ok = this.client.write(this.rPendingHead);
      this.rPendingHead = undefined;
    }
    if (to > this.rFrom) ok = this.client.write(this.rFrom === 0 && to === this.rChunk.length ? this.rChunk : this.rChunk.subarray(this.rFrom, to)) && ok;
    this.rFrom = to;
    if (!ok && this.upstream && !this.clientDraining) {
      // Backpressure: a slow client slows the server down.
      const up = this.upstream;
      this.clientDraining = true;
      up.pause();
      this.client.once('drain', () => {
        this.clientDraining = false;
        up.resume();
      });
    }
  }

  protected onResponseEnd(end: number, rawTrailers: string[]): void {
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
  protected afterResponse(ex: Exchange): void {
    if (ex.upgrade && this.afterUpgrade) {
      const held = this.afterUpgrade;
      this.afterUpgrade = undefined;
      this.requests.resume();
      for (const chunk of held) if (!this.refused) this.feedRequests(chunk);
    }
    if (this.queue[0]?.synthetic) this.answerSynthetic();
    if (this.outbox && !this.awaitingUpstream(this.sending)) {
      const { upstream, bytes } = this.outbox;
      this.outbox = undefined;
      this.openUpstream(upstream);
      for (const b of bytes) this.upstream!.write(b);
      for (const e of this.queue) if (!e.finished && !e.synthetic) this.responses!.expect(e.method);
    }
  }

  protected onResponseSwitch(socket: Socket, upstreamHead: Buffer): void {
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

  /** The upstream ended (FIN) or closed: finish a close-delimited body, fail what was waiting, and end the client (1:1). */
  protected onUpstreamGone(socket: Socket, err: NodeJS.ErrnoException | undefined, fin: boolean): void {
    if (socket !== this.upstream) return;
    if (fin && this.responses) {
      const out = this.responses.finish();
      if (out.state === 'error' && this.queue[0]?.responseStarted) {
        this.upstreamFailed(socket, { code: 'ECONNRESET', message: 'the upstream closed the connection mid-response', phase: 'response' });
        return;
      }
    }
    if (!this.awaitingUpstream()) {
      if (!fin) this.upstream = undefined;
      if (!this.closed && !this.outbox && !this.afterUpgrade) this.client.end();
      return;
    }
    // Bytes that never made a head (an HTTP/2-only server's SETTINGS frame) say more than the close does.
    const started = this.queue[0]?.responseStarted === true;
    if (!err && this.upstreamFirstBytes && !started) err = Object.assign(new Error('the upstream closed the connection inside a response head'), { code: 'HPE_INVALID_EOF_STATE' });
    let failure: FailureInfo;
    if (err) failure = classifyUpstreamError(err, started ? 'response' : err.code === 'ECONNREFUSED' || err.code === 'BB_CONNECT_TIMEOUT' ? 'connect' : 'request', this.upstreamFirstBytes);
    else if (started) failure = { code: 'ECONNRESET', message: 'the upstream closed the connection mid-response', phase: 'response' };
    else failure = { code: 'BB_UPSTREAM_CLOSED', message: 'the upstream closed the connection before answering', phase: 'request' };
    this.upstreamFailed(socket, failure);
  }

  /** The upstream cannot go on: 502 for each waiting exchange whose response had not begun, a close if one had. */
  protected upstreamFailed(socket: Socket, failure: FailureInfo): void {
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
    for (const ex of this.queue) if (!ex.finished && !ex.synthetic) this.failWith502(ex, failure, this.upstreamOrigin);
    this.answerSynthetic();
  }
}
