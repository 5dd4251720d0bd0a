// The config's patterns beside the built-ins (issue 33 item 7): they run
// before the built-ins that take whole tokens, may claim such a token whole,
// and never cut one in two.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileRules } from '../../../diff/normalize/rules.js';
import { normalizeValue, valueWalk } from '../../../diff/normalize/walk.js';
import { OrdinalNumbering, OrdinalTable } from '../../../diff/normalize/ordinals.js';
import { compileConfigPatterns } from '../../../diff/normalize/config-patterns.js';

function norm(v: unknown, cfg: object): unknown {
  const rules = compileRules(cfg);
  const table = new OrdinalTable(rules.ordinalClasses);
  const out = normalizeValue(v, valueWalk(rules, [], table));
  const n = new OrdinalNumbering(table);
  n.numberAlone(0, out);
  return n.render(0, out);
}

const UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('config patterns beside the built-ins', () => {
  const table: Array<[string, unknown, unknown, object]> = [
    ['a pattern matching a uuid\'s tail leaves the uuid whole', { id: UUID }, { id: '<UUID:1>' }, { patterns: [{ regex: '[0-9a-f]{4}$', replace: '<TAIL>' }] }],
    ['the same pattern still applies where it cuts no token', { id: UUID, v: 'build beef' }, { id: '<UUID:1>', v: 'build <TAIL>' }, { patterns: [{ regex: '[0-9a-f]{4}$', replace: '<TAIL>' }] }],
    ['an ordinal pattern inside a 12-hex id leaves the id whole', { id: 'a1b2c3d4e5f6' }, { id: '<HEX12:1>' }, { patterns: [{ regex: 'c3d4', ordinal: 'PART' }] }],
    ['a pattern may claim a whole uuid as its own class', { c: `conn_${UUID}` }, { c: '<CONN:1>' }, { patterns: [{ regex: 'conn_[0-9a-f-]{36}', ordinal: 'CONN' }] }],
    ['a pattern may claim a whole generated token', { i: 'item_0123456789abcdef' }, { i: '<ITEM:1>' }, { patterns: [{ regex: 'item_[0-9a-f]{16}', ordinal: 'ITEM' }] }],
    ['replacements expand groups as String#replace does', { p: `/v/${UUID}/x-7` }, { p: '/v/<UUID:1>/x#7' }, { patterns: [{ regex: 'x-(\\d)', replace: 'x#$1' }] }],
    ['with the built-in off, the pattern applies as written', { id: UUID }, { id: '0f8fad5b-d9cb-469f-a165-70867728<TAIL>' }, { disable: ['uuid', 'generated-ids'], patterns: [{ regex: '[0-9a-f]{4}$', replace: '<TAIL>' }] }],
  ];
  for (const [name, input, want, cfg] of table) it(name, () => assert.deepEqual(norm(input, cfg), want));
});

describe('compileConfigPatterns', () => {
  it('expands $&, $`, $\', named groups and $$ in a guarded replacement', () => {
    const [p] = compileConfigPatterns([{ regex: '(?<k>k)=(v)', replace: "[$&|$`|$'|$<k>|$2|$$]" }], () => [[100, 120]]);
    assert.equal(p!.apply('a k=v b', new OrdinalTable()), 'a [k=v|a | b|k|v|$] b');
    assert.equal('a k=v b'.replace(/(?<k>k)=(v)/g, "[$&|$`|$'|$<k>|$2|$$]"), 'a [k=v|a | b|k|v|$] b');
  });

  it('leaves a match that overlaps a guarded span without holding it, and an empty match inside one', () => {
    const [p] = compileConfigPatterns([{ regex: 'b|(?=d)', replace: '_' }], () => [[1, 5]]);
    assert.equal(p!.apply('abcdef', new OrdinalTable()), 'abcdef');
    const [q] = compileConfigPatterns([{ regex: 'abcdef', replace: '_' }], () => [[1, 5]]);
    assert.equal(q!.apply('abcdef', new OrdinalTable()), '_');
  });
});
