// Shared by the live feeds' tests (test/ui/): a live capture whose entry() is
// timed (each build a feed makes of an exchange), a growing event stream read
// through the proxy, and the check that paced runs kept their spacing.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { LiveCapture } from '../../capture/index.js';
import type { Cleanups } from './cleanups.js';

/** When one run (an entry build, a paced round) began and ended (performance.now()). */
export interface Run {
  start: number;
  end: number;
}

/** The same live capture with its entry() timed: `builds` gets one run per entry built. */
export function timedEntries(live: LiveCapture): { live: LiveCapture; builds: Run[] } {
  const builds: Run[] = [];
  const timed = Object.assign(Object.create(live) as LiveCapture, {
    entry(seq: number) {
      const start = performance.now();
      const entry = live.entry(seq);
      builds.push({ start, end: performance.now() });
      return entry;
    },
  });
  return { live: timed, builds };
}

/** GETs `url` and reads its answer away (a client following an event stream through the proxy). */
export async function followStream(cleanups: Cleanups, url: string): Promise<void> {
  const req = http.get(url);
  cleanups.add(() => req.destroy());
  const res = await new Promise<http.IncomingMessage>((r) => req.once('response', r));
  res.resume();
}

/** Pushes `events` events of ~100 bytes, 2,000 every 50 ms: a stream whose builds grow with it. */
export async function pushTicks(push: (text: string) => void, events: number): Promise<void> {
  for (let n = 0; n < events; ) {
    let text = '';
    for (let k = 0; k < 2_000; k++, n++) text += `id: ${n}\ndata: {"n":${n},"pad":"${'p'.repeat(60)}"}\n\n`;
    push(text);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Each run came at least max(floorMs, idle × the last run's cost) after it ended (timers count whole ms: 2 ms of grace). */
export function assertPaced(runs: Run[], floorMs: number, idle: number, what: string): void {
  for (let k = 1; k < runs.length; k++) {
    const cost = runs[k - 1]!.end - runs[k - 1]!.start;
    const gap = runs[k]!.start - runs[k - 1]!.end;
    assert.ok(gap >= Math.max(floorMs, idle * cost) - 2, `${what} ${k} came ${gap.toFixed(1)} ms after one that took ${cost.toFixed(1)} ms`);
  }
}
