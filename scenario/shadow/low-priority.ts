// The comparison worker gives way to the relay (docs/performance.md "shadow":
// what the primary's client waits for). On a machine with few cores the
// worker's batches and the relay's requests want a core at the same moment;
// at the same priority the scheduler shares it, and a primary request that
// arrives then waits. At the lowest priority the worker runs on what the
// relay (and everything else on the machine) leaves, and a relay woken by a
// request takes the core from it at once. Linux sets a priority per thread
// (setpriority with a thread id); elsewhere the worker keeps the process's.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness the comparison worker runs at: the lowest priority. */
export const COMPARE_NICE = 19;

/** Lowers the calling thread's scheduling priority to `nice` (Linux; elsewhere nothing); whether it did. */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  const tid = threadId();
  if (tid === undefined) return false;
  try {
    setPriority(tid, nice);
    return true;
  } catch {
    // A sandbox that refuses: the worker runs at the process's priority, as before.
    return false;
  }
}

/** The calling thread's id (Linux: "/proc/thread-self" links to "<pid>/task/<tid>"); undefined without /proc. */
export function threadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}
