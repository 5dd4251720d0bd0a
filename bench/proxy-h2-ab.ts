// Two builds of bb side by side on the h2 rows (issue 39, h2 round): each
// iteration starts fresh proxies (the pipe, and bb-off and bb of each build),
// warms them up, measures one h2load run through each (process CPU per
// stream from /proc, req/s), and stops them; the builds' places in the
// order swap every iteration. Fresh processes because one process's figure
// is mostly its own JIT's luck: two bb processes of the same build, measured
// in turn for 7 rounds, differed by 1.7 µs of CPU a stream (6.3 against 4.7),
// more than the change being measured. Each build's proxies run its own
// dist/ (build both first).
//
//   node --import tsx bench/proxy-h2-ab.ts <before repo> <after repo> [--iterations N] [--requests N]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Helper } from './lib/child.js';
import { cpuSeconds } from './lib/proc.js';
import { spread } from './lib/stats.js';
import { positiveFlags } from './lib/args.js';
import { findH2load, h2load } from './proxy-h2.js';

type ChildModule = typeof import('./lib/child.js');

/** One figure per iteration, by proxy. */
interface Series {
  cpuUs: number[];
  rate: number[];
}

const median = (xs: number[]): number => spread(xs).median;
const list = (xs: number[], digits: number): string => xs.map((x) => x.toFixed(digits)).join(' ');

/** Runs the A/B and prints each proxy's medians and each build's ratios. */
export async function runAb(args: string[]): Promise<void> {
  const [before, after] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
  if (!before || !after) throw new Error('usage: bench/proxy-h2-ab.ts <before repo> <after repo> [--iterations N] [--requests N]');
  const { iterations, requests } = positiveFlags(args, { iterations: 8, requests: 60_000 }, true);
  if (!findH2load()) throw new Error('h2load is not installed (Debian: nghttp2-client)');
  const load = async (repo: string): Promise<ChildModule> => (await import(pathToFileURL(join(repo, 'bench/lib/child.ts')).href)) as ChildModule;
  const builds = { before: await load(before), after: await load(after) };
  const upstream = await builds.after.startHelper(builds.after.benchPath('proxy-h2-upstream.ts'), []);
  const series = new Map<string, Series>();
  const loads: number[] = [];
  try {
    for (let it = 0; it < iterations; it++) {
      const names = it % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
      const plan: Array<[string, ChildModule, string]> = [['pipe', builds.after, 'pipe']];
      for (const b of names) plan.push([`${b} bb-off`, builds[b], 'bb-off'], [`${b} bb`, builds[b], 'bb']);
      const work = mkdtempSync(join(os.tmpdir(), 'bb-bench-h2ab-'));
      const started: Array<[string, Helper]> = [];
      try {
        for (const [label, m, kind] of plan) started.push([label, await m.startHelper(m.benchPath('proxy-peer.ts'), [kind, String(upstream.port), join(work, label.replace(' ', '-'))])]);
        for (const [, h] of started) await h2load(h.port, 20_000); // warm-up, unmeasured
        loads.push(os.loadavg()[0]!);
        for (const [label, h] of started) {
          const cpu = cpuSeconds(h.pid);
          const r = await h2load(h.port, requests);
          const s = series.get(label) ?? { cpuUs: [], rate: [] };
          s.cpuUs.push(((cpuSeconds(h.pid) - cpu) * 1e6) / Math.max(1, r.done));
          s.rate.push(r.rate);
          series.set(label, s);
        }
      } finally {
        for (const [, h] of started) await h.stop();
        rmSync(work, { recursive: true, force: true });
      }
    }
  } finally {
    await upstream.stop();
  }
  console.log(`\n## h2 A/B: ${iterations} iterations of fresh proxies, ${requests} requests each, load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}\n`);
  for (const [label, s] of series) console.log(`${label.padEnd(13)} CPU µs/stream ${median(s.cpuUs).toFixed(2)} [${list(s.cpuUs, 1)}]  req/s ${median(s.rate).toFixed(0)}`);
  const pipe = series.get('pipe')!;
  for (const b of ['before', 'after']) {
    const bb = series.get(`${b} bb`)!;
    const off = series.get(`${b} bb-off`)!;
    const overPipe = bb.rate.map((r, i) => r / pipe.rate[i]!);
    const overOff = bb.rate.map((r, i) => r / off.rate[i]!);
    const recording = bb.cpuUs.map((c, i) => c - off.cpuUs[i]!);
    console.log(`${b}: bb ÷ pipe ${median(overPipe).toFixed(2)} [${list(overPipe, 2)}]; bb ÷ bb-off ${median(overOff).toFixed(2)} [${list(overOff, 2)}]; bb − bb-off CPU ${median(recording).toFixed(2)} µs a stream`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runAb(process.argv.slice(2)).catch((err: Error) => {
    console.error(err.message);
    process.exitCode = 1;
  });
}
