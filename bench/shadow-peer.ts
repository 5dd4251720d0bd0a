// A `bb shadow` run in its own process, for bench/shadow.ts, so its CPU and
// RSS are its alone (the comparison worker included: a thread of this
// process). Usage:
//
//   node <shadow-peer compiled to JS> <primary port> <candidate port> <work dir> [end|live] [<share mirrored>]   (see lib/compile.ts)
//
// `end`: the run compares at its close (`--compare end`), not as the traffic flows.
// A share (0 to 1, `--sample`): the part of the requests mirrored (default all).
//
// The recording-proxy baseline it is measured against is proxy-peer.ts's
// `bb` (startCapture): the same tap the shadow's primary goes through.
// Asks: 'report' (the live report as of the last comparison), 'memory' (each
// thread's heap: the proxies' and the comparison worker's), 'close' (ends the
// run: the final report, the close time, the process's peak RSS and each
// thread's memory at the end), 'profile-start' / 'profile-stop <file>' (a CPU
// profile of the main thread, the relay's, over just the traffic in between,
// as proxy-peer.ts's).
import { join } from 'node:path';
import { serveHelper } from './lib/serve.js';
import { profileAsk } from './lib/profile-asks.js';
// The built bb (npm run bench builds first): what `bb shadow` runs.
import { startShadow } from '../dist/index.js';

const [primaryPort, candidatePort, workDir, when, share] = process.argv.slice(2);
if (!primaryPort || !candidatePort || !workDir) {
  console.error('shadow-peer: usage: <primary port> <candidate port> <work dir>');
  process.exit(2);
}
const shadow = await startShadow({
  primary: `http://127.0.0.1:${primaryPort}`,
  candidate: `http://127.0.0.1:${candidatePort}`,
  outDir: join(workDir, 'out'),
  bbHome: join(workDir, 'home'),
  ...(when === 'end' ? { compare: 'end' as const } : {}),
  ...(share !== undefined ? { sample: Number(share) } : {}),
});
serveHelper(Number(new URL(shadow.url).port), async (what) => {
  const profiled = profileAsk(what);
  if (profiled) return profiled;
  if (what === 'report') return shadow.report() ?? null;
  if (what === 'memory') return shadow.memory();
  if (what === 'close') {
    const started = performance.now();
    const report = await shadow.close(1_000);
    // maxRSS (KiB): the process's peak, close included; it exits right after answering.
    return { closeMs: performance.now() - started, peakRss: process.resourceUsage().maxRSS / 1024, report, memory: shadow.memory(), drainedBy: shadow.drainedBy() };
  }
  throw new Error(`unknown ask '${what}'`);
});
