// Pages: a HAR's pages (a browser's navigations, bb's steps) become labels
// that entry ids start with, paired across the two captures so the same
// page carries the same label on both sides.
import type { HarPage } from '../../capture/index.js';
import type { NormalizeContext } from './context.js';
import { normalizeString } from './walk.js';
import { unnumber } from './ordinals.js';
import { alignSequences } from '../align.js';

/**
 * Whether entry ids include page titles: only when both captures have pages or
 * neither has. A browser's HAR (pages per navigation) against a proxy capture
 * without steps would otherwise pair nothing.
 */
export function pagesComparable(oldPages: HarPage[] | undefined, newPages: HarPage[] | undefined): boolean {
  return (oldPages?.length ?? 0) > 0 === (newPages?.length ?? 0) > 0;
}

/** Page labels by id: titles (normalized), numbered "(2)" when a title repeats. */
export function pageLabels(pages: HarPage[] | undefined, ctx: Pick<NormalizeContext, 'walk' | 'table'>): Map<string, string> {
  const seen = new Map<string, number>();
  const out = new Map<string, string>();
  for (const p of pages ?? []) {
    // A title that is a URL ending in "/" loses it, so ids read `https://x/GET /#1`, never `https://x//GET`.
    const title = unnumber(normalizeString(p.title || p.id, ctx.walk), ctx.table).replace(/(?<=.)\/+$/, '');
    const n = (seen.get(title) ?? 0) + 1;
    seen.set(title, n);
    out.set(p.id, n === 1 ? title : `${title} (${n})`);
  }
  return out;
}

/**
 * Both sides' page labels, paired by title and order (docs/diff.md "What is
 * compared"): equal titles pair along their longest common sequence; between
 * two such anchors, the pages left on each side pair in order and the new page
 * takes the old page's label. A browser names a page by its document title when
 * it reads it, which a script may change while the page loads ("loading" in one
 * recording, "loaded 3" in the next): the same page, the same place in the
 * sequence. No labels at all when only one side has pages.
 */
export function pairedPageLabels(
  oldPages: HarPage[] | undefined,
  newPages: HarPage[] | undefined,
  oldCtx: Pick<NormalizeContext, 'walk' | 'table'>,
  newCtx: Pick<NormalizeContext, 'walk' | 'table'>,
): { old: Map<string, string>; new: Map<string, string> } {
  if (!pagesComparable(oldPages, newPages)) return { old: new Map(), new: new Map() };
  const o = [...pageLabels(oldPages, oldCtx)];
  const n = [...pageLabels(newPages, newCtx)];
  const out = { old: new Map(o), new: new Map(n) };
  const used = new Set(n.map(([, label]) => label));
  const relabel = (oi: number, ni: number) => {
    const label = o[oi]![1];
    if (label === n[ni]![1] || used.has(label)) return;
    used.delete(n[ni]![1]);
    used.add(label);
    out.new.set(n[ni]![0], label);
  };
  // Between two anchors (equal titles), what is left on each side pairs in order.
  let gapO = 0;
  let gapN = 0;
  for (const [oi, ni] of [...alignSequences(o.map(([, l]) => l), n.map(([, l]) => l)), [o.length, n.length] as const]) {
    for (let k = 0; k < Math.min(oi - gapO, ni - gapN); k++) relabel(gapO + k, gapN + k);
    gapO = oi + 1;
    gapN = ni + 1;
  }
  return out;
}
