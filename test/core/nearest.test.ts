// The nearest-name search behind bb's "did you mean" (core/nearest.ts); the
// refusals themselves, through the real CLI: test/cli/usage.cli.test.ts and
// test/diff/config.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editDistance, nearest } from '../../core/nearest.js';

test('suggestions: a typo or a prefix finds the name, anything far finds nothing', () => {
  assert.equal(editDistance('targt', 'target'), 1);
  assert.equal(editDistance('shwo', 'show'), 1);
  assert.equal(nearest('targt', ['target', 'listen', 'out']), 'target');
  assert.equal(nearest('upstream', ['upstream-ca', 'upstream-timeout']), 'upstream-ca');
  assert.equal(nearest('x', ['out', 'json']), undefined);
  assert.equal(nearest('frobnicate', ['frames', 'diff']), undefined);
});
