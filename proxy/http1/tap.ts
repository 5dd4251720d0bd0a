// The HTTP/1.1 tap: one client connection, its upstream connection (1:1),
// and the bytes between them passed on unchanged while bb's parser
// (parser.ts) reads a copy of each direction and turns it into the facts of
// events.ts (docs/architecture.md).
//
// This file is the connection: its one named state, every change of it (in
// enter()), the client socket's events, and the steps that change what the
// connection is: a refusal, a switch to another protocol, the close. Each
// direction is an object of its own that owns its parser and its cursor into
// the chunk being read: client-side.ts (requests, client → upstream) and
// upstream-side.ts (the upstream socket; responses, upstream → client). The
// exchanges in flight are one queue that all three read (exchanges.ts).
//
// bb speaks only where it must: its 400/431/408 for a refused head, a 502
// for an upstream that failed before a response began (a close if the
// response had begun). It adds nothing after a body the upstream's close
// ended (RFC 9112 §6.3 item 8): the client connection ends there too.
//
// The state says what the client's bytes are; it moves after each chunk the
// client side reads, when the upstream answers an upgrade, and when the
// upstream's close ends a response body:
//
//    opened ── first bytes ──▶ ┌──────────── reading HTTP requests ────────────┐
//      │ no byte within        │  idle ⇄ request-head ⇄ streaming (⇄ idle)     │
//      │ the head timeout      └───┬──────────────┬──────────────┬─────────────┘
//      ▼                           │ upgrade      │ CONNECT,     │ refused head, broken body,
//    (bb closes it, silently)      │ request ends │ h2 preface   │ head not whole in time
//                                  ▼              ▼              ▼
//                          awaiting-upstream ─101─▶ switched   refused
//                                  │ any other final response: held bytes are read again → idle
//
//   A response body ended by the upstream's close → ended (bb ends the
//   client; what it sends after is not read), from any state but switched.
//   Every state but switched (the client is no longer ours) → closed when
//   the client socket closes. The head timer runs exactly while the state is
//   opened or request-head. While awaiting-upstream, bb holds at most
//   MAX_HELD_AFTER_UPGRADE client bytes, then stops reading the client until
//   the answer says what they are (backpressure, not memory).
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { badRequest, serializeResponse } from '../errors.js';
import { now } from '../events.js';
import { endSocket, type ConnectionState } from '../connection.js';
import type { FeedOutcome } from './parser.js';
import type { RequestHead, ResponseHead } from './head.js';
import { handOver } from '../upgrade.js';
import { startsLikeH2, tapH2 } from '../h2-tap.js';
import type { PreconnectedUpstream, TapSettings } from '../tap-settings.js';
import { Exchanges, type Exchange } from './exchanges.js';
import { ClientSide, type ClientSideOwner } from './client-side.js';
import { UpstreamSide, type UpstreamSideOwner } from './upstream-side.js';

export type { PreconnectedUpstream, TapSettings, UpstreamQuery } from '../tap-settings.js';

/** What an HTTP/1 connection is now (see the diagram at the top of this file). */
export type TapState = 'opened' | 'idle' | 'request-head' | 'streaming' | 'awaiting-upstream' | 'switched' | 'refused' | 'ended' | 'closed';

/** The states the head timer runs in: a client must send its first byte, and finish a head it began, in time. */
const TIMED: ReadonlySet<TapState> = new Set(['opened', 'request-head']);

/** Starts tapping one client connection; `upstream` is one already connected for it (TLS interception with ALPN mirrored), used for its first exchange. */
export function tapConnection(conn: ConnectionState, client: Duplex, settings: TapSettings, upstream?: PreconnectedUpstream): void {
  new Http1Tap(conn, client, settings, upstream).start();
}

/** One tapped HTTP/1 connection: its state, its two directions, the exchanges in flight. */
class Http1Tap implements ClientSideOwner, UpstreamSideOwner {
  /** What the connection is now; changed only by enter(). */
  private state: TapState = 'opened';
  /** Armed while the state is opened or request-head: bb closes the connection, or answers 408, when it fires. */
  private headTimer: NodeJS.Timeout | undefined;
  private readonly exchanges: Exchanges;
  private readonly clientSide: ClientSide;
  private readonly upstreamSide: UpstreamSide;

  constructor(
    private readonly conn: ConnectionState,
    private readonly client: Duplex,
    private readonly settings: TapSettings,
    preconnected?: PreconnectedUpstream,
  ) {
    this.exchanges = new Exchanges(conn, settings.bus);
    this.upstreamSide = new UpstreamSide(client, settings, this.exchanges, this, preconnected);
    this.clientSide = new ClientSide(conn, client, settings, this.exchanges, this.upstreamSide, this);
  }

  /** Starts reading the client (and the head timer of the state it starts in, opened). */
  start(): void {
    this.armHeadTimer();
    this.client.on('data', this.onClientData);
    this.client.on('end', this.onClientEnd);
    this.client.on('error', () => {});
    this.client.once('close', this.onClientClose);
  }

  /** The one place the state changes. The head timer starts on entering a timed state (opened, request-head) and stops on leaving it. */
  private enter(next: TapState): void {
    if (next === this.state) return;
    if (TIMED.has(this.state)) {
      clearTimeout(this.headTimer);
      this.headTimer = undefined;
    }
    this.state = next;
    if (TIMED.has(next)) this.armHeadTimer();
  }

  private armHeadTimer(): void {
    if (this.settings.headTimeoutMs > 0) this.headTimer = setTimeout(this.onHeadTimeout, this.settings.headTimeoutMs);
  }

  // ---- the client socket

  private readonly onClientData = (chunk: Buffer): void => {
    if (this.state === 'refused' || this.state === 'ended') return;
    // The proxy is stopping and nothing is under way here: a request that starts now is not taken (nor recorded), the
    // connection ends, and the client sends it again elsewhere as after any keep-alive close. Before, a stopping
    // proxy kept taking a keep-alive client's requests until its grace ran out, then cut them (`--until 100` ran on
    // to ~1,500 requests).
    if (this.conn.closing && this.conn.active === 0 && this.clientSide.reading === 'idle') {
      this.client.pause();
      endSocket(this.client);
      return;
    }
    if (this.state === 'awaiting-upstream') {
      // Backpressure: past a small hold the client waits for the answer, its bytes in its own socket buffers.
      if (!this.clientSide.hold(chunk)) this.client.pause();
      return;
    }
    this.read(chunk);
  };

  /** The client side reads `chunk`; its outcome moves the state. */
  private read(chunk: Buffer): void {
    const out = this.clientSide.read(chunk);
    if (out.state === 'ok') this.enter(this.clientSide.reading);
    else if (out.state === 'switched') this.onRequestSwitch(chunk.subarray(out.at));
    else this.onRequestFault(out, chunk);
  }

  private readonly onHeadTimeout = (): void => {
    if (this.state === 'opened') {
      // No byte, so no request to answer or record: the connection goes, as Node's http.Server lets it.
      this.client.destroy();
      return;
    }
    if (this.state !== 'request-head') return;
    const fault = { code: 'ERR_HTTP_REQUEST_TIMEOUT', reason: `the client did not finish its request head within ${this.settings.headTimeoutMs / 1000} s` };
    this.onRequestFault({ state: 'error', fault, head: true, tooLarge: false }, Buffer.alloc(0));
  };

  private readonly onClientEnd = (): void => {
    this.clientSide.ended = true;
    if (this.state === 'closed' || this.state === 'ended') return;
    const sending = this.clientSide.sending;
    if (sending && !sending.requestEnded && this.state !== 'refused') {
      this.exchanges.finish(sending);
      this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: sending.id, time: now(), by: 'client', phase: 'request' });
      this.destroyAll();
      return;
    }
    // Pass the half-close on: the server sees the client's close behaviour.
    if (!this.upstreamSide.passHalfClose() && this.exchanges.queue.length === 0) {
      this.upstreamSide.settle();
      endSocket(this.client);
    }
  };

  private readonly onClientClose = (): void => {
    this.enter('closed');
    this.exchanges.abortAll((ex) => (ex.responseStarted || ex.requestEnded ? 'response' : 'request'));
    this.upstreamSide.drop();
  };

  // ---- what the client's bytes turn into

  /** The request parser stopped at a switch: a CONNECT hands the socket over now, an upgrade waits for its answer. */
  private onRequestSwitch(rest: Buffer): void {
    if (this.clientSide.lastConnect) {
      this.onConnect(rest);
      return;
    }
    if (!this.clientSide.holdAfterUpgrade(rest)) this.client.pause();
    this.enter('awaiting-upstream');
  }

  /** A CONNECT never goes upstream: forward mode takes the socket (with the bytes after the head), anything else closes it. */
  private onConnect(rest: Buffer): void {
    const head = this.clientSide.lastConnect;
    this.upstreamSide.settle();
    this.detachClient();
    this.enter('switched');
    // The upstream of earlier requests on this connection (or the one opened at accept) serves no one now.
    this.upstreamSide.drop();
    if (!head || !this.settings.onConnect || this.exchanges.queue.length > 0) {
      this.client.destroy();
      return;
    }
    this.settings.onConnect(this.clientSide.queryOf(head), this.client, rest);
  }

  /** Bytes bb cannot accept: the h2 preface goes to the h2 tap; a refused head gets bb's answer in turn; a broken body ends both sides. */
  private onRequestFault(out: Extract<FeedOutcome, { state: 'error' }>, chunk: Buffer): void {
    const { fault } = out;
    // "PRI * HTTP/2.0" as a connection's first head is no HTTP/1.1 request but the h2 preface (h2c with prior knowledge).
    if (out.head && this.settings.h2c && this.exchanges.queue.length === 0 && this.clientSide.heads === 0) {
      const bytes = this.clientSide.headBytes(chunk);
      if (startsLikeH2(bytes)) {
        this.detachClient();
        this.enter('switched');
        // The upstream opened at accept carries the h2 connection when it is plain TCP (a TLS one agreed to http/1.1: the h2 tap makes its own).
        const upstream = this.upstreamSide.takeForH2();
        this.upstreamSide.drop();
        tapH2({ conn: this.conn, client: this.client, head: bytes, settings: this.settings, upstream });
        return;
      }
    }
    this.enter('refused');
    this.client.pause();
    const sending = this.clientSide.sending;
    if (!out.head && sending) {
      // The request had begun: its body is broken. Nothing more can be framed; both sides end.
      this.exchanges.finish(sending);
      this.settings.bus.emit({ type: 'exchange-aborted', exchangeId: sending.id, time: now(), by: 'client', phase: 'request', error: { code: fault.code, message: fault.reason, phase: 'parse' } });
      this.destroyAll();
      return;
    }
    const rawPacket = this.clientSide.refusedBytes(chunk);
    const response = badRequest(fault.code, fault.reason);
    const id = this.settings.nextExchangeId();
    this.settings.bus.emit({ type: 'client-error', connectionId: this.conn.id, exchangeId: id, time: now(), error: { code: fault.code, message: fault.reason, phase: 'parse' }, rawPacket, response });
    const ex: Exchange = { id, method: '', head: undefined as unknown as RequestHead, upgrade: false, requestEnded: true, responseStarted: false, finished: false, synthetic: { response, close: true, fact: () => {} } };
    this.exchanges.add(ex);
    if (this.exchanges.front === ex) this.answerSynthetic();
  }

  /** Stops reading the client: from here on it is someone else's (the upgrade tap, forward mode's tunnel, the h2 tap). */
  private detachClient(): void {
    this.client.pause();
    this.client.off('data', this.onClientData);
    this.client.off('end', this.onClientEnd);
    this.client.off('close', this.onClientClose);
    // As Node's http.Server does for CONNECT and upgrades: whoever adds a 'data' listener next makes it flow.
    (this.client as unknown as { readableFlowing: boolean | null }).readableFlowing = null;
  }

  // ---- what the directions ask of the connection

  /** Writes bb's own answers at the front of the queue, in turn. */
  answerSynthetic(): void {
    const queue = this.exchanges.queue;
    if (queue[0]?.synthetic && queue[0].requestEnded) this.upstreamSide.settle();
    while (queue[0]?.synthetic && queue[0].requestEnded) {
      const ex = queue.shift()!;
      const { response, fact, close } = ex.synthetic!;
      this.exchanges.finish(ex);
      fact();
      if (close) {
        this.client.end(serializeResponse(response));
        this.upstreamSide.end();
        return;
      }
      this.client.write(serializeResponse(response));
    }
  }

  /** Ends both connections at once (a framing error, a broken response). */
  destroyAll(): void {
    // A response completed this turn still reaches the client whole, as before the break.
    this.upstreamSide.settle();
    this.upstreamSide.destroy();
    this.client.destroy();
  }

  /** True while bb still reads the client (a drained upstream may resume it): not once it is refused, ended or closed, nor while a full hold waits for an upgrade's answer. */
  mayResumeClient(): boolean {
    if (this.state === 'awaiting-upstream') return !this.clientSide.holdFull;
    return this.state !== 'refused' && this.state !== 'ended' && this.state !== 'closed';
  }

  /** True once the client sent its FIN. */
  get clientEnded(): boolean {
    return this.clientSide.ended;
  }

  /** After a final response: a body the upstream's close ended ends the connection; else a refused upgrade reads HTTP again, and bb's own answers and a waiting upstream take their turn. */
  responseEnded(ex: Exchange, byClose: boolean): void {
    if (byClose) {
      this.endAfterCloseDelimited();
      return;
    }
    if (ex.upgrade && this.state === 'awaiting-upstream') this.readAgain(this.clientSide.takeHeld());
    if (this.exchanges.front?.synthetic) this.answerSynthetic();
    this.upstreamSide.openWaiting(this.clientSide.sending);
  }

  /** An upgrade answered without 101: the client's bytes held since are HTTP again, read in order. */
  private readAgain(held: Buffer[]): void {
    this.clientSide.resume();
    this.enter('idle');
    for (const chunk of held) if (this.state !== 'refused') this.read(chunk);
    // The client may be paused by a full hold; a busy upstream resumes it when it drains.
    if (this.mayResumeClient() && !this.upstreamSide.congested) this.client.resume();
  }

  /**
   * The upstream's close ended a response body, so the client reads to its
   * close: nothing bb wrote after it could be told from the body. The client
   * connection ends too; requests pipelined behind are recorded unanswered.
   */
  private endAfterCloseDelimited(): void {
    if (this.state === 'switched' || this.state === 'closed') return;
    this.exchanges.failUnanswered({ code: 'BB_UPSTREAM_CLOSED', message: 'the upstream closed the connection to end the close-delimited response before this one, so this pipelined request was never answered', phase: 'request' });
    this.enter('ended');
    this.upstreamSide.settle();
    endSocket(this.client);
    this.upstreamSide.end();
  }

  /** The upstream answered 101: both sockets go to the upgrade tap (upgrade.ts) with the bytes each sent past its head. */
  upgraded(socket: Socket, head: ResponseHead | undefined, upstreamHead: Buffer): void {
    const ex = this.exchanges.queue.shift();
    if (!ex || !head) {
      this.destroyAll();
      return;
    }
    this.exchanges.finish(ex);
    this.conn.switched = true;
    // What an earlier response of this turn held goes before the 101 the upgrade tap writes.
    this.upstreamSide.settle();
    const clientHead = Buffer.concat(this.clientSide.takeHeld());
    this.detachClient();
    this.enter('switched');
    this.upstreamSide.release(socket);
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
    handOver({ exchangeId: ex.id, request: ex.head, response: head, client: this.client, upstream: socket, clientHead, upstreamHead, bus: this.settings.bus, tap: this.settings.tap, wsKeep: this.settings.wsKeep });
  }

  /** The upstream is gone with nothing awaited: the client ends too (1:1), unless it is closed or waits for an upgrade's answer. */
  upstreamEnded(): void {
    // Once switched, the client socket carries a tunnel or an h2 connection
    // that this upstream connection has no part in: its end is not the client's.
    if (this.state !== 'closed' && this.state !== 'awaiting-upstream' && this.state !== 'switched' && this.state !== 'ended') {
      this.upstreamSide.settle();
      endSocket(this.client);
    }
  }
}
