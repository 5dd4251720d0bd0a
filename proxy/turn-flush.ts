// The crash rule at the cost of a loop turn, not of an exchange.
//
// An exchange's completing record must reach the OS before the client can
// see its last byte (docs/capture.md "What the proxy guarantees": crash-safe).
// Made durable one by one, that is a journal write per exchange. Instead, a connection whose
// response just completed holds what it would write to the client (that
// chunk and anything after it) until the end of the loop turn, when one
// `flush` fact makes every completion of the turn durable in one write and
// the held bytes go out, connection by connection, in order. The HTTP/1 tap
// holds; h2 batches within one chunk (h2-streams.ts) and needs none of this.
//
// The wait is one turn of the loop (setImmediate: after the I/O callbacks of
// this poll), so a response completes no later than the other connections'
// work of the same turn. A path that must write to the client before then
// (bb's own answer, an end, a hand-over) settles at once (flushNow).
import type { FactBus } from './events.js';

/** Completions waiting for this turn's flush, per fact bus (one per proxy). */
export class TurnFlush {
  private waiting: Array<() => void> = [];
  private scheduled = false;

  private constructor(private readonly bus: FactBus) {}

  /** The one TurnFlush of `bus`. */
  static of(bus: FactBus): TurnFlush {
    let turn = perBus.get(bus);
    if (!turn) perBus.set(bus, (turn = new TurnFlush(bus)));
    return turn;
  }

  /** Runs `release` once this turn's completions are durable (after the flush fact, at the end of the turn). */
  defer(release: () => void): void {
    this.waiting.push(release);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.run);
  }

  /** Makes every completion so far durable now (the caller then writes what it held itself). */
  flushNow(): void {
    this.bus.emit({ type: 'flush' });
  }

  private readonly run = (): void => {
    this.scheduled = false;
    const waiting = this.waiting;
    this.waiting = [];
    this.bus.emit({ type: 'flush' });
    for (const release of waiting) release();
  };
}

const perBus = new WeakMap<FactBus, TurnFlush>();
