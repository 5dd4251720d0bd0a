// What the primary's slowest requests wait for through `bb shadow` (issue 37's
// p99 target: within 1.1× of `bb capture`'s): the shadow benchmark's latency
// load (a small GET paced at --rate over 16 keep-alive connections) through
// `bb capture` (twice: a second peer is the run's noise, how far two identical
// configurations stand apart), `bb shadow` and `bb shadow --compare end`,
// rounds alternated, every request of a configuration pooled. Beside the quantiles it counts
// what a tail is made of on the relay's thread:
//   - requests over 2 and 4 ms (the tail itself, in numbers, not one quantile);
//   - the main thread's garbage-collection pauses (perf_hooks 'gc' entries
//     over just the load: profile-asks.ts's 'gc-start' / 'gc-stop');
//   - with --profile, its busy stretches (cpuprofile.ts busyStretches: how
//     long it ran between idle moments; a request that arrives in one waits
//     for its end) and what ran in the long ones, by area of bb.
//
//   node --import tsx bench/lib/area.ts shadow-tail [--rounds 8] [--seconds 3] [--rate 400] [--warmup 5]
//        [--profile] [--node-flags '--max-semi-space-size=4'] [--candidate-idle] [--samples 0,0.5] [--quick]
//
// Runs the built bb (npm run build first), through the peers bench/shadow.ts
// measures (proxy-peer.ts's `bb`, shadow-peer.ts). --node-flags: V8 or Node
// flags for the bb processes (the same for all three). --candidate-idle: the
// candidate's server runs at SCHED_IDLE (chrt), so its own CPU takes no core
// the relay wants: on a machine where it shares the cores, what is left is
// bb's. --samples: more `--compare end` configurations, each mirroring only
// that share of the requests (`--sample`): how the tail follows the mirror
// path's work. --quick: 2 rounds of 1 s after 1 s of warm-up (the bench test).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { busyStretches } from './lib/cpuprofile.js';
import { PROFILER_AREA, shadowArea } from './lib/profile-areas.js';
import type { GcPauses } from './lib/profile-asks.js';
import { undiciLoad } from './lib/load.js';
import { listFlag, positiveFlags } from './lib/args.js';
import { percentile } from './lib/stats.js';
import { markdownTable, num } from './lib/table.js';
import { machineLine } from './proxy.js';

/** A configuration: `bb capture`, `bb shadow`, `bb shadow --compare end`, and that mirroring a share of the requests (--samples). */
type ConfigName = string;
/** A stretch at least this long is a long one (ms): a request arriving at its start waits this long. */
const LONG_MS = 2;

/** What a configuration's rounds gathered, pooled. */
interface Pooled {
  latencies: number[];
  gc: GcPauses;
  stretches: number[];
  areasAll: Map<string, number>;
  areasLong: Map<string, number>;
}

export async function run(args: string[]): Promise<void> {
  const o = positiveFlags(args, { rounds: [8, 2], seconds: [3, 1], rate: 400, warmup: [5, 1] });
  o.rounds = Math.round(o.rounds);
  const profile = args.includes('--profile');
  const flagsAt = args.indexOf('--node-flags');
  const nodeFlags = flagsAt >= 0 ? (args[flagsAt + 1] ?? '').split(/\s+/).filter(Boolean) : [];
  const samples = (listFlag(args, '--samples') ?? []).map(Number);
  if (samples.some((x) => !(x >= 0 && x <= 1))) throw new Error(`--samples takes shares from 0 to 1, comma-separated (got '${args[args.indexOf('--samples') + 1]}')`);
  console.log(`## shadow-tail\n\n${machineLine()}`);
  console.log(`\nsmall GET at ${num(o.rate)} req/s over 16 keep-alive connections, ${o.warmup} s of warm-up each, ${o.rounds} round(s) of ${o.seconds} s, configurations alternated${nodeFlags.length ? `; bb runs with ${nodeFlags.join(' ')}` : ''}${profile ? '; main threads profiled (100 µs samples: the quantiles carry the profiler)' : ''}`);
  const work = mkdtempSync(join(os.tmpdir(), 'bb-bench-shadow-tail-'));
  const helpers: Helper[] = [];
  const start = async (script: string, argv: string[], flags: string[] = []): Promise<Helper> => {
    const h = await startHelper(benchPath(script), argv, flags);
    helpers.push(h);
    return h;
  };
  try {
    const primary = await start('proxy-upstream.ts', []);
    const candidate = await start('proxy-upstream.ts', []);
    if (args.includes('--candidate-idle')) {
      try {
        execFileSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(candidate.pid)], { stdio: 'pipe' });
      } catch (err) {
        throw new Error(`--candidate-idle needs chrt (util-linux) allowed to set SCHED_IDLE: ${(err as Error).message.split('\n')[0]}`);
      }
      console.log(`the candidate's server (pid ${candidate.pid}) runs at SCHED_IDLE`);
    }
    const shadowPeer = (dir: string, ...rest: string[]) => start('shadow-peer.ts', [String(primary.port), String(candidate.port), join(work, dir), ...rest], nodeFlags);
    const peers = new Map<ConfigName, Helper>([
      ['capture', await start('proxy-peer.ts', ['bb', String(primary.port), join(work, 'capture')], nodeFlags)],
      ['capture, a second peer', await start('proxy-peer.ts', ['bb', String(primary.port), join(work, 'capture-2')], nodeFlags)],
      ['shadow', await shadowPeer('shadow')],
      ['shadow, compared at the end', await shadowPeer('shadow-end', 'end')],
    ]);
    for (const share of samples) peers.set(`shadow, compared at the end, ${Math.round(share * 100)} % mirrored`, await shadowPeer(`shadow-end-${share}`, 'end', String(share)));
    const configs = [...peers.keys()];
    const url = (h: Helper) => `http://127.0.0.1:${h.port}`;
    for (const h of peers.values()) await undiciLoad(url(h), '/small', 16, o.warmup, o.rate);
    const pooled = new Map<ConfigName, Pooled>(configs.map((c) => [c, { latencies: [], gc: { minor: [], major: [] }, stretches: [], areasAll: new Map(), areasLong: new Map() }]));
    const root = benchPath('..').replace(/\/?$/, '/');
    for (let round = 0; round < o.rounds; round++) {
      for (let i = 0; i < configs.length; i++) {
        const name = configs[(i + round) % configs.length]!;
        const h = peers.get(name)!;
        const p = pooled.get(name)!;
        const file = join(work, 'profiles', `${round}-${i}.cpuprofile`);
        await h.ask('gc-start');
        if (profile) await h.ask('profile-start');
        const m = await undiciLoad(url(h), '/small', 16, o.seconds, o.rate);
        if (profile) await h.ask(`profile-stop ${file}`);
        const gc = await h.ask<GcPauses>('gc-stop');
        p.latencies.push(...(m.latencies ?? []));
        p.gc.minor.push(...gc.minor);
        p.gc.major.push(...gc.major);
        if (profile) {
          // The profiler's own start and stop are the harness's stretches, not the relay's.
          const s = busyStretches(file, shadowArea, { repoRoot: root, longMs: LONG_MS, drop: PROFILER_AREA });
          p.stretches.push(...s.lengths);
          for (const [area, ms] of s.all) p.areasAll.set(area, (p.areasAll.get(area) ?? 0) + ms);
          for (const [area, ms] of s.long) p.areasLong.set(area, (p.areasLong.get(area) ?? 0) + ms);
        }
        // What the last configuration left running (a live comparison's batch, mirrors' answers) settles first.
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    report(pooled, profile);
  } finally {
    for (const h of helpers.reverse()) await h.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function report(pooled: Map<ConfigName, Pooled>, profile: boolean): void {
  const base = percentile(pooled.get('capture')!.latencies, 99);
  const ms = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '—');
  const per1k = (count: number, requests: number) => ((count * 1000) / requests).toFixed(1);
  console.log('\nlatency, every request of a configuration pooled:\n');
  console.log(
    markdownTable(
      ['through', 'requests', 'p50 ms', 'p99 ms', 'p99.9 ms', 'over 2 ms', 'over 4 ms', 'p99 vs capture'],
      [...pooled].map(([name, p]) => {
        const l = p.latencies;
        const p99 = percentile(l, 99);
        return [name, num(l.length), ms(percentile(l, 50), 3), ms(p99), ms(percentile(l, 99.9)), num(l.filter((x) => x > 2).length), num(l.filter((x) => x > 4).length), `${(p99 / base).toFixed(2)}×`];
      }),
    ),
  );
  console.log('\nthe main thread\'s garbage-collection pauses over the load (per 1,000 requests; ms):\n');
  console.log(
    markdownTable(
      ['through', 'scavenges / 1k req', 'scavenge p50 / p90 / max', 'old-generation pauses / 1k req', 'their max', 'all pauses, ms / 1k req'],
      [...pooled].map(([name, p]) => {
        const n = p.latencies.length;
        const { minor, major } = p.gc;
        const total = [...minor, ...major].reduce((a, b) => a + b, 0);
        return [name, per1k(minor.length, n), minor.length ? `${ms(percentile(minor, 50))} / ${ms(percentile(minor, 90))} / ${ms(Math.max(...minor))}` : '—', per1k(major.length, n), major.length ? ms(Math.max(...major)) : '—', ms((total * 1000) / n, 1)];
      }),
    ),
  );
  if (!profile) return;
  console.log(`\nthe main thread's busy stretches (runs of samples between idle moments, gaps under 0.2 ms joined; those that ran the profiler's own start or stop left out):\n`);
  console.log(
    markdownTable(
      ['through', 'stretches / 1k req', 'median ms', 'p99 ms', `share ≥ ${LONG_MS} ms`, 'busy ms / 1k req', `busy in stretches ≥ ${LONG_MS} ms`],
      [...pooled].map(([name, p]) => {
        const n = p.latencies.length;
        const s = p.stretches;
        const busy = [...p.areasAll.values()].reduce((a, b) => a + b, 0);
        const inLong = [...p.areasLong.values()].reduce((a, b) => a + b, 0);
        return [name, per1k(s.length, n), ms(percentile(s, 50), 3), ms(percentile(s, 99)), `${((100 * s.filter((x) => x >= LONG_MS).length) / Math.max(1, s.length)).toFixed(1)} %`, ms((busy * 1000) / n, 0), `${((100 * inLong) / Math.max(busy, 1e-9)).toFixed(1)} %`];
      }),
    ),
  );
  for (const [name, p] of pooled) {
    const all = [...p.areasAll.values()].reduce((a, b) => a + b, 0);
    const long = [...p.areasLong.values()].reduce((a, b) => a + b, 0);
    if (long === 0) continue;
    console.log(`\n${name}: what ran in the stretches ≥ ${LONG_MS} ms, against all of them (share of sampled time):\n`);
    const rows = [...p.areasLong].sort((a, b) => b[1] - a[1]).map(([area, v]) => [area, `${((100 * v) / long).toFixed(1)} %`, `${((100 * (p.areasAll.get(area) ?? 0)) / all).toFixed(1)} %`]);
    console.log(markdownTable(['area', `in stretches ≥ ${LONG_MS} ms`, 'in all'], rows));
  }
}
