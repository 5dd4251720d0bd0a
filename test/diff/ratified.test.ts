// What a ratification records and matches (diff/ratified.ts), and how
// classifyKnown treats a row at a ratified place with other values.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { knownValuesOf, ratifiedSides, ratifiedValuesText, recordValues, valueShape, valuesMatch } from '../../diff/ratified.js';
import { classifyKnown } from '../../diff/classify.js';
import { validateDiffConfig } from '../../diff/config.js';
import type { Difference, DifferenceKind, KnownValues } from '../../diff/types.js';
import { isBbError } from '../../core/index.js';

const row = (old: unknown, nu: unknown, kind: DifferenceKind = 'changed', path = 'response.status'): Difference => ({
  id: `${path}:${JSON.stringify(old)}:${JSON.stringify(nu)}`,
  kind,
  entry: '/POST /items#1',
  route: 'POST /items',
  request: 'POST /items',
  path,
  pattern: path,
  ...(old !== undefined ? { old } : {}),
  ...(nu !== undefined ? { new: nu } : {}),
  class: 'real',
});

describe('valueShape', () => {
  const table: Array<[unknown, string | undefined]> = [
    [undefined, undefined],
    [null, 'null'],
    [true, 'boolean'],
    [201, 'number'],
    ['a', 'string'],
    ['<UUID:3>', '<UUID>'],
    ['<TS>', '<TS>'],
    ['id <UUID:3>', 'string'],
    [[1], 'array'],
    [{ a: 1 }, 'object'],
  ];
  for (const [v, shape] of table) it(`${JSON.stringify(v)} is ${shape}`, () => assert.equal(valueShape(v), shape));
});

describe('recordValues', () => {
  const table: Array<[string, DifferenceKind, Array<[unknown, unknown]>, KnownValues]> = [
    ['one row: its values', 'changed', [[201, 200]], { old: 201, new: 200 }],
    ['rows alike: the value once', 'changed', [[201, 200], [201, 200]], { old: 201, new: 200 }],
    ['ordinal numbers dropped', 'changed', [['<UUID:1>', 'x'], ['<UUID:4>', 'x']], { old: '<UUID>', new: 'x' }],
    ['objects compare whatever their key order', 'changed', [[{ a: 1, b: 2 }, 1], [{ b: 2, a: 1 }, 1]], { old: { a: 1, b: 2 }, new: 1 }],
    ['a side that varies: its shape', 'changed', [['a', 200], ['b', 200]], { oldShape: 'string', new: 200 }],
    ['both sides vary', 'changed', [['a', 'A'], ['b', 'B']], { oldShape: 'string', newShape: 'string' }],
    ['shapes that vary too: nothing for that side', 'changed', [['a', 1], [2, 1]], { new: 1 }],
    ['null is a value', 'changed', [[null, 1]], { old: null, new: 1 }],
    ['removed: presence only', 'removed', [['stack', undefined]], {}],
    ['added: the value sent', 'added', [[undefined, 'x']], { new: 'x' }],
    ['added values that vary: their shape', 'added', [[undefined, 'x'], [undefined, 'y']], { newShape: 'string' }],
    ['missing: presence only', 'missing', [[undefined, undefined]], {}],
  ];
  for (const [name, kind, rows, want] of table) {
    it(name, () => assert.deepEqual(recordValues(kind, rows.map(([o, n]) => ({ ...(o !== undefined ? { old: o } : {}), ...(n !== undefined ? { new: n } : {}) }))), want));
  }
});

describe('valuesMatch', () => {
  const table: Array<[string, KnownValues, unknown, unknown, boolean]> = [
    ['no values: anything', {}, 201, 500, true],
    ['the ratified values', { old: 201, new: 200 }, 201, 200, true],
    ['another new value', { old: 201, new: 200 }, 201, 500, false],
    ['another old value', { old: 201, new: 200 }, 202, 200, false],
    ['a count far off', { old: 3, new: 4 }, 3, 99, false],
    ['ordinal numbers do not count', { old: '<UUID>', new: 1 }, '<UUID:7>', 1, true],
    ['one side only', { new: 200 }, 404, 200, true],
    ['a shape', { oldShape: 'string', newShape: 'string' }, 'a', 'b', true],
    ['another shape', { oldShape: 'string', newShape: 'string' }, 'a', 5, false],
    ['a placeholder shape', { newShape: '<UUID>' }, 1, '<UUID:2>', true],
    ['null is not absent', { old: null }, undefined, 1, false],
  ];
  for (const [name, k, old, nu, want] of table) it(name, () => assert.equal(valuesMatch(k, { old, new: nu }), want));
});

describe('ratifiedValuesText', () => {
  it('says a change as old → new, an added field as its value, nothing when nothing was recorded', () => {
    assert.equal(ratifiedValuesText('changed', { old: 201, new: 200 }), '201 → 200');
    assert.equal(ratifiedValuesText('added', { new: 'user' }), '"user"');
    assert.equal(ratifiedValuesText('added', { newShape: '<UUID>' }), '(<UUID>)');
    assert.equal(ratifiedValuesText('removed', {}), undefined);
  });
});

describe('ratifiedSides', () => {
  it('says values as JSON, shapes in parentheses, a free side as *', () => {
    assert.deepEqual(ratifiedSides({ old: 201, new: 200 }), ['201', '200']);
    assert.deepEqual(ratifiedSides({ old: 'a', newShape: 'string' }), ['"a"', '(string)']);
    assert.deepEqual(ratifiedSides({ new: null }), ['*', 'null']);
  });
});

describe('classifyKnown with recorded values', () => {
  const status = { where: '*/POST /items#*', path: 'response.status', kind: 'changed' as const, old: 201, new: 200, reason: 'create answers 200' };

  it('the ratified values are known', () => {
    const rows = [row(201, 200)];
    assert.deepEqual(classifyKnown(rows, [status]), []);
    assert.equal(rows[0]!.class, 'known');
  });

  it('other values stay real and carry what was ratified; the entry is not stale', () => {
    const rows = [row(201, 500)];
    assert.deepEqual(classifyKnown(rows, [status]), []);
    assert.equal(rows[0]!.class, 'real');
    assert.deepEqual(rows[0]!.ratified, { known: 0, old: 201, new: 200, reason: 'create answers 200' });
  });

  it('another entry at the same place with matching values makes it known', () => {
    const rows = [row(201, 500)];
    const stale = classifyKnown(rows, [status, { ...status, new: 500, reason: 'then 500, on purpose' }]);
    assert.equal(rows[0]!.class, 'known');
    assert.equal(rows[0]!.reason, 'then 500, on purpose');
    assert.equal(rows[0]!.ratified, undefined);
    // The first ratification is now stale: nothing holds its values any more.
    assert.deepEqual(stale.map((k) => k.index), [0]);
  });

  it('an entry without values matches any value, as before', () => {
    const { old: _o, new: _n, ...hand } = status;
    const rows = [row(201, 500)];
    classifyKnown(rows, [hand]);
    assert.equal(rows[0]!.class, 'known');
  });
});

describe('known entries with values in the config', () => {
  const base = { where: '*', path: 'response.status', reason: 'r' };
  it('keeps old / new (null included) and shapes', () => {
    const c = validateDiffConfig({ known: [{ ...base, old: 201, new: null }, { ...base, oldShape: 'string', newShape: '<UUID>' }] });
    assert.deepEqual(knownValuesOf(c.known[0]!), { old: 201, new: null });
    assert.deepEqual(knownValuesOf(c.known[1]!), { oldShape: 'string', newShape: '<UUID>' });
    assert.deepEqual(knownValuesOf(validateDiffConfig({ known: [base] }).known[0]!), {});
  });

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown shape', { ...base, newShape: 'integer' }, / known\[0\]\.newShape: must be a shape: null, boolean, number, string, array, object or a placeholder like "<UUID>"; got "integer"$/],
    ['a shape that is not a string', { ...base, oldShape: 3 }, / known\[0\]\.oldShape: must be a string$/],
    ['a value and a shape on one side', { ...base, old: 1, oldShape: 'number' }, / known\[0\]: has both "old" and "oldShape": keep the value or the shape$/],
  ];
  for (const [name, entry, message] of bad) {
    it(`refuses ${name} in one line`, () => {
      assert.throws(() => validateDiffConfig({ known: [entry] }), (err: Error) => isBbError(err) && err.code === 'BB_CONFIG_INVALID' && message.test(err.message) && !err.message.includes('\n'));
    });
  }
});
