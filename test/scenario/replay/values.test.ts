// Redacted placeholders in what a replayed client sends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { placeholdersIn } from '../../../scenario/replay/values.js';

describe('placeholdersIn', () => {
  it('finds placeholders anywhere in a text', () => {
    assert.deepEqual(placeholdersIn('a=<redacted:0123abcd>&b=<redacted:nothex!>&c=<redacted:ffffffff>'), ['<redacted:0123abcd>', '<redacted:ffffffff>']);
  });
});
