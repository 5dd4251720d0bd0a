// Cleanups for set-ups that span several steps (a server, then a proxy in
// front of it, then its temp folder): run newest first, so what was made last
// is undone first, each in turn even when one fails. `atFileEnd` is the list
// the test file itself runs when its last test is done.
import { after } from 'node:test';

/** Cleanups run in reverse order (register with `add`, run them in an after() hook). */
export class Cleanups {
  private readonly list: Array<() => unknown> = [];
  /** Registers one cleanup. */
  add(fn: () => unknown): void {
    this.list.push(fn);
  }
  /** The same as `add`, so a Cleanups list can own what t.after() would (tempDir(cleanups)). */
  after(fn: () => unknown): void {
    this.add(fn);
  }
  /** Runs them all, newest first; a failing one does not stop the rest. */
  async run(): Promise<void> {
    for (const fn of this.list.reverse()) {
      try {
        await fn();
      } catch {
        // Keep cleaning.
      }
    }
    this.list.length = 0;
  }
}

// One root-level after() hook per test file, registered when this module is
// first imported (the test file's static imports, so at the top level).
const fileEnd = new Cleanups();
after(() => fileEnd.run());

/** Runs `fn` when the test file is done (after its last test and suite), newest first. */
export function atFileEnd(fn: () => unknown): void {
  fileEnd.add(fn);
}
