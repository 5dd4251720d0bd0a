// Which values the server issued and the client sent back bind: made values,
// not the words of a protocol (an Engine.IO handshake offers "websocket" and
// the client asks for ?transport=websocket).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { madeNotWord } from '../../../diff/bind/bound.js';

describe('a bound value is made, not a word', () => {
  it('binds values with a digit or inner capitals, never plain words', () => {
    const made = ['4821', 'a1b2c3d4e5f6', 'V1StGXR8_Z5jdHi6B-myT', 'xK9fQ2pL', 'sessionAbC', 'tok_9'];
    const words = ['websocket', 'polling', 'Bearer', 'active', 'Inactive', 'READY', 'in_stock'];
    assert.deepEqual(made.filter((v) => !madeNotWord(v)), []);
    assert.deepEqual(words.filter(madeNotWord), []);
  });
});
