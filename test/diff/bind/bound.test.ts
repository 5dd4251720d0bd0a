// Which values the server issued and the client sent back bind: made values,
// not the words of a protocol (an Engine.IO handshake offers "websocket" and
// the client asks for ?transport=websocket).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { boundAbsent, madeNotWord, markIssued } from '../../../diff/bind/bound.js';

describe('a bound value is made, not a word', () => {
  it('binds values with a digit or inner capitals, never plain words', () => {
    const made = ['4821', 'a1b2c3d4e5f6', 'V1StGXR8_Z5jdHi6B-myT', 'xK9fQ2pL', 'sessionAbC', 'tok_9'];
    const words = ['websocket', 'polling', 'Bearer', 'active', 'Inactive', 'READY', 'in_stock'];
    assert.deepEqual(made.filter((v) => !madeNotWord(v)), []);
    assert.deepEqual(words.filter(madeNotWord), []);
  });
});

describe('boundAbsent: the quick pass before markIssued', () => {
  it('says absent only where markIssued would change nothing, and gives up past 16 values', () => {
    const bound = new Set(['1999', 'sess_9f8e7d', 'a/b+c==']);
    const absent = boundAbsent(bound)!;
    const mark = (v: string) => `<${v}>`;
    const strings = ['1999', 'id 1999 here', '/items/19990', 'x=sess_9f8e7d;', 'a/b+c==', 'nothing', '', '199', 'sess_9f8e7', 'a/b+c='];
    for (const s of strings) if (absent(s)) assert.equal(markIssued(s, bound, mark), s, s);
    assert.deepEqual(strings.filter(absent), ['nothing', '', '199', 'sess_9f8e7', 'a/b+c=']);
    assert.equal(boundAbsent(new Set(Array.from({ length: 17 }, (_, i) => `v${i}xx`))), undefined);
  });
});
