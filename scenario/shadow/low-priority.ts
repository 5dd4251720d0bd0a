// The comparison worker gives way to the relay (docs/performance.md "shadow":
// what the primary's client waits for). On a machine with few cores the
// worker's batches and the relay's requests want a core at the same moment;
// at the same priority the scheduler shares it, and a primary request that
// arrives then waits. Linux sets a policy and a priority per thread. The
// worker asks for SCHED_IDLE, the policy the scheduler preempts for any
// other task at once (a request that arrives during a batch waits for
// nothing); at nice 19 alone a batch still delayed the requests that
// arrived during it (the p99 of a small GET through a shadow, 20 s windows
// at 400 req/s: 1.16–2.01 ms at nice 19, 0.66–1.11 ms idle; the capture's
// 0.51–0.62). Node has no call for a thread's policy: util-linux's `chrt`
// sets it by thread id; where it is missing (or not Linux) the worker stays
// at nice 19, and elsewhere at the process's priority.
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness the comparison worker runs at: the lowest priority. */
export const COMPARE_NICE = 19;

/** Lowers the calling thread's scheduling priority to `nice` (Linux; elsewhere nothing); whether it did. */
export function lowerThreadPriority(nice: number): boolean {
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

/** Puts the calling thread under SCHED_IDLE (Linux, with util-linux's `chrt`); whether it did. */
export function idleThreadPolicy(): boolean {
  const tid = threadId();
  if (tid === undefined) return false;
  try {
    // Lowering one's own policy needs no privilege (Linux ≥ 2.6.39); `chrt` missing or refused: nice alone.
    execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/** The calling thread's kernel id (Linux: "/proc/thread-self" links to "<pid>/task/<tid>"); undefined elsewhere. */
function threadId(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    // No /proc.
    return undefined;
  }
}
