// The Timing section of the terminal report (docs/timing.md "Reading the
// report"): one line per route, slowest change first, with the verdict, the
// ratio of medians and its interval, the absolute change beside it, the p-value
// and n per side.
import type { TimingReport, TimingRouteReport } from '../timing.js';

/** Milliseconds, to a precision that suits their size. */
export function ms(x: number | null): string {
  if (x === null) return '–';
  const a = Math.abs(x);
  return a < 10 ? x.toFixed(2) : a < 100 ? x.toFixed(1) : x.toFixed(0);
}

/** A ratio as ×1.23 (– when there is none). */
export function times(x: number | null): string {
  return x === null ? '–' : `×${x < 10 ? x.toFixed(2) : x.toFixed(1)}`;
}

/** A p-value, short. */
export function pValue(p: number | null): string {
  return p === null ? '–' : p < 0.001 ? p.toExponential(1) : p.toFixed(3);
}

/** What a route's line says after its name and verdict. */
function routeFigures(r: TimingRouteReport): string {
  const sign = r.delta !== null && r.delta > 0 ? '+' : '';
  const ci = r.ci ? ` [${r.ci[0].toFixed(2)}, ${r.ci[1].toFixed(2)}]` : '';
  const noise = r.noise ? `  old/old2 ${times(r.noise.ratio)}` : '';
  return `${times(r.ratio)}${ci}  ${r.delta === null ? '' : `${sign}${ms(r.delta)} ms `}(${ms(r.old.p50)} → ${ms(r.new.p50)} ms)  p=${pValue(r.p)}  n=${r.old.n}/${r.new.n}${noise}${r.overBudget ? '  OVER BUDGET' : ''}`;
}

/** The lines of the Timing section (empty without timing). */
export function timingLines(t: TimingReport | undefined, c: (code: string, s: string) => string): string[] {
  if (!t) return [];
  const metric = t.metric === 'ttfb' ? 'time to first byte' : 'total time';
  const budget = t.budget !== undefined ? `, budget ×${t.budget}` : '';
  const runs = t.runs.old > 1 || t.runs.new > 1 ? `, ${t.runs.old}+${t.runs.new} runs` : '';
  const lines = ['', c('1', `Timing (${metric}, median old → new; threshold ×${t.threshold}, floor ${t.floor} ms${budget}${runs})`)];
  if (!t.routes.length) lines.push('  no timed exchanges');
  const width = Math.min(48, Math.max(0, ...t.routes.map((r) => r.route.length)));
  const colour: Record<string, string> = { slower: '31', faster: '32', noisy: '33', '~': '2', 'n too small': '2' };
  for (const r of t.routes) {
    const verdict = c(colour[r.verdict]!, r.verdict.padEnd(11));
    lines.push(`  ${r.route.padEnd(width)}  ${verdict}  ${routeFigures(r)}`);
  }
  const left = (['old', 'new'] as const)
    .map((side) => {
      const parts = Object.entries(t.skipped[side]).filter(([, n]) => n > 0).map(([why, n]) => `${n} ${why}`);
      return parts.length ? `${side} ${parts.join(', ')}` : '';
    })
    .filter(Boolean);
  const tail = [`geomean ${times(t.geomean)}`, ...(left.length ? [`left out: ${left.join('; ')}`] : []), ...(t.noisePath ? [`noisy: old/old2 past ×${t.threshold}, never fails`] : [])];
  lines.push(c('2', `  ${tail.join('; ')}`));
  return lines;
}
