// parseComparedJson: JSON.parse down to a depth, the JSON text past it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffHars } from '../../../diff/index.js';
import { capture } from '../../helpers/har.js';
import { deepJsonMark, mayBeJson, parseComparedJson } from '../../../diff/normalize/json.js';

const MARK = deepJsonMark(2);
const MARK3 = deepJsonMark(3);

describe('parseComparedJson', () => {
  it('parses as JSON.parse does while the nesting stays within the depth', () => {
    for (const text of ['1', '"x"', '[[1]]', '{"a":{"b":[1,2]}}', ' [ "[[[[" , "\\"[[[" ] ']) assert.deepEqual(parseComparedJson(text, 3), JSON.parse(text));
  });

  it('keeps each value opened past the depth as its compact text, brackets in strings and escaped quotes not counted', () => {
    assert.deepEqual(parseComparedJson('{"a": [ {"b" : "]\\" }"}, [ 1 ,\n2] ], "c": [[ [ ] ]]}', 2), {
      a: [`${MARK}{"b":"]\\" }"}`, `${MARK}[1,2]`],
      c: [`${MARK}[[]]`],
    });
  });

  it('parses any depth without recursion, and throws on what JSON.parse refuses', () => {
    const deep = parseComparedJson('['.repeat(100_000) + ']'.repeat(100_000), 3);
    assert.deepEqual(deep, [[[`${MARK3}${'['.repeat(99_997)}${']'.repeat(99_997)}`]]]);
    assert.throws(() => parseComparedJson('[[[[[1]]]]', 2), SyntaxError);
  });
});

// A number a double does not hold: JSON.parse made 9007199254740993 and 9007199254740992 one value, so an int64
// amount or id changed past 2^53 matched. Such a literal is kept as written (`<NUMBER …>`); one a double holds is a
// number as before.
describe('numbers a double does not hold', () => {
  it('keeps them as written, outside strings only; numbers a double holds stay numbers', () => {
    const text = '{"a":[1234567890123456789,-1234567890123456789,9007199254740992,1e21,0.10000000000000001,0.30000000000000004,3.141592653589793238],"s":"9007199254740993","q":"\\"9007199254740993"}';
    assert.deepEqual(parseComparedJson(text), {
      a: ['<NUMBER 1234567890123456789>', '<NUMBER -1234567890123456789>', 9007199254740992, 1e21, '<NUMBER 0.10000000000000001>', 0.30000000000000004, '<NUMBER 3.141592653589793238>'],
      s: '9007199254740993',
      q: '"9007199254740993',
    });
  });

  it('bb diff finds an amount changed past 2^53, and compares int64 ids under id keys as ids (numeric-ids)', async () => {
    const mk = (body: string) => capture([{ url: 'http://127.0.0.1:1/account', body, mime: 'application/json' }]);
    const r = await diffHars({ name: 'a.har', har: mk('{"balance":9007199254740993}') }, { name: 'b.har', har: mk('{"balance":9007199254740992}') });
    assert.deepEqual(r.differences.map((d) => [d.path, d.old, d.new]), [['response.body.balance', '<NUMBER 9007199254740993>', 9007199254740992]]);
    // A snowflake id of each run (numeric-ids: an integer under an id key is compared as an id, not by its value).
    const ids = await diffHars({ name: 'a.har', har: mk('{"id":1234567890123456789}') }, { name: 'b.har', har: mk('{"id":1234567890987654321}') });
    assert.equal(ids.verdict, 'match', JSON.stringify(ids.differences));
  });
});

describe('mayBeJson', () => {
  it('is true for every text JSON.parse accepts and false for texts whose first character cannot begin JSON', () => {
    for (const t of ['{}', ' [1]', '\n"s"', '-1', '0', '9e3', 'true', 'false', 'null', '\t{"a":1}']) {
      JSON.parse(t);
      assert.equal(mayBeJson(t), true, t);
    }
    for (const t of ['', '   ', 'hello', '<x/>', '+1', '.5', "'a'", '\u00a0{}', '\ufeff{}', 'NaN']) {
      assert.throws(() => JSON.parse(t), undefined, t);
      assert.equal(mayBeJson(t), false, JSON.stringify(t));
    }
  });
});
