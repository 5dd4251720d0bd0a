// SeqPlacer (inspect/streams.ts): a stream message's place among numbered
// records by its time, and a live placer's bound on the records it keeps.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SeqPlacer } from '../../inspect/streams.js';

describe('SeqPlacer', () => {
  it('places an item just before the first record made at or after its time, after the last when none was', () => {
    const p = new SeqPlacer([{ seq: 3, time: 30 }, { seq: 1, time: 10 }, { seq: 2, time: 20 }]);
    assert.equal(p.place(15), 1.5);
    assert.equal(p.place(20), 1.5);
    assert.equal(p.place(31), 3.5);
    assert.equal(p.place(5), 0.5);
    assert.equal(p.place(25, 2.5), 3);
  });

  it('a live placer keeps its latest records only: an item older than them all goes before the first it kept', () => {
    const bounded = new SeqPlacer([], 4);
    const whole = new SeqPlacer([]);
    for (let seq = 1; seq <= 1_000; seq++) {
      bounded.add(seq, seq);
      whole.add(seq, seq);
    }
    // Among the kept records both agree.
    for (const t of [997.5, 999, 1_000.5]) assert.equal(bounded.place(t), whole.place(t));
    // Older than the kept ones: before the first of them (between the last keep and 2 × keep records).
    const first = bounded.place(0) + 0.5;
    assert.ok(first >= 1_000 - 2 * 4 + 1 && first <= 1_000 - 4 + 1, `first kept: ${first}`);
    assert.equal(whole.place(0), 0.5);
  });
});
