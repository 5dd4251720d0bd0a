// Work a page's feed asks for again and again whose cost grows with what it
// reads: an exchange whose body grows, built again for its new messages (an
// SSE stream of 40,000 events took ~80 ms a build, and a build every 100 ms
// took a third of the proxy's thread, docs/performance.md "ui"). A run comes
// at least `everyMs` after it was asked for (asks meanwhile are that run) and
// at least `idle` times the last run's cost after that run ended, so the
// work takes at most about 1/(1 + idle) of the thread however long what it
// reads grows; what it shows comes later as it grows.

/** One piece of work run when asked for, paced by its own cost. */
export class PacedRuns {
  private timer: NodeJS.Timeout | undefined;
  private lastEnd = 0;
  private lastCost = 0;
  private stopped = false;

  constructor(
    private readonly work: () => void,
    private readonly everyMs: number,
    /** Idle time after a run, in runs' costs (9: the work takes at most a tenth). */
    private readonly idle = 9,
  ) {}

  /** Asks for a run: the next one comes when the pace allows (asks until then are that one). */
  ask(): void {
    if (this.timer || this.stopped) return;
    const now = performance.now();
    this.arm(now + Math.max(this.everyMs, this.idle * this.lastCost - (now - this.lastEnd)));
  }

  // Timers count whole milliseconds from the loop's time, which a busy turn leaves behind: one that fires before
  // `due` is armed again for the rest.
  private arm(due: number): void {
    this.timer = setTimeout(() => {
      if (performance.now() < due) this.arm(due);
      else this.run();
    }, Math.max(1, Math.ceil(due - performance.now())));
  }

  /**
   * The same work done elsewhere, ending at `end` and costing `cost` ms at once (a feed's first build, made in
   * steps: its costliest step): the next run comes `idle` times that after it, as after a run of its own.
   */
  ranElsewhere(cost: number, end: number): void {
    this.lastEnd = end;
    this.lastCost = cost;
  }

  /** No more runs. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    this.timer = undefined;
    const start = performance.now();
    try {
      this.work();
    } finally {
      this.lastEnd = performance.now();
      this.lastCost = this.lastEnd - start;
    }
  }
}
