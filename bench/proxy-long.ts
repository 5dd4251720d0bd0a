// The long capture: many small exchanges, then many WebSocket messages,
// through one fresh bb recording process, with its RSS sampled along the way
// (it must stay flat; target peak < 200 MB), then the HAR finalize.
import { benchPath, startHelper } from './lib/child.js';
import { httpLoad, wsEchoLoad } from './lib/load.js';
import { peakRssMiB, rssMiB } from './lib/proc.js';
import { growthAfterWarmup } from './lib/stats.js';
import { markdownTable, num, auto, verdict } from './lib/table.js';

/** How long the long capture is. */
export interface LongOptions {
  /** Small GET exchanges. */
  exchanges: number;
  /** WebSocket messages through bb: each echo round trip is two (the send and the echo). */
  wsMessages: number;
  /** HTTP connections. */
  connections: number;
  /** WebSocket clients. */
  wsClients: number;
}

/** What the long capture found. */
export interface LongResult {
  /** Peak RSS over the whole run, finalize included, MiB. */
  peakRss: number;
}

interface Sample {
  t: number;
  phase: string;
  done: number;
  rss: number;
}

/** Runs the long capture and prints its RSS samples. */
export async function longCapture(upstreamPort: number, workDir: string, opts: LongOptions): Promise<LongResult> {
  const bb = await startHelper(benchPath('proxy-peer.ts'), ['bb', String(upstreamPort), workDir]);
  const samples: Sample[] = [];
  const t0 = performance.now();
  let phase = 'start';
  let done = 0;
  const sample = (): void => {
    samples.push({ t: (performance.now() - t0) / 1000, phase, done, rss: rssMiB(bb.pid) });
  };
  sample();
  const sampler = setInterval(sample, 500);
  let closeInfo: { finalizeMs: number; harBytes: number; peakRss: number; entries: number; webSocketMessages: number } | undefined;
  let peak = Number.NaN;
  let httpSeconds = Number.NaN;
  let wsSeconds = Number.NaN;
  try {
    phase = 'http';
    const http = await httpLoad({ url: `http://127.0.0.1:${bb.port}/small`, connections: opts.connections, amount: opts.exchanges, onResponse: () => done++ });
    httpSeconds = http.seconds;
    if (http.errors > 0) console.log(`long capture: ${http.errors} HTTP errors`);
    phase = 'ws';
    done = 0;
    const perClient = Math.ceil(opts.wsMessages / 2 / opts.wsClients);
    const ws = await wsEchoLoad(`ws://127.0.0.1:${bb.port}/long`, opts.wsClients, perClient, 100, () => (done += 2), 600_000);
    wsSeconds = ws.seconds;
    if (ws.errors > 0) console.log(`long capture: ${ws.errors} WebSocket errors`);
    phase = 'finalize';
    done = 0;
    peak = peakRssMiB(bb.pid);
    closeInfo = await bb.ask('close', 600_000);
    peak = Math.max(peak, closeInfo?.peakRss ?? Number.NaN);
  } finally {
    clearInterval(sampler);
    await bb.stop();
  }
  print(samples, opts, { httpSeconds, wsSeconds, peak, closeInfo });
  return { peakRss: peak };
}

function print(
  samples: Sample[],
  opts: LongOptions,
  r: { httpSeconds: number; wsSeconds: number; peak: number; closeInfo?: { finalizeMs: number; harBytes: number; entries: number; webSocketMessages: number } },
): void {
  // About 24 rows: every k-th sample, and always the last of each phase.
  const k = Math.max(1, Math.ceil(samples.length / 24));
  const rows = samples.filter((s, i) => i % k === 0 || i === samples.length - 1 || samples[i + 1]?.phase !== s.phase);
  console.log(`\n### long capture: ${num(opts.exchanges)} small exchanges, then ${num(opts.wsMessages)} WebSocket messages (echo round trips), through one bb recording\n`);
  console.log(markdownTable(
    ['t s', 'phase', 'done in phase', 'RSS MiB'],
    rows.map((s) => [s.t.toFixed(1), s.phase, num(s.done), auto(s.rss)]),
  ));
  const growth = (phase: string): number => growthAfterWarmup(samples.filter((s) => s.phase === phase).map((s) => s.rss));
  const httpGrowth = growth('http');
  const wsGrowth = growth('ws');
  console.log('');
  console.log(`    HTTP: ${num(opts.exchanges / r.httpSeconds)} req/s; RSS change over the run after warm-up ${auto(httpGrowth)} MiB`);
  console.log(`    WebSocket: ${num(opts.wsMessages / r.wsSeconds)} msg/s; RSS change over the run after warm-up ${auto(wsGrowth)} MiB`);
  if (r.closeInfo) {
    console.log(
      `    HAR: ${num(r.closeInfo.entries)} entries, ${num(r.closeInfo.webSocketMessages)} WebSocket messages, ` +
        `${auto(r.closeInfo.harBytes / 2 ** 20)} MiB, finalized in ${auto(r.closeInfo.finalizeMs / 1000)} s`,
    );
  }
  const flat = (g: number): boolean | undefined => (Number.isFinite(g) ? g < 20 : undefined);
  console.log(`    ${verdict(flat(httpGrowth))}  RSS flat while recording HTTP (grows < 20 MiB after warm-up)`);
  console.log(`    ${verdict(flat(wsGrowth))}  RSS flat while recording WebSocket messages (grows < 20 MiB after warm-up)`);
  console.log(`    ${verdict(r.peak < 200)}  peak RSS < 200 MB, finalize included: ${auto(r.peak)} MiB`);
}
