// The 'profile-start' / 'profile-stop <file>' asks of a measured helper
// process (proxy-peer.ts, shadow-peer.ts): a CPU profile of its main thread
// over just the traffic in between, through node:inspector, written as a
// .cpuprofile. And 'gc-start' / 'gc-stop': the main thread's garbage
// collection pauses in between (perf_hooks' 'gc' entries: each pause's kind
// and length, as --trace-gc prints them), for bench/shadow-tail.ts. Imports
// nothing but Node, as serve.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import { dirname } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';

/** The main thread's collection pauses over a 'gc-start' … 'gc-stop' span, ms each. */
export interface GcPauses {
  /** Scavenges (young generation). */
  minor: number[];
  /** Mark-compacts and the rest (old generation, incremental steps). */
  major: number[];
}

let gc: { observer: PerformanceObserver; pauses: GcPauses } | undefined;

const session = new inspector.Session();
const post = (method: string, params?: object): Promise<unknown> =>
  new Promise((resolve, reject) => session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));

/** Answers a profile ask (resolves to true, or to the file written), or returns undefined when `what` is another ask. */
export function profileAsk(what: string): Promise<unknown> | undefined {
  if (what === 'profile-start') {
    return (async () => {
      session.connect();
      await post('Profiler.enable');
      // 100 µs sampling: fine enough for per-request work.
      await post('Profiler.setSamplingInterval', { interval: 100 });
      await post('Profiler.start');
      return true;
    })();
  }
  if (what.startsWith('profile-stop ')) {
    const file = what.slice('profile-stop '.length);
    return (async () => {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      session.disconnect();
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      return file;
    })();
  }
  if (what === 'gc-start') {
    gc?.observer.disconnect();
    const pauses: GcPauses = { minor: [], major: [] };
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
        (kind === constants.NODE_PERFORMANCE_GC_MINOR ? pauses.minor : pauses.major).push(e.duration);
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    gc = { observer, pauses };
    return Promise.resolve(true);
  }
  if (what === 'gc-stop') {
    const taken = gc;
    gc = undefined;
    if (!taken) return Promise.reject(new Error("'gc-stop' without 'gc-start'"));
    // Entries are delivered after the turn that made them: one more turn, then what came.
    return new Promise((resolve) => setImmediate(() => (taken.observer.disconnect(), resolve(taken.pauses))));
  }
  return undefined;
}
