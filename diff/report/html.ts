// The --html report: one self-contained page (docs/reports.md "Reports for
// people and CI"). No network: inline CSS (jsondiffpatch's own, read from
// node_modules at run time) and one inline script allowed by a per-page
// nonce in the Content-Security-Policy; nothing else can run.
//
// Layout (docs/reports.md "Reports for people and CI"): verdict and the counts
// line (once), counts by kind and endpoint folded, filters (real / known /
// noise checkboxes, hiding findings, rows and pairs), the findings (real before
// known before noise, each folded over its rows), every difference row, then
// each differing pair side by side (jsondiffpatch HTML view, WebSocket columns)
// under its request line and each side's exchange (`#seq`).
//
// Width: the page fits its window. Ids, entry ids, paths and request lines
// wrap only after / . [ (see `tok`), never mid-token; whatever still does not
// fit (a long value, a jsondiffpatch tree) scrolls inside its own box.
//
// Captured content is hostile: every captured string is escaped with `esc`
// in text and attributes, never put in a URL attribute, a script or a style.
// The data block for the script is JSON in <script type="application/json">
// with `<`, `>`, `&` and U+2028/9 written as \u escapes, so it cannot close
// its element.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { DiffResult, Difference, DifferenceClass, Pair } from '../types.js';
import { CLASS_ORDER, findingLink, findingsHtml, rowsHtml } from './html-findings.js';
import { hiddenTexts, plural, sameBuildText, verdictText } from './text.js';
import { TIMING_CSS, timingHtml } from './html-timing.js';
import { DEFAULT_VIEW_LIMITS, httpDeltaHtml, tok, wsColumnsHtml, type PairView, type ViewLimits } from './html-pair.js';
import { esc, pageHead, scriptJson } from '../../core/index.js';

export type { PairView, EntryView } from './html-pair.js';

/** Options for the HTML report. */
export interface HtmlOptions {
  /** Both sides of pair number `i` of result.pairs (for the side-by-side views); none: rows only. */
  views?: (pairIndex: number) => PairView | undefined;
  /** Pairs shown side by side (default 300); the rest are listed as rows only. */
  maxPairs?: number;
  /** Difference rows listed (default 5,000). */
  maxRows?: number;
  /** Rows folded under each finding (default 100; all of them stay in the rows table). */
  maxRowsPerFinding?: number;
  /** Bounds on each pair's view. */
  limits?: ViewLimits;
  /** Page title (default "bb diff"). */
  title?: string;
}

let jdpCss: string | undefined;

/** jsondiffpatch's HTML formatter stylesheet, read once from node_modules. */
export function jsondiffpatchCss(): string {
  if (jdpCss === undefined) {
    const req = createRequire(import.meta.url);
    jdpCss = readFileSync(req.resolve('jsondiffpatch/formatters/styles/html.css'), 'utf8').replace(/<\//g, '<\\/');
  }
  return jdpCss;
}

const PAGE_CSS = `
*,*::before,*::after{box-sizing:border-box}
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:1em;color:#222}
h1{font-size:1.4em;margin:.2em 0}.verdict-match{color:#1a7f37}.verdict-diff{color:#cf222e}
h1,h2,h3,p,summary,li{overflow-x:auto}
code{white-space:pre-wrap;word-break:normal;overflow-wrap:normal}.t{white-space:nowrap}.files{color:#555}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;vertical-align:top;text-align:left}
td>.x{overflow-x:auto}
table.rows{table-layout:fixed;width:100%;font-size:13px}
col.w-class{width:4.5em}col.w-fid{width:7.5em}col.w-id{width:7.5em}col.w-kind{width:6em}
#by-endpoint{table-layout:fixed;width:100%}#by-endpoint th:not(:first-child){width:5em}
col.w-req{width:18%}col.w-entry{width:17%}col.w-path{width:20%}col.w-change{width:auto}
.filters label{margin-right:1.2em}#bb-hidden{color:#555}.tag{font-size:.8em;padding:0 4px;border-radius:3px}
.tag-real{background:#ffd7d5}.tag-known{background:#fff3c4}.tag-noise{background:#e8e8e8}
#findings h3{font-size:1.05em;margin:.8em 0 .3em}
details.finding{border-left:3px solid #ddd;margin:.3em 0;padding:.1em .5em}
details.finding.c-real{border-left-color:#cf222e}details.finding.c-known{border-left-color:#d4a72c}
details.finding>summary{cursor:pointer}.fid{color:#555}.fratified{color:#b00;margin-left:.5em}.fcounts{color:#555;font-size:.9em;margin-left:.5em}
ul.fconsequences{list-style:none;margin:.3em 0;padding-left:1em}
.fbody{padding:.2em 0 .2em 1.2em}.fbody p{margin:.2em 0}
section.pair{border:1px solid #ccc;margin:1em 0;padding:.5em}section.pair h3{margin:.2em 0;font-size:1em}
.seq{color:#555;font-weight:normal;margin-left:.5em}.pair-meta{color:#555;margin:.2em 0}
section.pair .http{overflow-x:auto}
table.ws{table-layout:fixed;width:100%}table.ws th:first-child{width:6em}
.ws td{font-size:12px}.ws-same{color:#777}.ws-changed{background:#fff3c4}.ws-missing{background:#ffd7d5}.ws-extra{background:#d7f5dd}.ws-reordered{background:#e0e8ff}
.ws-none{background:#f4f4f4}.ws-meta{color:#555}
.hide-real .c-real,.hide-known .c-known,.hide-noise .c-noise{display:none}
`;

// The only script: checkboxes toggle a class on <body> and say what they hide
// (finding counts from the data block); data-ready says the script ran.
const SCRIPT = `(function(){
var data=JSON.parse(document.getElementById('bb-data').textContent);
var boxes=document.querySelectorAll('input[data-filter]');
function update(){var hidden=[];
for(var i=0;i<boxes.length;i++){var c=boxes[i].getAttribute('data-filter');var n=data.counts.findings[c]||0;
document.body.classList.toggle('hide-'+c,!boxes[i].checked);
if(!boxes[i].checked&&n)hidden.push(n+' '+c+' finding'+(n===1?'':'s'));}
document.getElementById('bb-hidden').textContent=hidden.length?'hidden: '+hidden.join(', '):'';}
for(var i=0;i<boxes.length;i++)boxes[i].addEventListener('change',update);
update();
document.body.setAttribute('data-ready','1');
})();`;

function classOfPair(diffs: Difference[]): DifferenceClass {
  return CLASS_ORDER.find((c) => diffs.some((d) => d.class === c)) ?? 'noise';
}

function countBy<T>(items: T[], key: (t: T) => string): Array<[string, number]> {
  const m = new Map<string, number>();
  for (const t of items) m.set(key(t), (m.get(key(t)) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}


function breakdownHtml(result: DiffResult): string {
  const findingsBy = countBy(result.findings, (f) => `${f.class}\n${f.kind}`);
  const rowsBy = new Map(countBy(result.differences, (d) => `${d.class}\n${d.kind}`));
  const kindRows = findingsBy.map(([k, n]) => {
    const [cls, kind] = k.split('\n');
    return `<tr class="c-${esc(cls)}"><td><span class="tag tag-${esc(cls)}">${esc(cls)}</span></td><td>${esc(kind)}</td><td>${n}</td><td>${rowsBy.get(k) ?? 0}</td></tr>`;
  });
  const byRoute = new Map<string, { pairs: number; real: number; known: number; noise: number }>();
  const at = (route: string) => {
    const r = byRoute.get(route) ?? { pairs: 0, real: 0, known: 0, noise: 0 };
    byRoute.set(route, r);
    return r;
  };
  for (const p of result.pairs) at(p.route).pairs++;
  for (const d of result.differences) at(d.route)[d.class]++;
  const routeRows = [...byRoute.entries()]
    .filter(([, r]) => r.real + r.known + r.noise > 0)
    .sort((a, b) => b[1].real - a[1].real || b[1].known + b[1].noise - (a[1].known + a[1].noise))
    .map(([route, r]) => `<tr><td><div class="x"><code>${tok(route)}</code></div></td><td>${r.pairs}</td><td>${r.real}</td><td>${r.known}</td><td>${r.noise}</td></tr>`);
  return `<details id="breakdown"><summary>Counts by kind and by endpoint</summary>
<table id="by-kind"><thead><tr><th>class</th><th>kind</th><th>findings</th><th>rows</th></tr></thead><tbody>${kindRows.join('')}</tbody></table>
<table id="by-endpoint"><thead><tr><th>endpoint</th><th>pairs</th><th>real</th><th>known</th><th>noise</th></tr></thead><tbody>${routeRows.join('')}</tbody></table>
</details>`;
}

function summaryHtml(result: DiffResult): string {
  const { known, noise, pairs } = result.counts;
  const f = result.counts.findings;
  // The verdict says the real counts; this line says the rest, once.
  const counts = [
    plural(pairs, 'pair'),
    `<b>${plural(f.known, 'known finding')}</b> (${plural(known, 'difference')})`,
    `<b>${plural(f.noise, 'noise finding')}</b> (${plural(noise, 'difference')})`,
    ...(result.staleKnown.length ? [`${result.staleKnown.length} stale known`] : []),
  ];
  const stale = result.staleKnown.length
    ? `<h2>Stale known entries</h2><ul>${result.staleKnown.map((s) => `<li>known[${s.index}] where <code>${tok(s.where)}</code> path <code>${tok(s.path)}</code>: ${esc(s.reason)}</li>`).join('')}</ul>`
    : '';
  const sameBuild = sameBuildText(result);
  const expected = sameBuild ? `<p id="same-build">${esc(sameBuild)}</p>` : '';
  const hiddenLines = hiddenTexts(result);
  const hidden = hiddenLines.length ? `<ul id="hidden">${hiddenLines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>` : '';
  return `<header id="summary">
<h1 class="verdict-${result.verdict}" id="verdict">${esc(verdictText(result))}</h1>
<p class="files"><code>${tok(result.old.path)}</code> (${result.old.entries} entries) → <code>${tok(result.new.path)}</code> (${result.new.entries} entries)${result.noiseRun ? `; noise from <code>${tok(result.noiseRun.path)}</code>` : ''}</p>
<p id="counts">${counts.join(' · ')}</p>
${breakdownHtml(result)}
${stale}${expected}${hidden}</header>`;
}

function filtersHtml(): string {
  const box = (c: DifferenceClass) => `<label><input type="checkbox" data-filter="${c}" id="filter-${c}" checked> ${c}</label>`;
  return `<p class="filters">Show: ${box('real')}${box('known')}${box('noise')}<span id="bb-hidden"></span></p>`;
}

function pairHtml(p: Pair, index: number, diffs: Difference[], view: PairView | undefined, limits: ViewLimits, findingOrder: Map<string, number>): string {
  const cls = classOfPair(diffs);
  const side = (name: string, x: string | undefined) => `${name} <code>${x === undefined ? '(none)' : esc(x)}</code>`;
  const head = `<h3><span class="tag tag-${cls}">${cls}</span> <code class="req">${tok(p.request ?? p.route)}</code> <span class="seq">${side('old', p.exchange?.old)} → ${side('new', p.exchange?.new)}</span></h3>`;
  const findings = [...new Set(diffs.map((d) => d.finding).filter((x): x is string => !!x))].sort((a, b) => (findingOrder.get(a) ?? 0) - (findingOrder.get(b) ?? 0));
  const meta = `<p class="pair-meta"><code>${tok(p.id)}</code> — ${esc(p.status)}, ${plural(diffs.length, 'difference')}${findings.length ? `; findings ${findings.map(findingLink).join(' ')}` : ''}</p>`;
  let body = '';
  if (view) {
    const http = httpDeltaHtml(view, limits);
    const ws = wsColumnsHtml(view, limits);
    body = `${http ? `<div class="http jsondiffpatch-unchanged-hidden">${http}</div>` : ''}${ws}`;
  }
  return `<section class="pair c-${cls}" id="pair-${index}">${head}${meta}${body || '<p>(no side-by-side view)</p>'}</section>`;
}

/** Renders the result as one self-contained HTML page. */
export function renderHtml(result: DiffResult, opts: HtmlOptions = {}): string {
  const nonce = randomBytes(16).toString('base64');
  const limits = opts.limits ?? DEFAULT_VIEW_LIMITS;
  const maxPairs = opts.maxPairs ?? 300;
  const maxRows = opts.maxRows ?? 5000;
  const byEntry = new Map<string, Difference[]>();
  for (const d of result.differences) {
    const list = byEntry.get(d.entry) ?? [];
    list.push(d);
    byEntry.set(d.entry, list);
  }
  const findingOrder = new Map(result.findings.map((f, i) => [f.id, i]));
  const sections: string[] = [];
  let shown = 0;
  let notShown = 0;
  result.pairs.forEach((p, i) => {
    const diffs = byEntry.get(p.id);
    if (!diffs?.length) return;
    if (shown >= maxPairs) {
      notShown++;
      return;
    }
    shown++;
    sections.push(pairHtml(p, i, diffs, opts.views?.(i), limits, findingOrder));
  });
  const data = {
    counts: result.counts,
    verdict: result.verdict,
    differences: result.differences.slice(0, maxRows).map((d) => ({ id: d.id, class: d.class, entry: d.entry, path: d.path, finding: d.finding })),
  };
  return `${pageHead(`${opts.title ?? 'bb diff'}: ${result.verdict.toUpperCase()}`, nonce, { css: PAGE_CSS + TIMING_CSS + jsondiffpatchCss(), nonced: false })}
${summaryHtml(result)}
${filtersHtml()}
${findingsHtml(result, opts.maxRowsPerFinding ?? 100)}
${timingHtml(result.timing)}
${rowsHtml(result, maxRows)}
<section id="pairs"><h2>Pairs</h2>
${sections.join('\n')}
${notShown ? `<p>… ${notShown} more differing pairs (see --json).</p>` : ''}
</section>
<script type="application/json" id="bb-data">${scriptJson(data)}</script>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>
`;
}
