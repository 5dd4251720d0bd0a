// SSE's first event, paired: one 100-event stream at a time through the raw
// pipe, bb with recording off and bb recording, in turn (the order rotates
// each stream), many times; each configuration keeps one warm keep-alive
// connection, so a stream's figures are the relay's, not a connect's.
//
//   node --import tsx bench/lib/area.ts proxy-sse [--streams 200] [--events 100] [--configs pipe,bb-off,bb]
//                                                 [--warm-gets N] [--hops] [--profile DIR]
//
// Per stream, from the request's start: head = the client's 'response'
// event, first = its first body bytes. Printed: medians per configuration
// and the median of the per-stream ratios to the first configuration's (the
// streams of one index run side by side, so noise on the machine falls on
// all of them). The proxy bench's SSE row (bench/proxy.ts) takes 10–40
// streams a round; this one resolves tens of µs.
//
// --warm-gets N: N small GETs through each proxy first (the head paths hot,
// as after the bench's small-GET workload). --hops: each proxy notes when a
// request and a response head reach it and when its writes of them return
// (lib/hop-times.cjs, one monotonic clock for all processes), and a second
// table splits the first event's time into its hops: the client to the
// proxy, the proxy's own request hop, the upstream's round trip as the
// proxy sees it, the proxy's response hop, the proxy to the client.
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { spread } from './lib/stats.js';
import { listFlag, positiveFlags } from './lib/args.js';
import { machineLine } from './proxy.js';

/** One stream's times (process.hrtime, ns): its start, the response event, the first body bytes. */
interface StreamTimes {
  t0: bigint;
  head: bigint;
  first: bigint;
}

/** A proxy under test and its streams. */
interface Probed {
  name: string;
  helper: Helper;
  agent: http.Agent;
  times: StreamTimes[];
}

/** One stream of `events` events to `path` through `agent`'s one connection. */
function oneStream(port: number, agent: http.Agent, path: string): Promise<StreamTimes> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      const head = process.hrtime.bigint();
      let first = 0n;
      res.on('data', () => {
        if (first === 0n) first = process.hrtime.bigint();
      });
      res.on('end', () => resolve({ t0, head, first }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('request timed out')));
  });
}

function value(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

const ms = (ns: bigint | number): number => Number(ns) / 1e6;
const median = (values: number[]): number => spread(values).median;

/** Runs the probe and prints its tables. */
export async function run(args: string[]): Promise<void> {
  const { streams, events } = positiveFlags(args, { streams: 200, events: 100 }, true);
  const warmGets = Number(value(args, '--warm-gets') ?? 0);
  const names = listFlag(args, '--configs') ?? ['pipe', 'bb-off', 'bb'];
  const hops = args.includes('--hops');
  const profileDir = value(args, '--profile');
  console.log(`## proxy-sse\n\n${machineLine()}\n${streams} streams of ${events} events through each of ${names.join(', ')}, in turn${warmGets ? ` (after ${warmGets} small GETs each)` : ''}`);
  const workRoot = mkdtempSync(join(os.tmpdir(), 'bb-bench-sse-'));
  if (hops) process.env.BB_HOP_TIMES_DIR = workRoot;
  const flags = hops ? ['--require', benchPath('lib/hop-times.cjs')] : [];
  const path = `/sse?n=${events}`;
  let upstream: Helper | undefined;
  const probed: Probed[] = [];
  try {
    upstream = await startHelper(benchPath('proxy-upstream.ts'), []);
    for (const name of names) {
      const helper = await startHelper(benchPath('proxy-peer.ts'), [name, String(upstream.port), join(workRoot, name)], flags);
      probed.push({ name, helper, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }), times: [] });
    }
    for (const p of probed) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
      await Promise.all(Array.from({ length: 8 }, async () => {
        for (let i = 0; i < warmGets / 8; i++) await oneStream(p.helper.port, agent, '/small');
      }));
      agent.destroy();
    }
    // Warm-up: JIT in every process, and each configuration's connection opened.
    for (let i = 0; i < 20; i++) for (const p of probed) await oneStream(p.helper.port, p.agent, path);
    if (profileDir) for (const p of probed) await p.helper.ask('profile-start');
    for (let i = 0; i < streams; i++) {
      for (let k = 0; k < probed.length; k++) {
        const p = probed[(i + k) % probed.length]!;
        p.times.push(await oneStream(p.helper.port, p.agent, path));
      }
    }
    if (profileDir) for (const p of probed) await p.helper.ask(`profile-stop ${join(profileDir, `${p.name}.sse.cpuprofile`)}`);
    printFirsts(probed);
    if (hops) await printHops(probed, workRoot);
  } finally {
    for (const p of probed) {
      p.agent.destroy();
      await p.helper.stop();
    }
    await upstream?.stop();
    rmSync(workRoot, { recursive: true, force: true });
  }
}

function printFirsts(probed: Probed[]): void {
  const base = probed[0]!;
  const f = (v: number): string => v.toFixed(3);
  console.log(`\n| config | head, ms (median) | first, ms (median; p10–p90) | first − head, µs | first ÷ ${base.name}'s (median of pairs) |`);
  console.log('|---|---:|---:|---:|---:|');
  for (const p of probed) {
    const firsts = p.times.map((t) => ms(t.first - t.t0)).sort((a, b) => a - b);
    const at = (q: number): number => firsts[Math.min(firsts.length - 1, Math.floor(q * firsts.length))]!;
    const head = median(p.times.map((t) => ms(t.head - t.t0)));
    const first = median(firsts);
    const paired = median(p.times.map((t, i) => Number(t.first - t.t0) / Number(base.times[i]!.first - base.times[i]!.t0)));
    console.log(`| ${p.name} | ${f(head)} | ${f(first)} (${f(at(0.1))}–${f(at(0.9))}) | ${((first - head) * 1000).toFixed(0)} | ${paired.toFixed(2)} |`);
  }
}

/** The second table of --hops: each stream's first event split at the proxy's four notes (medians, µs). */
async function printHops(probed: Probed[], dir: string): Promise<void> {
  for (const p of probed) process.kill(p.helper.pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 500));
  console.log('\n| config | client → proxy | proxy: request hop | upstream round trip | proxy: response hop | proxy → client | first event | streams split |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const p of probed) {
    const notes = readFileSync(join(dir, `${p.helper.pid}.hops`), 'utf8').trim().split('\n').map((line) => {
      const [t, kind] = line.split(' ');
      return { t: BigInt(t!), kind: kind! };
    });
    const hops: number[][] = [[], [], [], [], [], []];
    for (const s of p.times) {
      // The stream's own notes: the first of each kind between its start and its first event.
      const at = (kind: string): bigint | undefined => notes.find((n) => n.kind === kind && n.t >= s.t0 && n.t <= s.first)?.t;
      const marks = [s.t0, at('r1'), at('w1'), at('r2'), at('w2'), s.first];
      if (marks.some((m) => m === undefined)) continue;
      for (let i = 0; i < 5; i++) hops[i]!.push(Number(marks[i + 1]! - marks[i]!) / 1000);
      hops[5]!.push(Number(s.first - s.t0) / 1000);
    }
    console.log(`| ${p.name} | ${hops.map((h) => median(h).toFixed(0)).join(' | ')} | ${hops[5]!.length} of ${p.times.length} |`);
  }
}
