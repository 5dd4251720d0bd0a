// The h2 rows of the proxy benchmark (issue 22's targets): small unary h2c
// requests over one connection with 100 concurrent streams, driven by h2load
// (Debian's nghttp2-client), through
//
//   direct    no proxy: the h2c upstream itself
//   pipe      a raw TCP pipe: the limit for any proxy hop
//   reencode  a node:http2 proxy that re-encodes every stream (the peers' way)
//   bb-off    bb's h2 tap with no capture listening
//   bb        bb's h2 tap recording every stream
//
// Rounds interleave the configurations; ratios are taken round by round
// against the pipe measured in the same round. Then bb records 200k streams,
// 10k per connection, and its RSS is read after each connection: after the
// first quarter (warm-up) it must stay flat (lib/stats.ts growthAfterWarmup).
//
//   node --import tsx bench/proxy-h2.ts [--quick] [--rounds N] [--profile [--keep-profiles DIR]]
//   (also run by `npm run bench -- proxy`; --profile: a CPU profile of each proxy process in each measured
//   run, read by area as bench/profiles/README.md says)
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { cpuSeconds, peakRssMiB, resetPeakRss, rssMiB } from './lib/proc.js';
import { printProfile } from './lib/profile-areas.js';
import { growthAfterWarmup, ratios, spread } from './lib/stats.js';
import { markdownTable, num, ratio, verdict, withSpread } from './lib/table.js';

const CONFIGS = ['direct', 'pipe', 'reencode', 'bb-off', 'bb'] as const;
type ConfigName = (typeof CONFIGS)[number];
const STREAMS = 100;

interface H2Settings {
  rounds: number;
  /** Requests per measured run. */
  requests: number;
  /** Streams for the memory run. */
  memoryStreams: number;
  /** Profile each proxy process's measured runs (--profile). */
  profile: boolean;
  /** Where the .cpuprofile files are copied to (--keep-profiles). */
  keepProfiles: string | undefined;
}

interface Config {
  name: ConfigName;
  port: number;
  helper?: Helper;
}

interface Run {
  rate: number;
  failed: number;
  cpuUsPerReq: number;
  peakRss: number;
}

/** True when h2load is installed (Debian: nghttp2-client). */
export function findH2load(): boolean {
  try {
    execFileSync('h2load', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** One h2load run: `requests` small GETs over one connection, STREAMS at a time. */
export function h2load(port: number, requests: number): Promise<{ rate: number; failed: number; done: number }> {
  return new Promise((resolve, reject) => {
    execFile('h2load', ['-n', String(requests), '-c', '1', '-m', String(STREAMS), `http://127.0.0.1:${port}/small`], { timeout: 300_000 }, (err, stdout) => {
      if (err && !stdout) return reject(err);
      const rate = /finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(stdout);
      const counts = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed/.exec(stdout);
      if (!rate || !counts) return reject(new Error(`h2load said: ${stdout.slice(-400)}`));
      resolve({ rate: Number(rate[1]), done: Number(counts[1]), failed: Number(counts[3]) + (Number(counts[1]) - Number(counts[2])) });
    });
  });
}

/** Streams each profiled run completed, by profile file. */
const profiledOps = new Map<string, number>();

async function measure(c: Config, requests: number, profileFile?: string): Promise<Run> {
  const pid = c.helper?.pid;
  if (pid !== undefined) resetPeakRss(pid);
  if (profileFile) await c.helper?.ask('profile-start');
  const before = pid !== undefined ? cpuSeconds(pid) : Number.NaN;
  const r = await h2load(c.port, requests).catch((err: Error) => {
    console.error(`  h2 through ${c.name} failed: ${err.message}`);
    return { rate: Number.NaN, failed: requests, done: 0 };
  });
  const cpu = pid !== undefined ? cpuSeconds(pid) - before : Number.NaN;
  if (profileFile) {
    await c.helper?.ask(`profile-stop ${profileFile}`).catch(() => undefined);
    profiledOps.set(profileFile, r.done);
  }
  return { rate: r.rate, failed: r.failed, cpuUsPerReq: r.done > 0 ? (cpu * 1e6) / r.done : Number.NaN, peakRss: pid !== undefined ? peakRssMiB(pid) : Number.NaN };
}

async function startConfig(name: ConfigName, upstreamPort: number, workRoot: string): Promise<Config> {
  if (name === 'direct') return { name, port: upstreamPort };
  const helper = name === 'reencode'
    ? await startHelper(benchPath('proxy-h2-reencode.ts'), [String(upstreamPort)])
    : await startHelper(benchPath('proxy-peer.ts'), [name, String(upstreamPort), join(workRoot, name)]);
  return { name, port: helper.port, helper };
}

/** Records `total` streams through a fresh recording bb and reads its RSS along the way. */
async function memoryRun(upstreamPort: number, workRoot: string, total: number): Promise<{ points: Array<[number, number]>; failed: number }> {
  const bb = await startConfig('bb', upstreamPort, join(workRoot, 'memory'));
  const points: Array<[number, number]> = [];
  let failed = 0;
  try {
    const step = total / 20;
    for (let done = 0; done < total; done += step) {
      failed += (await h2load(bb.port, step)).failed;
      points.push([done + step, rssMiB(bb.helper!.pid)]);
    }
    await bb.helper!.ask('close', 600_000).catch(() => undefined);
  } finally {
    await bb.helper!.stop();
  }
  return { points, failed };
}

/** Runs the h2 rows; prints their table and targets. */
export async function runH2(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const at = args.indexOf('--rounds');
  const s: H2Settings = {
    rounds: at >= 0 ? Number(args[at + 1]) : quick ? 1 : 3,
    requests: quick ? 20_000 : 50_000,
    memoryStreams: 200_000,
    profile: args.includes('--profile'),
    keepProfiles: args.includes('--keep-profiles') ? args[args.indexOf('--keep-profiles') + 1] : undefined,
  };
  console.log(`\n## proxy: HTTP/2 (h2c, h2load -c 1 -m ${STREAMS}, ${num(s.requests)} small requests per run, ${s.rounds} rounds)\n`);
  if (!findH2load()) {
    console.log('h2load is not installed (Debian: nghttp2-client): the h2 rows are skipped.');
    return;
  }
  const workRoot = mkdtempSync(join(os.tmpdir(), 'bb-bench-h2-'));
  const configs: Config[] = [];
  let upstream: Helper | undefined;
  try {
    upstream = await startHelper(benchPath('proxy-h2-upstream.ts'), []);
    for (const name of CONFIGS) configs.push(await startConfig(name, upstream.port, workRoot));
    for (const c of configs) await h2load(c.port, 2_000).catch(() => undefined); // warm-up, unmeasured
    const runs = new Map<ConfigName, Run[]>(configs.map((c) => [c.name, []]));
    for (let round = 0; round < s.rounds; round++) {
      const order = configs.map((_, i) => configs[(i + round) % configs.length]!);
      for (const c of order) {
        const profileFile = s.profile && c.helper && c.name !== 'reencode' ? join(workRoot, 'profile', `${c.name}.h2.${round}.cpuprofile`) : undefined;
        runs.get(c.name)!.push(await measure(c, s.requests, profileFile));
      }
    }
    const pipe = runs.get('pipe')!.map((r) => r.rate);
    const rows = configs.map((c) => {
      const list = runs.get(c.name)!;
      return [
        c.name,
        withSpread(spread(list.map((r) => r.rate))),
        ratio(spread(ratios(list.map((r) => r.rate), pipe))),
        withSpread(spread(list.map((r) => r.cpuUsPerReq))),
        withSpread(spread(list.map((r) => r.peakRss))),
        num(list.reduce((n, r) => n + r.failed, 0)),
      ];
    });
    console.log(markdownTable(['h2c small, 100 streams', 'req/s', '× pipe', 'CPU µs/req', 'peak RSS MiB', 'failed'], rows));
    if (s.profile) printProfile(join(workRoot, 'profile'), s.keepProfiles, profiledOps);

    const memory = await memoryRun(upstream.port, workRoot, s.memoryStreams);
    console.log(`\nbb recording ${num(s.memoryStreams)} streams, one connection per twentieth, RSS (MiB) after each: ${memory.points.map(([, r]) => num(r)).join(' → ')}${memory.failed ? ` (${memory.failed} failed)` : ''}`);

    const bbRates = runs.get('bb')!.map((r) => r.rate);
    const bbRatio = spread(ratios(bbRates, pipe)).median;
    const offRatio = spread(ratios(bbRates, runs.get('bb-off')!.map((r) => r.rate))).median;
    // The long capture's rule (proxy-long.ts): the first quarter is warm-up (V8 sizes its heap for the load: one
    // sample at 20k against one at the end measured that sizing, 79 → 108 MiB, where 600,000 streams stay at
    // 97–115), then the median of the last quarter against the first quarter's after it, under 20 MiB.
    const growth = growthAfterWarmup(memory.points.map(([, r]) => r));
    const flat = Number.isFinite(growth) ? growth < 20 : undefined;
    console.log('\n### h2 targets\n');
    console.log(`- ${verdict(Number.isFinite(bbRatio) ? bbRatio >= 0.75 : undefined)} bb recording ≥ 0.75× the raw pipe (issue 39): ${bbRatio.toFixed(2)}×`);
    console.log(`- ${verdict(Number.isFinite(offRatio) ? offRatio >= 0.9 : undefined)} bb recording ≥ 0.9× bb with recording off (issue 39): ${offRatio.toFixed(2)}×`);
    console.log(`- ${verdict(flat)} memory flat over ${num(s.memoryStreams)} streams: RSS change after warm-up ${growth.toFixed(1)} MiB (under 20)`);
  } finally {
    for (const c of configs) await c.helper?.stop();
    await upstream?.stop();
    rmSync(workRoot, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  runH2(process.argv.slice(2)).catch((err: Error) => {
    console.error(err.message);
    process.exitCode = 1;
  });
}
