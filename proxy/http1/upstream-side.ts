// The upstream side of the HTTP/1 tap: the upstream connection (in reverse
// mode opened at accept, else when the first request needs it; replaced when
// a request needs another origin)
// and the upstream → client direction. The parser frames each response by
// the request it answers (the queue of exchanges in flight). The end of a
// message is found before the chunk that holds it is forwarded, so
// exchange-completed reaches the journal before the client can see the
// response complete (the crash rule). An upstream that fails is turned into
// bb's 502 for each exchange whose response had not begun.
//
// This side owns the upstream socket, the response parser, its cursor into
// the chunk being read, and the backpressure both ways across the socket;
// what a 101 or a final response does to the connection is tap.ts's.
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { classifyUpstreamError } from '../errors.js';
import { now, type EpochMs, type FailureInfo } from '../events.js';
import { armConnectTimeout, armSilenceTimeout, connectUpstream, type Upstream } from '../upstream.js';
import type { PreconnectedUpstream, TapSettings } from '../tap-settings.js';
import { Http1Parser } from './parser.js';
import { viewStart } from './lines.js';
import { TurnFlush } from '../turn-flush.js';
import type { ResponseHead } from './head.js';
import type { Exchange, Exchanges } from './exchanges.js';
import { endSocket } from '../connection.js';

/** What the upstream side asks of its connection (tap.ts). */
export interface UpstreamSideOwner {
  /** True while bb still reads the client (a drained upstream may resume it). */
  mayResumeClient(): boolean;
  /** True once the client sent its FIN. */
  readonly clientEnded: boolean;
  /** A final response for `ex` ended and its last byte was passed on; `byClose` when the upstream's close ended its body. */
  responseEnded(ex: Exchange, byClose: boolean): void;
  /** The upstream answered 101 (`head`, undefined if the parser switched without one); `upstreamHead` is what it sent after. */
  upgraded(socket: Socket, head: ResponseHead | undefined, upstreamHead: Buffer): void;
  /** The upstream ended or closed with nothing awaited. */
  upstreamEnded(): void;
  /** Writes bb's own answers at the front of the queue, in turn. */
  answerSynthetic(): void;
  /** Ends both connections at once. */
  destroyAll(): void;
}

/** The upstream connection and the responses read from it. */
export class UpstreamSide {
  private socket: Socket | undefined;
  /** The origin `socket` is connected to. */
  private origin = '';
  /** The first bytes the upstream sent (they tell an HTTP/2-only server from a broken one). */
  private firstBytes: Buffer | undefined;
  /** Frames the responses of `socket` (one parser per upstream connection). */
  private parser: Http1Parser | undefined;
  /** The chunk being read, and how far into it bytes were passed to the client. */
  private chunk: Buffer = Buffer.alloc(0);
  private from = 0;
  /** The response whose head was read and whose end was not. */
  private head: ResponseHead | undefined;
  /** That head's bytes, until they are written to the client with what follows. */
  private pendingHead: Buffer | undefined;
  /** Where pendingHead starts in `chunk` when it is a view of it (the head came whole in this chunk), else -1. */
  private headStart = -1;
  /** When the first byte of the response being read came. */
  private headAt: EpochMs = 0;
  /** The upstream is paused until the client drains. */
  private clientDraining = false;
  /** The last 101 head read (the switch outcome that follows it hands the sockets over). */
  private lastSwitch: ResponseHead | undefined;
  /** Bytes for the client held until this turn's flush, since a response completed (turn-flush.ts); undefined when none are held. */
  private held: Buffer[] | undefined;
  /** Client bytes for the next upstream, while the previous one still answers (forward mode, another origin). */
  private outbox: { upstream: Upstream; bytes: Buffer[] } | undefined;

  constructor(
    private readonly client: Duplex,
    private readonly settings: TapSettings,
    private readonly exchanges: Exchanges,
    private readonly owner: UpstreamSideOwner,
    /** An upstream connected before the tap began, for the first exchange (then undefined). */
    private preconnected?: PreconnectedUpstream,
  ) {}

  // ---- client → upstream

  /** Makes `upstream` the one bytes go to: opened now, or after the current one has answered everything but `sending`. */
  route(upstream: Upstream, sending: Exchange | undefined): void {
    if (this.outbox) {
      if (this.outbox.upstream.origin !== upstream.origin) this.outbox = { upstream, bytes: this.outbox.bytes };
      return;
    }
    if (this.socket && this.origin === upstream.origin && !this.socket.destroyed) return;
    const busy = this.socket && !this.socket.destroyed && this.exchanges.awaitingUpstream(sending);
    if (busy) {
      this.outbox = { upstream, bytes: [] };
      return;
    }
    this.open(upstream);
  }

  /** A request with `method` went upstream: its response is framed by it (one kept in the outbox is expected when its upstream opens). */
  expect(method: string): void {
    if (!this.outbox) this.parser!.expect(method);
  }

  /** Sends client bytes upstream, or keeps them for the upstream that opens next. */
  write(bytes: Buffer): void {
    if (this.outbox) this.outbox.bytes.push(bytes);
    else if (this.socket && !this.socket.write(bytes)) {
      // Backpressure: a slow server slows the client down, nothing piles up in bb.
      const up = this.socket;
      this.client.pause();
      up.once('drain', () => {
        if (this.owner.mayResumeClient() && up === this.socket) this.client.resume();
      });
    }
  }

  /** Opens the upstream waiting in the outbox once nothing but `except` awaits the current one, and sends it what was kept. */
  openWaiting(except: Exchange | undefined): void {
    if (!this.outbox || this.exchanges.awaitingUpstream(except)) return;
    const { upstream, bytes } = this.outbox;
    this.outbox = undefined;
    this.open(upstream);
    for (const b of bytes) this.socket!.write(b);
    for (const e of this.exchanges.queue) if (!e.finished && !e.synthetic) this.parser!.expect(e.method);
  }

  /** Passes the client's half-close on; false when there is no open upstream to pass it to. */
  passHalfClose(): boolean {
    if (!this.socket || this.socket.destroyed) return false;
    endSocket(this.socket);
    return true;
  }

  /** Ends the upstream once the client connection ends (after bb's own last answer, or a close-delimited body); bytes kept for a next upstream are dropped. */
  end(): void {
    this.outbox = undefined;
    if (this.socket) endSocket(this.socket);
    // One opened at accept and never used serves no one once the client connection ends.
    this.preconnected?.socket.destroy();
    this.preconnected = undefined;
  }

  /** True while the upstream has not drained what was written to it (the client is paused until it does). */
  get congested(): boolean {
    return this.socket?.writableNeedDrain === true;
  }

  /** Destroys the upstream connection. */
  destroy(): void {
    this.socket?.destroy();
  }

  /** The connection opened at accept, for the h2 tap (h2c with prior knowledge) when it is plain TCP and still usable; a TLS one (its ALPN said http/1.1) is closed. */
  takeForH2(): PreconnectedUpstream | undefined {
    const pre = this.preconnected;
    this.preconnected = undefined;
    if (!pre) return undefined;
    if (!(pre.socket instanceof TLSSocket) && !pre.socket.destroyed && pre.socket.readable && pre.socket.writable) return pre;
    pre.socket.destroy();
    return undefined;
  }

  /** The client closed: the upstream and an unused pre-connected one go too. */
  drop(): void {
    this.socket?.destroy();
    this.preconnected?.socket.destroy();
  }

  /** Lets go of `socket`, now the upgrade tap's: none of its events reach this side any more. */
  release(socket: Socket): void {
    socket.removeAllListeners('data');
    socket.removeAllListeners('end');
    socket.removeAllListeners('close');
    socket.setTimeout(0);
  }

  // ---- upstream → client

  /** Opens (or replaces) the upstream connection bytes go to. */
  private open(upstream: Upstream): void {
    const old = this.socket;
    if (old) {
      old.removeAllListeners('close');
      old.destroy();
    }
    const preconnected = this.takePreconnected(upstream.origin);
    const socket = preconnected ?? connectUpstream(upstream, this.settings.tlsOptions);
    this.socket = socket;
    this.origin = upstream.origin;
    this.firstBytes = undefined;
    this.parser = new Http1Parser('response', {
      head: (head, end) => this.onHead(head as ResponseHead, end),
      body: (chunk, start, end) => {
        const ex = this.exchanges.front;
        if (ex && this.head && !this.head.informational) this.settings.bus.emit({ type: 'response-body', exchangeId: ex.id, time: now(), chunk: chunk.subarray(start, end) });
      },
      end: (end, rawTrailers) => this.onEnd(end, rawTrailers),
    });
    if (!preconnected) armConnectTimeout(socket, this.settings.connectTimeoutMs, upstream.tls ? 'secureConnect' : 'connect');
    armSilenceTimeout(socket, this.settings.upstreamTimeoutMs, () => this.exchanges.awaitingUpstream());
    let failure: NodeJS.ErrnoException | undefined;
    socket.on('data', (chunk: Buffer) => this.onData(socket, chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (failure ??= err));
    socket.on('end', () => this.onGone(socket, undefined, true));
    socket.once('close', () => {
      this.onGone(socket, failure, false);
    });
  }

  /** The pre-connected upstream when it is for `origin` and still open; dropped (closed) otherwise: it serves the first exchange only. */
  private takePreconnected(origin: string): Socket | undefined {
    const pre = this.preconnected;
    this.preconnected = undefined;
    if (!pre) return undefined;
    if (pre.origin === origin && !pre.socket.destroyed && pre.socket.readable && pre.socket.writable) return pre.socket;
    pre.socket.destroy();
    return undefined;
  }

  private onData(socket: Socket, chunk: Buffer): void {
    if (socket !== this.socket || !this.parser) return;
    this.firstBytes ??= chunk;
    const time = now();
    if (this.parser.idle) this.headAt = time;
    this.chunk = chunk;
    this.from = 0;
    this.headStart = -1;
    const out = this.parser.feed(chunk);
    if (out.state === 'ok') {
      if (!this.parser.readingHead) this.forwardDown(chunk.length);
    } else if (out.state === 'switched') this.owner.upgraded(socket, this.lastSwitch, chunk.subarray(out.at));
    else {
      const err = Object.assign(new Error(out.fault.reason), { code: out.fault.code });
      this.failed(socket, classifyUpstreamError(err, 'response', this.firstBytes));
    }
  }

  private onHead(head: ResponseHead, end: number): void {
    this.head = head;
    this.pendingHead = head.raw;
    this.headStart = viewStart(head.raw, this.chunk, end);
    this.from = end;
    if (head.switches) this.lastSwitch = head;
    const ex = this.exchanges.front;
    if (!ex || head.switches) return;
    // A 1xx head comes before the exchange's response; the final one starts it.
    if (!head.informational) ex.responseStarted = true;
    this.settings.bus.emit({
      type: head.informational ? 'response-informational' : 'response-started',
      exchangeId: ex.id,
      time: this.headAt,
      statusCode: head.statusCode,
      statusMessage: head.statusMessage,
      httpVersion: head.httpVersion,
      rawHeaders: head.rawHeaders,
    });
  }

  /** Writes the pending response head and response bytes up to `to` to the client (or holds them, after a completion this turn). */
  private forwardDown(to: number): void {
    if (this.pendingHead && this.headStart >= 0 && this.headStart + this.pendingHead.length === this.from) {
      // The head is a view of this chunk just before `from`: head and body go out as one slice of it, in one write
      // (no cork, no writev), as the upstream sent them.
      this.from = this.headStart;
      this.pendingHead = undefined;
    }
    let ok = true;
    // A head and the first body bytes after it leave in one writev (one segment), as the upstream sent them:
    // in two writes the client read the head alone and its first body bytes a wake-up later (SSE's first event).
    const corked = this.pendingHead !== undefined && to > this.from && !this.held;
    if (corked) this.client.cork();
    if (this.pendingHead) {
      ok = this.toClient(this.pendingHead);
      this.pendingHead = undefined;
    }
    if (to > this.from) ok = this.toClient(this.from === 0 && to === this.chunk.length ? this.chunk : this.chunk.subarray(this.from, to)) && ok;
    if (corked) this.client.uncork();
    this.from = to;
    if (!ok) this.slowDown();
  }

  private toClient(bytes: Buffer): boolean {
    if (!this.held) return this.client.write(bytes);
    this.held.push(bytes);
    return true;
  }

  /** Holds client bytes until this turn's flush has made the completion just read durable. */
  private hold(): void {
    if (this.held) return;
    this.held = [];
    TurnFlush.of(this.settings.bus).defer(this.releaseHeld);
  }

  /** Writes what was held, in one go (corked: one writev for a head and its body). */
  private readonly releaseHeld = (): void => {
    const held = this.held;
    this.held = undefined;
    if (!held || held.length === 0 || this.client.destroyed || this.client.writableEnded) return;
    let ok = true;
    if (held.length > 1) this.client.cork();
    for (const b of held) ok = this.client.write(b) && ok;
    if (held.length > 1) this.client.uncork();
    if (!ok) this.slowDown();
  };

  /** Before anything else reaches the client (bb's own answer, an end, a hand-over): the held completion is made durable and its bytes written now. */
  settle(): void {
    if (!this.held) return;
    TurnFlush.of(this.settings.bus).flushNow();
    this.releaseHeld();
  }

  /** Backpressure: a slow client slows the server down. */
  private slowDown(): void {
    if (this.socket && !this.clientDraining) {
      const up = this.socket;
      this.clientDraining = true;
      up.pause();
      this.client.once('drain', () => {
        this.clientDraining = false;
        up.resume();
      });
    }
  }

  private onEnd(end: number, rawTrailers: string[]): void {
    const head = this.head;
    this.head = undefined;
    this.headAt = now();
    if (head?.switches) return; // the switch outcome hands the connection over
    const ex = this.exchanges.front;
    const final = head && !head.informational && ex;
    if (final) {
      this.exchanges.finish(ex);
      // The crash rule: the record first, then the chunk holding the last byte; that chunk (and what
      // follows it) waits for the turn's flush, which makes every completion of the turn durable at once.
      this.settings.bus.emit({ type: 'exchange-completed', exchangeId: ex.id, time: now(), rawTrailers, batched: true });
      this.hold();
      this.exchanges.queue.shift();
    }
    if (end >= 0) this.forwardDown(end);
    // end < 0: the upstream's close ended the body (parser.finish()).
    if (final) this.owner.responseEnded(ex, end < 0);
  }

  /** The upstream ended (FIN) or closed: finish a close-delimited body, fail what was waiting, and end the client (1:1). */
  private onGone(socket: Socket, err: NodeJS.ErrnoException | undefined, fin: boolean): void {
    if (socket !== this.socket) return;
    if (fin && this.parser) {
      const out = this.parser.finish();
      if (out.state === 'error' && this.exchanges.front?.responseStarted) {
        this.failed(socket, { code: 'ECONNRESET', message: 'the upstream closed the connection mid-response', phase: 'response' });
        return;
      }
    }
    if (!this.exchanges.awaitingUpstream()) {
      if (!fin) this.socket = undefined;
      if (!this.outbox) this.owner.upstreamEnded();
      return;
    }
    // Bytes that never made a head (an HTTP/2-only server's SETTINGS frame) say more than the close does.
    const started = this.exchanges.front?.responseStarted === true;
    if (!err && this.firstBytes && !started) err = Object.assign(new Error('the upstream closed the connection inside a response head'), { code: 'HPE_INVALID_EOF_STATE' });
    let failure: FailureInfo;
    if (err) failure = classifyUpstreamError(err, started ? 'response' : err.code === 'ECONNREFUSED' || err.code === 'BB_CONNECT_TIMEOUT' ? 'connect' : 'request', this.firstBytes);
    else if (started) failure = { code: 'ECONNRESET', message: 'the upstream closed the connection mid-response', phase: 'response' };
    else failure = { code: 'BB_UPSTREAM_CLOSED', message: 'the upstream closed the connection before answering', phase: 'request' };
    this.failed(socket, failure);
  }

  /** The upstream cannot go on: 502 for each waiting exchange whose response had not begun, a close if one had. */
  private failed(socket: Socket, failure: FailureInfo): void {
    socket.destroy();
    if (socket === this.socket) this.socket = undefined;
    this.parser = undefined;
    if (this.owner.clientEnded) {
      // The client left first (its FIN reached the server, which closed): the exchanges are the client's aborts.
      this.exchanges.abortAll((ex) => (ex.responseStarted ? 'response' : 'request'));
      this.owner.destroyAll();
      return;
    }
    const front = this.exchanges.front;
    if (front && !front.synthetic && front.responseStarted && !front.finished) {
      this.exchanges.finish(front);
      this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: front.id, time: now(), by: 'upstream', phase: 'response', error: failure });
      this.owner.destroyAll();
      return;
    }
    for (const ex of this.exchanges.queue) if (!ex.finished && !ex.synthetic) this.exchanges.failWith502(ex, failure, this.origin);
    this.owner.answerSynthetic();
  }
}
