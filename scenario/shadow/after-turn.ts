// What a `bb shadow` run does for its mirrors waits until the primary's tap
// has let its clients have this turn's answers (docs/shadow.md "What is
// mirrored, and when": the primary's latency must not depend on the mirrors).
// The HTTP/1 tap holds a completed response until the end of its loop turn
// (proxy/turn-flush.ts), and everything done on the thread before then, a
// mirror's head written to its socket, the primary's answer decoded for
// binding, delays that response. So the tee decides and counts at once
// (caps and tags must be right before the exchange is recorded) and leaves
// the rest here: it runs right after the turn's flush has released the held
// bytes, or, when no flush comes, on the loop's next turn.
import type { Fact } from '../../proxy/index.js';

/** Runs jobs after the primary tap's current turn has released its clients' bytes. */
export class AfterTurn {
  private jobs: Array<() => void> = [];
  private fallback = false;

  /** Give it the primary proxy's facts (`bus.on(f => afterTurn.fact(f))`): its flush tells when the turn's bytes went out. */
  fact(f: Fact): void {
    // The flush fact comes just before the held bytes are released, in the same callback: a microtask runs after both.
    if (f.type === 'flush' && this.jobs.length > 0) queueMicrotask(this.run);
  }

  /** Runs `job` once this turn's answers are out. */
  later(job: () => void): void {
    this.jobs.push(job);
    if (this.fallback) return;
    this.fallback = true;
    // No flush this turn (a response still streaming, h2): the next loop turn, after this one's immediates (the flush's among them).
    setImmediate(() =>
      setImmediate(() => {
        this.fallback = false;
        this.run();
      }),
    );
  }

  private readonly run = (): void => {
    const jobs = this.jobs;
    this.jobs = [];
    for (const job of jobs) {
      try {
        job();
      } catch {
        // As the fact bus does for its listeners: a mirror's failure never stops the primary's traffic.
      }
    }
  };
}
