// What one operation costs a proxy process, counted where a profile cannot
// count it (issue 39: "say where the µs go"): CPU by thread from /proc (the
// main thread apart from V8's helper threads, which run most of the garbage
// collection) and the process's read and write system calls from
// /proc/PID/io (exact: the same load gives the same counts whatever the
// machine's noise), per operation, for the raw TCP pipe, bb with nobody
// recording (bb-off) and bb recording (bb).
//
//   node --import tsx bench/lib/area.ts proxy-costs [--quick] [--rounds 3] [--only keepalive,ws,close,wsshort,paced] [--configs pipe,bb-off,bb]
//
// --quick: one round of a fifth of each load (test/bench/proxy-costs.cli.test.ts
// runs it and checks the system calls, the figures that do not move).
//
// Workloads (each config of a round gets a fresh upstream and proxy, one
// warm-up run, then the measured run; the configs' order turns each round):
//   keepalive  small GETs over 32 keep-alive connections (autocannon), 3 s
//   ws         WebSocket echo, 32 clients × 1,500 round trips of 100 bytes; an op is a round trip
//   close      GETs with `Connection: close`, 8 at a time, 4,000: an op is a whole connection
//   wsshort    short WebSocket connections, 8 at a time, 3,000: open, one message and its echo, close
//   paced      small GETs at 400 a second over 16 connections for 6 s (undici): a light load, where
//              each request wakes the process on its own
//
// Syscalls: the pipe's are the floor of any hop (a read and a write each way);
// what bb adds is its journal's writes (one `writeSync` of the journal and one
// `writev` of `.bodies` per loop turn with records). CPU per op moves with the
// load's pace on a shared machine (more ops per wake-up costs less each), so
// read the rounds' range, not one figure.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { converse, httpLoad, inParallel, undiciLoad, wsEchoLoad } from './lib/load.js';
import { listFlag, positiveFlags } from './lib/args.js';
import { mainAndOtherCpuMs, syscallCounts } from './lib/proc.js';
import { spread } from './lib/stats.js';
import { withSpread } from './lib/table.js';
import { machineLine } from './proxy.js';

const WORKLOADS = ['keepalive', 'ws', 'close', 'wsshort', 'paced'] as const;
type Workload = (typeof WORKLOADS)[number];
const CONFIGS = ['pipe', 'bb-off', 'bb'] as const;

/** One measured run: its operations, their rate, and the process's costs over them. */
interface Run {
  ops: number;
  rate: number;
  /** CPU µs per op: all threads, the main thread, the others (V8's helpers, libuv's pool). */
  cpu: number;
  main: number;
  helpers: number;
  /** System calls per op. */
  writes: number;
  reads: number;
}

/** How much of each load a run drives: whole, or a fifth (--quick). */
interface Sizes {
  /** Keep-alive exchanges over the 32 connections. */
  exchanges: number;
  roundTrips: number;
  closed: number;
  short: number;
  paced: number;
}
const FULL: Sizes = { exchanges: 60_000, roundTrips: 1500, closed: 4000, short: 3000, paced: 6 };
const QUICK: Sizes = { exchanges: 12_000, roundTrips: 300, closed: 800, short: 600, paced: 2 };

/** Operations (or a paced spell) of `work` against the proxy on `port`. */
async function drive(work: Workload, port: number, z: Sizes): Promise<{ ops: number; rate: number }> {
  const base = `http://127.0.0.1:${port}`;
  switch (work) {
    case 'keepalive': {
      // A number of exchanges, not a duration: a duration's end leaves a request in flight on every connection,
      // read by the proxy but not counted as an op (64 reads over ~1,000 ops read as 2.07 reads/op on a loaded machine).
      const m = await httpLoad({ url: `${base}/small`, connections: 32, amount: z.exchanges });
      return { ops: m.ops, rate: m.rate };
    }
    case 'ws': {
      const m = await wsEchoLoad(`ws://127.0.0.1:${port}/echo`, 32, z.roundTrips);
      return { ops: m.ops, rate: m.rate };
    }
    case 'paced': {
      const m = await undiciLoad(base, '/small', 16, z.paced, 400);
      return { ops: m.ops, rate: m.rate };
    }
    case 'close':
      return eightAtATime(z.closed, () => closedGet(port));
    case 'wsshort':
      return eightAtATime(z.short, () => converse(`ws://127.0.0.1:${port}/echo`, 1));
  }
}

/** `n` operations, 8 at a time; their rate over the whole. */
async function eightAtATime(n: number, one: () => Promise<void>): Promise<{ ops: number; rate: number }> {
  const t0 = performance.now();
  await inParallel(n, 8, one);
  return { ops: n, rate: n / ((performance.now() - t0) / 1000) };
}

function closedGet(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get({ port, host: '127.0.0.1', path: '/small', agent: false, headers: { connection: 'close' } }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      })
      .on('error', reject);
  });
}

async function measure(config: string, work: Workload, workRoot: string, z: Sizes): Promise<Run> {
  const helpers: Helper[] = [];
  const dir = mkdtempSync(join(workRoot, `${config}-${work}-`));
  try {
    const upstream = await startHelper(benchPath('proxy-upstream.ts'), []);
    helpers.push(upstream);
    const proxy = await startHelper(benchPath('proxy-peer.ts'), [config, String(upstream.port), dir]);
    helpers.push(proxy);
    await drive(work, proxy.port, z);
    const cpu0 = mainAndOtherCpuMs(proxy.pid);
    const sys0 = syscallCounts(proxy.pid);
    const m = await drive(work, proxy.port, z);
    const cpu1 = mainAndOtherCpuMs(proxy.pid);
    const sys1 = syscallCounts(proxy.pid);
    const per = (v: number): number => v / m.ops;
    const main = per((cpu1.main - cpu0.main) * 1000);
    const other = per((cpu1.others - cpu0.others) * 1000);
    return { ops: m.ops, rate: m.rate, cpu: main + other, main, helpers: other, writes: per(sys1.writes - sys0.writes), reads: per(sys1.reads - sys0.reads) };
  } finally {
    for (const h of helpers.reverse()) await h.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Median of the rounds, and their range when they differ. */
const range = (xs: number[], digits: number): string => withSpread(spread(xs), (x) => x.toFixed(digits));

/** Prints the table (called by bench/run.mjs through bench/lib/area.ts). */
export async function run(args: string[]): Promise<void> {
  const { rounds } = positiveFlags(args, { rounds: [3, 1] }, true);
  const z = args.includes('--quick') ? QUICK : FULL;
  const works = listFlag(args, '--only', WORKLOADS) ?? [...WORKLOADS];
  const configs = listFlag(args, '--configs', CONFIGS) ?? [...CONFIGS];
  console.log(`## proxy-costs\n\n${machineLine()} · ${rounds} rounds, a fresh upstream and proxy for each run\n`);
  const workRoot = mkdtempSync(join(os.tmpdir(), 'bb-bench-costs-'));
  try {
    for (const work of works) {
      const runs = new Map<string, Run[]>(configs.map((c) => [c, []]));
      for (let r = 0; r < rounds; r++) {
        // The order turns each round: no config always runs first (or last) on a machine that warms or cools.
        const order = configs.map((_, i) => configs[(i + r) % configs.length]!);
        for (const c of order) runs.get(c)!.push(await measure(c, work, workRoot, z));
      }
      console.log(`### ${work}\n`);
      console.log('| config | ops/s | CPU µs/op | main thread | other threads | × pipe (CPU, per round) | write syscalls/op | read syscalls/op |');
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
      const pipe = runs.get('pipe');
      for (const c of configs) {
        const rs = runs.get(c)!;
        const ratio = pipe && c !== 'pipe' ? range(rs.map((x, i) => x.cpu / pipe[i]!.cpu), 2) + '×' : '—';
        console.log(`| ${c} | ${range(rs.map((x) => x.rate), 0)} | ${range(rs.map((x) => x.cpu), 1)} | ${range(rs.map((x) => x.main), 1)} | ${range(rs.map((x) => x.helpers), 1)} | ${ratio} | ${range(rs.map((x) => x.writes), 2)} | ${range(rs.map((x) => x.reads), 2)} |`);
      }
      console.log('');
    }
  } finally {
    rmSync(workRoot, { recursive: true, force: true });
  }
}
