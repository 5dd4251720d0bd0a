// The replay benchmark: exchanges per second replaying a capture of N small
// exchanges `asap` against a local server, beside the rate that server takes
// from autocannon directly, and from autocannon through bb's recording proxy
// (the hop every replay goes through, so the honest ceiling of any replay).
//
//   npm run bench -- replay [--quick] [--exchanges 10000] [--connections 10] [--runs 3]
//
// The upstream runs in its own process (proxy-upstream.ts, GET /small);
// autocannon, the recording proxy it goes through (its own process), and the
// replay (driver and its recording proxy in one process: what `bb replay`
// is) take turns, never at once. The capture is recorded once, by autocannon
// through bb, over --connections keep-alive connections: the replay keeps
// those lanes and their happens-before order.
// Needs a built dist/ (npm run bench builds it).
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { positiveFlags } from './lib/args.js';
import { httpLoad } from './lib/load.js';
import { spread } from './lib/stats.js';
import { markdownTable, num, ratio, withSpread } from './lib/table.js';
import { replayCapture, startCapture } from '../dist/index.js';
import { prepareReplay, replayThrough } from '../dist/scenario/replay/run.js';

interface Args {
  exchanges: number;
  connections: number;
  runs: number;
}

function parseArgs(argv: string[]): Args {
  return positiveFlags(argv, { exchanges: [10_000, 2_000], connections: 10, runs: [3, 1] });
}

/** Records the capture the replays re-drive: autocannon through an in-process bb proxy. */
async function recordCapture(upstream: string, dir: string, a: Args): Promise<string> {
  const cap = await startCapture({ target: upstream, out: join(dir, 'source.har'), bbHome: join(dir, 'home'), label: 'source' });
  await httpLoad({ url: `${cap.url}/small`, connections: a.connections, amount: a.exchanges });
  return cap.close(2_000);
}

/** One replay: wall time of the whole call, and of the driving alone (first to last exchange). */
async function replayOnce(har: string, upstream: string, dir: string, run: number): Promise<{ whole: number; drive: number; replayed: number }> {
  const started = performance.now();
  let first = 0;
  let last = 0;
  let count = 0;
  const summary = await replayCapture(har, {
    target: upstream,
    out: join(dir, `replay-${run}.har`),
    bbHome: join(dir, 'home'),
    onProgress: (done) => {
      const t = performance.now();
      if (done === 1) first = t;
      last = t;
      count = done;
    },
  });
  const whole = (performance.now() - started) / 1000;
  if (summary.failed.length) throw new Error(`the replay lost ${summary.failed.length} exchanges: ${summary.failed[0]!.reason}`);
  // First to last completion covers count − 1 exchanges.
  const drive = (last - first) / 1000 / Math.max(1, count - 1) * count;
  return { whole: summary.replayed / whole, drive: summary.replayed / drive, replayed: summary.replayed };
}

/** The driver alone, through a recording proxy in another process (what a proxy off the driver's thread would allow). */
async function driveOnly(har: string, proxyPort: number): Promise<number> {
  const prepared = await prepareReplay(har, {});
  const started = performance.now();
  const run = await replayThrough(prepared, { proxyUrl: `http://127.0.0.1:${proxyPort}`, step: () => {} });
  if (run.failed.length) throw new Error(`the replay lost ${run.failed.length} exchanges: ${run.failed[0]!.reason}`);
  return run.replayed / ((performance.now() - started) / 1000);
}

/** Entry point for bench/lib/area.ts. */
export async function run(argv: string[]): Promise<void> {
  const a = parseArgs(argv);
  const dir = await mkdtemp(join(tmpdir(), 'bb-bench-replay-'));
  let upstream: Helper | undefined;
  let proxy: Helper | undefined;
  try {
    upstream = await startHelper(benchPath('proxy-upstream.ts'), []);
    proxy = await startHelper(benchPath('proxy-peer.ts'), ['bb', String(upstream.port), join(dir, 'proxy')]);
    const origin = `http://127.0.0.1:${upstream.port}`;
    const har = await recordCapture(origin, dir, a);
    const bytes = (await stat(har)).size;
    console.log(`\n## replay\n\n${a.exchanges} GET /small exchanges on ${a.connections} connections (capture ${num(bytes / 1024 / 1024, 1)} MiB), ${a.runs} run(s) each, taking turns; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}\n`);
    // Warm-up of each, unmeasured.
    await httpLoad({ url: `${origin}/small`, connections: a.connections, amount: Math.min(2_000, a.exchanges) });
    await httpLoad({ url: `http://127.0.0.1:${proxy.port}/small`, connections: a.connections, amount: Math.min(2_000, a.exchanges) });
    await replayOnce(har, origin, dir, 0);
    const direct: number[] = [];
    const viaProxy: number[] = [];
    const whole: number[] = [];
    const drive: number[] = [];
    const external: number[] = [];
    for (let r = 1; r <= a.runs; r++) {
      direct.push((await httpLoad({ url: `${origin}/small`, connections: a.connections, amount: a.exchanges })).rate);
      viaProxy.push((await httpLoad({ url: `http://127.0.0.1:${proxy.port}/small`, connections: a.connections, amount: a.exchanges })).rate);
      const one = await replayOnce(har, origin, dir, r);
      whole.push(one.whole);
      drive.push(one.drive);
      await rm(join(dir, `replay-${r}.har`), { force: true });
      external.push(await driveOnly(har, proxy.port));
    }
    const d = spread(direct);
    const rows = [
      ['autocannon → server (baseline)', withSpread(d, (v) => num(v)), '1.00×'],
      ['autocannon → bb recording proxy → server', withSpread(spread(viaProxy), (v) => num(v)), ratio(spread(viaProxy.map((v, i) => v / direct[i]!)))],
      ['bb replay asap, driving (first to last exchange)', withSpread(spread(drive), (v) => num(v)), ratio(spread(drive.map((v, i) => v / direct[i]!)))],
      ['bb replay driver → bb recording proxy in its own process → server', withSpread(spread(external), (v) => num(v)), ratio(spread(external.map((v, i) => v / direct[i]!)))],
      ['bb replay asap, whole call (read, plan, drive, write HAR)', withSpread(spread(whole), (v) => num(v)), ratio(spread(whole.map((v, i) => v / direct[i]!)))],
    ];
    console.log(markdownTable(['exchanges/s', 'rate', 'vs autocannon direct'], rows));
    const cap = spread(viaProxy.map((v, i) => v / direct[i]!)).median;
    const mine = spread(drive.map((v, i) => v / direct[i]!)).median;
    console.log(`\nTarget: the replay ≥ 0.5× autocannon direct. Driving: ${mine.toFixed(2)}×; bb's recording proxy alone allows ${cap.toFixed(2)}× (every replay goes through it), so the replay reaches ${(mine / cap).toFixed(2)} of what its proxy allows.`);
  } finally {
    await proxy?.stop();
    await upstream?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
