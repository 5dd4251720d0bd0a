// Content similarity (diff/similarity.ts) and the stage of alignItems that
// uses it (diff/arrays.ts): items without identity pair with the most alike
// item, so a reordered list whose items gained a field is moves plus the new
// field; items too unlike pair by place as before; kinds never mix.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { leavesOf, similarity } from '../../diff/similarity.js';
import { alignItems, MIN_SIMILARITY } from '../../diff/arrays.js';
import { canonical } from '../../core/index.js';

const alike = (a: unknown, b: unknown) => similarity(leavesOf(a)!, leavesOf(b)!);

describe('content similarity', () => {
  it('is the share of leaves that hold the same value at the same path, over the bigger item', () => {
    const table: Array<[unknown, unknown, number]> = [
      [{ a: 1, b: 2 }, { a: 1, b: 2 }, 1],
      [{ a: 1, b: 2, c: 3 }, { a: 1, b: 2, c: 3, d: 4 }, 0.75],
      [{ a: 1, b: 2 }, { a: 1, b: 3 }, 0.5],
      [{ a: 1 }, { b: 1 }, 0],
      [{ x: { y: [1, 2] } }, { x: { y: [1, 3] } }, 0.5],
      [{ a: '1' }, { a: 1 }, 0],
      [{}, {}, 1],
    ];
    for (const [a, b, want] of table) assert.equal(alike(a, b), want, `${JSON.stringify(a)} ~ ${JSON.stringify(b)}`);
  });

  it('has no leaves for a value that is not an object or array', () => {
    assert.equal(leavesOf('text'), undefined);
    assert.equal(leavesOf(null), undefined);
  });
});

describe('alignItems by content', () => {
  const line = (a: unknown[], b: unknown[], kinds?: [string[], string[]]) =>
    alignItems(a.map(canonical), b.map(canonical), a.map(() => undefined), b.map(() => undefined), false, { old: a, new: b, ...(kinds ? { oldKind: kinds[0], newKind: kinds[1] } : {}) })
      .map((l) => `${l.old ?? '-'}→${l.new ?? '-'} ${l.status}`);
  const item = (n: number, extra: object = {}) => ({ sku: `s${n}`, name: `n${n}`, stock: 'IN', ...extra });

  it('pairs each moved item that gained a field with itself: the ones in order pair, the rest moved', () => {
    const a = [item(0), item(1), item(2)];
    const b = [item(2, { price: 2 }), item(0, { price: 0 }), item(1, { price: 1 })];
    assert.deepEqual(line(a, b), ['0→1 paired', '1→2 paired', '2→0 moved']);
  });

  it('pairs items less alike than MIN_SIMILARITY by place, as before', () => {
    assert.ok(alike({ a: 1, b: 2, c: 3 }, { a: 9, b: 9, c: 3 }) < MIN_SIMILARITY);
    assert.deepEqual(line([{ a: 1, b: 2, c: 3 }, { a: 4, b: 5, c: 6 }], [{ a: 7, b: 8, c: 6 }, { a: 9, b: 9, c: 3 }]), ['0→0 paired', '1→1 paired']);
  });

  it('never pairs items of two kinds, by content or by place', () => {
    assert.deepEqual(line([item(0)], [item(0, { price: 1 })], [['send'], ['receive']]), ['0→- removed', '-→0 added']);
  });

  it('keeps a multiset unordered: nothing moved', () => {
    const a = [item(0), item(1)];
    const b = [item(1, { price: 1 }), item(0, { price: 0 })];
    const l = alignItems(a.map(canonical), b.map(canonical), [undefined, undefined], [undefined, undefined], true, { old: a, new: b });
    assert.deepEqual(l.map((x) => `${x.old}→${x.new} ${x.status}`), ['0→1 paired', '1→0 paired']);
  });
});
