// Traffic that several tests look at, each from its side: the test about an
// offence checks what the client got, a last test checks the HAR of them all.
// Each step runs once, when a test first needs it, so every test can run on
// its own (node --test-name-pattern) and none relies on another having run.
//
//   const steps = new Steps();
//   it('answers 400 to X', steps.add(async () => { ...send X, check the reply... }));
//   it('records them all', async (t) => { await steps.runAll(t); ...check the HAR... });

/** `fn` run on the first call only; every call gets that run's promise (its result or its failure). */
export function lazy<A extends unknown[], T>(fn: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  let run: Promise<T> | undefined;
  return (...args) => (run ??= fn(...args));
}

/** Steps shared by the tests of one suite, each run at most once, in the order the tests ask. */
export class Steps<C = unknown> {
  private readonly all: Array<(t: C) => Promise<void>> = [];
  /** Adds a step; the function returned runs it (once): give it to it() as the test's body. */
  add(fn: (t: C) => Promise<void>): (t: C) => Promise<void> {
    const run = lazy(fn);
    this.all.push(run);
    return run;
  }
  /** Runs every step that has not run yet, in the order they were added (`t` for those that use a context). */
  async runAll(t: C): Promise<void> {
    for (const run of this.all) await run(t);
  }
}
