// The live view (`bb capture --ui`) over a long run: what each of its windows
// and paces holds down, measured as a user meets it (docs/performance.md "ui").
//
//   npm run bench -- ui-long [--quick] [--messages N] [--conversations C] [--events-per-second R]
//                            [--seconds S] [--connections K] [--requests Q] [--parts 1,5]
//
// `bb capture --ui` runs as users run it (bin/bb.js, its own process, writing
// its HAR) in front of proxy-upstream.ts (node:http + a ws echo, its own
// process); the feeds are read by SSE clients in this process (bench/lib/feed.ts).
// Throughout each part a prober sends `GET /small` through the proxy every
// 20 ms, one at a time: "longest probe" is the slowest answer it got while the
// part's measured work ran (what the relay's stalls cost any client of it).
// CPU and RSS are bb's (/proc). Five parts, each on a fresh bb:
//
// 1. A long conversation: one WebSocket client sends N two-byte messages (the
//    upstream echoes each), then a page opens the conversation
//    (`/feed/exchange?key=`): the time to its entry (the latest 1,000
//    messages), the longest probe, RSS before and after; then the same
//    opened with the latest 10,000 (`key=L/SEQ~10000`, the most a page asks).
//    Past 100,000 a direction the messages are folded as they are written.
// 2. The Frames tab on a long capture: C conversations of N / C messages, then
//    a page opens `/feed/frames`: the time to the window (the last 50,000
//    frames), the bytes sent, RSS before and after.
// 3. A growing event stream: one SSE stream of R events a second for S
//    seconds, with no page, then with a page on the Frames tab: bb's CPU over
//    the stream.
// 4. Short WebSocket connections: K connections, 8 at a time, each opening,
//    sending one message, reading its echo and closing; with no page, then
//    with a page on the Frames tab: the time they take and bb's CPU.
// 5. A long run's rows: Q small GETs, then a page opens the Exchanges tab
//    (`/feed/exchanges`): the rows the snapshot sends (the latest 100,000 and
//    the open ones), its time and bytes, RSS.
//
// Needs a built dist/ (npm run bench builds it).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { listFlag, positiveFlags } from './lib/args.js';
import { benchPath, startHelper, type Helper } from './lib/child.js';
import { openFeed, until, type Feed } from './lib/feed.js';
import { converse, httpLoad, shortConnections } from './lib/load.js';
import { cpuSeconds, rssMiB } from './lib/proc.js';
import { auto, markdownTable, num } from './lib/table.js';
import { startBb, type Bb } from './ui.js';

interface Args {
  messages: number;
  conversations: number;
  eventsPerSecond: number;
  seconds: number;
  connections: number;
  requests: number;
  /** The parts to run (1–5), all when absent. */
  parts?: number[];
}

function parseArgs(argv: string[]): Args {
  const f = positiveFlags(
    argv,
    {
      messages: [1_000_000, 200_000],
      conversations: [20, 4],
      'events-per-second': 5_000,
      seconds: [10, 4],
      connections: [16_000, 2_000],
      requests: [300_000, 120_000],
    },
    true,
  );
  const parts = listFlag(argv, '--parts')?.map(Number);
  if (parts && !parts.every((n) => Number.isInteger(n) && n >= 1 && n <= 5)) throw new Error('--parts takes part numbers 1 to 5, e.g. --parts 1,5');
  return { ...f, eventsPerSecond: f['events-per-second'], parts };
}

// The prober's own process: the benchmark's process reads the feeds (27 MiB of rows in part 5), and a probe timed
// there waited for that reading too, not only for bb.
const PROBER = `
const http = require('node:http');
const [proxy, everyMs] = [process.argv[1], Number(process.argv[2])];
let worst = 0;
let stopped = false;
process.on('message', (m) => {
  if (m === 'reset') worst = 0;
  else if (m === 'worst') process.send({ worst });
  else if (m === 'stop') stopped = true;
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
(async () => {
  while (!stopped) {
    const t0 = performance.now();
    await new Promise((resolve, reject) => http.get(proxy + '/small', { agent }, (res) => res.resume().on('end', resolve)).on('error', reject));
    worst = Math.max(worst, performance.now() - t0);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  agent.destroy();
  process.disconnect();
})();
`;

/**
 * Probes the proxy every `everyMs` from a process of its own, one GET at a time on one kept-alive connection;
 * `worst()` is the slowest answer since the last `reset()`.
 */
function startProber(proxy: string, everyMs = 20): { reset(): void; worst(): Promise<number>; stop(): Promise<void> } {
  const child = spawn(process.execPath, ['-e', PROBER, proxy, String(everyMs)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    reset: () => void child.send('reset'),
    worst: () =>
      new Promise<number>((resolve) => {
        child.once('message', (m) => resolve((m as { worst: number }).worst));
        child.send('worst');
      }),
    stop: async () => {
      if (child.connected) child.send('stop');
      await exited;
    },
  };
}

/** The first row of `kind` in the running capture, from a fresh read of the exchanges feed's snapshot. */
async function firstRow(ui: string, kind: string): Promise<{ seq: number; label: string }> {
  let found: { seq: number; label: string } | undefined;
  const feed = await openFeed(`${ui}feed/exchanges`, (type, data) => {
    if (type !== 'row' || found) return;
    const e = JSON.parse(data) as { label: string; row: { seq: number; kind: string } };
    if (e.row.kind === kind) found = { seq: e.row.seq, label: e.label };
  });
  await until(feed, () => found !== undefined, `a ${kind} row`);
  feed.close();
  return found!;
}

/** A figure of one part: its name and value, printed as a table row. */
type Row = [part: string, figure: string, value: string];

/** Runs `work` on a fresh `bb capture --ui` with a prober going; bb is stopped after. */
async function withBb<T>(upstream: string, dir: string, name: string, work: (bb: Bb, prober: ReturnType<typeof startProber>) => Promise<T>): Promise<T> {
  const bb = await startBb(upstream, join(dir, `${name}.har`), true);
  const prober = startProber(bb.proxy);
  try {
    return await work(bb, prober);
  } finally {
    await prober.stop();
    await bb.stop();
  }
}

async function longConversation(upstream: string, dir: string, a: Args): Promise<Row[]> {
  return withBb(upstream, dir, 'conversation', async (bb, prober) => {
    const wsUrl = bb.proxy.replace('http', 'ws') + '/chat';
    const t0 = performance.now();
    await converse(wsUrl, a.messages);
    const sendMs = performance.now() - t0;
    const row = await firstRow(bb.ui!, 'websocket');
    const rss0 = rssMiB(bb.child.pid!);
    // As the page opens it (its latest messages), then as a page asking for the most it may (`~10000`).
    const open = async (suffix: string): Promise<{ ms: number; mib: number; worst: number }> => {
      prober.reset();
      const opened = performance.now();
      let ms = 0;
      const feed = await openFeed(`${bb.ui}feed/exchange?key=${encodeURIComponent(`${row.label}/${row.seq}${suffix}`)}`, (type) => {
        if (type === 'entry' && ms === 0) ms = performance.now() - opened;
      });
      await until(feed, () => ms > 0, 'the entry');
      // A few probes after the entry: a stall it caused ends in one of them.
      await new Promise((r) => setTimeout(r, 100));
      feed.close();
      return { ms, mib: feed.bytes / 2 ** 20, worst: await prober.worst() };
    };
    const first = await open('');
    const rss1 = rssMiB(bb.child.pid!);
    // A build before the window (2026-12-07) answers 404 to the key: the row says so.
    const most = await open('~10000').catch(() => undefined);
    return [
      [`1. one conversation of ${num(a.messages)} messages each way`, 'sent and echoed through bb', `${auto(sendMs / 1000)} s (${num(a.messages / (sendMs / 1000))} msg/s)`],
      ['', 'its entry opened in the page (sent; longest probe)', `${auto(first.ms)} ms (${auto(first.mib)} MiB; ${auto(first.worst)} ms)`],
      ['', 'bb RSS before → after the open', `${num(rss0)} → ${num(rss1)} MiB`],
      ['', 'opened with its latest 10,000 (sent; longest probe)', most ? `${auto(most.ms)} ms (${auto(most.mib)} MiB; ${auto(most.worst)} ms)` : 'not served'],
    ];
  });
}

async function framesWindow(upstream: string, dir: string, a: Args): Promise<Row[]> {
  return withBb(upstream, dir, 'frames', async (bb, prober) => {
    const wsUrl = bb.proxy.replace('http', 'ws') + '/chat';
    const each = Math.ceil(a.messages / a.conversations);
    // Two at a time: their messages interleave, as conversations do.
    for (let c = 0; c < a.conversations; c += 2) await Promise.all([converse(wsUrl, each), c + 1 < a.conversations ? converse(wsUrl, each) : undefined]);
    const frames = 2 * each * a.conversations;
    const rss0 = rssMiB(bb.child.pid!);
    const cpu0 = cpuSeconds(bb.child.pid!);
    prober.reset();
    const opened = performance.now();
    let got = 0;
    let windowMs = 0;
    const feed = await openFeed(`${bb.ui}feed/frames`, (type) => {
      if (type === 'frame' && ++got === Math.min(frames, 50_000)) windowMs = performance.now() - opened;
    });
    await until(feed, () => windowMs > 0, 'the window of frames');
    const cpu = cpuSeconds(bb.child.pid!) - cpu0;
    const rss1 = rssMiB(bb.child.pid!);
    const worst = await prober.worst();
    feed.close();
    return [
      [`2. the Frames tab opened on ${a.conversations} conversations, ${num(frames)} frames`, 'time to its window (the last 50,000)', `${auto(windowMs)} ms, ${auto(feed.bytes / 2 ** 20)} MiB sent`],
      ['', 'bb CPU over the open; longest probe', `${auto(cpu * 1000)} ms; ${auto(worst)} ms`],
      ['', 'bb RSS before → after the open', `${num(rss0)} → ${num(rss1)} MiB`],
    ];
  });
}

/** One SSE stream through bb, read to its end; bb's CPU over it and the longest probe, with a Frames page open or not. */
async function eventStream(upstream: string, dir: string, a: Args, page: boolean): Promise<{ cpuMs: number; worst: number; frames: number; resyncs: number }> {
  return withBb(upstream, dir, page ? 'sse-page' : 'sse', async (bb, prober) => {
    const events = a.eventsPerSecond * a.seconds;
    // The last event's data as a frame's JSON holds it.
    const last = `{\\"n\\":${events - 1},`;
    let frames = 0;
    let lastSeen = false;
    let resyncs = 0;
    const feed: Feed | undefined = page
      ? await openFeed(`${bb.ui}feed/frames`, (type, data) => {
          if (type === 'resync') resyncs++;
          if (type !== 'frame') return;
          frames++;
          if (data.includes(last)) lastSeen = true;
        })
      : undefined;
    const cpu0 = cpuSeconds(bb.child.pid!);
    prober.reset();
    const res = await request(`${bb.proxy}/sse-paced?rate=${a.eventsPerSecond}&seconds=${a.seconds}`);
    // Read to its end (body.dump() would stop at 128 KiB and abort it).
    for await (const _ of res.body);
    // The page has the stream's last event (read in the pull after it ended).
    if (feed) await until(feed, () => lastSeen, `the stream's last event in the Frames tab`);
    const cpuMs = (cpuSeconds(bb.child.pid!) - cpu0) * 1000;
    const worst = await prober.worst();
    feed?.close();
    return { cpuMs, worst, frames, resyncs };
  });
}

async function growingStream(upstream: string, dir: string, a: Args): Promise<Row[]> {
  const none = await eventStream(upstream, dir, a, false);
  const page = await eventStream(upstream, dir, a, true);
  const name = `3. one event stream, ${num(a.eventsPerSecond)} events/s for ${a.seconds} s`;
  return [
    [name, 'bb CPU over the stream: no page; Frames tab open', `${auto(none.cpuMs)} ms; ${auto(page.cpuMs)} ms (${(page.cpuMs / none.cpuMs).toFixed(2)}×)`],
    ['', 'longest probe: no page; Frames tab open', `${auto(none.worst)} ms; ${auto(page.worst)} ms`],
    ['', 'frame events the page read (resyncs: the page fell behind)', `${num(page.frames)} (${page.resyncs})`],
  ];
}

/** K short connections through bb, with a Frames page open or not. */
async function connectionsRun(upstream: string, dir: string, a: Args, page: boolean): Promise<{ ms: number; cpuMs: number; worst: number }> {
  return withBb(upstream, dir, page ? 'conns-page' : 'conns', async (bb, prober) => {
    const feed = page ? await openFeed(`${bb.ui}feed/frames`, () => undefined) : undefined;
    const cpu0 = cpuSeconds(bb.child.pid!);
    prober.reset();
    const t0 = performance.now();
    await shortConnections(bb.proxy.replace('http', 'ws') + '/chat', a.connections);
    const ms = performance.now() - t0;
    const cpuMs = (cpuSeconds(bb.child.pid!) - cpu0) * 1000;
    const worst = await prober.worst();
    feed?.close();
    return { ms, cpuMs, worst };
  });
}

async function shortOnes(upstream: string, dir: string, a: Args): Promise<Row[]> {
  const none = await connectionsRun(upstream, dir, a, false);
  const page = await connectionsRun(upstream, dir, a, true);
  return [
    [`4. ${num(a.connections)} short WebSocket connections, 8 at a time`, 'time: no page; Frames tab open', `${auto(none.ms / 1000)} s; ${auto(page.ms / 1000)} s`],
    ['', 'bb CPU: no page; Frames tab open', `${auto(none.cpuMs / 1000)} s; ${auto(page.cpuMs / 1000)} s`],
    ['', 'longest probe: no page; Frames tab open', `${auto(none.worst)} ms; ${auto(page.worst)} ms`],
  ];
}

async function longRun(upstream: string, dir: string, a: Args): Promise<Row[]> {
  return withBb(upstream, dir, 'rows', async (bb, prober) => {
    const load = await httpLoad({ url: `${bb.proxy}/small`, connections: 10, amount: a.requests });
    if (load.errors > 0) throw new Error(`${load.errors} of ${load.ops} requests failed`);
    const rss0 = rssMiB(bb.child.pid!);
    const cpu0 = cpuSeconds(bb.child.pid!);
    prober.reset();
    // The snapshot: every row it sends comes before the first row of a probe sent after it opened.
    const opened = performance.now();
    let rows = 0;
    let window = false;
    let snapshotMs = 0;
    const feed = await openFeed(`${bb.ui}feed/exchanges`, (type) => {
      if (type === 'window') window = true;
      else if (type === 'row' && ++rows >= Math.min(a.requests, 100_000)) snapshotMs ||= performance.now() - opened;
    });
    await until(feed, () => snapshotMs > 0, 'the snapshot');
    const cpu = cpuSeconds(bb.child.pid!) - cpu0;
    const worst = await prober.worst();
    const rss1 = rssMiB(bb.child.pid!);
    feed.close();
    return [
      [`5. the Exchanges tab opened after ${num(a.requests)} GETs`, 'rows in its snapshot (window said)', `${num(rows)} (${window ? 'yes' : 'no'}) in ${auto(snapshotMs)} ms, ${auto(feed.bytes / 2 ** 20)} MiB`],
      ['', 'bb CPU over the open; longest probe', `${auto(cpu * 1000)} ms; ${auto(worst)} ms`],
      ['', 'bb RSS after the GETs → after the open', `${num(rss0)} → ${num(rss1)} MiB`],
    ];
  });
}

/** Entry point for bench/lib/area.ts. */
export async function run(argv: string[]): Promise<void> {
  const a = parseArgs(argv);
  const dir = await mkdtemp(join(tmpdir(), 'bb-bench-ui-long-'));
  let upstream: Helper | undefined;
  try {
    upstream = await startHelper(benchPath('proxy-upstream.ts'), []);
    const origin = `http://127.0.0.1:${upstream.port}`;
    console.log(`\n## ui-long\n\nbb capture --ui over a long run, each part on a fresh bb; a probe GET every 20 ms throughout; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}\n`);
    const rows: Row[] = [];
    const parts = [longConversation, framesWindow, growingStream, shortOnes, longRun];
    for (const [k, part] of parts.entries()) if (!a.parts || a.parts.includes(k + 1)) rows.push(...(await part(origin, dir, a)));
    console.log(markdownTable(['part', 'figure', 'measured'], rows));
  } finally {
    await upstream?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
