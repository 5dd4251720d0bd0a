// The shadow benchmark (issue 37's targets): what `bb shadow` costs the
// primary's client, and whether a long run stays bounded and counts every
// request.
//
//   npm run bench -- shadow [--quick] [--rounds N] [--duration S] [--rate R] [--connections C] [--warmup S]
//                           [--requests N] [--long-rate R] [--ws-rate M] [--no-long] [--long-only]
//
// 1. Added latency. A small GET at a paced load (--rate requests/s over
//    --connections keep-alive connections: a load every configuration keeps
//    up with, so latency is the hop's and not a queue's) through a plain
//    recording proxy (`bb capture`'s startCapture, proxy-peer.ts), through
//    `bb shadow` with a healthy candidate, through `bb shadow` with a
//    candidate that answers 200 ms late, and through `bb shadow --compare
//    end` (nothing compared until the run closes) with each candidate.
//    Rounds interleave the six (a second recording proxy among them: how far
//    two identical configurations' quantiles stand apart in the same run,
//    the noise a ratio is read against); ratios are taken round by round
//    against the recording proxy (target ≤ 1.1×).
//    Each configuration first takes --warmup seconds (10) of the same load,
//    unmeasured: a shadow's V8 compiles its code (the comparison worker's diff
//    engine above all) on V8's helper threads for about that long, and a
//    round measured meanwhile measures the compiler (docs/performance.md
//    "shadow": a 1 s warm-up put the JIT's tail in both configurations).
// 2. The long run. --requests small GETs at --long-rate requests/s at most
//    (1,700 by default: the issue's 100,000 in about a minute), with --ws-rate WebSocket messages per second echoed alongside for
//    the whole while, RSS of the shadow process sampled every second (target
//    flat and < 250 MB) with each of its threads' heap (the proxies' and the
//    comparison worker's: Shadow.memory()), and the peaks per phase and per
//    thread; the final report must say mirrored + skipped = requests
//    exactly, and requests = what the clients sent.
// Upstreams (proxy-upstream.ts, a ws echo server in every build) and each
// bb run in their own process; the load comes from this one.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { positiveFlag } from './lib/args.js';
import { httpLoad, undiciLoad, wsPacedLoad, type Measured } from './lib/load.js';
import { cpuSeconds, peakRssMiB, resetPeakRss, rssMiB } from './lib/proc.js';
import { growthAfterWarmup, percentile, ratios, spread } from './lib/stats.js';
import { auto, markdownTable, num, ratio, verdict, withSpread } from './lib/table.js';
import { machineLine } from './proxy.js';
import type { Shadow, ShadowReport } from '../dist/index.js';

interface Settings {
  rounds: number;
  /** Seconds per measured run. */
  duration: number;
  /** Requests per second of the paced load. */
  rate: number;
  connections: number;
  long?: { requests: number; httpRate: number; wsRate: number; wsClients: number; connections: number };
  latency: boolean;
  /** Seconds of unmeasured load through each configuration before the rounds. */
  warmup: number;
}

function parseArgs(args: string[]): Settings {
  const quick = args.includes('--quick');
  const value = (name: string, fallback: number): number => positiveFlag(args, name, fallback);
  return {
    rounds: Math.round(value('--rounds', quick ? 1 : 3)),
    duration: value('--duration', quick ? 2 : 5),
    rate: value('--rate', 400),
    connections: Math.round(value('--connections', 16)),
    long: args.includes('--no-long')
      ? undefined
      : { requests: Math.round(value('--requests', quick ? 10_000 : 100_000)), httpRate: value('--long-rate', 1_700), wsRate: value('--ws-rate', 500), wsClients: 10, connections: 32 },
    latency: !args.includes('--long-only'),
    warmup: value('--warmup', 10),
  };
}

/** The configurations of the latency table, in order: the baseline first. */
const CONFIGS = ['capture', 'capture, a second peer', 'shadow', 'shadow, candidate +200 ms', 'shadow, compared at the end', 'shadow, +200 ms, compared at the end'] as const;
/** The shadows, in the tables' order. */
const SHADOWS = CONFIGS.filter((c): c is Extract<ConfigName, `shadow${string}`> => c.startsWith('shadow'));
type ConfigName = (typeof CONFIGS)[number];

interface Sample {
  m: Measured;
  cpuMsPer1k: number;
  peakRss: number;
}

/** Each thread's memory in the shadow process (Shadow.memory()). */
type Memory = ReturnType<Shadow['memory']>;

/** What the shadow processes answer to 'close'. */
interface Closed {
  closeMs: number;
  peakRss: number;
  report: ShadowReport;
  memory: Memory;
  /** Which worker's report is the final one (Shadow.drainedBy()). */
  drainedBy?: string;
}

const skippedSum = (r: ShadowReport): number => Object.values(r.totals.skipped).reduce((a, b) => a + b, 0);

/** Runs the shadow benchmark and prints its tables. */
export async function run(args: string[]): Promise<void> {
  const s = parseArgs(args);
  console.log(`## shadow\n\n${machineLine()}`);
  const workRoot = mkdtempSync(join(os.tmpdir(), 'bb-bench-shadow-'));
  const helpers: Helper[] = [];
  const start = async (script: string, argv: string[]): Promise<Helper> => {
    const h = await startHelper(benchPath(script), argv);
    helpers.push(h);
    return h;
  };
  const started = performance.now();
  try {
    const primary = await start('proxy-upstream.ts', []);
    const candidate = await start('proxy-upstream.ts', []);
    if (s.latency) {
      const slow = await start('proxy-upstream.ts', ['200']);
      await latency(s, workRoot, start, primary.port, candidate.port, slow.port);
    }
    if (s.long) await longRun(s.long, workRoot, start, primary.port, candidate.port);
    console.log(`\nshadow benchmark took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    for (const h of helpers.reverse()) await h.stop();
    rmSync(workRoot, { recursive: true, force: true });
  }
}

async function measure(helper: Helper, s: Settings, seconds = s.duration): Promise<Sample> {
  resetPeakRss(helper.pid);
  const cpu0 = cpuSeconds(helper.pid);
  const m = await undiciLoad(`http://127.0.0.1:${helper.port}`, '/small', s.connections, seconds, s.rate);
  const cpu = cpuSeconds(helper.pid) - cpu0;
  return { m, cpuMsPer1k: m.ops > 0 ? (cpu * 1000) / (m.ops / 1000) : Number.NaN, peakRss: peakRssMiB(helper.pid) };
}

/** Part 1: p50/p99 of a small GET through each configuration, ratios against the recording proxy. */
async function latency(
  s: Settings,
  workRoot: string,
  start: (script: string, argv: string[]) => Promise<Helper>,
  primaryPort: number,
  candidatePort: number,
  slowPort: number,
): Promise<void> {
  console.log(`\n### added latency: small GET, ${num(s.rate)} req/s paced over ${s.connections} keep-alive connections, ${s.warmup} s of warm-up each, then ${s.rounds} round(s) of ${s.duration} s\n`);
  const configs = new Map<ConfigName, Helper>([
    ['capture', await start('proxy-peer.ts', ['bb', String(primaryPort), join(workRoot, 'capture')])],
    // The same as the baseline, in a process of its own: the run's noise.
    ['capture, a second peer', await start('proxy-peer.ts', ['bb', String(primaryPort), join(workRoot, 'capture-2')])],
    ['shadow', await start('shadow-peer.ts', [String(primaryPort), String(candidatePort), join(workRoot, 'shadow')])],
    ['shadow, candidate +200 ms', await start('shadow-peer.ts', [String(primaryPort), String(slowPort), join(workRoot, 'shadow-slow')])],
    // --compare end: nothing compared while the traffic flows (the comparison's cores are the tail's cause on a small machine).
    ['shadow, compared at the end', await start('shadow-peer.ts', [String(primaryPort), String(candidatePort), join(workRoot, 'shadow-end'), 'end'])],
    ['shadow, +200 ms, compared at the end', await start('shadow-peer.ts', [String(primaryPort), String(slowPort), join(workRoot, 'shadow-slow-end'), 'end'])],
  ]);
  // Warm-up (V8's compiles, pools, the slow candidate's queue filled to its cap), unmeasured.
  for (const h of configs.values()) await measure(h, s, s.warmup);
  const samples = new Map<ConfigName, Sample[]>(CONFIGS.map((c) => [c, []]));
  for (let round = 0; round < s.rounds; round++) {
    // Rotate the order each round: whoever runs in a noisy moment changes.
    for (let i = 0; i < CONFIGS.length; i++) {
      const name = CONFIGS[(i + round) % CONFIGS.length]!;
      // The configuration measured before may still be working (a live comparison's last batch, a slow
      // candidate's queued mirrors draining): each slot starts once every bb process is idle.
      await quiet([...configs.values()].map((h) => h.pid));
      samples.get(name)!.push(await measure(configs.get(name)!, s));
    }
  }
  const base = samples.get('capture')!;
  const of = (list: Sample[], f: (x: Sample) => number): number[] => list.map(f);
  const rows = CONFIGS.map((name) => {
    const list = samples.get(name)!;
    const p50 = of(list, (x) => x.m.p50);
    const p99 = of(list, (x) => x.m.p99);
    return [
      name,
      withSpread(spread(of(list, (x) => x.m.rate)), (v) => num(v)),
      withSpread(spread(p50), (v) => v.toFixed(2)),
      withSpread(spread(p99), (v) => v.toFixed(2)),
      name === 'capture' ? '1×' : ratio(spread(ratios(p50, of(base, (x) => x.m.p50)))),
      name === 'capture' ? '1×' : ratio(spread(ratios(p99, of(base, (x) => x.m.p99)))),
      num(list.reduce((a, x) => a + x.m.errors, 0)),
      withSpread(spread(of(list, (x) => x.cpuMsPer1k))),
      withSpread(spread(of(list, (x) => x.peakRss))),
    ];
  });
  console.log(markdownTable(['through', 'req/s', 'p50 ms', 'p99 ms', 'p50 vs capture', 'p99 vs capture', 'errors', 'CPU ms / 1k req', 'peak RSS MiB'], rows));

  // What each shadow did with the mirrors (the slow candidate's queue fills: its skips are "queue full").
  const closed = new Map<ConfigName, Closed>();
  for (const name of SHADOWS) {
    closed.set(name, await configs.get(name)!.ask<Closed>('close', 600_000));
  }
  console.log('');
  console.log(markdownTable(
    ['shadow run', 'requests', 'mirrored', 'skipped', 'candidate errors', 'equal', 'mirrored + skipped = requests'],
    [...closed].map(([name, c]) => {
      const t = c.report.totals;
      return [name, num(t.requests), num(t.mirrored), skippedText(t.skipped), num(t.errors), num(t.equal), t.mirrored + skippedSum(c.report) === t.requests ? 'yes' : 'NO'];
    }),
  ));
  // The run's quantiles from every sample of its rounds (the rounds interleave the configurations, so each
  // met the same load): a round's p99 is its 8th-slowest request of 800 (--quick), the run's its 1%.
  // Each configuration's samples pooled once (a pool is sorted to take its quantiles).
  const pools = new Map(CONFIGS.map((name) => {
    const all = samples.get(name)!.flatMap((x) => x.m.latencies ?? []);
    return [name, { p50: percentile(all, 50), p99: percentile(all, 99), n: all.length }] as const;
  }));
  const pooled = (name: ConfigName) => pools.get(name)!;
  const basePooled = pooled('capture');
  console.log(`\nThe run's p50 and p99 (every request of its ${s.rounds} round(s) pooled per configuration):\n`);
  console.log(markdownTable(
    ['through', 'requests', 'p50 ms', 'p99 ms', 'p50 vs capture', 'p99 vs capture'],
    CONFIGS.map((name) => {
      const p = pooled(name);
      return [name, num(p.n), p.p50.toFixed(3), p.p99.toFixed(2), ratio1(p.p50 / basePooled.p50), ratio1(p.p99 / basePooled.p99)];
    }),
  ));
  console.log('\nTargets (the run\'s pooled quantiles; the median of per-round ratios beside):');
  for (const name of SHADOWS) {
    const list = samples.get(name)!;
    const p = pooled(name);
    for (const q of ['p50', 'p99'] as const) {
      const r = p[q] / basePooled[q];
      const perRound = spread(ratios(of(list, (x) => x.m[q]), of(base, (x) => x.m[q]))).median;
      console.log(`    ${verdict(Number.isFinite(r) ? r <= 1.1 : undefined)}  ${q} through ${name} ≤ 1.1× capture: ${Number.isFinite(r) ? r.toFixed(2) : '—'}× (rounds' median ${Number.isFinite(perRound) ? perRound.toFixed(2) : '—'}×)`);
    }
  }
  const twin = pooled('capture, a second peer');
  console.log(`  The run's noise: the second recording proxy, the same configuration, had ${ratio1(twin.p50 / basePooled.p50)} the first's p50 and ${ratio1(twin.p99 / basePooled.p99)} its p99; a ratio that far from 1× is not told apart from noise here.`);
}

/** Waits until these processes together take under 2 % of a core over 200 ms (10 s at most). */
async function quiet(pids: number[]): Promise<void> {
  const total = (): number => pids.reduce((a, pid) => a + cpuSeconds(pid), 0);
  const until = performance.now() + 10_000;
  while (performance.now() < until) {
    const before = total();
    await new Promise((r) => setTimeout(r, 200));
    if (total() - before < 0.004) return;
  }
}

function ratio1(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : '—';
}

function skippedText(skipped: Record<string, number>): string {
  const parts = Object.entries(skipped).map(([why, n]) => `${num(n)} ${why}`);
  return parts.length ? parts.join(', ') : '0';
}

interface RssSample {
  t: number;
  phase: string;
  requests: number;
  rss: number;
  /** Exchanges the live report had counted and compared (or skipped) by then: how far the comparison lags. */
  reported?: number;
  compared?: number;
  /** Heap in use of the proxies' thread and of the comparison worker (as of its last report), MiB. */
  mainHeap?: number;
  compareHeap?: number;
}

const MiB = 1024 * 1024;

/** Exchanges a report has settled: compared (equal, differing, errors) or skipped. */
const settled = (r: ShadowReport): number => {
  const t = r.totals;
  return t.equal + t.regressions + t.noise + t.unclassified + t.errors + skippedSum(r);
};

/** Part 2: the long run, RSS sampled every second, the final report's counts checked. */
async function longRun(
  o: NonNullable<Settings['long']>,
  workRoot: string,
  start: (script: string, argv: string[]) => Promise<Helper>,
  primaryPort: number,
  candidatePort: number,
): Promise<void> {
  console.log(`\n### long run: ${num(o.requests)} small GETs (${o.connections} connections, ${num(o.httpRate)} req/s at most) and ${num(o.wsRate)} WebSocket messages/s alongside (${o.wsClients} clients), through one bb shadow\n`);
  const shadow = await start('shadow-peer.ts', [String(primaryPort), String(candidatePort), join(workRoot, 'long')]);
  const samples: RssSample[] = [];
  const t0 = performance.now();
  let phase = 'start';
  let requests = 0;
  const sample = (): void => {
    const at: RssSample = { t: (performance.now() - t0) / 1000, phase, requests, rss: rssMiB(shadow.pid) };
    samples.push(at);
    void shadow.ask<Memory>('memory', 5_000).then((m) => {
      at.mainHeap = m.main.heapUsed / MiB;
      if (m.compare) at.compareHeap = m.compare.heapUsed / MiB;
    }, () => {});
    if (phase !== 'traffic') return;
    void shadow.ask<ShadowReport | null>('report', 5_000).then((r) => {
      if (r) [at.reported, at.compared] = [r.totals.requests, settled(r)];
    }, () => {});
  };
  sample();
  const sampler = setInterval(sample, 1000);
  let closed: Closed | undefined;
  let httpResult: Measured | undefined;
  let wsResult: Awaited<ReturnType<Awaited<ReturnType<typeof wsPacedLoad>>['stop']>> | undefined;
  try {
    phase = 'traffic';
    const ws = await wsPacedLoad(`ws://127.0.0.1:${shadow.port}/long`, o.wsClients, o.wsRate);
    httpResult = await httpLoad({ url: `http://127.0.0.1:${shadow.port}/small`, connections: o.connections, amount: o.requests, overallRate: o.httpRate, onResponse: () => requests++ });
    wsResult = await ws.stop();
    phase = 'close';
    closed = await shadow.ask<Closed>('close', 600_000);
  } finally {
    clearInterval(sampler);
  }
  const k = Math.max(1, Math.ceil(samples.length / 24));
  const rows = samples.filter((x, i) => i % k === 0 || i === samples.length - 1 || samples[i + 1]?.phase !== x.phase);
  console.log(markdownTable(
    ['t s', 'phase', 'HTTP responses', 'in the live report', 'compared or skipped', 'RSS MiB', 'proxies heap MiB', 'compare heap MiB'],
    rows.map((x) => [x.t.toFixed(0), x.phase, num(x.requests), num(x.reported ?? Number.NaN), num(x.compared ?? Number.NaN), auto(x.rss), auto(x.mainHeap ?? Number.NaN), auto(x.compareHeap ?? Number.NaN)]),
  ));
  const traffic = samples.filter((x) => x.phase === 'traffic').map((x) => x.rss);
  const growth = growthAfterWarmup(traffic);
  const peak = Math.max(...samples.map((x) => x.rss).filter(Number.isFinite), closed?.peakRss ?? Number.NaN);
  const t = closed?.report.totals;
  // What the clients sent: every GET, and one upgrade request per WebSocket client.
  const sent = httpResult.ops + httpResult.errors + o.wsClients;
  console.log('');
  console.log(`    HTTP: ${num(httpResult.ops)} responses in ${auto(httpResult.seconds)} s (${num(httpResult.rate)} req/s), ${num(httpResult.errors)} errors`);
  console.log(`    WebSocket: ${num(wsResult.sent)} messages sent over ${auto(wsResult.seconds)} s (${num(wsResult.sent / wsResult.seconds)}/s), ${num(wsResult.echoed)} echoed, ${num(wsResult.errors)} sockets lost`);
  if (t && closed) {
    console.log(`    report: ${num(t.requests)} requests, ${num(t.mirrored)} mirrored, skipped ${skippedText(t.skipped)}, ${num(t.equal)} equal, ${num(t.errors)} candidate errors, ${num(t.regressions + t.unclassified)} differing; closed in ${auto(closed.closeMs / 1000)} s (the ${closed.drainedBy ?? 'live'} worker's report)`);
  }
  // Both builds are the same server: any finding is the shadow's own doing, worth a look.
  for (const f of closed?.report.findings.slice(0, 5) ?? []) {
    console.log(`    finding: ${f.class} ${f.kind} ${f.pattern || '(entry)'} on ${f.routes.join(', ')} × ${num(f.count)}; e.g. ${JSON.stringify(f.samples[0] ?? {}).slice(0, 300)}`);
  }
  console.log(`    RSS change over the traffic after warm-up ${auto(growth)} MiB; peak ${auto(peak)} MiB (close included)`);
  const peakOf = (f: (x: RssSample) => number | undefined): number => Math.max(...samples.map(f).filter((v): v is number => v !== undefined && Number.isFinite(v)));
  const trafficPeak = Math.max(...traffic.filter(Number.isFinite));
  const closePeak = peakOf((x) => (x.phase === 'close' ? x.rss : undefined));
  console.log(`    peak per phase: RSS ${auto(trafficPeak)} MiB during traffic, ${auto(Math.max(closePeak, closed?.peakRss ?? Number.NaN))} MiB closing`);
  console.log(`    peak heap per thread: proxies ${auto(Math.max(peakOf((x) => x.mainHeap), closed ? closed.memory.main.peakHeapUsed / MiB : Number.NaN))} MiB, comparison worker ${auto(closed?.memory.compare ? closed.memory.compare.peakHeapUsed / MiB : peakOf((x) => x.compareHeap))} MiB (run and close)`);
  console.log('\nTargets:');
  console.log(`    ${verdict(t ? t.mirrored + skippedSum(closed!.report) === t.requests : undefined)}  mirrored + skipped = requests exactly: ${t ? `${num(t.mirrored)} + ${num(skippedSum(closed!.report))} = ${num(t.mirrored + skippedSum(closed!.report))} vs ${num(t.requests)}` : '—'}`);
  console.log(`    ${verdict(t ? t.requests === sent : undefined)}  requests = what the clients sent (${num(sent)}): ${t ? num(t.requests) : '—'}`);
  console.log(`    ${verdict(Number.isFinite(growth) ? growth < 20 : undefined)}  RSS flat over the run (grows < 20 MiB after warm-up): ${auto(growth)} MiB`);
  console.log(`    ${verdict(Number.isFinite(peak) ? peak < 250 : undefined)}  peak RSS < 250 MB: ${auto(peak)} MiB`);
}

// `node --import tsx bench/shadow.ts [flags]` runs it alone.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  run(process.argv.slice(2)).catch((err: Error) => {
    console.error(err.message);
    process.exitCode = 1;
  });
}
