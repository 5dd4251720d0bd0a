// The end of a `bb shadow` run on a busy machine (docs/shadow.md "Limits").
// The comparison worker runs at the lowest priority (low-priority.ts) and an
// unprivileged thread cannot raise it again, so when other processes keep
// every core busy it gets almost none of them, falls behind, and the end of
// the run waits for it (49–56 s for 3,000 exchanges with three processes
// spinning on two cores, against under a second on a quiet machine). The
// kernel says how a thread fares: /proc/self/task/<tid>/schedstat holds the
// time it ran and the time it waited, runnable, for a core. A worker that
// waits far longer than it runs is starved, and the run then starts a fresh
// worker at the process's priority that compares the journals whole
// (compare-worker.ts `whole`); whichever ends first gives the final report.
import { readFileSync } from 'node:fs';

/** A thread's time on a core and waiting for one, ns, so far. */
export interface SchedTimes {
  run: number;
  wait: number;
}

/** The thread's times from /proc (Linux with scheduler statistics); undefined when they cannot be read. */
export function schedTimes(tid: number): SchedTimes | undefined {
  try {
    const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { run: run!, wait: wait! } : undefined;
  } catch {
    return undefined;
  }
}

/** When a thread counts as starved. */
export interface StarvedWhen {
  /** How often its times are read, ms. */
  everyMs: number;
  /** Over the last `periods` readings (the kernel credits a wait when the thread next runs, so one period's figure is lumpy), */
  periods: number;
  /** it waited at least this many times as long as it ran, */
  ratio: number;
  /** and waited at least this share of the time (it wanted a core for most of it). */
  waitShare: number;
}

export const STARVED_WHEN: StarvedWhen = { everyMs: 250, periods: 4, ratio: 4, waitShare: 0.5 };

/**
 * Calls `onStarved` once when the thread is starved (see StarvedWhen);
 * returns a stop. Nothing is watched when its times cannot be read (another
 * system: there the worker kept the process's priority).
 */
export function watchStarved(tid: number, onStarved: () => void, when: StarvedWhen = STARVED_WHEN): () => void {
  const first = schedTimes(tid);
  if (!first) return () => {};
  // The readings of the last `periods` periods (and the one before them).
  const readings: Array<SchedTimes & { at: number }> = [{ ...first, at: performance.now() }];
  const timer = setInterval(() => {
    const now = schedTimes(tid);
    // The thread is gone (it ended): nothing more to watch.
    if (!now) return stop();
    readings.push({ ...now, at: performance.now() });
    if (readings.length > when.periods + 1) readings.shift();
    if (readings.length < when.periods + 1) return;
    const from = readings[0]!;
    const run = now.run - from.run;
    const wait = now.wait - from.wait;
    const span = (readings[readings.length - 1]!.at - from.at) * 1e6;
    if (wait >= when.ratio * run && wait >= when.waitShare * span) {
      stop();
      onStarved();
    }
  }, when.everyMs);
  timer.unref();
  function stop(): void {
    clearInterval(timer);
  }
  return stop;
}
