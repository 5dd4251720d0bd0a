import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { now, isoToSeconds, toEpochSeconds } from '../../core/index.js';

describe('clock', () => {
  it('reads epoch ms with sub-ms precision that never goes back', () => {
    const before = Date.now();
    const a = now();
    const b = now();
    const after = Date.now();
    assert.ok(b >= a);
    // Epoch ms: between two whole-ms readings of Date.now() taken around it.
    assert.ok(a >= before && b < after + 1, `${before} <= ${a} <= ${b} < ${after + 1}`);
  });

  it('turns ISO times into epoch seconds, offsets honoured', () => {
    assert.equal(isoToSeconds('2026-01-01T10:00:00.500+02:00'), Date.UTC(2026, 0, 1, 8, 0, 0, 500) / 1000);
    assert.ok(Number.isNaN(isoToSeconds('yesterday')));
  });

  it('reads message times in seconds (Chrome, bb) or milliseconds (Playwright)', () => {
    assert.equal(toEpochSeconds(1_700_000_000.25), 1_700_000_000.25);
    assert.equal(toEpochSeconds(1_700_000_000_250), 1_700_000_000.25);
  });
});
