// The comparison worker's own work, offline (issue 37: what the relay's tail
// pays for, docs/performance.md "shadow"). A `bb shadow` run (shadow-peer.ts,
// a healthy candidate) takes --requests small GETs of the latency bench's
// load, then is killed (SIGKILL: its journals stay, as after a crash). This
// process then does what the comparison worker does with them, --rounds
// times: follows both journals to their end into entries (capture's
// followEntries, as compare-worker.ts), then compares them in the worker's
// batches (ShadowComparer), and prints the CPU of each part per 1,000
// requests (this thread's, process.cpuUsage: one thread, no helper work).
//
//   node --import tsx bench/shadow-compare.ts [--requests N] [--rounds R]
//   node --cpu-prof --cpu-prof-dir DIR --import tsx bench/shadow-compare.ts   # where it goes
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { positiveFlags } from './lib/args.js';
import { undiciLoad } from './lib/load.js';
import { followEntries, journalPaths, redactorFor } from '../dist/capture/index.js';
import { ShadowComparer } from '../dist/scenario/shadow/compare.js';

const args = process.argv.slice(2);
const { requests, rounds } = positiveFlags(args, { requests: 4_000, rounds: 5 }, true);
const work = mkdtempSync(join(os.tmpdir(), 'bb-shadow-compare-'));
const helpers: Helper[] = [];

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

try {
  const primary = await startHelper(benchPath('proxy-upstream.ts'), []);
  helpers.push(primary);
  const candidate = await startHelper(benchPath('proxy-upstream.ts'), []);
  helpers.push(candidate);
  const shadowDir = join(work, 'shadow');
  const bb = await startHelper(benchPath('shadow-peer.ts'), [String(primary.port), String(candidate.port), shadowDir]);
  helpers.push(bb);
  const rate = 400;
  const m = await undiciLoad(`http://127.0.0.1:${bb.port}`, '/small', 16, requests / rate, rate);
  // Let the last turns' journal writes out, then end it as a crash would: the journals stay.
  await new Promise((r) => setTimeout(r, 500));
  process.kill(bb.pid, 'SIGKILL');
  helpers.pop();
  const out = join(shadowDir, 'out');
  const journal = (side: string): { journal: string; bodies: string } => {
    const paths = journalPaths(join(out, `${side}.har`));
    if (!existsSync(paths.journal)) throw new Error(`no ${side} journal in ${out}: ${readdirSync(out).join(', ')}`);
    return paths;
  };
  const files = { primary: journal('primary'), candidate: journal('candidate') };
  const home = join(shadowDir, 'home');
  console.log(`shadow run: ${m.ops} requests through bb shadow; its journals: ${Object.values(files).map((f) => f.journal.slice(out.length + 1)).join(', ')}`);
  console.log('\n| round | entries | follow ms / 1k req | compare ms / 1k req | both |');
  console.log('|---:|---:|---:|---:|---:|');
  for (let round = 1; round <= rounds; round++) {
    const comparer = new ShadowComparer({ secondary: false, targets: { primary: 'p', candidate: 'c' } });
    let entries = 0;
    const t0 = cpuMs();
    for (const [side, f] of Object.entries(files) as Array<['primary' | 'candidate', { journal: string; bodies: string }]>) {
      const finish = new AbortController();
      finish.abort();
      await followEntries({
        journalPath: f.journal,
        bodiesPath: f.bodies,
        onEntry: (entry) => (entries++, comparer.add(side, entry)),
        redactorFor: (header) => redactorFor(header, home),
        finish: finish.signal,
      });
    }
    const t1 = cpuMs();
    const compared = await comparer.compareReady(true);
    const t2 = cpuMs();
    const per = (ms: number): string => ((ms * 1000) / compared).toFixed(0);
    console.log(`| ${round} | ${entries} (${compared} compared) | ${per(t1 - t0)} | ${per(t2 - t1)} | ${per(t2 - t0)} |`);
  }
} finally {
  for (const h of helpers.reverse()) await h.stop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
}
