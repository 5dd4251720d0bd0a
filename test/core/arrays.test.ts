// core/arrays.ts: appending without spreading, and a number found in an ascending list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendAll, indexInAscending } from '../../core/arrays.js';

test('appendAll appends past the arguments a spread could pass', () => {
  const big = Array.from({ length: 300_000 }, (_, i) => i);
  assert.equal(appendAll([-1], big).length, 300_001);
});

test('indexInAscending finds a value from a place on, within a length, or says -1', () => {
  const list = Float64Array.from([1, 3, 5, 7, 9, 0, 0]);
  assert.deepEqual([1, 3, 5, 7, 9].map((v) => indexInAscending(list, v, 0, 5)), [0, 1, 2, 3, 4]);
  assert.deepEqual([0, 2, 10].map((v) => indexInAscending(list, v, 0, 5)), [-1, -1, -1]);
  // From a place on: values before it are not found.
  assert.equal(indexInAscending(list, 3, 2, 5), -1);
  assert.equal(indexInAscending(list, 7, 2, 5), 3);
  // The slots past the length are not looked at.
  assert.equal(indexInAscending(list, 0, 0, 5), -1);
  assert.equal(indexInAscending([], 1), -1);
  assert.equal(indexInAscending([4], 4), 0);
});
