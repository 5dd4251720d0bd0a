// A timestamp's text written by hand must be String(ts)'s, byte for byte, for
// every double it takes on (and it must decline the ones it does not).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTimestamp } from '../../capture/timestamp-text.js';

const buf = Buffer.alloc(32);

function check(ts: number): boolean {
  const end = writeTimestamp(buf, 3, ts);
  if (end < 0) return false;
  assert.equal(buf.toString('latin1', 3, end), String(ts), `ts ${String(ts)}`);
  return true;
}

test('random epoch-ms doubles print as String prints them', () => {
  let taken = 0;
  for (let i = 0; i < 300_000; i++) {
    // Every fraction a double in range can hold: k / 4096 for k under 4096.
    const whole = 1_000_000_000_000 + Math.floor(Math.random() * 1_100_000_000_000);
    const ts = whole + Math.floor(Math.random() * 4096) / 4096;
    if (check(ts)) taken++;
  }
  // Only the range's values and the 4-digit ties are left to String.
  assert.ok(taken > 250_000, `${taken} of 300,000 written by hand`);
});

test('every fraction of one millisecond, and the edges of the range', () => {
  let declined = 0;
  for (const whole of [2 ** 40, 1764625000123, 1999999999999, 2 ** 41 - 1]) {
    for (let k = 0; k < 4096; k++) if (!check(whole + k / 4096)) declined++;
  }
  // The ties (k a multiple of 128 with an odd fifth digit) are declined, nothing else.
  assert.ok(declined <= 4 * 32, `${declined} declined`);
  assert.equal(check(2 ** 41 - 1 / 4096), true);
  // The clock's own value is written, unless it is one of the ties (16 of the 4,096 fractions: a fixed `true` here failed a CI run).
  const now = performance.timeOrigin + performance.now();
  const tie = ((((now - Math.floor(now)) * 4096 * 10000) / 4096) % 1) === 0.5;
  assert.equal(check(now), !tie, `ts ${String(now)}`);
});

test('outside 2^40 to 2^41 it writes nothing', () => {
  for (const ts of [0, 1.5, 2 ** 40 - 0.5, 2 ** 41, 2 ** 41 + 0.5, -1764625000123.25, Number.NaN, Infinity]) {
    assert.equal(writeTimestamp(buf, 0, ts), -1, String(ts));
  }
});
