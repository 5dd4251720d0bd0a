// The state one HTTP tap keeps for its client connection, and the steps both
// directions share: finishing an exchange, bb's own answers in turn, letting
// go of the client socket, ending everything.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { badGateway, serializeResponse } from './errors.js';
import { now, type EpochMs, type FailureInfo } from './events.js';
import type { ConnectionState } from './connection.js';
import type { Http1Parser } from './http1/parser.js';
import type { RequestHead, ResponseHead } from './http1/head.js';
import type { Upstream } from './upstream.js';
import type { Exchange, PreconnectedUpstream, TapSettings } from './tap-settings.js';

/** Fields and shared steps of the tap (tap-requests.ts reads the client, http-tap.ts the upstream). */
export abstract class TapState {
  protected abstract readonly requests: Http1Parser;
  protected responses: Http1Parser | undefined;
  protected upstream: Socket | undefined;
  protected upstreamOrigin = '';
  protected upstreamFirstBytes: Buffer | undefined;
  /** Exchanges in order; the front one is being answered. */
  protected readonly queue: Exchange[] = [];
  /** The exchange whose request is being received. */
  protected sending: Exchange | undefined;
  /** Client bytes of a head not yet whole (the parser holds a copy; these are for a refusal's record). */
  protected heldHead: Buffer[] = [];
  /** Client bytes after an upgrade request, kept until the answer says what they are. */
  protected afterUpgrade: Buffer[] | undefined;
  /** Client bytes for the next upstream, while the previous one still answers (forward mode, another origin). */
  protected outbox: { upstream: Upstream; bytes: Buffer[] } | undefined;
  protected cChunk: Buffer = Buffer.alloc(0);
  protected cFrom = 0;
  protected rChunk: Buffer = Buffer.alloc(0);
  protected rFrom = 0;
  protected rHead: ResponseHead | undefined;
  protected rPendingHead: Buffer | undefined;
  protected rHeldHead: Buffer[] = [];
  protected rHeadAt: EpochMs = 0;
  protected closed = false;
  protected clientDraining = false;
  protected headTimer: NodeJS.Timeout | undefined;
  protected clientEnded = false;
  protected refused = false;
  /** Request heads read on this connection (only a first one may be the h2 preface). */
  protected heads = 0;

  protected lastConnect: RequestHead | undefined;
  protected lastSwitch: ResponseHead | undefined;

  constructor(
    protected readonly conn: ConnectionState,
    protected readonly client: Duplex,
    protected readonly settings: TapSettings,
    /** An upstream connected before the tap began, for the first exchange (then undefined). */
    protected preconnected?: PreconnectedUpstream,
  ) {}

  /** The pre-connected upstream when it is for `origin` and still open; dropped (closed) otherwise: it serves the first exchange only. */
  protected takePreconnected(origin: string): Socket | undefined {
    const pre = this.preconnected;
    this.preconnected = undefined;
    if (!pre) return undefined;
    if (pre.origin === origin && !pre.socket.destroyed && pre.socket.readable && pre.socket.writable) return pre.socket;
    pre.socket.destroy();
    return undefined;
  }

  /** Writes bb's own answers at the front of the queue, in turn. */
  protected answerSynthetic(): void {
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

  /** Makes `ex` one bb answers with a 502 for `failure` (recorded as exchange-failed when its turn comes). */
  protected failWith502(ex: Exchange, failure: FailureInfo, origin: string): void {
    const response = badGateway(failure, origin);
    ex.synthetic = { response, close: false, fact: () => this.settings.bus.emit({ type: 'exchange-failed', exchangeId: ex.id, time: now(), error: failure, response }) };
  }

  /** True while an exchange other than `except` still waits for the upstream's answer. */
  protected awaitingUpstream(except?: Exchange): boolean {
    return this.queue.some((e) => !e.finished && !e.synthetic && e !== except);
  }

  /** Marks an exchange done (once) for the in-flight count graceful stop waits on. */
  protected finish(ex: Exchange): void {
    if (ex.finished) return;
    ex.finished = true;
    this.conn.active--;
  }

  /** Ends both connections at once (a framing error, a broken response). */
  protected destroyAll(): void {
    this.upstream?.destroy();
    this.client.destroy();
  }
}
