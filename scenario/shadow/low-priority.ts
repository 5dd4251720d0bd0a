// The comparison gives way to the relay (docs/performance.md "shadow": what
// the primary's client waits for). On a machine with few cores the
// comparison's batches and the relay's requests want a core at the same
// moment; at the same priority the scheduler shares it, and a primary request
// that arrives then waits. At the lowest priority the comparison runs on what
// the relay (and everything else on the machine) leaves, and a relay woken by
// a request takes the core from it at once. It runs in a process of its own
// (compare-process.ts) so that every thread doing its work is lowered, V8's
// helper threads that run its garbage collection included: on Linux a
// priority is per thread (setpriority with a thread id), and threads started
// later inherit their creator's.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness the comparison runs at: the lowest priority. */
export const COMPARE_NICE = 19;

/**
 * Lowers every thread of this process to `nice` (on Linux each by its id from
 * /proc/self/task; elsewhere setpriority on the process); whether it did.
 */
export function lowerProcessPriority(nice: number): boolean {
  try {
    if (process.platform !== 'linux') {
      setPriority(nice);
      return true;
    }
    for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), nice);
    return true;
  } catch {
    // A sandbox that refuses: the comparison runs at the default priority, slower for the relay but correct.
    return false;
  }
}
