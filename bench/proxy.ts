// The proxy benchmark: bb against the physical limit and its peers, on
// loopback, in one run, against the same upstream.
//
//   npm run bench -- proxy [--quick] [--rounds N] [--duration S] [--ws-round-trips N] [--only small,ws,h2,...]
//                          [--configs direct,bb,...] [--no-long] [--long-only] [--profile [--keep-profiles DIR]]
//
// Configurations: direct (no proxy), a raw TCP pipe, a bare http-proxy-3
// forwarder, that forwarder teeing every body byte to a file (tee), bb with
// recording off, bb recording, and mitmdump when it is installed. The upstream and every proxy run in their own processes; the
// load comes from this one. Rounds interleave the configurations so noise
// from other work on the machine falls on all of them alike; each figure is
// the median of the rounds, ratios are taken round by round against direct
// (and the forwarder) measured in the same round.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { printProfile } from './lib/profile-areas.js';
import { httpLoad, sseLoad, undiciLoad, wsEchoLoad, type Measured } from './lib/load.js';
import { cpuSeconds, peakRssMiB, resetPeakRss } from './lib/proc.js';
import { longCapture, type LongOptions } from './proxy-long.js';
import { findMitmdump, startMitmdump } from './proxy-mitm.js';
import { printWorkload, printTargets, type Sample, type WorkloadResults } from './proxy-report.js';
import { runH2 } from './proxy-h2.js';
import { listFlag } from './lib/args.js';

/** How long and how much: the full run and --quick. */
interface Settings {
  rounds: number;
  /** Seconds per autocannon run. */
  duration: number;
  /** SSE streams per round, and events per stream. */
  sseStreams: number;
  sseEvents: number;
  /** WebSocket round trips per client per round (32 clients). */
  wsPerClient: number;
  long: LongOptions | undefined;
  profile: boolean;
  /** Where the .cpuprofile files are copied to (else they go with the work dir). */
  keepProfiles: string | undefined;
  only: string[] | undefined;
  configs: string[] | undefined;
}

/** The workloads, in the order they run and print. */
export const WORKLOADS = ['small', '1mib', 'post64k', 'sse', 'ws'] as const;
type Workload = (typeof WORKLOADS)[number];

/** Every configuration, in table order; mitmdump joins when installed. */
export const CONFIGS = ['direct', 'pipe', 'forwarder', 'tee', 'bb-off', 'bb'] as const;

const CONNECTIONS = 32;
const WS_CLIENTS = 32;

function parseArgs(args: string[]): Settings {
  const quick = args.includes('--quick');
  const value = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const longCount = quick ? 10_000 : 200_000;
  const settings: Settings = {
    rounds: Number(value('--rounds') ?? (quick ? 1 : 3)),
    duration: Number(value('--duration') ?? (quick ? 1 : 2)),
    sseStreams: quick ? 10 : 40,
    sseEvents: 100,
    // --ws-round-trips: more per client when CPU per message must resolve past /proc's 10 ms tick (--quick's 3,200 are ~5 ticks of the pipe).
    wsPerClient: Number(value('--ws-round-trips') ?? (quick ? 100 : 400)),
    long: args.includes('--no-long') ? undefined : { exchanges: longCount, wsMessages: longCount, connections: CONNECTIONS, wsClients: WS_CLIENTS },
    profile: args.includes('--profile'),
    keepProfiles: value('--keep-profiles'),
    only: args.includes('--long-only') ? [] : listFlag(args, '--only'),
    configs: listFlag(args, '--configs'),
  };
  for (const w of settings.only ?? []) {
    if (!(WORKLOADS as readonly string[]).includes(w) && w !== 'h2') throw new Error(`--only takes workloads among ${WORKLOADS.join(', ')}, h2; got '${w}'`);
  }
  if (!Number.isInteger(settings.rounds) || settings.rounds < 1) throw new Error(`--rounds needs a whole number ≥ 1, got '${value('--rounds')}'`);
  if (!(settings.duration > 0)) throw new Error(`--duration needs seconds > 0, got '${value('--duration')}'`);
  return settings;
}

/** A configuration under test: where clients connect, and whose process to measure (none for direct). */
interface Config {
  name: string;
  port: number;
  helper?: Helper;
}

const body64k = Buffer.alloc(64 * 1024, 0x61);

/** Runs one workload once against one port (`warm`: a short unmeasured run of it, for JIT and pools). */
async function runWorkload(workload: Workload, port: number, s: Settings, warm = false): Promise<Measured> {
  const base = `http://127.0.0.1:${port}`;
  const seconds = warm ? Math.min(0.5, s.duration) : s.duration;
  switch (workload) {
    case 'small':
      return httpLoad({ url: `${base}/small`, connections: CONNECTIONS, duration: seconds });
    case '1mib':
      return undiciLoad(base, '/1mib', CONNECTIONS, seconds);
    case 'post64k':
      return httpLoad({
        url: `${base}/upload`, connections: CONNECTIONS, duration: seconds, method: 'POST', body: body64k,
        headers: { 'content-type': 'application/octet-stream' },
      });
    case 'sse':
      return sseLoad(base, warm ? 3 : s.sseStreams, s.sseEvents);
    case 'ws':
      // The warm-up must reach the optimizing JIT in every process: 20 round trips per client left the first round cold.
      return wsEchoLoad(`ws://127.0.0.1:${port}/echo`, WS_CLIENTS, warm ? Math.max(100, Math.round(s.wsPerClient / 2)) : s.wsPerClient);
  }
}

/** One measured run: the load's figures plus the proxy process's CPU and peak RSS over it. */
/** Operations each profiled run measured, by profile file: the profile's times per operation. */
const profiledOps = new Map<string, number>();

async function measure(workload: Workload, config: Config, s: Settings, profileFile?: string): Promise<Sample> {
  const pid = config.helper?.pid;
  if (pid !== undefined) resetPeakRss(pid);
  if (profileFile) await config.helper?.ask('profile-start');
  const cpuBefore = pid !== undefined ? cpuSeconds(pid) : Number.NaN;
  let m: Measured;
  try {
    m = await runWorkload(workload, config.port, s);
  } catch (err) {
    console.error(`  ${workload} through ${config.name} failed: ${(err as Error).message}`);
    return { rate: Number.NaN, p50: Number.NaN, p99: Number.NaN, errors: 1, cpuMsPer1k: Number.NaN, peakRss: Number.NaN };
  } finally {
    if (profileFile) await config.helper?.ask(`profile-stop ${profileFile}`).catch(() => undefined);
  }
  const cpu = pid !== undefined ? cpuSeconds(pid) - cpuBefore : Number.NaN;
  if (profileFile) profiledOps.set(profileFile, m.ops);
  return {
    rate: m.rate,
    p50: m.p50,
    p99: m.p99,
    lastP50: m.lastP50,
    errors: m.errors,
    cpuMsPer1k: m.ops > 0 ? (cpu * 1000) / (m.ops / 1000) : Number.NaN,
    peakRss: pid !== undefined ? peakRssMiB(pid) : Number.NaN,
  };
}

/** Starts every configuration into `configs` (filled as they start, so a failure still lets the caller stop the rest). */
async function startConfigs(configs: Config[], names: string[], upstreamPort: number, workRoot: string): Promise<void> {
  for (const name of names) {
    if (name === 'direct') {
      configs.push({ name, port: upstreamPort });
    } else if (name === 'mitmdump') {
      const helper = await startMitmdump(upstreamPort, join(workRoot, 'mitm.flows'));
      configs.push({ name, port: helper.port, helper });
    } else {
      const dir = join(workRoot, name);
      const helper = await startHelper(benchPath('proxy-peer.ts'), [name, String(upstreamPort), dir]);
      configs.push({ name, port: helper.port, helper });
    }
  }
}

/** The date, Node, CPUs and load average at the start: the first line of a benchmark's output. */
export function machineLine(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return `${new Date().toISOString().slice(0, 10)} · Node ${process.version} · ${cpus.length} × ${cpus[0]?.model ?? 'CPU'} · loopback · load average at start ${load}`;
}

/** Runs the proxy benchmark and prints its tables. */
export async function run(args: string[]): Promise<void> {
  const s = parseArgs(args);
  const mitmdump = findMitmdump();
  const wanted = s.configs ?? [...CONFIGS, ...(mitmdump ? ['mitmdump'] : [])];
  const names = wanted.includes('direct') ? wanted : ['direct', ...wanted]; // ratios need direct
  for (const n of names) {
    if (![...CONFIGS, 'mitmdump'].includes(n)) throw new Error(`--configs takes names among ${CONFIGS.join(', ')}, mitmdump; got '${n}'`);
  }
  const workloads = (s.only ?? [...WORKLOADS]).filter((w) => w !== 'h2') as Workload[];
  console.log(`## proxy\n\n${machineLine()}`);
  console.log(`rounds ${s.rounds}, ${s.duration} s per HTTP run, ${CONNECTIONS} keep-alive connections, ${WS_CLIENTS} WebSocket clients`);
  if (!mitmdump) console.log('mitmdump is not installed: its rows and the "≥ 10× mitmdump" target are skipped.');

  const workRoot = mkdtempSync(join(os.tmpdir(), 'bb-bench-proxy-'));
  let upstream: Helper | undefined;
  const configs: Config[] = [];
  const started = performance.now();
  try {
    upstream = await startHelper(benchPath('proxy-upstream.ts'), []);
    await startConfigs(configs, names, upstream.port, workRoot);
    const results: WorkloadResults[] = [];
    if (workloads.length > 0) {
      for (const workload of workloads) {
        // Warm-up of this workload in every process (client included), unmeasured.
        for (const c of configs) await runWorkload(workload, c.port, s, true).catch(() => undefined);
        const samples = new Map<string, Sample[]>(configs.map((c) => [c.name, []]));
        for (let round = 0; round < s.rounds; round++) {
          // Rotate the order each round: whoever runs first in a noisy moment changes.
          const order = configs.map((_, i) => configs[(i + round) % configs.length]!);
          for (const c of order) {
            const profileFile = s.profile && c.helper && c.name !== 'mitmdump' ? join(workRoot, 'profile', `${c.name}.${workload}.${round}.cpuprofile`) : undefined;
            samples.get(c.name)!.push(await measure(workload, c, s, profileFile));
          }
        }
        const result: WorkloadResults = { workload, samples };
        results.push(result);
        printWorkload(result);
      }
    }
    let longPeak: number | undefined;
    let recordingClose: unknown;
    const bb = configs.find((c) => c.name === 'bb');
    if (bb?.helper) {
      recordingClose = await bb.helper.ask('close', 600_000).catch((err: Error) => ({ error: err.message }));
      await bb.helper.stop();
    }
    if (s.long) longPeak = (await longCapture(upstream.port, join(workRoot, 'long'), s.long)).peakRss;
    if (workloads.length > 0) printTargets(results, { longPeakRss: longPeak, mitmdump: Boolean(mitmdump), recordingClose });
    if (s.profile) printProfile(join(workRoot, 'profile'), s.keepProfiles, profiledOps);
    // The h2 rows (their own upstream and peers; see proxy-h2.ts).
    if (!s.only || s.only.includes('h2')) await runH2(args);
    console.log(`\nproxy benchmark took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    for (const c of configs) await c.helper?.stop();
    await upstream?.stop();
    rmSync(workRoot, { recursive: true, force: true });
  }
}

// `node --import tsx bench/proxy.ts [flags]` runs it alone.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  run(process.argv.slice(2)).catch((err: Error) => {
    console.error(err.message);
    process.exitCode = 1;
  });
}
