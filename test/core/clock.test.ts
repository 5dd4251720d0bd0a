import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { now, isoToSeconds, toEpochSeconds } from '../../core/index.js';

describe('clock', () => {
  it('reads epoch ms with sub-ms precision that never goes back', () => {
    let last = now();
    for (let i = 0; i < 1000; i++) {
      const t = now();
      assert.ok(t >= last, `${t} after ${last}`);
      last = t;
    }
    // Epoch ms, near the wall clock: the process's monotonic clock from its start, so a step of the system's clock
    // (time sync stepped this machine's by ~5 ms during a CI run) moves Date.now() and not it; never by a second.
    assert.ok(Math.abs(now() - Date.now()) < 1000, `${now()} against Date.now() ${Date.now()}`);
    assert.ok(Array.from({ length: 10 }, now).some((t) => t % 1 !== 0), 'sub-ms precision');
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
