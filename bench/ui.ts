// The live view (`bb capture --ui`) under a load of small GETs: what it costs
// the proxy and how fast its feed brings rows to a page.
//
//   npm run bench -- ui [--quick] [--requests 20000] [--connections 10] [--rounds 3]
//
// Three configurations of `bb capture` (bin/bb.js, its own process, writing
// its HAR), taking turns within each round (the order rotates so drift
// spreads over all three): plain; `--ui` with no page open; `--ui` with one
// page reading the exchanges feed (an SSE client in this process, counting
// row events as they arrive: a stand-in for a browser tab that keeps up).
// autocannon sends the GETs (proxy-upstream.ts /small, its own process).
// "CPU per 1,000" is bb's user + system CPU (/proc) from the load's start
// until the page has every row done (plain: the load's end), plus the same
// 300 ms settle for all, per 1,000 requests; the ratio is against plain bb in
// the same round. "live rows/s" is row events the page read per second while
// the load ran (a row is sent as it starts and again as it ends); "behind at
// end" is how long after the last response the page saw the last row done;
// "snapshot rows/s" is a fresh page opened after the load reading every row.
// Needs a built dist/ (npm run bench builds it).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { openFeed, until } from './lib/feed.js';
import { positiveFlags } from './lib/args.js';
import { httpLoad } from './lib/load.js';
import { cpuSeconds } from './lib/proc.js';
import { spread } from './lib/stats.js';
import { auto, markdownTable, num, ratio, withSpread } from './lib/table.js';

const BIN = fileURLToPath(new URL('../bin/bb.js', import.meta.url));
const SETTLE_MS = 300;

type Config = 'bb' | 'bb --ui' | 'bb --ui, one page';
const CONFIGS: Config[] = ['bb', 'bb --ui', 'bb --ui, one page'];

interface Args {
  requests: number;
  connections: number;
  rounds: number;
}

function parseArgs(argv: string[]): Args {
  return positiveFlags(argv, { requests: [20_000, 5_000], connections: 10, rounds: [3, 1] }, true);
}

/** A running `bb capture`. */
export interface Bb {
  child: ChildProcess;
  proxy: string;
  ui?: string;
  stop(): Promise<void>;
}

/** Starts `bb capture` (with --ui when asked) and waits for its proxy's (and page's) URL. */
export async function startBb(upstream: string, out: string, ui: boolean, nodeFlags: string[] = []): Promise<Bb> {
  const child = spawn(process.execPath, [...nodeFlags, BIN, 'capture', '--target', upstream, '--out', out, ...(ui ? ['--ui'] : [])], {
    env: { ...process.env, NO_COLOR: '1', BB_HOME: join(out, '..', 'home') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The proxy's line is on stdout, the page's on stderr.
  let said = '';
  child.stdout!.on('data', (c: Buffer) => void (said += String(c)));
  child.stderr!.on('data', (c: Buffer) => void (said += String(c)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (const end = Date.now() + 30_000; ; ) {
    const proxy = /bb: capture: (http:\/\/127\.0\.0\.1:\d+) ->/.exec(said)?.[1];
    const page = /bb: ui: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(said)?.[1];
    if (proxy && (!ui || page)) {
      return {
        child, proxy, ui: page,
        async stop() {
          child.kill('SIGINT');
          await exited;
        },
      };
    }
    if (child.exitCode !== null || Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`bb capture did not start: ${said}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A page reading the exchanges feed: counts row events and rows done, as they arrive. */
interface Reader {
  /** Row events read so far. */
  rows: number;
  /** Rows read in state done, by seq. */
  done: Set<number>;
  /** When (performance.now()) the first and the last row event arrived. */
  first: number;
  last: number;
  /** Resolves when `n` rows are done. */
  until(n: number): Promise<void>;
  close(): void;
}

async function readFeed(ui: string): Promise<Reader> {
  const reader: Reader = { rows: 0, done: new Set(), first: 0, last: 0, until: async () => undefined, close: () => undefined };
  const feed = await openFeed(`${ui}feed/exchanges`, (type, data) => {
    if (type !== 'row') return;
    const now = performance.now();
    if (reader.rows++ === 0) reader.first = now;
    reader.last = now;
    if (data.includes('"state":"done"')) reader.done.add(Number(/"seq":(\d+)/.exec(data)?.[1]));
  });
  reader.until = (n) => until(feed, () => reader.done.size >= n, `${n} rows done`);
  reader.close = () => feed.close();
  return reader;
}

/** One configuration's figures for one round. */
interface Measured {
  rate: number;
  cpuPer1000: number;
  liveRows?: number;
  behindMs?: number;
  snapshotRows?: number;
}

async function measure(config: Config, upstream: string, dir: string, a: Args, round: number): Promise<Measured> {
  const bb = await startBb(upstream, join(dir, `r${round}-${CONFIGS.indexOf(config)}.har`), config !== 'bb');
  try {
    const page = config === 'bb --ui, one page' ? await readFeed(bb.ui!) : undefined;
    // Warm-up, unmeasured (the page sees these rows too).
    const warm = Math.min(1_000, a.requests);
    await httpLoad({ url: `${bb.proxy}/small`, connections: a.connections, amount: warm });
    await page?.until(warm);
    const cpu0 = cpuSeconds(bb.child.pid!);
    const start = performance.now();
    const load = await httpLoad({ url: `${bb.proxy}/small`, connections: a.connections, amount: a.requests });
    if (load.errors > 0) throw new Error(`${config}: ${load.errors} of ${load.ops} requests failed`);
    const loadEnd = performance.now();
    await page?.until(warm + a.requests);
    const behindMs = page ? performance.now() - loadEnd : undefined;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const cpu = cpuSeconds(bb.child.pid!) - cpu0;
    const measured: Measured = { rate: a.requests / ((loadEnd - start) / 1000), cpuPer1000: (cpu / a.requests) * 1000 };
    if (page) {
      measured.liveRows = page.rows / ((page.last - start) / 1000);
      measured.behindMs = behindMs;
      page.close();
      // A fresh page: the whole capture as one snapshot.
      const opened = performance.now();
      const fresh = await readFeed(bb.ui!);
      await fresh.until(warm + a.requests);
      measured.snapshotRows = fresh.rows / ((fresh.last - opened) / 1000);
      fresh.close();
    }
    return measured;
  } finally {
    await bb.stop();
  }
}

/** Entry point for bench/lib/area.ts. */
export async function run(argv: string[]): Promise<void> {
  const a = parseArgs(argv);
  const dir = await mkdtemp(join(tmpdir(), 'bb-bench-ui-'));
  let upstream: Helper | undefined;
  try {
    upstream = await startHelper(benchPath('proxy-upstream.ts'), []);
    const origin = `http://127.0.0.1:${upstream.port}`;
    console.log(`\n## ui\n\n${num(a.requests)} GET /small per run on ${a.connections} connections through bb capture, ${a.rounds} round(s), the three configurations taking turns; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}\n`);
    const got = new Map<Config, Measured[]>(CONFIGS.map((c) => [c, []]));
    for (let r = 1; r <= a.rounds; r++) {
      // Rotate the order each round, so a drift of the machine does not favour one.
      for (let k = 0; k < CONFIGS.length; k++) {
        const config = CONFIGS[(k + r - 1) % CONFIGS.length]!;
        got.get(config)!.push(await measure(config, origin, dir, a, r));
      }
    }
    const plain = got.get('bb')!;
    const rows = CONFIGS.map((c) => {
      const m = got.get(c)!;
      const figure = (pick: (x: Measured) => number | undefined): string => (m.some((x) => pick(x) === undefined) ? '—' : withSpread(spread(m.map((x) => pick(x)!)), auto));
      return [
        c,
        withSpread(spread(m.map((x) => x.rate)), (v) => num(v)),
        ratio(spread(m.map((x, i) => x.rate / plain[i]!.rate))),
        withSpread(spread(m.map((x) => x.cpuPer1000 * 1000)), (v) => `${auto(v)} ms`),
        ratio(spread(m.map((x, i) => x.cpuPer1000 / plain[i]!.cpuPer1000))),
        figure((x) => x.liveRows),
        figure((x) => x.behindMs),
        figure((x) => x.snapshotRows),
      ];
    });
    console.log(markdownTable(['configuration', 'requests/s', 'vs bb', 'bb CPU per 1,000', 'vs bb', 'live rows/s', 'behind at end, ms', 'snapshot rows/s'], rows));
    const page = got.get('bb --ui, one page')!;
    console.log(`\nThe page read ${withSpread(spread(page.map((x) => x.liveRows! / x.rate)), (v) => v.toFixed(2))} row events per request while the load ran (a row is sent again at each change of its state).`);
  } finally {
    await upstream?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
