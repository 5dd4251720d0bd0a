// The --html report: one self-contained page (DESIGN.md "Report and exit
// codes"). No network: inline CSS (jsondiffpatch's own, read from
// node_modules at run time) and one inline script allowed by a per-page
// nonce in the Content-Security-Policy; nothing else can run.
//
// Layout: verdict and counts (by class, kind and endpoint), filters
// (real / known / noise checkboxes), the difference rows, then each
// differing pair side by side (jsondiffpatch HTML view, WebSocket columns).
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
import { elidePair } from './text.js';
import { DEFAULT_VIEW_LIMITS, esc, httpDeltaHtml, wsColumnsHtml, type PairView, type ViewLimits } from './html-pair.js';

export { esc, type PairView, type EntryView } from './html-pair.js';

/** Options for the HTML report. */
export interface HtmlOptions {
  /** Both sides of pair number `i` of result.pairs (for the side-by-side views); none: rows only. */
  views?: (pairIndex: number) => PairView | undefined;
  /** Pairs shown side by side (default 300); the rest are listed as rows only. */
  maxPairs?: number;
  /** Difference rows listed (default 5,000). */
  maxRows?: number;
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

/** JSON safe inside <script type="application/json">: cannot end the element or the line. */
export function scriptJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const PAGE_CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:1em;color:#222}
h1{font-size:1.4em;margin:.2em 0}.verdict-match{color:#1a7f37}.verdict-diff{color:#cf222e}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;vertical-align:top;text-align:left}
code{white-space:pre-wrap;word-break:break-all}.files{color:#555}
.filters label{margin-right:1.2em}.tag{font-size:.8em;padding:0 4px;border-radius:3px}
.tag-real{background:#ffd7d5}.tag-known{background:#fff3c4}.tag-noise{background:#e8e8e8}
section.pair{border:1px solid #ccc;margin:1em 0;padding:.5em}section.pair h3{margin:.2em 0;font-size:1em}
.ws td{font-size:12px}.ws-same{color:#777}.ws-changed{background:#fff3c4}.ws-missing{background:#ffd7d5}.ws-extra{background:#d7f5dd}.ws-reordered{background:#e0e8ff}
.ws-none{background:#f4f4f4}.ws-meta{color:#555}
.hide-real .c-real,.hide-known .c-known,.hide-noise .c-noise{display:none}
`;

// The only script: checkboxes toggle a class on <body>; counts come from the data block.
const SCRIPT = `(function(){
var data=JSON.parse(document.getElementById('bb-data').textContent);
var boxes=document.querySelectorAll('input[data-filter]');
for(var i=0;i<boxes.length;i++){boxes[i].addEventListener('change',function(e){
document.body.classList.toggle('hide-'+e.target.getAttribute('data-filter'),!e.target.checked);});}
document.getElementById('bb-ready').textContent=data.counts.real+' real, '+data.counts.known+' known, '+data.counts.noise+' noise';
})();`;

function classOfPair(diffs: Difference[]): DifferenceClass {
  if (diffs.some((d) => d.class === 'real')) return 'real';
  if (diffs.some((d) => d.class === 'known')) return 'known';
  return 'noise';
}

function countBy<T>(items: T[], key: (t: T) => string): Array<[string, number]> {
  const m = new Map<string, number>();
  for (const t of items) m.set(key(t), (m.get(key(t)) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

function summaryHtml(result: DiffResult): string {
  const { real, known, noise, pairs } = result.counts;
  const verdict = result.verdict === 'match' ? (known ? `MATCH with ${known} known` : 'MATCH') : real ? `DIFF: ${real} real` : `DIFF: ${result.staleKnown.length} stale known`;
  const kinds = countBy(result.differences, (d) => `${d.class}\n${d.kind}`);
  const kindRows = kinds.map(([k, n]) => {
    const [cls, kind] = k.split('\n');
    return `<tr class="c-${esc(cls)}"><td><span class="tag tag-${esc(cls)}">${esc(cls)}</span></td><td>${esc(kind)}</td><td>${n}</td></tr>`;
  });
  const byRoute = new Map<string, { pairs: number; real: number; known: number; noise: number }>();
  for (const p of result.pairs) {
    const r = byRoute.get(p.route) ?? { pairs: 0, real: 0, known: 0, noise: 0 };
    r.pairs++;
    byRoute.set(p.route, r);
  }
  for (const d of result.differences) {
    const r = byRoute.get(d.route) ?? { pairs: 0, real: 0, known: 0, noise: 0 };
    r[d.class]++;
    byRoute.set(d.route, r);
  }
  const routeRows = [...byRoute.entries()]
    .filter(([, r]) => r.real + r.known + r.noise > 0)
    .sort((a, b) => b[1].real - a[1].real || b[1].known + b[1].noise - (a[1].known + a[1].noise))
    .map(([route, r]) => `<tr><td><code>${esc(route)}</code></td><td>${r.pairs}</td><td>${r.real}</td><td>${r.known}</td><td>${r.noise}</td></tr>`);
  const stale = result.staleKnown.length
    ? `<h2>Stale known entries</h2><ul>${result.staleKnown.map((s) => `<li>known[${s.index}] where <code>${esc(s.where)}</code> path <code>${esc(s.path)}</code>: ${esc(s.reason)}</li>`).join('')}</ul>`
    : '';
  return `<header id="summary">
<h1 class="verdict-${result.verdict}" id="verdict">${esc(verdict)}</h1>
<p class="files"><code>${esc(result.old.path)}</code> (${result.old.entries} entries) → <code>${esc(result.new.path)}</code> (${result.new.entries} entries); ${pairs} pairs</p>
<p id="counts">real <b>${real}</b> · known <b>${known}</b> · noise <b>${noise}</b> · <span id="bb-ready"></span></p>
<table id="by-kind"><thead><tr><th>class</th><th>kind</th><th>count</th></tr></thead><tbody>${kindRows.join('')}</tbody></table>
<table id="by-endpoint"><thead><tr><th>endpoint</th><th>pairs</th><th>real</th><th>known</th><th>noise</th></tr></thead><tbody>${routeRows.join('')}</tbody></table>
${stale}</header>`;
}

function filtersHtml(): string {
  const box = (c: DifferenceClass) => `<label><input type="checkbox" data-filter="${c}" id="filter-${c}" checked> ${c}</label>`;
  return `<p class="filters">Show: ${box('real')}${box('known')}${box('noise')}</p>`;
}

function rowsHtml(result: DiffResult, maxRows: number): string {
  const rows = result.differences.slice(0, maxRows).map((d) => {
    const [a, b] = elidePair(d.old, d.new, 120);
    const change = d.kind === 'added' || d.kind === 'extra' ? `+ ${b}` : d.kind === 'removed' || d.kind === 'missing' ? `- ${a}` : `${a} → ${b}`;
    return `<tr class="diff-row c-${d.class}" data-id="${esc(d.id)}"><td><span class="tag tag-${d.class}">${d.class}</span></td><td><code>${esc(d.id)}</code></td><td>${esc(d.kind)}</td><td><code>${esc(d.entry)}</code></td><td><code>${esc(d.path)}</code></td><td><code>${esc(change)}</code>${d.reason ? `<br>reason: ${esc(d.reason)}` : ''}</td></tr>`;
  });
  const more = result.differences.length > maxRows ? `<p>… ${result.differences.length - maxRows} more differences (see --json).</p>` : '';
  return `<h2>Differences</h2><table id="differences"><thead><tr><th>class</th><th>id</th><th>kind</th><th>entry</th><th>path</th><th>old → new</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}`;
}

function pairHtml(p: Pair, index: number, diffs: Difference[], view: PairView | undefined, limits: ViewLimits): string {
  const cls = classOfPair(diffs);
  const head = `<h3><span class="tag tag-${cls}">${cls}</span> <code>${esc(p.id)}</code> — ${esc(p.status)}, ${diffs.length} difference${diffs.length === 1 ? '' : 's'}</h3>`;
  let body = '';
  if (view) {
    const http = httpDeltaHtml(view, limits);
    const ws = wsColumnsHtml(view, limits);
    body = `${http ? `<div class="http jsondiffpatch-unchanged-hidden">${http}</div>` : ''}${ws}`;
  }
  return `<section class="pair c-${cls}" id="pair-${index}">${head}${body || '<p>(no side-by-side view)</p>'}</section>`;
}

/** Renders the result as one self-contained HTML page. */
export function renderHtml(result: DiffResult, opts: HtmlOptions = {}): string {
  const nonce = randomBytes(16).toString('base64');
  const limits = opts.limits ?? DEFAULT_VIEW_LIMITS;
  const maxPairs = opts.maxPairs ?? 300;
  const byEntry = new Map<string, Difference[]>();
  for (const d of result.differences) {
    const list = byEntry.get(d.entry) ?? [];
    list.push(d);
    byEntry.set(d.entry, list);
  }
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
    sections.push(pairHtml(p, i, diffs, opts.views?.(i), limits));
  });
  const data = {
    counts: result.counts,
    verdict: result.verdict,
    differences: result.differences.slice(0, opts.maxRows ?? 5000).map((d) => ({ id: d.id, class: d.class, entry: d.entry, path: d.path })),
  };
  const csp = `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; img-src 'none'; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(opts.title ?? 'bb diff')}: ${esc(result.verdict.toUpperCase())}</title>
<style>${PAGE_CSS}${jsondiffpatchCss()}</style>
</head><body>
${summaryHtml(result)}
${filtersHtml()}
${rowsHtml(result, opts.maxRows ?? 5000)}
<h2>Pairs</h2>
${sections.join('\n')}
${notShown ? `<p>… ${notShown} more differing pairs (see --json).</p>` : ''}
<script type="application/json" id="bb-data">${scriptJson(data)}</script>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>
`;
}
