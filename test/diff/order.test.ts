import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sortForComparison } from '../../diff/order.js';

describe('comparison order', () => {
  it('orders entries without bb sequence numbers by the instant they started, offsets included', () => {
    // As strings the Z time sorts first; as instants 10:00+02:00 (08:00Z) is earlier.
    const list = [
      { index: 0, started: '2026-01-01T09:00:00.000Z' },
      { index: 1, started: '2026-01-01T10:00:00.000+02:00' },
      { index: 2, started: '2026-01-01T08:30:00.000-01:00' },
      { index: 3, started: 'not a date' },
    ];
    assert.deepEqual(sortForComparison([...list]).map((x) => x.index), [1, 0, 2, 3]);
  });

  it('follows bb sequence numbers when every entry has one, and file order on ties', () => {
    const list = [{ index: 0, seq: 3 }, { index: 1, seq: 1 }, { index: 2, seq: 1 }];
    assert.deepEqual(sortForComparison([...list]).map((x) => x.index), [1, 2, 0]);
  });
});
