// The HTML report's Timing section (docs/timing.md "Reading the report"): a
// table, one row per route, slowest change first, each with an inline SVG strip
// chart of the old and new samples on a log scale (medians marked). Plain
// markup and numbers: nothing runs, nothing loads. Route names are captured
// content and go through `esc` like everything else.
import type { TimingReport, TimingRouteReport } from '../timing.js';
import { esc } from '../../core/index.js';
import { ms, pValue, times } from './timing-text.js';

const W = 260;
const H = 34;
const PAD = 4;

/** One route's strip chart: old samples on the upper row, new on the lower, a tick at each median. */
function stripSvg(r: TimingRouteReport): string {
  const all = [...r.strip.old, ...r.strip.new].filter((x) => x > 0);
  if (!all.length) return '';
  // Log scale: a 5× change looks the same on a 1 ms route as on a 1 s one.
  const lo = Math.log(Math.min(...all));
  const hi = Math.log(Math.max(...all));
  const span = hi - lo || 1;
  const x = (v: number) => (PAD + ((Math.log(Math.max(v, Math.exp(lo))) - lo) / span) * (W - 2 * PAD)).toFixed(1);
  const dots = (list: number[], y: number, cls: string) => list.map((v) => `<circle cx="${x(v)}" cy="${y}" r="2" class="${cls}"/>`).join('');
  const tick = (v: number | null, y: number, cls: string) => (v !== null && v > 0 ? `<line x1="${x(v)}" x2="${x(v)}" y1="${y - 7}" y2="${y + 7}" class="${cls}"/>` : '');
  const title = `old ${ms(r.old.p50)} ms → new ${ms(r.new.p50)} ms (medians; log scale ${ms(Math.exp(lo))}–${ms(Math.exp(hi))} ms)`;
  return `<svg class="strip" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}"><title>${esc(title)}</title>${dots(r.strip.old, 10, 'so')}${dots(r.strip.new, 24, 'sn')}${tick(r.old.p50, 10, 'mo')}${tick(r.new.p50, 24, 'mn')}</svg>`;
}

/** CSS for the section (joined into the page's stylesheet). */
export const TIMING_CSS = `
#timing table{border-collapse:collapse}#timing td,#timing th{padding:.15em .5em;border-bottom:1px solid #eee;text-align:left;vertical-align:middle}
#timing td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.v-slower{color:#cf222e;font-weight:bold}.v-faster{color:#1a7f37;font-weight:bold}.v-noisy{color:#9a6700}
svg.strip circle.so{fill:#57606a;fill-opacity:.5}svg.strip circle.sn{fill:#bc4c00;fill-opacity:.5}
svg.strip line.mo{stroke:#24292f;stroke-width:2}svg.strip line.mn{stroke:#953800;stroke-width:2}
`;

/** The section (empty without timing). */
export function timingHtml(t: TimingReport | undefined): string {
  if (!t) return '';
  const metric = t.metric === 'ttfb' ? 'time to first byte' : 'total time';
  const head = '<thead><tr><th>route</th><th>verdict</th><th>ratio</th><th>95 % interval</th><th>change</th><th>old p50 / p90 / p99 ms</th><th>new p50 / p90 / p99 ms</th><th>p</th><th>n old / new</th><th>old (grey) · new (orange)</th></tr></thead>';
  const q = (s: TimingRouteReport['old']) => `${ms(s.p50)} / ${ms(s.p90)} / ${ms(s.p99)}`;
  const rows = t.routes.map((r) => {
    const verdict = `${esc(r.verdict)}${r.overBudget ? ' (over budget)' : ''}${r.noise ? ` <small>old/old2 ${esc(times(r.noise.ratio))}</small>` : ''}`;
    const ci = r.ci ? `${r.ci[0].toFixed(2)} – ${r.ci[1].toFixed(2)}` : '–';
    const delta = r.delta === null ? '–' : `${r.delta > 0 ? '+' : ''}${ms(r.delta)} ms`;
    return `<tr><td><code>${esc(r.route)}</code></td><td class="v-${r.verdict.replace(/[^a-z]/g, '')}">${verdict}</td><td class="num">${esc(times(r.ratio))}</td><td class="num">${ci}</td><td class="num">${delta}</td><td class="num">${q(r.old)}</td><td class="num">${q(r.new)}</td><td class="num">${pValue(r.p)}</td><td class="num">${r.old.n} / ${r.new.n}</td><td>${stripSvg(r)}</td></tr>`;
  });
  const budget = t.budget !== undefined ? `, budget ×${t.budget}` : '';
  const note = `<p>${esc(metric)}, median old → new; threshold ×${t.threshold}, floor ${t.floor} ms${budget}; geometric mean of the ratios ${esc(times(t.geomean))}; runs pooled: old ${t.runs.old}, new ${t.runs.new}.${t.noisePath ? ' Noisy: the two old runs differ past the threshold (never fails).' : ''}</p>`;
  return `<section id="timing"><h2>Timing</h2>\n${note}<table>${head}<tbody>${rows.join('')}</tbody></table>\n</section>`;
}
