// Redacted placeholders in what a replayed client sends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { placeholdersIn } from '../../../scenario/replay/values.js';

describe('placeholdersIn', () => {
  it('finds placeholders anywhere in a text', () => {
    assert.deepEqual(placeholdersIn('a=<redacted:0123abcd>&b=<redacted:nothex!>&c=<redacted:ffffffff>'), ['<redacted:0123abcd>', '<redacted:ffffffff>']);
  });

  it('finds one padded to its secret\'s length in bytes (a JWT masked in a gRPC message) as one placeholder', () => {
    const message = Buffer.concat([Buffer.from([0x0a, 25]), Buffer.from('<redacted:0123abcd~~~~~~>', 'latin1')]).toString('latin1');
    assert.deepEqual(placeholdersIn(message), ['<redacted:0123abcd~~~~~~>']);
  });
});
