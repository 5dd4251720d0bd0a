// Content similarity of two items (diff/arrays.ts's last way to pair items
// that are neither equal nor named by an identity key): the share of their
// leaf fields that hold the same value at the same path. A message that was
// moved and gained a field keeps most of its leaves; its neighbours share few.
import { joinPath } from './selector.js';

/** Leaves read per item at most: past it the rest is not looked at (bounded cost per item). */
const MAX_LEAVES = 256;

/** An item's leaves as `path=value` strings, for `similarity`; undefined for a value that is not an object or array. */
export function leavesOf(v: unknown): Set<string> | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const out = new Set<string>();
  const walk = (x: unknown, path: string): void => {
    if (out.size >= MAX_LEAVES) return;
    if (x !== null && typeof x === 'object') {
      const keys = Array.isArray(x) ? x.map((_, i) => i) : Object.keys(x);
      if (!keys.length) out.add(`${path}=${Array.isArray(x) ? '[]' : '{}'}`);
      for (const k of keys) walk((x as Record<string, unknown>)[k], joinPath(path, k));
      return;
    }
    out.add(`${path}=${JSON.stringify(x)}`);
  };
  walk(v, '');
  return out;
}

/** Shared leaves over the leaves of the bigger item: 1 equal, 0 nothing in common. */
export function similarity(a: Set<string>, b: Set<string>): number {
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  if (!big.size) return 0;
  let common = 0;
  for (const leaf of small) if (big.has(leaf)) common++;
  return common / big.size;
}
