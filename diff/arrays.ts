// Array items aligned by identity before their fields are compared
// (docs/diff.md "Arrays inside bodies"). Used twice per pair with the same
// rules: once to bind old ↔ new identifiers (diff/correspond.ts), once to
// compare the numbered values (diff/compare.ts), so both walks pair the same
// items.
//
// Order of the stages: (1) equal items as sequences (a bounded LCS over
// their tokens); (2) equal items left over elsewhere have moved; (3) inside
// each gap, items with the same identity key (`id`, `_id`, `uuid`, `key`, or
// a configured key) in order; (4) same identity elsewhere: moved; (5) inside
// each gap, items that carry no identity pair by place; (6) the rest was
// removed (old only) or added (new only). A permutation is a set of moves,
// never per-index field changes; an inserted item is one `added`.
import { alignSequences } from './align.js';
import { pathMatcher } from './selector.js';
import { leftoversByToken, lineupOrder } from './pair.js';

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

/**
 * Lines up two arrays' items given each item's token (equal tokens: equal
 * items) and identity (undefined: none). `unordered`: a multiset, so nothing
 * is ever `moved`. Result in old order, added items after the old item they
 * follow.
 */
export function alignItems(ta: readonly string[], tb: readonly string[], ida: ReadonlyArray<string | undefined>, idb: ReadonlyArray<string | undefined>, unordered = false): ItemLineup[] {
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
  // Items without identity pair by place inside their gap.
  eachGap((ai, bi) => {
    const oa = ai.filter((i) => ida[i] === undefined);
    const ob = bi.filter((j) => idb[j] === undefined);
    for (let k = 0; k < Math.min(oa.length, ob.length); k++) take(oa[k]!, ob[k]!, 'paired');
  });
  for (let i = 0; i < ta.length; i++) if (!oldTaken[i]) out.push({ old: i, status: 'removed' });
  for (let j = 0; j < tb.length; j++) if (!newTaken[j]) out.push({ new: j, status: 'added' });
  return out.sort(lineupOrder);
}
