// bb diff --timing (docs/timing.md): is the new build slower, per route,
// with statistics that do not cry wolf. Per route (an entry id without its
// `#n`: page, method, normalized path and any pairing route key; the query is
// never part of it) the samples of each side give n and p50/p90/p99 of time
// to first byte (HAR `timings.wait`, measured at the proxy) and of total time;
// the chosen metric's ratio of medians gets a seeded bootstrap 95 % interval
// and a Mann–Whitney U p-value, and a verdict. Pure: samples in, report out.
import type { HarEntry } from '../capture/index.js';
import { differenceId } from './compare.js';
import { ascending, geometricMean, mannWhitneyU, quantile, ratioOfMedians, seedOf } from './timing-stats.js';
import type { Difference } from './types.js';
import type { TimingMetric, TimingOptions, TimingReport, TimingRouteReport, TimingSample, TimingSide, TimingSkip, Quantiles, TimingVerdict } from './timing-types.js';

export type * from './timing-types.js';

/** What an exchange's times are, from its HAR entry (the id and route come from normalizing it). */
export function timesOf(entry: HarEntry): Pick<TimingSample, 'ttfb' | 'total' | 'skip'> {
  const bb = entry._bb;
  const ttfb = entry.timings?.wait ?? -1;
  const total = typeof entry.time === 'number' ? entry.time : -1;
  const skip: TimingSkip | undefined = bb?.error ? 'error' : bb?.aborted ? 'aborted' : bb?.truncated ? 'truncated' : !(ttfb >= 0) || !(total >= 0) ? 'untimed' : undefined;
  return { ttfb, total, ...(skip ? { skip } : {}) };
}

/** The timing route of an entry id: the id without its occurrence `#n`. */
export function timingRoute(id: string): string {
  return id.replace(/#\d+$/, '');
}

/** Points per side in a strip chart. */
export const STRIP_POINTS = 200;

/** Up to STRIP_POINTS values standing for ascending `sorted`: all of them, or evenly spaced quantiles. */
function stripOf(sorted: Float64Array): number[] {
  if (sorted.length <= STRIP_POINTS) return Array.from(sorted, round3);
  return Array.from({ length: STRIP_POINTS }, (_, i) => round3(quantile(sorted, i / (STRIP_POINTS - 1))));
}

/** The defaults. */
export const TIMING_DEFAULTS = { threshold: 1.2, floor: 1, metric: 'ttfb' as TimingMetric };

/** Fewer samples than this on either side: `n too small`. */
export const MIN_SAMPLES = 5;

/** The significance level of the U test. */
export const ALPHA = 0.05;

/** Every side's samples, grouped: route → (ttfb, total) lists; and skip counts. */
interface Grouped {
  byRoute: Map<string, { ttfb: number[]; total: number[]; skipped: number }>;
  skipped: Record<TimingSkip, number>;
}

function group(samples: readonly TimingSample[]): Grouped {
  const byRoute: Grouped['byRoute'] = new Map();
  const skipped: Record<TimingSkip, number> = { error: 0, aborted: 0, truncated: 0, untimed: 0 };
  for (const s of samples) {
    const r = timingRoute(s.id);
    let g = byRoute.get(r);
    if (!g) byRoute.set(r, (g = { ttfb: [], total: [], skipped: 0 }));
    if (s.skip) {
      skipped[s.skip]++;
      g.skipped++;
      continue;
    }
    g.ttfb.push(s.ttfb);
    g.total.push(s.total);
  }
  return { byRoute, skipped };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const q = (sorted: Float64Array, p: number) => (sorted.length ? round3(quantile(sorted, p)) : null);
const quantiles = (sorted: Float64Array): Quantiles => ({ p50: q(sorted, 0.5), p90: q(sorted, 0.9), p99: q(sorted, 0.99) });

/**
 * The Timing section from each side's samples (every run of a side pooled),
 * and with `noise` the second old run's. Deterministic: the bootstrap is
 * seeded by the route, so the same captures give the same report.
 */
export function timingReport(oldSamples: readonly TimingSample[], newSamples: readonly TimingSample[], options: TimingOptions, noise?: { samples: readonly TimingSample[]; path: string }, runs = { old: 1, new: 1 }): TimingReport {
  const threshold = options.threshold ?? TIMING_DEFAULTS.threshold;
  const floor = options.floor ?? TIMING_DEFAULTS.floor;
  const metric = options.metric ?? TIMING_DEFAULTS.metric;
  const o = group(oldSamples);
  const n = group(newSamples);
  const o2 = noise ? group(noise.samples) : undefined;
  const routes = [...new Set([...o.byRoute.keys(), ...n.byRoute.keys()])];
  const out: TimingRouteReport[] = [];
  for (const route of routes) {
    const go = o.byRoute.get(route);
    const gn = n.byRoute.get(route);
    const sorted = (g: typeof go, m: TimingMetric) => ascending(g ? g[m] : []);
    const side = (g: typeof go): TimingSide => {
      const ttfb = sorted(g, 'ttfb');
      const total = sorted(g, 'total');
      return { n: ttfb.length, ...quantiles(metric === 'ttfb' ? ttfb : total), total: quantiles(total), ttfb: quantiles(ttfb), skipped: g?.skipped ?? 0 };
    };
    const so = sorted(go, metric);
    const sn = sorted(gn, metric);
    const enough = so.length >= MIN_SAMPLES && sn.length >= MIN_SAMPLES;
    // No interval for a route with too few samples: it gets no verdict, and a capture of unnormalized paths has thousands of such routes.
    const { ratio, ci } = so.length && sn.length ? ratioOfMedians(so, sn, seedOf(route), enough ? options.resamples : 0) : { ratio: null, ci: null };
    const p = so.length && sn.length ? mannWhitneyU(so, sn).p : null;
    const delta = so.length && sn.length ? round3(quantile(sn, 0.5) - quantile(so, 0.5)) : null;
    let noiseRatio: TimingRouteReport['noise'];
    let noisy = false;
    const g2 = o2?.byRoute.get(route);
    if (o2) {
      const s2 = sorted(g2, metric);
      const r2 = so.length && s2.length ? ratioOfMedians(so, s2, seedOf(route), 0).ratio : null;
      noiseRatio = { ratio: r2 === null ? null : round3(r2), n: s2.length };
      noisy = s2.length >= MIN_SAMPLES && so.length >= MIN_SAMPLES && r2 !== null && (r2 > threshold || r2 < 1 / threshold);
    }
    // What a verdict and the budget both ask: enough samples, not noisy, and a significant change. (An interval alone
    // can clear the budget on a loaded machine while the samples do not differ: x8.3 [1.57, 20.7], p = 0.052, old vs old.)
    const judged = enough && !noisy && ci !== null && delta !== null && p !== null && p < ALPHA;
    let verdict: TimingVerdict = '~';
    if (!enough) verdict = 'n too small';
    else if (noisy) verdict = 'noisy';
    else if (judged) {
      if (ci[0] > threshold && delta > floor) verdict = 'slower';
      else if (ci[1] < 1 / threshold && -delta > floor) verdict = 'faster';
    }
    const overBudget = judged && options.budget !== undefined && ci[0] > options.budget && delta > floor;
    out.push({
      route,
      old: side(go),
      new: side(gn),
      ratio: ratio === null ? null : round3(ratio),
      ci: ci ? [round3(ci[0]), round3(ci[1])] : null,
      p: p === null ? null : Number(p.toPrecision(4)),
      delta,
      verdict,
      ...(noiseRatio ? { noise: noiseRatio } : {}),
      ...(overBudget ? { overBudget } : {}),
      strip: { old: stripOf(so), new: stripOf(sn) },
    });
  }
  out.sort((a, b) => (b.ratio ?? -Infinity) - (a.ratio ?? -Infinity) || (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
  const ratios = out.filter((r) => r.verdict !== 'n too small' && r.ratio !== null).map((r) => r.ratio!);
  const gm = geometricMean(ratios);
  return {
    metric,
    threshold,
    floor,
    ...(options.budget !== undefined ? { budget: options.budget } : {}),
    runs,
    routes: out,
    geomean: gm === null ? null : round3(gm),
    skipped: { old: o.skipped, new: n.skipped },
    ...(noise ? { noisePath: noise.path } : {}),
  };
}

/**
 * The real differences of kind `slower` for the routes over budget, one per
 * route, named by the route's first entry id so `known` entries select them
 * like any other (`where: "*\/GET /slow#*", kind: "slower"`). Old and new
 * are the medians in ms.
 */
export function budgetDifferences(report: TimingReport, oldSamples: readonly TimingSample[], newSamples: readonly TimingSample[]): Difference[] {
  const first = new Map<string, TimingSample>();
  for (const s of [...oldSamples, ...newSamples]) if (!first.has(timingRoute(s.id))) first.set(timingRoute(s.id), s);
  const path = `timing.${report.metric}`; // timing.ttfb or timing.total
  return report.routes
    .filter((r) => r.overBudget)
    .map((r) => {
      const s = first.get(r.route)!;
      return { id: differenceId(s.id, path, 'slower'), kind: 'slower', entry: s.id, route: s.route, request: s.route, path, pattern: path, old: r.old.p50, new: r.new.p50, class: 'real' };
    });
}
