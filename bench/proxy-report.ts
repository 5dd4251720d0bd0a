// The proxy benchmark's tables: one per workload (every figure with its
// min–max spread and its ratio to direct, taken round by round), then the
// targets of issues 11, 21 and 39 with PASS / MISS. Pure formatting over samples.
import { auto, markdownTable, num, ratio, verdict, withSpread } from './lib/table.js';
import { ratios, spread, type Spread } from './lib/stats.js';

/** One configuration's figures in one round of one workload. */
export interface Sample {
  /** Operations per second. */
  rate: number;
  /** Latency, ms (SSE: time to first event). */
  p50: number;
  p99: number;
  /** SSE: time to the last event, ms. */
  lastP50?: number;
  /** Failed operations. */
  errors: number;
  /** Proxy CPU (user + sys) per 1000 operations, ms; NaN for direct. */
  cpuMsPer1k: number;
  /** Proxy peak RSS during the run, MiB; NaN for direct. */
  peakRss: number;
}

/** All rounds of one workload, by configuration name (in table order). */
export interface WorkloadResults {
  workload: string;
  samples: Map<string, Sample[]>;
}

const TITLES: Record<string, { title: string; unit: string }> = {
  small: { title: 'small JSON GETs (~100 B, 32 keep-alive connections)', unit: 'req' },
  '1mib': { title: '1 MiB responses (32 keep-alive connections)', unit: 'req' },
  post64k: { title: 'POST with 64 KiB bodies (32 keep-alive connections)', unit: 'req' },
  sse: { title: 'SSE stream of 100 events, one stream at a time (times from the request)', unit: 'stream' },
  ws: { title: 'WebSocket echo, 32 clients, 100-byte text messages', unit: 'msg' },
};

const pick = (samples: Sample[], key: keyof Sample): number[] => samples.map((s) => Number(s[key] ?? Number.NaN));

/** The figure of `name` against `base`, round by round. */
function against(results: WorkloadResults, name: string, base: string, key: keyof Sample): Spread {
  const a = results.samples.get(name);
  const b = results.samples.get(base);
  if (!a || !b) return spread([]);
  return spread(ratios(pick(a, key), pick(b, key)));
}

/** Prints one workload's table. */
export function printWorkload(results: WorkloadResults): void {
  const { title, unit } = TITLES[results.workload] ?? { title: results.workload, unit: 'op' };
  const sse = results.workload === 'sse';
  const header = sse
    ? ['config', 'first event p50 ms', '×direct', 'first event p99 ms', '×direct', 'last event p50 ms', '×direct', `CPU ms/${unit}`, 'peak RSS MiB']
    : ['config', `${unit}/s`, '×direct', '×forwarder', 'p50 ms', '×direct', 'p99 ms', '×direct', `CPU ms/1k ${unit}`, 'peak RSS MiB'];
  const rows: string[][] = [];
  for (const [name, samples] of results.samples) {
    const errors = samples.reduce((n, s) => n + s.errors, 0);
    const label = errors > 0 ? `${name} (${errors} errors)` : name;
    const cpu = spread(pick(samples, 'cpuMsPer1k'));
    const rss = Math.max(...pick(samples, 'peakRss').filter(Number.isFinite));
    const rssText = Number.isFinite(rss) ? num(rss) : '—';
    if (sse) {
      rows.push([
        label,
        withSpread(spread(pick(samples, 'p50'))), ratio(against(results, name, 'direct', 'p50')),
        withSpread(spread(pick(samples, 'p99'))), ratio(against(results, name, 'direct', 'p99')),
        withSpread(spread(pick(samples, 'lastP50'))), ratio(against(results, name, 'direct', 'lastP50')),
        withSpread({ median: cpu.median / 1000, min: cpu.min / 1000, max: cpu.max / 1000 }),
        rssText,
      ]);
    } else {
      rows.push([
        label,
        withSpread(spread(pick(samples, 'rate'))), ratio(against(results, name, 'direct', 'rate')),
        ratio(against(results, name, 'forwarder', 'rate')),
        withSpread(spread(pick(samples, 'p50'))), ratio(against(results, name, 'direct', 'p50')),
        withSpread(spread(pick(samples, 'p99'))), ratio(against(results, name, 'direct', 'p99')),
        withSpread(cpu),
        rssText,
      ]);
    }
  }
  console.log(`\n### ${title}\n`);
  console.log(markdownTable(header, rows));
}

/** What the targets need beyond the tables. */
export interface TargetInputs {
  /** Peak RSS of the long capture, MiB (undefined when it did not run). */
  longPeakRss: number | undefined;
  /** True when mitmdump was measured. */
  mitmdump: boolean;
  /** What bb said when its main-run capture closed (finalize time, HAR size, counts). */
  recordingClose: unknown;
}

/**
 * The targets with PASS / MISS, one line each: issue 39's ratios (bb against
 * the raw pipe, the limit of any hop, and the tee, the floor of any recorder
 * on big bodies), issue 21's against the forwarder, peak RSS, mitmdump.
 */
export function targetLines(results: WorkloadResults[], inputs: Pick<TargetInputs, 'longPeakRss' | 'mitmdump'>): string[] {
  const by = new Map(results.map((r) => [r.workload, r]));
  const lines: string[] = [];
  const vs = (workload: string, base: string, key: keyof Sample, ok: (x: number) => boolean, what: string): void => {
    const r = by.get(workload);
    if (!r || !r.samples.has('bb') || !r.samples.has(base)) return;
    const s = against(r, 'bb', base, key);
    const cpu = key === 'rate' ? `; CPU per op ${ratio(against(r, 'bb', base, 'cpuMsPer1k'))} the ${base}'s` : '';
    lines.push(`${verdict(ok(s.median))}  ${what}: ${ratio(s)}${cpu}`);
  };
  vs('small', 'pipe', 'cpuMsPer1k', (x) => x <= 1.6, "small GETs: bb's CPU per request ≤ 1.6× the raw pipe's (issue 39)");
  vs('small', 'pipe', 'rate', (x) => x >= 0.75, 'small GETs: bb recording ≥ 0.75× the raw pipe (issue 39)');
  vs('small', 'forwarder', 'rate', (x) => x >= 1.5, 'small GETs: bb recording ≥ 1.5× the bare forwarder (issue 21)');
  vs('ws', 'pipe', 'rate', (x) => x >= 0.95, 'WebSocket echo: bb recording ≥ 0.95× the raw pipe (issue 39)');
  vs('ws', 'pipe', 'cpuMsPer1k', (x) => x <= 1.1, "WebSocket echo: bb's CPU per message ≤ 1.1× the raw pipe's (issue 39)");
  vs('1mib', 'tee', 'rate', (x) => x >= 0.95, '1 MiB responses: bb recording ≥ 0.95× the tee forwarder (issue 39)');
  vs('sse', 'pipe', 'p50', (x) => x <= 1.15, "SSE time to first event: bb ≤ 1.15× the raw pipe's (issue 39)");
  const bbPeaks = results.flatMap((r) => pick(r.samples.get('bb') ?? [], 'peakRss')).filter(Number.isFinite);
  const peaks = [...bbPeaks, ...(inputs.longPeakRss !== undefined ? [inputs.longPeakRss] : [])];
  if (peaks.length > 0) {
    const peak = Math.max(...peaks);
    const where = inputs.longPeakRss !== undefined ? 'workloads and long capture' : 'workloads only';
    lines.push(`${verdict(peak < 200)}  bb peak RSS < 200 MB (${where}): ${auto(peak)} MiB`);
  }
  if (inputs.mitmdump) {
    for (const r of results) {
      if (!r.samples.has('mitmdump') || !r.samples.has('bb')) continue;
      const s = r.workload === 'sse' ? against(r, 'mitmdump', 'bb', 'lastP50') : against(r, 'bb', 'mitmdump', 'rate');
      lines.push(`${verdict(s.median >= 10)}  bb recording ≥ 10× mitmdump on ${r.workload}: ${ratio(s)}`);
    }
  } else {
    lines.push('n/a   bb recording ≥ 10× mitmdump: mitmdump is not installed here');
  }
  return lines;
}

/** Prints the targets (targetLines) and recording on vs off. */
export function printTargets(results: WorkloadResults[], inputs: TargetInputs): void {
  const lines = targetLines(results, inputs);
  console.log('\n### targets (bb recording, ratios from the same rounds)\n');
  for (const l of lines) console.log(`    ${l}`);

  const onOff: string[][] = [];
  for (const r of results) {
    if (!r.samples.has('bb') || !r.samples.has('bb-off')) continue;
    const key = r.workload === 'sse' ? 'lastP50' : 'rate';
    onOff.push([r.workload, r.workload === 'sse' ? 'time to last event' : 'throughput', ratio(against(r, 'bb', 'bb-off', key))]);
  }
  if (onOff.length > 0) {
    console.log('\n### recording on vs off (bb recording / bb proxy with no capture, same rounds)\n');
    console.log(markdownTable(['workload', 'figure', 'on / off'], onOff));
  }
  const close = inputs.recordingClose as { finalizeMs?: number; harBytes?: number; entries?: number; webSocketMessages?: number } | undefined;
  if (close && typeof close.finalizeMs === 'number') {
    console.log(
      `\nbb's HAR of the whole run: ${num(close.entries ?? 0)} entries, ${num(close.webSocketMessages ?? 0)} WebSocket messages, ` +
        `${auto((close.harBytes ?? 0) / 2 ** 20)} MiB, finalized in ${auto(close.finalizeMs / 1000)} s`,
    );
  }
}
