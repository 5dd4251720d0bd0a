import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sortForComparison } from '../../diff/order.js';
import { diffCaptures, renderText } from '../../diff/index.js';
import { entry, har } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

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

// An exchange bb shadow did not mirror (`_bb.shadow.skipped`): only the primary's capture has it.
describe('an entry bb shadow did not mirror', () => {
  const t = tempDir();
  const get = (path: string, seq: number, bb: Record<string, unknown>) =>
    entry(`http://127.0.0.1:4000${path}`, `2024-05-01T10:00:0${seq}.000Z`, { _bb: { seq, ...bb } });
  const primary = har([get('/items', 1, { shadow: { id: 1 } }), get('/orders', 2, { shadow: { id: 2, skipped: 'unsafe' } }), get('/me', 3, { shadow: { id: 3 } })]);
  const candidate = har([get('/items', 1, { shadow: { id: 1 } }), get('/me', 2, { shadow: { id: 3 } })]);
  const plain = har([get('/items', 1, {}), get('/orders', 2, {}), get('/me', 3, {})]);
  const diff = async (old: unknown, next: unknown, options: Record<string, unknown>) =>
    diffCaptures(await t.write(`o-${Math.random()}.har`, old), await t.write(`n-${Math.random()}.har`, next), options);

  for (const options of [{}, { boundedThreshold: 0, workers: false }, { boundedThreshold: 0, workers: true }]) {
    it(`is left out between two of the shadow's captures ${JSON.stringify(options)}`, async () => {
      const r = await diff(primary, candidate, options);
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
      assert.equal(r.pairs.length, 2);
    });

    it(`is compared against any other capture (a replay of the primary's sent it) ${JSON.stringify(options)}`, async () => {
      const r = await diff(primary, plain, options);
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
      assert.equal(r.pairs.length, 3);
    });
  }
});
