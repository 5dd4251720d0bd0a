// The sequence alignment the pairing and the message lineups build on (diff/align.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { alignSequences } from '../../diff/align.js';

describe('sequence alignment', () => {
  it('aligns around one insertion', () => {
    assert.deepEqual(alignSequences(['a', 'b', 'c'], ['a', 'x', 'b', 'c']), [[0, 0], [1, 2], [2, 3]]);
  });
  it('stays bounded and right on long sequences with a few edits', () => {
    // 20000 × 20000 would be 4e8 cells for a full table: the bound is the
    // runner's per-file timeout, not a clock read here; what must hold is the
    // exact alignment around the insertion at 7000 and the deletion at 15000.
    const a = Array.from({ length: 20000 }, (_, i) => `k${i % 5000}`);
    const b = [...a.slice(0, 7000), 'new', ...a.slice(7000, 15000), ...a.slice(15001)];
    const m = alignSequences(a, b);
    const want = a.flatMap((_, i): Array<[number, number]> => (i < 7000 ? [[i, i]] : i < 15000 ? [[i, i + 1]] : i === 15000 ? [] : [[i, i]]));
    assert.deepEqual(m, want);
  });
});
