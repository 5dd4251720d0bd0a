// What bb shadow's tests share about its live comparison: waiting on it (a
// test that must put a batch edge between a value's issue and its use waits
// until the comparison has taken in the issuing exchanges; no sleep: it polls
// what it waits for), and its findings beside `bb diff`'s, as keys.
import assert from 'node:assert/strict';
import type { Shadow, ShadowReport } from '../../../scenario/index.js';
import type { DiffResult } from '../../../diff/index.js';

/** Resolves once the run's comparison has counted `n` requests (their primary entries are in; bounded: 20 s). */
export async function compared(shadow: Shadow, n: number): Promise<void> {
  for (let i = 0; i < 400 && shadow.requests() < n; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(shadow.requests() >= n, `compared ${shadow.requests()} of ${n}`);
}

/** A live report's findings as `class kind pattern`, regressions as `real` (bb diff's class), sorted. */
export function findingKeys(r: ShadowReport): string[] {
  return r.findings.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern}`).sort();
}

/** `bb diff`'s findings of the same captures, ratified ones left out, as the same keys. */
export function offlineKeys(result: DiffResult): string[] {
  return result.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort();
}
