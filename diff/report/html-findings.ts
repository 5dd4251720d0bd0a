// The HTML report's findings and rows (docs/reports.md "Reports for people and
// CI"): each finding is a <details> whose summary is its one line (text.ts
// findingLine, the same words as the terminal) and whose body holds the
// findings that follow from it, its samples, the bb show command that opens
// the first (show-command.ts) and its rows (theirs too); then every row in one
// table, each linked to its finding.
//
// Captured content is hostile: ids, entry ids, paths, request lines and
// values go through `tok` (escaped, wrapping only after / . [); the only
// attribute built from a result is a fragment id made of a hash's
// characters (`anchor`), never a captured string.
import type { DiffResult, Difference, DifferenceClass, Finding } from '../types.js';
import { brokenRatificationText, consequenceLines, elidePair, findingLine, plural, rowsUnder } from './text.js';
import { tok } from './html-pair.js';
import { exchangesOf, showCommand } from './show-command.js';
import { esc } from '../../core/index.js';

/** Classes in report order: real before known before noise. */
export const CLASS_ORDER: readonly DifferenceClass[] = ['real', 'known', 'noise'];

const TITLES: Record<DifferenceClass, string> = {
  real: 'Real findings',
  known: 'Known findings',
  noise: 'Noise findings (differ between two runs of the old build too)',
};

/** The element id of a finding's block, when its id is safe in an attribute (it is a hash). */
export function anchor(findingId: string | undefined): string | undefined {
  return findingId && /^[A-Za-z0-9_-]+$/.test(findingId) ? `finding-${findingId}` : undefined;
}

/** A link to a finding's block (plain text when its id could not be an anchor). */
export function findingLink(findingId: string | undefined): string {
  if (!findingId) return '';
  const a = anchor(findingId);
  return a ? `<a href="#${a}"><code>${esc(findingId)}</code></a>` : `<code>${tok(findingId)}</code>`;
}

/** A row's change: "+ new", "- old" or "old → new", elided around the change. */
function changeText(d: Difference): string {
  const [a, b] = elidePair(d.old, d.new, 120, d.path);
  return d.kind === 'added' || d.kind === 'extra' ? `+ ${b}` : d.kind === 'removed' || d.kind === 'missing' ? `- ${a}` : `${a} → ${b}`;
}

/** A table cell whose content wraps at token boundaries and otherwise scrolls inside the cell. */
function cell(html: string, cls = ''): string {
  return `<td${cls ? ` class="${cls}"` : ''}><div class="x">${html}</div></td>`;
}

/** One difference row; `inFinding`: under its finding (class, kind and finding are the finding's). */
function rowHtml(d: Difference, inFinding: boolean): string {
  const cells = [
    ...(inFinding ? [] : [cell(`<span class="tag tag-${d.class}">${d.class}</span>`), cell(findingLink(d.finding))]),
    cell(`<code>${esc(d.id)}</code>`),
    ...(inFinding ? [] : [cell(esc(d.kind))]),
    cell(`<code>${tok(d.request)}</code>`),
    cell(`<code>${tok(d.entry)}</code>`),
    cell(`<code>${tok(d.path || '(whole entry)')}</code>`),
    cell(`<code>${tok(changeText(d))}</code>${d.reason && !inFinding ? `<br>reason: ${esc(d.reason)}` : ''}`),
  ];
  return `<tr class="diff-row c-${d.class}" data-id="${esc(d.id)}">${cells.join('')}</tr>`;
}

const FINDING_COLS = '<colgroup><col class="w-id"><col class="w-req"><col class="w-entry"><col class="w-path"><col class="w-change"></colgroup>';
const FINDING_HEAD = '<thead><tr><th>id</th><th>request</th><th>entry</th><th>path</th><th>old → new</th></tr></thead>';
const ROW_COLS = '<colgroup><col class="w-class"><col class="w-fid"><col class="w-id"><col class="w-kind"><col class="w-req"><col class="w-entry"><col class="w-path"><col class="w-change"></colgroup>';
const ROW_HEAD = '<thead><tr><th>class</th><th>finding</th><th>id</th><th>kind</th><th>request</th><th>entry</th><th>path</th><th>old → new</th></tr></thead>';


/** One finding: summary line (tag, id, findingLine, counts), then its samples and rows when unfolded. */
function findingHtml(f: Finding, byId: Map<string, Difference>, maxRows: number, open: string | undefined): string {
  const a = anchor(f.id);
  const counts = `${plural(rowsUnder(f).length, 'row')} · ${f.entries} of ${f.of} entries · ${plural(f.routes.length, 'route')}`;
  // A finding that breaks a ratification says so in its summary line: it is why the run fails.
  const broken = brokenRatificationText(f);
  const ratified = broken ? ` <span class="fratified">${tok(broken)}</span>` : '';
  const summary = `<summary><span class="tag tag-${f.class}">${f.class}</span> <code class="fid">${esc(f.id)}</code> <span class="fline">${tok(findingLine(f))}</span>${ratified} <span class="fcounts">${esc(counts)}</span></summary>`;
  const parts: string[] = [];
  if (f.reason) parts.push(`<p>reason: ${esc(f.reason)}</p>`);
  // What follows from it (findings-fold.ts), one item each, in the terminal's words.
  const consequences = consequenceLines(f);
  if (consequences.length) parts.push(`<ul class="fconsequences">${consequences.map((k) => `<li>${tok(k)}</li>`).join('')}</ul>`);
  if (f.routes.length > 1) {
    const shown = f.routes.slice(0, 20).map((r) => `<code>${tok(r)}</code>`);
    parts.push(`<p class="froutes">routes: ${shown.join(' · ')}${f.routes.length > 20 ? ` · … ${f.routes.length - 20} more` : ''}</p>`);
  }
  parts.push(`<p class="fsamples">e.g. ${f.samples.map((s) => `<code>${tok(s.request)}</code> (<code>${tok(s.id)}</code>)`).join(' · ')}</p>`);
  if (open) parts.push(`<p class="fopen">open the first: <code>${tok(open)}</code></p>`);
  const all = rowsUnder(f);
  const rows = all.slice(0, maxRows).flatMap((id) => {
    const d = byId.get(id);
    return d ? [rowHtml(d, true)] : [];
  });
  const more = all.length > maxRows ? `<p>… ${all.length - maxRows} more rows (see the differences below, or --json).</p>` : '';
  parts.push(`<table class="rows frows">${FINDING_COLS}${FINDING_HEAD}<tbody>${rows.join('')}</tbody></table>${more}`);
  return `<details class="finding c-${f.class}"${a ? ` id="${a}"` : ''} data-class="${f.class}">${summary}<div class="fbody">${parts.join('')}</div></details>`;
}

/** The findings section: real, then known, then noise, each finding folded over its rows. */
export function findingsHtml(result: DiffResult, maxRowsPerFinding: number): string {
  const byId = new Map(result.differences.map((d) => [d.id, d]));
  const exchanges = exchangesOf(result);
  const groups = CLASS_ORDER.flatMap((cls) => {
    const list = result.findings.filter((f) => f.class === cls);
    if (!list.length) return [];
    return [`<div class="fgroup c-${cls}"><h3>${esc(TITLES[cls])} (${list.length})</h3>${list.map((f) => findingHtml(f, byId, maxRowsPerFinding, showCommand(f, result, exchanges))).join('\n')}</div>`];
  });
  const body = groups.length ? groups.join('\n') : '<p>Nothing differs.</p>';
  return `<section id="findings"><h2>Findings</h2>\n${body}\n</section>`;
}

/** Every difference row (up to maxRows) in pair and path order, each linked to its finding. */
export function rowsHtml(result: DiffResult, maxRows: number): string {
  const rows = result.differences.slice(0, maxRows).map((d) => rowHtml(d, false));
  const more = result.differences.length > maxRows ? `<p>… ${result.differences.length - maxRows} more differences (see --json).</p>` : '';
  return `<section id="rows"><h2>Differences</h2><table id="differences" class="rows">${ROW_COLS}${ROW_HEAD}<tbody>${rows.join('')}</tbody></table>${more}</section>`;
}
