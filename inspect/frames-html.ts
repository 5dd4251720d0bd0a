// `bb frames --html`: the diagram as one self-contained page, with the diff
// report's safety rules (docs/reports.md "Reports for people and CI"): no
// network, a Content-Security-Policy that lets only this page's nonce run
// script and style, every captured string escaped. Captured content reaches the
// page only as JSON in <script type="application/json"> (scriptJson writes `<`,
// `>`, `&`, U+2028/9 as \u escapes, so it cannot close its element); the page's
// script puts it on screen with textContent, never as markup.
//
// Rows are virtualized: the script keeps every row's y position and
// creates elements only for the rows in view (plus a margin), so 50,000
// messages cost 50,000 numbers, not 50,000 DOM nodes.
import { randomBytes } from 'node:crypto';
import { esc, pageHead, scriptJson } from '../core/index.js';
import type { DiagramPayload, DiagramRow, FramesDiagram } from './frames-diagram.js';
import { formatSize } from './format.js';
import { FRAMES_CSS, FRAMES_SCRIPT } from './frames-html-assets.js';
import { FRAMES_SEARCH_SCRIPT } from './frames-search.js';

/** Options for the page. */
export interface FramesHtmlOptions {
  /** Shown in <title> and the heading (default "bb frames"). */
  title?: string;
  /** Start with rows spaced by time instead of one per row (`--time`). */
  byTime?: boolean;
  /** The filters given, as one line for the heading ("--type receive"). */
  filters?: string;
}

/** Style class of a row; a fixed vocabulary, never a captured string. */
function rowClass(r: DiagramRow): string {
  if (r.kind !== 'ws') return 'http';
  switch (r.opcode) {
    case 0: return 'cont';
    case 1: return 'text';
    case 2: return 'binary';
    case 8: return 'close';
    case 9: return 'ping';
    case 10: return 'pong';
    case -1: return 'error';
    default: return 'other';
  }
}

/** The rows as compact arrays: [lane, dir (0 send, 1 receive), class, seq, seconds since t0, size, label, error, kind, aborted]. */
function rowData(d: FramesDiagram, t0: number): unknown[] {
  return d.rows.map((r) => [
    r.lane,
    r.dir === 'send' ? 0 : 1,
    rowClass(r),
    r.seq ?? null,
    Number.isFinite(r.time) ? Math.round((r.time - t0) * 1e3) / 1e3 : null,
    r.size >= 0 ? formatSize(r.size) : '',
    r.label,
    r.error ?? null,
    r.kind,
    r.aborted ?? null,
  ]);
}

/** A payload as a compact array: [opcode, data, base64?, truncated, size?, decoded?] (ws) or [head, base64?, body, cut] (HTTP). */
function payloadData(p: DiagramPayload): unknown[] {
  if (p.kind === 'ws') {
    const head = [p.opcode, p.data, p.encoding === 'base64' ? 1 : 0, p.truncated ?? null];
    if (p.decoded !== undefined) return [...head, p.size ?? null, p.decoded];
    return p.size !== undefined ? [...head, p.size] : head;
  }
  return [p.head, p.body?.encoding === 'base64' ? 1 : 0, p.body?.data ?? null, p.body?.cut ?? null];
}

/** Renders the diagram as one self-contained HTML page. */
export function framesHtml(d: FramesDiagram, opts: FramesHtmlOptions = {}): string {
  const nonce = randomBytes(16).toString('base64');
  let t0 = Infinity;
  for (const r of d.rows) if (r.time < t0) t0 = r.time;
  if (!Number.isFinite(t0)) t0 = 0;
  const data = {
    lanes: d.lanes.map((l) => ({ kind: l.kind, id: l.id, url: l.url, name: l.name, where: l.label.where, differs: l.label.differs, rows: l.rows })),
    server: d.server,
    rows: rowData(d, t0),
    bands: d.bands.map((b) => [b.name, b.from, b.to]),
    closes: d.rows.map((r, i) => (r.close ? [i, r.close.code ?? null, r.close.reason] : null)).filter((c) => c !== null),
    t0,
    byTime: Boolean(opts.byTime),
  };
  const title = opts.title ?? 'bb frames';
  const wsLanes = d.lanes.filter((l) => l.kind === 'ws').length;
  // An SSE stream or a gRPC call is no WebSocket connection: the header says which it counts.
  const plural = d.totalConnections === 1 ? '' : 's';
  const what = d.totalStreams === 0 ? `WebSocket connection${plural}` : d.totalStreams === d.totalConnections ? `stream${plural}` : 'connections and streams';
  const summary = `${d.rows.length} rows · ${wsLanes} of ${d.totalConnections} ${what}${opts.filters ? ` · ${opts.filters}` : ''}`;
  const legend = ['text', 'binary', 'close', 'ping', 'pong', 'error', 'http']
    .map((c) => `<span class="lg c-${c}"><i></i>${c}</span>`).join('');
  return `${pageHead(title, nonce, { css: FRAMES_CSS, nonced: true })}
<header id="top"><h1>${esc(title)}</h1><span id="summary">${esc(summary)}</span>
<label><input type="checkbox" id="by-time"${opts.byTime ? ' checked' : ''}> space rows by time</label>
<input type="search" id="search" placeholder="search payloads · dir:send · conn:c3" aria-label="search frames" autocomplete="off" spellcheck="false"><span id="found"></span>
<span class="legend">${legend}</span><span id="status"></span></header>
<div id="main"><div id="scroll" tabindex="0"><div id="canvas"><div id="heads"></div><div id="body"><div id="lines"></div><div id="bands"></div><div id="rows"></div></div></div></div>
<aside id="panel" hidden><button type="button" id="panel-close" aria-label="close">×</button><h2 id="panel-title"></h2><dl id="panel-meta"></dl><pre id="panel-payload"></pre></aside></div>
<script type="application/json" id="bb-data">${scriptJson(data)}</script>
<script nonce="${nonce}">${FRAMES_SEARCH_SCRIPT}
${FRAMES_SCRIPT}</script>
<script type="application/json" id="bb-payloads">${scriptJson(d.payloads.map(payloadData))}</script>
</body></html>
`;
}
