// Array items aligned by identity before their fields are compared
// (docs/diff.md "Arrays inside bodies"). Used twice per pair with the same
// rules: once to bind old ↔ new identifiers (diff/correspond.ts), once to
// compare the numbered values (diff/compare.ts), so both walks pair the same
// items.
//
// Order of the stages: (1) equal items as sequences (a bounded LCS over
// their tokens); (2) equal items left over elsewhere have moved; (3) inside
// each gap, items with the same identity key (`id`, `_id`, `uuid`, `key`, or
// a configured key) in order; (4) same identity elsewhere: moved; (5) items
// that carry no identity, by content similarity (diff/similarity.ts), the
// most alike first, anywhere: in order inside one gap they pair, else they
// moved; (6) inside each gap, what carries no identity pairs by place; (7)
// the rest was removed (old only) or added (new only). A permutation is a set
// of moves, never per-index field changes; an inserted item is one `added`.
// Streams (diff/streams.ts) line up their messages with the same stages.
import { alignSequences } from './align.js';
import { pathMatcher } from './selector.js';
import { leftoversByToken, lineupOrder } from './pair.js';
import { leavesOf, similarity } from './similarity.js';

/** How one old and/or new item lines up. `same`: equal tokens in order; `moved`: found elsewhere. */
export interface ItemLineup {
  old?: number;
  new?: number;
  status: 'same' | 'paired' | 'moved' | 'removed' | 'added';
}

/** Keys that name an item of an array when no rule says otherwise. */
export const DEFAULT_IDENTITY_KEYS: readonly string[] = ['id', '_id', 'uuid', 'key'];

/** Which arrays get which identity keys, and which are multisets (from the config). */
export interface ArrayRules {
  /** Identity keys for the array at `path` (a field path with indices). */
  keysFor(path: string): readonly string[];
  /** True when the array at `path` compares as a multiset (`normalize.unorderedArrays`). */
  unordered(path: string): boolean;
  /** False when no rule depends on the path, so walks need not build paths. */
  readonly needsPaths: boolean;
}

/** The rules of a config: `pairing.arrayKeys` and `normalize.unorderedArrays` (path suffix selectors). */
export function arrayRules(arrayKeys: ReadonlyArray<{ path: string; key: string }> = [], unordered: readonly string[] = []): ArrayRules {
  const keyed = arrayKeys.map((k) => ({ match: pathMatcher(k.path), key: k.key }));
  const multiset = unordered.map(pathMatcher);
  if (!keyed.length && !multiset.length) return DEFAULT_ARRAY_RULES;
  return {
    needsPaths: true,
    keysFor: (path) => {
      const own = keyed.filter((k) => k.match(path)).map((k) => k.key);
      return own.length ? own : DEFAULT_IDENTITY_KEYS;
    },
    unordered: (path) => multiset.some((m) => m(path)),
  };
}

/** No config: the default identity keys everywhere, every array ordered. */
export const DEFAULT_ARRAY_RULES: ArrayRules = { needsPaths: false, keysFor: () => DEFAULT_IDENTITY_KEYS, unordered: () => false };

/** The identity of an item: `key=<token of its value>` for the first identity key it has, else undefined. */
export function identityOf(item: unknown, keys: readonly string[], tokenOf: (v: unknown) => string): string | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  for (const k of keys) {
    const v = (item as Record<string, unknown>)[k];
    if (typeof v === 'string' || typeof v === 'number') return `${k}=${tokenOf(v)}`;
  }
  return undefined;
}

/** Items' values for stage (5), content similarity, and their kinds: items of two kinds never pair past identity. */
export interface ItemContent {
  /** The old items' values. */
  old: readonly unknown[];
  /** The new items' values. */
  new: readonly unknown[];
  /** Each old item's kind (a WebSocket message's direction, opcode and data.type); absent: one kind. */
  oldKind?: readonly string[];
  /** Each new item's kind. */
  newKind?: readonly string[];
}

/** Items at least this alike (shared leaves over the bigger item's) pair by content. */
export const MIN_SIMILARITY = 0.5;
/** Leaf look-ups stage (5) may spend on one array (old × new items without identity, times their leaves); past it they pair by place. */
const SIMILARITY_WORK = 4_000_000;

/**
 * Lines up two arrays' items given each item's token (equal tokens: equal
 * items) and identity (undefined: none); `content` adds stage (5) and kinds.
 * `unordered`: a multiset, so nothing is ever `moved`. Result in old order,
 * added items after the old item they follow.
 */
export function alignItems(ta: readonly string[], tb: readonly string[], ida: ReadonlyArray<string | undefined>, idb: ReadonlyArray<string | undefined>, unordered = false, content?: ItemContent): ItemLineup[] {
  const oldTaken = new Array<boolean>(ta.length).fill(false);
  const newTaken = new Array<boolean>(tb.length).fill(false);
  const out: ItemLineup[] = [];
  const take = (i: number, j: number, status: ItemLineup['status']) => {
    oldTaken[i] = newTaken[j] = true;
    out.push({ old: i, new: j, status });
  };
  let anchors: Array<[number, number]> = [];
  if (unordered) leftoversByToken(ta, tb, oldTaken, newTaken, (i, j) => take(i, j, 'same'));
  else {
    anchors = alignSequences(ta, tb);
    for (const [i, j] of anchors) take(i, j, 'same');
    leftoversByToken(ta, tb, oldTaken, newTaken, (i, j) => take(i, j, 'moved'));
  }
  const bounds: Array<[number, number]> = [[-1, -1], ...anchors, [ta.length, tb.length]];
  const eachGap = (f: (ai: number[], bi: number[]) => void) => {
    for (let g = 0; g + 1 < bounds.length; g++) {
      const ai: number[] = [];
      const bi: number[] = [];
      for (let i = bounds[g]![0] + 1; i < bounds[g + 1]![0]; i++) if (!oldTaken[i]) ai.push(i);
      for (let j = bounds[g]![1] + 1; j < bounds[g + 1]![1]; j++) if (!newTaken[j]) bi.push(j);
      if (ai.length && bi.length) f(ai, bi);
    }
  };
  // Same identity inside a gap, in order.
  eachGap((ai, bi) => {
    const oa = ai.filter((i) => ida[i] !== undefined);
    const ob = bi.filter((j) => idb[j] !== undefined);
    if (!oa.length || !ob.length) return;
    for (const [x, y] of alignSequences(oa.map((i) => ida[i]!), ob.map((j) => idb[j]!))) take(oa[x]!, ob[y]!, 'paired');
  });
  // Same identity elsewhere (an item without one matches nothing: a token of its own).
  const idOld = ida.map((v, i) => v ?? `\u0000old ${i}`);
  const idNew = idb.map((v, j) => v ?? `\u0000new ${j}`);
  leftoversByToken(idOld, idNew, oldTaken, newTaken, (i, j) => take(i, j, unordered ? 'paired' : 'moved'));
  if (content) bySimilarity(ida, idb, oldTaken, newTaken, anchors, content, (i, j, inOrder) => take(i, j, unordered || inOrder ? 'paired' : 'moved'));
  // Items without identity pair by place inside their gap (of one kind, in order).
  const kindA = content?.oldKind;
  const kindB = content?.newKind;
  eachGap((ai, bi) => {
    const oa = ai.filter((i) => ida[i] === undefined);
    const ob = bi.filter((j) => idb[j] === undefined);
    if (!kindA || !kindB) for (let k = 0; k < Math.min(oa.length, ob.length); k++) take(oa[k]!, ob[k]!, 'paired');
    else for (const [x, y] of alignSequences(oa.map((i) => kindA[i]!), ob.map((j) => kindB[j]!))) take(oa[x]!, ob[y]!, 'paired');
  });
  for (let i = 0; i < ta.length; i++) if (!oldTaken[i]) out.push({ old: i, status: 'removed' });
  for (let j = 0; j < tb.length; j++) if (!newTaken[j]) out.push({ new: j, status: 'added' });
  return out.sort(lineupOrder);
}

/**
 * Stage (5): free items without identity, of one kind, at least MIN_SIMILARITY
 * alike, the most alike first (ties: the nearer places). `take` gets
 * `inOrder` for the pairs that keep their order inside one gap between
 * anchors (the longest such run, by alignSequences); the others moved.
 */
function bySimilarity(
  ida: ReadonlyArray<string | undefined>,
  idb: ReadonlyArray<string | undefined>,
  oldTaken: boolean[],
  newTaken: boolean[],
  anchors: ReadonlyArray<[number, number]>,
  content: ItemContent,
  take: (i: number, j: number, inOrder: boolean) => void,
): void {
  const fa = ida.map((_, i) => i).filter((i) => !oldTaken[i] && ida[i] === undefined);
  const fb = idb.map((_, j) => j).filter((j) => !newTaken[j] && idb[j] === undefined);
  if (!fa.length || !fb.length || fa.length * fb.length > SIMILARITY_WORK) return;
  const la = fa.map((i) => leavesOf(content.old[i]));
  const lb = fb.map((j) => leavesOf(content.new[j]));
  let work = 0;
  for (const l of la) work += (l?.size ?? 0) * fb.length;
  if (work > SIMILARITY_WORK) return;
  const candidates: Array<{ i: number; j: number; score: number }> = [];
  fa.forEach((i, x) => {
    if (!la[x]) return;
    fb.forEach((j, y) => {
      if (!lb[y] || (content.oldKind?.[i] ?? '') !== (content.newKind?.[j] ?? '')) return;
      const score = similarity(la[x]!, lb[y]!);
      if (score >= MIN_SIMILARITY) candidates.push({ i, j, score });
    });
  });
  candidates.sort((p, q) => q.score - p.score || Math.abs(p.i - p.j) - Math.abs(q.i - q.j) || p.i - q.i || p.j - q.j);
  const usedA = new Set<number>();
  const usedB = new Set<number>();
  const chosen: Array<{ i: number; j: number; gap: number }> = [];
  // Which gap a place is in: how many anchors come before it (anchors increase on both sides).
  const gapOf = (k: number, side: 0 | 1) => {
    let lo = 0;
    let hi = anchors.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (anchors[mid]![side] < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  for (const c of candidates) {
    if (usedA.has(c.i) || usedB.has(c.j)) continue;
    usedA.add(c.i);
    usedB.add(c.j);
    const g = gapOf(c.i, 0);
    chosen.push({ i: c.i, j: c.j, gap: g === gapOf(c.j, 1) ? g : -1 });
  }
  // Inside one gap, the pairs whose order both sides agree on (a longest common run of the pairs, old order against new order).
  const inOrder = new Set<number>();
  for (const g of new Set(chosen.map((c) => c.gap))) {
    if (g < 0) continue;
    const here = chosen.map((c, k) => ({ ...c, k })).filter((c) => c.gap === g);
    const byOld = [...here].sort((p, q) => p.i - q.i).map((c) => String(c.k));
    const byNew = [...here].sort((p, q) => p.j - q.j).map((c) => String(c.k));
    for (const [x] of alignSequences(byOld, byNew)) inOrder.add(Number(byOld[x]));
  }
  chosen.forEach((c, k) => take(c.i, c.j, inOrder.has(k)));
}
