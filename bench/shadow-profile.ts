// Where a `bb shadow` process spends its CPU under the shadow benchmark's
// latency load (bench/shadow.ts part 1: a small GET paced at 400 req/s over
// 16 keep-alive connections): CPU per 1,000 requests by thread (the main
// thread, which relays the primary and runs the mirrors' proxies; the
// comparison worker; V8's helper threads, GC mostly), the main thread's time
// by area of bb (what a shadow adds to a capture: the tee, the mirror
// clients, the candidate's recording proxy in the relay and journal areas)
// and its hot spots, over just the measured load (shadow-peer.ts's profile asks).
//
//   node --import tsx bench/shadow-profile.ts [--seconds S] [--warmup S] [--capture] [--slow] [--top N]
//
// --warmup (10 s) of the same load goes first, unmeasured: V8's compiles (bench/shadow.ts).
//
// --capture profiles `bb capture`'s recording proxy instead (the baseline);
// --slow gives the shadow a candidate that answers 200 ms late.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { areaTimes, hotSpots } from './lib/cpuprofile.js';
import { shadowArea } from './lib/profile-areas.js';
import { undiciLoad } from './lib/load.js';
import { positiveFlags } from './lib/args.js';
import { threadCpuMs } from './lib/proc.js';

const args = process.argv.slice(2);
const { seconds, top, warmup } = positiveFlags(args, { seconds: 10, top: 30, warmup: 10 });
const capture = args.includes('--capture');
const work = mkdtempSync(join(os.tmpdir(), 'bb-shadow-profile-'));
const helpers: Helper[] = [];
try {
  const primary = await startHelper(benchPath('proxy-upstream.ts'), []);
  helpers.push(primary);
  const candidate = await startHelper(benchPath('proxy-upstream.ts'), args.includes('--slow') ? ['200'] : []);
  helpers.push(candidate);
  const bb = capture
    ? await startHelper(benchPath('proxy-peer.ts'), ['bb', String(primary.port), join(work, 'capture')])
    : await startHelper(benchPath('shadow-peer.ts'), [String(primary.port), String(candidate.port), join(work, 'shadow')]);
  helpers.push(bb);
  const url = `http://127.0.0.1:${bb.port}`;
  await undiciLoad(url, '/small', 16, warmup, 400);
  const profile = join(work, 'main.cpuprofile');
  await bb.ask('profile-start');
  const before = threadCpuMs(bb.pid);
  const m = await undiciLoad(url, '/small', 16, seconds, 400);
  const after = threadCpuMs(bb.pid);
  await bb.ask(`profile-stop ${profile}`);
  console.log(`${capture ? 'bb capture' : 'bb shadow'}: ${m.ops} requests, p50 ${m.p50.toFixed(3)} ms, p99 ${m.p99.toFixed(2)} ms`);
  // The first thread is the main one, the comparison worker starts last; the profiler's own thread is left out.
  let total = 0;
  for (const [thread, ms] of after) {
    const d = ms - (before.get(thread) ?? 0);
    if (thread.includes('ProfEvnt')) continue;
    total += d;
    if (d > 0) console.log(`  thread ${thread.padEnd(22)} ${((d * 1000) / m.ops).toFixed(0).padStart(5)} ms / 1k req`);
  }
  console.log(`  all threads (profiler's left out)  ${((total * 1000) / m.ops).toFixed(0).padStart(5)} ms / 1k req`);
  // The relay's thread by area: what a shadow adds to a capture's (the tee, the mirror clients, the candidate's recording proxy in the proxy and journal areas).
  const root = process.cwd().replace(/\/?$/, '/');
  const areas = [...areaTimes(profile, shadowArea, root).entries()].sort((a, b) => b[1] - a[1]);
  console.log(`\nmain thread by area, ms / 1k req (sampled self time; the innermost bb frame on the stack decides):`);
  for (const [area, ms] of areas) console.log(`${((ms * 1000) / m.ops).toFixed(0).padStart(7)}  ${area}`);
  console.log(`\nmain thread, self time over the load (ms, share of busy time):`);
  for (const h of hotSpots(profile, top, process.cwd())) console.log(`${h.selfMs.toFixed(0).padStart(7)} ${(h.share * 100).toFixed(1).padStart(5)}%  ${h.where}`);
} finally {
  for (const h of helpers.reverse()) await h.stop();
  rmSync(work, { recursive: true, force: true });
}
