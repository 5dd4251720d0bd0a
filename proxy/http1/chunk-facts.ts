// A chunk's facts after its bytes. While the HTTP/1 tap reads a chunk, the
// facts that only describe what crossed (an exchange's start, a response
// head, body bytes, a request's end) wait until the chunk's bytes have been
// written on, then reach the bus in the order the tap made them, before the
// chunk's callback returns (the same loop turn, before its flush).
//
// Why: a head is judged before it goes on (that stays), but what listeners
// do with the facts (the recorder's start record, ~20 µs when a stream's
// rare heads find the CPU's caches cold) need not delay the bytes; the
// request reaches the upstream, and a response's head and first body bytes
// the client, that much sooner (SSE's first event: docs/performance.md).
//
// A fact that is not one of those (a completion, a failure, an abort, an
// upgrade) first sends what waits, then goes at once: the bus sees the same
// facts in the same order as before. A completion's record therefore still
// precedes the write of the bytes that complete the response (the crash
// rule, upstream-side.ts), and so does anything a flush must include: the
// tap releases what waits before it makes the turn's completions durable.
import type { Fact, FactBus } from '../events.js';

/** Where the tap's facts go: the bus, or what holds them while a chunk is read. */
export type FactSink = Pick<FactBus, 'emit'>;

/** Holds a chunk's descriptive facts until its bytes are written on (see the top of this file). */
export class ChunkFacts implements FactSink {
  /** Facts made while a chunk is read, in order. */
  private waiting: Fact[] = [];
  /** Chunk reads under way (one may start inside another: a refused upgrade's held bytes are read on a response's end). */
  private reading = 0;

  constructor(private readonly bus: FactBus) {}

  /** A chunk's read begins: its descriptive facts wait until end(). */
  begin(): void {
    this.reading++;
  }

  /** The chunk's bytes are written on (or held): what waits goes to the bus. */
  end(): void {
    if (--this.reading === 0) this.release();
  }

  /** Sends `fact`: held while a chunk is read when it only describes bytes, else at once, after what waits. */
  emit(fact: Fact): void {
    if (this.reading > 0 && waits(fact)) {
      this.waiting.push(fact);
      return;
    }
    this.release();
    this.bus.emit(fact);
  }

  /** Sends every waiting fact now (before a flush, which must include them). */
  release(): void {
    if (this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const fact of waiting) this.bus.emit(fact);
  }
}

/** The facts that may wait for their chunk's write: they describe bytes, and no rule orders them against the client's view. */
function waits(fact: Fact): boolean {
  switch (fact.type) {
    case 'exchange-started':
    case 'request-body':
    case 'request-ended':
    case 'response-started':
    case 'response-body':
      return true;
    default:
      return false;
  }
}
