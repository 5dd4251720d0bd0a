// The compare loop (docs/diff.md "Captures of any size": one engine): numbers
// each pair's identifiers along aligned places and compares it, over the two
// sides' stores (diff/store/): in memory or bounded, the loop is the same; only
// where entries are kept between the passes differs.
import { bindPair, type EntryBody } from './correspond.js';
import { comparePair, requestLine } from './compare.js';
import type { EntrySummary, SideStore } from './context.js';
import type { ArrayRules } from './arrays.js';
import { unnumber, type OrdinalNumbering, type OrdinalTable } from './normalize/index.js';
import type { Lineup } from './pair.js';
import type { PairView } from './types.js';
import type { Difference, NormalizedEntry, Pair } from './types.js';
import type { PairShape } from './findings.js';
import { appendAll } from '../core/index.js';
import { ISSUED_CLASS } from './bind/index.js';

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
  /**
   * The side whose client decided how far a stream was read (a `bb shadow` primary against a mirror, an original
   * against its replay): the other side's copy of a stream that client left is compared as far as it got.
   */
  reference?: 'old' | 'new';
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
export async function compareLineup(lineup: Lineup[], stores: readonly [SideStore, SideStore], s: LoopSettings): Promise<LoopResult> {
  const summary = (side: 0 | 1, i: number): EntrySummary => stores[side].summaries[i]!;
  const found: Array<{ diffs: Difference[]; pair: Pair } | undefined> = new Array(lineup.length);
  const views = new Map<number, PairView>();
  const render = (side: 0 | 1, e: NormalizedEntry): NormalizedEntry => ({
    ...e,
    id: unnumber(e.id, s.table),
    ...(s.numbering.render(side, bodyOf(e)) as EntryBody),
  });
  // What a pair says of itself from its summaries (the equal-pair shortcut reads no more than that).
  const pairOf = (l: Lineup, a: EntrySummary | undefined, b: EntrySummary | undefined, differences: number): Pair => {
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
    const sa = l.old !== undefined ? summary(0, l.old) : undefined;
    const sb = l.new !== undefined ? summary(1, l.new) : undefined;
    found[k] = { diffs, pair: { ...pairOf(l, sa, sb, diffs.length), request: requestLine(e) } };
    if (diffs.length && views.size < s.maxViews) views.set(k, { ...(a ? { old: bodyOf(a) } : {}), ...(b ? { new: bodyOf(b) } : {}), ...(s.wsOrder ? { wsOrder: s.wsOrder } : {}) });
  };
  for (let k = 0; k < lineup.length; k++) {
    const l = lineup[k]!;
    if (s.progress && k % 5000 === 4999) s.progress(k + 1, lineup.length);
    if (l.old === undefined || l.new === undefined) continue;
    const so = summary(0, l.old);
    const sn = summary(1, l.new);
    if (!s.headerOrder && l.status === 'paired' && so.token === sn.token && so.marks && sn.marks && s.numbering.numberPairMarkers(so.marks, sn.marks)) {
      found[k] = { diffs: [], pair: pairOf(l, so, sn, 0) };
      continue;
    }
    let [a, b] = await Promise.all([stores[0].entry(l.old), stores[1].entry(l.new)]);
    if (s.reference === 'old') b = asFarAs(a, b);
    else if (s.reference === 'new') a = asFarAs(b, a);
    // Two recordings of a client that left an event stream (neither the reference): as far as both got.
    else if (a.meta.clientLeft && b.meta.clientLeft) [a, b] = [asFarAs(b, a), asFarAs(a, b)];
    bindPair(s.numbering, bodyOf(a), bodyOf(b), s.arrays, s.wsOrder);
    finish(k, render(0, a), render(1, b));
  }
  for (let k = 0; k < lineup.length; k++) {
    const l = lineup[k]!;
    if (l.new === undefined) {
      const a = await stores[0].entry(l.old!);
      s.numbering.numberAlone(0, bodyOf(a));
      finish(k, render(0, a), undefined);
    } else if (l.old === undefined) {
      const b = await stores[1].entry(l.new);
      s.numbering.numberAlone(1, bodyOf(b));
      finish(k, undefined, render(1, b));
    }
  }
  const out: LoopResult = { differences: [], pairs: [], views, shapes: [] };
  const written = issuedAsWritten(s, stores);
  for (const [k, f] of found.entries()) {
    if (written) for (const d of f!.diffs) written(d);
    appendAll(out.differences, f!.diffs);
    out.pairs.push(f!.pair);
    const l = lineup[k]!;
    out.shapes.push({
      route: f!.pair.route,
      ...(l.old !== undefined ? { old: stores[0].shapes[summary(0, l.old).shape] } : {}),
      ...(l.new !== undefined ? { new: stores[1].shapes[summary(1, l.new).shape] } : {}),
    });
  }
  return out;
}

/**
 * A copy of an event stream the reference side's client left (meta.clientLeft: a `bb shadow` mirror's, cut at the
 * primary's count by scenario/shadow/tee.ts; a replay's, cut at the original's by scenario/replay), as far as the
 * reference got: a copy that ran ahead (its next event crossed before its own client left) holds events the
 * reference's client never saw, not a change of the build's. A copy with fewer events is compared whole. Without a
 * reference, two streams whose clients both left are each compared as far as the other got: how many events
 * crossed before a client's reset or close reached the server is timing, not the build.
 */
function asFarAs(reference: NormalizedEntry, copy: NormalizedEntry): NormalizedEntry {
  if (!reference.meta.clientLeft) return copy;
  const seen = reference.response.events;
  const events = copy.response.events;
  if (seen && events && events.length > seen.length) return { ...copy, response: { ...copy.response, events: events.slice(0, seen.length) } };
  // A gRPC call its client cancelled: the copy's answer messages as far as the reference's (its own in between kept).
  const got = reference.grpc?.messages.filter((m) => m.type === 'receive').length;
  const messages = copy.grpc?.messages;
  if (got === undefined || !messages || messages.filter((m) => m.type === 'receive').length <= got) return copy;
  let n = 0;
  const kept = messages.filter((m) => m.type !== 'receive' || ++n <= got);
  return { ...copy, grpc: { ...copy.grpc!, messages: kept, status: reference.grpc!.status === null ? null : copy.grpc!.status } };
}

/** A value that is one bound value's marker, rendered (`<ISSUED:2>`). */
const ISSUED_ALONE = /^<ISSUED:(\d{1,15})>$/;
/** A rendered value holding a marker of any class. */
const MARKED = /<[A-Z][A-Z0-9_]{0,31}(?::\d{1,15})?>/;

/**
 * Shows a bound value as its side wrote it where the other side holds a plain value at that place: a value bound on
 * one side only (a price both old runs answered alike, left unbound, that the new build's client echoed; a page size
 * one build's client sent back and the other's not) reads `1999 → 2099`, not `1999 → "<ISSUED:1>"`. Ids compared
 * through their binding keep their markers. Undefined when the run binds nothing.
 */
function issuedAsWritten(s: LoopSettings, stores: readonly [SideStore, SideStore]): ((d: Difference) => void) | undefined {
  const cls = s.table.indexOf(ISSUED_CLASS);
  if (cls === undefined) return undefined;
  let numbers: [Map<number, number>, Map<number, number>] | undefined;
  return (d) => {
    if (d.kind !== 'changed') return;
    for (const side of [0, 1] as const) {
      const mine = side === 0 ? d.old : d.new;
      const theirs = side === 0 ? d.new : d.old;
      const m = typeof mine === 'string' ? ISSUED_ALONE.exec(mine) : null;
      if (!m || (theirs !== null && typeof theirs === 'object') || (typeof theirs === 'string' && MARKED.test(theirs))) continue;
      numbers ??= [s.numbering.valuesOfClass(0, cls), s.numbering.valuesOfClass(1, cls)];
      const v = numbers[side].get(Number(m[1]));
      const raw = v === undefined ? undefined : stores[side].issuedValue(v);
      // The same text on both sides differs by its binding alone: the marker says so.
      if (raw === undefined || raw === String(theirs)) continue;
      // A JSON integer is marked as its digits: shown as a number where the other side's is one.
      const shown = typeof theirs === 'number' && /^-?\d{1,15}$/.test(raw) ? Number(raw) : raw;
      if (side === 0) d.old = shown;
      else d.new = shown;
    }
  };
}
