// parseComparedJson: JSON.parse down to a depth, the JSON text past it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deepJsonMark, parseComparedJson } from '../../../diff/normalize/json.js';

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
