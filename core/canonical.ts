// One JSON text per value whatever its objects' key order: what bb diff
// compares and digests values by (diff/compare.ts, findings, the digest of
// messages a capture does not list).

/** Canonical JSON: object keys sorted (key order carries no meaning in JSON). */
export function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined';
  let s: string;
  if (Array.isArray(v)) {
    s = '[';
    for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + canonical(v[i]);
    return s + ']';
  }
  const keys = Object.keys(v).sort();
  s = '{';
  for (let i = 0; i < keys.length; i++) s += `${i ? ',' : ''}${JSON.stringify(keys[i])}:${canonical((v as Record<string, unknown>)[keys[i]!])}`;
  return s + '}';
}
