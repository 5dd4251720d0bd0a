// Waiting on a bb shadow run's live comparison in its tests: a test that must
// put a batch edge between a value's issue and its use waits until the
// issuing exchanges were compared (no sleep: it polls what it waits for).
import assert from 'node:assert/strict';
import type { Shadow } from '../../../scenario/index.js';

/** Resolves once the run has compared `n` requests (bounded: 20 s). */
export async function compared(shadow: Shadow, n: number): Promise<void> {
  for (let i = 0; i < 400 && shadow.requests() < n; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(shadow.requests() >= n, `compared ${shadow.requests()} of ${n}`);
}
