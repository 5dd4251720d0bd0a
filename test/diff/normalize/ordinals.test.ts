// Ordinal numbering on parsed values and on their JSON texts (the bounded
// stages' shortcut) must give out the same numbers, pair after pair.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OrdinalNumbering, OrdinalTable, unnumber } from '../../../diff/normalize/ordinals.js';
import { bindPair } from '../../../diff/correspond.js';
import { DEFAULT_ARRAY_RULES } from '../../../diff/arrays.js';
import type { NormalizedEntry } from '../../../diff/types.js';

// A small deterministic generator, so a failure names a reproducible case.
function random(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
}

function value(table: OrdinalTable, rnd: () => number, ids: string[], depth = 0): unknown {
  const id = () => table.mark(rnd() < 0.5 ? 'UUID' : 'SID', ids[Math.floor(rnd() * ids.length)]!);
  const r = rnd();
  if (depth > 3 || r < 0.3) return rnd() < 0.6 ? `x ${id()} and ${id()}` : Math.floor(rnd() * 10);
  if (r < 0.6) return Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => value(table, rnd, ids, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < 1 + Math.floor(rnd() * 4); i++) out[rnd() < 0.4 ? id() : `k${i}`] = value(table, rnd, ids, depth + 1);
  return out;
}

// The same structure with other ids: every marker's value drawn again.
function sameShape(table: OrdinalTable, v: unknown, rnd: () => number, ids: string[]): unknown {
  const redraw = (s: string) => s.replace(/\uE000([\uE100-\uF0FF]+)\uE001[\uE100-\uF0FF]+\uE002/g, (_m, c: string) => table.mark(c === String.fromCharCode(0xe100) ? 'UUID' : 'SID', ids[Math.floor(rnd() * ids.length)]!));
  if (typeof v === 'string') return redraw(v);
  if (Array.isArray(v)) return v.map((x) => sameShape(table, x, rnd, ids));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [redraw(k), sameShape(table, x, rnd, ids)]));
  return v;
}

test('numberPairText gives out the numbers the aligned walk gives, and says true exactly when the rendered values are equal', () => {
  let total = 0;
  let allTrue = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const rnd = random(seed);
    const table = new OrdinalTable();
    // Both sides share the class indices (UUID first, SID second).
    table.mark('UUID', 'seed');
    table.mark('SID', 'seed');
    const oldIds = Array.from({ length: 6 }, (_, i) => `o${i}`);
    // Few distinct ids on the new side too: equal renders happen often enough to test both answers.
    const newIds = Array.from({ length: 6 }, (_, i) => `n${i}`);
    // Only pairs with equal un-numbered texts (equal pairing tokens), as in the bounded compare:
    // redrawn ids can merge two keys of one object, which changes the shape.
    const pairs = Array.from({ length: 8 }, () => {
      const a = value(table, rnd, oldIds);
      return [a, sameShape(table, a, rnd, newIds)] as const;
    }).filter(([a, b]) => unnumber(JSON.stringify(a), table) === unnumber(JSON.stringify(b), table));
    const byValue = new OrdinalNumbering(table);
    const byText = new OrdinalNumbering(table);
    let trues = 0;
    const body = (v: unknown) => ({ request: v as NormalizedEntry['request'], response: { status: 200, headers: {} } });
    for (const [a, b] of pairs) {
      bindPair(byValue, body(a), body(b), DEFAULT_ARRAY_RULES);
      const before = [JSON.stringify(byText.render(0, a)), JSON.stringify(byText.render(1, b))];
      const same = byText.numberPairText(JSON.stringify(body(a)), JSON.stringify(body(b)));
      if (!same) {
        // Nothing bound: the walk does it, as the compare loop then does.
        assert.deepEqual([JSON.stringify(byText.render(0, a)), JSON.stringify(byText.render(1, b))], before, `seed ${seed}: a refusal binds nothing`);
        bindPair(byText, body(a), body(b), DEFAULT_ARRAY_RULES);
      }
      const ra = JSON.stringify(byValue.render(0, a));
      const rb = JSON.stringify(byValue.render(1, b));
      assert.equal(same, ra === rb, `seed ${seed}: the answer matches the renders`);
      assert.equal(JSON.stringify(byText.render(0, a)), ra, `seed ${seed}: old numbers`);
      assert.equal(JSON.stringify(byText.render(1, b)), rb, `seed ${seed}: new numbers`);
      if (same) trues++;
    }
    total += pairs.length;
    allTrue += trues;
  }
  assert.ok(total > 1000 && allTrue > 50 && allTrue < total - 50, `both answers were tested (${allTrue} true of ${total})`);
});

test('numberPairText refuses texts whose markers do not line up, numbering nothing', () => {
  const table = new OrdinalTable();
  const n = new OrdinalNumbering(table);
  const a = JSON.stringify({ id: table.mark('UUID', 'a') });
  const b = JSON.stringify({ id: table.mark('SID', 'b') });
  assert.equal(n.numberPairText(a, b), false);
  assert.deepEqual(n.render(0, JSON.parse(a)), { id: '<UUID>' }, 'no number was given out');
});
