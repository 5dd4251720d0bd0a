// The stages both comparison paths share (DESIGN.md "One engine"): the
// order entries are compared in, their ids, and the compare loop that numbers
// each pair's identifiers along aligned places and compares it. The
// in-memory path (pipeline.ts) and the bounded path (bounded.ts) differ only
// in where entries are kept between the passes; they hand this loop an
// EntrySource.
import { bindPair, type EntryBody } from './correspond.js';
import { comparePair, requestLine } from './compare.js';
import { entryKey, routeWithHost, unnumber, type OrdinalNumbering, type OrdinalTable } from './normalize/index.js';
import type { ArrayRules } from './arrays.js';
import type { Lineup } from './pair.js';
import type { PairView } from './types.js';
import type { Difference, NormalizedEntry, Pair } from './types.js';
import type { PairShape } from './findings.js';
import { appendAll } from '../core/index.js';

/** An entry as a pair names it: from its summary, or from the entry itself (id, route, index, seq). */
type EntryMeta = Pick<EntrySummary, 'id' | 'route' | 'index' | 'seq'>;

/** What ordering needs of an entry. */
export interface Orderable {
  /** Index in log.entries. */
  index: number;
  /** bb's capture sequence number. */
  seq?: number;
  /** HAR's startedDateTime, as written. */
  started?: string;
}

/**
 * Sorts entries into comparison order (in place): `_bb.seq` when every
 * entry has one (bb writes entries in completion order; seq is arrival
 * order), else the start time as a date (ISO strings with offsets do not
 * sort as text), else file position.
 */
export function sortForComparison<T extends Orderable>(list: T[]): T[] {
  if (list.every((x) => typeof x.seq === 'number')) return list.sort((a, b) => a.seq! - b.seq! || a.index - b.index);
  const time = new Map<T, number>();
  for (const x of list) {
    const t = x.started === undefined ? NaN : Date.parse(x.started);
    time.set(x, Number.isNaN(t) ? Infinity : t);
  }
  return list.sort((a, b) => time.get(a)! - time.get(b)! || a.index - b.index);
}

/**
 * Names each entry (in comparison order): with `hostOf` (hosts in keys:
 * either capture has several), its route and key name its host; then its id
 * `<page>/<route>#<n>`, n counting per pairing key. Both paths name entries
 * here, after both sides are read, so the host decision is made once.
 */
export function assignIds<T extends { key: string; route: string; id: string }>(list: T[], pageOf: (e: T) => string, hostOf?: (e: T, i: number) => string): void {
  const occurrences = new Map<string, number>();
  for (const [i, e] of list.entries()) {
    const host = hostOf?.(e, i);
    if (host) {
      e.route = routeWithHost(e.route, host);
      e.key = entryKey(pageOf(e), e.route);
    }
    const n = (occurrences.get(e.key) ?? 0) + 1;
    occurrences.set(e.key, n);
    e.id = `${pageOf(e)}/${e.route}#${n}`;
  }
}

/** An entry's summary, known before it is read again: what the equal-pair shortcut needs. */
export interface EntrySummary {
  id: string;
  route: string;
  index: number;
  seq?: number;
  /** Pairing token (un-numbered content digest). */
  token: string;
  /** markersOf its content text, when kept (no path rules changed the entry after the text was taken). */
  marks?: ArrayLike<number>;
  /** Its field patterns (findings.ts ShapeIndex), for the findings' `of` counts. */
  shape: Set<string>;
}

/** Where the loop gets entries from: side 0 old, 1 new; `i` is the place in comparison order. */
export interface EntrySource {
  summary(side: 0 | 1, i: number): EntrySummary;
  /** The normalized entry, markers in, path rules applied. */
  entry(side: 0 | 1, i: number): NormalizedEntry | Promise<NormalizedEntry>;
  /** The loop is done with entry i of a side (its kept form may go). */
  release?(side: 0 | 1, i: number): void;
}

/** What the compare loop needs of the run. */
export interface LoopSettings {
  table: OrdinalTable;
  numbering: OrdinalNumbering;
  arrays: ArrayRules;
  headerOrder?: boolean;
  wsOrder?: 'direction' | 'total';
  /** Keep the side-by-side views of up to this many differing pairs (0: none). */
  maxViews: number;
  /** Line-ups compared so far, now and then. */
  progress?: (done: number, total: number) => void;
}

/** What the loop found, by line-up index. */
export interface LoopResult {
  differences: Difference[];
  pairs: Pair[];
  views: Map<number, PairView>;
  /** Each line-up's route and side shapes, for the findings stage. */
  shapes: PairShape[];
}

const bodyOf = (e: NormalizedEntry): EntryBody => ({ request: e.request, response: e.response, ws: e.ws, grpc: e.grpc });

/**
 * Numbers and compares every line-up: pairs first, in order, both sides in
 * step (an identifier bound where both sides hold it keeps one number);
 * entries present on one side only after, so they cannot shift the rest.
 * A pair whose un-numbered content is equal and whose markers bind in step
 * is equal once numbered: nothing read, parsed or walked.
 */
export async function compareLineup(lineup: Lineup[], source: EntrySource, s: LoopSettings): Promise<LoopResult> {
  const found: Array<{ diffs: Difference[]; pair: Pair } | undefined> = new Array(lineup.length);
  const views = new Map<number, PairView>();
  const render = (side: 0 | 1, e: NormalizedEntry): NormalizedEntry => ({
    ...e,
    id: unnumber(e.id, s.table),
    ...(s.numbering.render(side, bodyOf(e)) as EntryBody),
  });
  // What a pair says of itself from its summaries (the equal-pair shortcut reads no more than that).
  const pairOf = (l: Lineup, a: EntryMeta | undefined, b: EntryMeta | undefined, differences: number): Pair => {
    const x = (a ?? b)!;
    return {
      id: unnumber(x.id, s.table),
      route: x.route,
      ...(a ? { old: a.index } : {}),
      ...(b ? { new: b.index } : {}),
      status: l.status,
      differences,
      exchange: { ...(a ? { old: `#${a.seq ?? a.index}` } : {}), ...(b ? { new: `#${b.seq ?? b.index}` } : {}) },
    };
  };
  const finish = (k: number, a: NormalizedEntry | undefined, b: NormalizedEntry | undefined) => {
    const l = lineup[k]!;
    const diffs = comparePair(a, b, l.status, { headerOrder: s.headerOrder, wsOrder: s.wsOrder, arrays: s.arrays });
    const e = (a ?? b)!;
    const sa = l.old !== undefined ? source.summary(0, l.old) : undefined;
    const sb = l.new !== undefined ? source.summary(1, l.new) : undefined;
    found[k] = { diffs, pair: { ...pairOf(l, sa, sb, diffs.length), request: requestLine(e) } };
    if (diffs.length && views.size < s.maxViews) views.set(k, { ...(a ? { old: bodyOf(a) } : {}), ...(b ? { new: bodyOf(b) } : {}), ...(s.wsOrder ? { wsOrder: s.wsOrder } : {}) });
  };
  for (let k = 0; k < lineup.length; k++) {
    const l = lineup[k]!;
    if (s.progress && k % 5000 === 4999) s.progress(k + 1, lineup.length);
    if (l.old === undefined || l.new === undefined) continue;
    const so = source.summary(0, l.old);
    const sn = source.summary(1, l.new);
    if (!s.headerOrder && l.status === 'paired' && so.token === sn.token && so.marks && sn.marks && s.numbering.numberPairMarkers(so.marks, sn.marks)) {
      source.release?.(0, l.old);
      source.release?.(1, l.new);
      found[k] = { diffs: [], pair: pairOf(l, so, sn, 0) };
      continue;
    }
    const [a, b] = await Promise.all([source.entry(0, l.old), source.entry(1, l.new)]);
    bindPair(s.numbering, bodyOf(a), bodyOf(b), s.arrays, s.wsOrder);
    finish(k, render(0, a), render(1, b));
  }
  for (let k = 0; k < lineup.length; k++) {
    const l = lineup[k]!;
    if (l.new === undefined) {
      const a = await source.entry(0, l.old!);
      s.numbering.numberAlone(0, bodyOf(a));
      finish(k, render(0, a), undefined);
    } else if (l.old === undefined) {
      const b = await source.entry(1, l.new);
      s.numbering.numberAlone(1, bodyOf(b));
      finish(k, undefined, render(1, b));
    }
  }
  const out: LoopResult = { differences: [], pairs: [], views, shapes: [] };
  for (const [k, f] of found.entries()) {
    appendAll(out.differences, f!.diffs);
    out.pairs.push(f!.pair);
    const l = lineup[k]!;
    out.shapes.push({
      route: f!.pair.route,
      ...(l.old !== undefined ? { old: source.summary(0, l.old).shape } : {}),
      ...(l.new !== undefined ? { new: source.summary(1, l.new).shape } : {}),
    });
  }
  return out;
}
