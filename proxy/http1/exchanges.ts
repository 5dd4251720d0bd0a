// The exchanges in flight on one HTTP/1 connection, in the order their
// requests arrived (pipelining, RFC 9112 §9.3.2): the front one is the one
// being answered. Both directions and the connection read this one queue; it
// also keeps the connection's count of exchanges under way, which graceful
// stop waits on.
import { badGateway } from '../errors.js';
import { now, type FactBus, type FailureInfo, type SyntheticResponse } from '../events.js';
import type { ConnectionState } from '../connection.js';
import type { RequestHead } from './head.js';

/** One request in flight: sent upstream (or answered by bb), its response not finished. */
export interface Exchange {
  /** The exchange id every fact about it carries. */
  id: number;
  /** The request method (the response's framing depends on it). */
  method: string;
  /** The request head as judged. */
  head: RequestHead;
  /** The request asks to switch protocols (Upgrade). */
  upgrade: boolean;
  /** bb answers this one itself (a 502 for a bad target, a 400 for a refused head), when its turn comes. */
  synthetic?: { response: SyntheticResponse; fact: () => void; close: boolean; failure?: FailureInfo };
  /** The request's last byte was read. */
  requestEnded: boolean;
  /** The response head was read (a final one, not 1xx). */
  responseStarted: boolean;
  /** Counted out of the connection's active exchanges (once). */
  finished: boolean;
}

/** The queue of exchanges in flight on one connection. */
export class Exchanges {
  /** Exchanges in order; the front one is being answered. */
  readonly queue: Exchange[] = [];

  constructor(
    private readonly conn: ConnectionState,
    private readonly bus: FactBus,
  ) {}

  /** The exchange being answered. */
  get front(): Exchange | undefined {
    return this.queue[0];
  }

  /** Queues `ex` behind the others and counts it as under way. */
  add(ex: Exchange): void {
    this.conn.active++;
    this.queue.push(ex);
  }

  /** Marks an exchange done (once) for the in-flight count graceful stop waits on. */
  finish(ex: Exchange): void {
    if (ex.finished) return;
    ex.finished = true;
    this.conn.active--;
  }

  /** True while an exchange other than `except` still waits for the upstream's answer. */
  awaitingUpstream(except?: Exchange): boolean {
    return this.queue.some((e) => !e.finished && !e.synthetic && e !== except);
  }

  /** Makes `ex` one bb answers with a 502 for `failure` (recorded as exchange-failed when its turn comes). */
  failWith502(ex: Exchange, failure: FailureInfo, origin: string): void {
    const response = badGateway(failure, origin);
    ex.synthetic = { response, close: false, failure, fact: () => this.bus.emit({ type: 'exchange-failed', exchangeId: ex.id, time: now(), error: failure, response }) };
  }

  /** Finishes every exchange still under way as failed and never answered (no response of bb's either): `failure` says why, or a 502's own failure. */
  failUnanswered(failure: FailureInfo): void {
    for (const ex of this.queue) {
      if (ex.finished) continue;
      this.finish(ex);
      // A refused head was recorded when refused (client-error); a 502 of bb's keeps its own reason.
      const error = ex.synthetic ? ex.synthetic.failure : failure;
      if (error) this.bus.emit({ type: 'exchange-failed', exchangeId: ex.id, time: now(), error });
    }
    this.queue.length = 0;
  }

  /** Finishes every exchange still under way as aborted by the client; `phase` says how far each got. */
  abortAll(phase: (ex: Exchange) => 'request' | 'response'): void {
    for (const ex of this.queue) {
      if (ex.finished) continue;
      this.finish(ex);
      if (!ex.synthetic) this.bus.emit({ type: 'exchange-aborted', exchangeId: ex.id, time: now(), by: 'client', phase: phase(ex) });
    }
    this.queue.length = 0;
  }
}
