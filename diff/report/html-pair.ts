// One differing pair in the HTML report: the HTTP side through
// jsondiffpatch's HTML view, and WebSocket messages as two aligned columns.
//
// Everything here is captured data, so it is hostile: text goes through
// `esc` (jsondiffpatch ≥ 0.7.2 escapes keys and values itself); no captured
// value ever lands in a URL attribute, a script or a style. Huge strings and
// arrays are elided before jsondiffpatch sees them (its array matching is
// quadratic), keeping a digest so elided values that differ still differ.
import { createHash } from 'node:crypto';
import { create } from 'jsondiffpatch';
import { format } from 'jsondiffpatch/formatters/html';
import { lineUpMessages } from '../compare.js';
import { canonical } from '../../core/index.js';
import type { EntryView, NormalizedWsMessage, PairView } from '../types.js';
import { esc, setOwn } from '../../core/index.js';

export type { EntryView, PairView } from '../types.js';

/** Bounds on what one pair's view may hold. */
export interface ViewLimits {
  /** Strings longer than this are elided (default 2,000 characters). */
  maxString: number;
  /** Arrays longer than this are cut (default 500 items). */
  maxArray: number;
  /** WebSocket rows shown per connection (default 2,000). */
  maxMessages: number;
}

/** The default bounds. */
export const DEFAULT_VIEW_LIMITS: Readonly<ViewLimits> = Object.freeze({ maxString: 2000, maxArray: 500, maxMessages: 2000 });

/**
 * Escapes an id, entry id, path, request line or value so that it wraps only
 * at spaces and after `/`, `.` and `[`: the pieces between are
 * `<span class="t">` (white-space: nowrap in the page CSS, so the browser's
 * own breaks after `-`, `?` or `%` cannot split them) and a `<wbr>` follows
 * each piece that ends in / . [. What still does not fit scrolls inside its
 * own box (page CSS).
 */
export function tok(s: unknown): string {
  const pieces = String(s).match(/ +|[^ /.[]*[/.[]|[^ /.[]+/g) ?? [];
  return pieces
    .map((p, i) => {
      if (p[0] === ' ') return p;
      const body = /[/.[]$/.test(p) ? p.slice(0, -1) : p;
      // Letters, digits and _ hold no break opportunity: no span needed.
      const html = /^\w*$/.test(body) ? esc(p) : `<span class="t">${esc(p)}</span>`;
      const next = pieces[i + 1];
      return body !== p && next !== undefined && next[0] !== ' ' ? `${html}<wbr>` : html;
    })
    .join('');
}

function digest(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 12);
}

/** Deep copy with long strings and arrays elided (keys too). */
export function elide(v: unknown, limits: ViewLimits = DEFAULT_VIEW_LIMITS): unknown {
  const str = (s: string) =>
    s.length <= limits.maxString ? s : `${s.slice(0, limits.maxString - 200)} …[${s.length - limits.maxString + 100} characters elided, sha256 ${digest(s)}]… ${s.slice(-100)}`;
  if (typeof v === 'string') return str(v);
  if (Array.isArray(v)) {
    const head = v.slice(0, limits.maxArray).map((x) => elide(x, limits));
    if (v.length > limits.maxArray) head.push(`…[${v.length - limits.maxArray} more items, sha256 ${digest(canonical(v.slice(limits.maxArray)))}]`);
    return head;
  }
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, str(k), elide(x, limits));
    return out;
  }
  return v;
}

// Moves off: no arrow script from the formatter, and no O(n²) move search.
const differ = create({ arrays: { detectMove: false }, cloneDiffValues: false });

/** The HTTP side of a pair (request + response) as jsondiffpatch HTML; "" when they are equal. */
export function httpDeltaHtml(view: PairView, limits: ViewLimits = DEFAULT_VIEW_LIMITS): string {
  const side = (e?: EntryView) => (e ? elide({ request: e.request, response: e.response }, limits) : null);
  const a = side(view.old);
  const b = side(view.new);
  const delta = differ.diff(a, b);
  if (delta === undefined) return '';
  return format(delta, a) ?? '';
}

function messageCell(m: NormalizedWsMessage | undefined, index: number | undefined, limits: ViewLimits): string {
  if (!m) return '<td class="ws-none"></td>';
  const dir = m.type === 'send' ? '→' : m.type === 'receive' ? '←' : '!';
  const data = typeof m.data === 'string' ? m.data : JSON.stringify(elide(m.data, limits));
  return `<td><span class="ws-meta">#${index} ${esc(dir)} ${esc(m.type)} op ${esc(m.opcode)}</span> <div class="x"><code>${tok(data.length > limits.maxString ? `${data.slice(0, limits.maxString)}…` : data)}</code></div></td>`;
}

/** WebSocket messages of a pair as a two-column table aligned like the comparison ("" without messages). */
export function wsColumnsHtml(view: PairView, limits: ViewLimits = DEFAULT_VIEW_LIMITS): string {
  const a = view.old?.ws?.messages ?? [];
  const b = view.new?.ws?.messages ?? [];
  if (!view.old?.ws && !view.new?.ws) return '';
  const lineup = lineUpMessages(a, b, view.wsOrder);
  const rows: string[] = [];
  for (const l of lineup.slice(0, limits.maxMessages)) {
    const ma = l.old === undefined ? undefined : a[l.old];
    const mb = l.new === undefined ? undefined : b[l.new];
    const same = l.same || (ma && mb && canonical(ma) === canonical(mb));
    const status = l.status === 'paired' ? (same ? 'same' : 'changed') : l.status;
    rows.push(`<tr class="ws-${status}"><td class="ws-status">${esc(status)}</td>${messageCell(ma, l.old, limits)}${messageCell(mb, l.new, limits)}</tr>`);
  }
  if (lineup.length > limits.maxMessages) rows.push(`<tr><td colspan="3">… ${lineup.length - limits.maxMessages} more messages (see --json)</td></tr>`);
  const close = (e?: EntryView) => (e?.ws?.close ? `close ${esc(e.ws.close.code)} ${esc(JSON.stringify(e.ws.close.reason))} by ${esc(e.ws.close.by)}` : 'no close');
  rows.push(`<tr class="ws-close"><td class="ws-status">close</td><td>${close(view.old)}</td><td>${close(view.new)}</td></tr>`);
  return `<table class="ws"><thead><tr><th></th><th>old (${a.length} messages)</th><th>new (${b.length} messages)</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}
