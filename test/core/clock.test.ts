import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { now, isoToSeconds, toEpochSeconds } from '../../core/index.js';

describe('clock', () => {
  it('reads epoch ms with sub-ms precision that never goes back', () => {
    const a = now();
    const b = now();
    assert.ok(b >= a);
    assert.ok(Math.abs(a - Date.now()) < 1000);
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
