// The bounded memo (core/memo.ts): answers kept until it is full, then it starts over.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedMemo } from '../../core/index.js';

describe('BoundedMemo', () => {
  it('answers what it was given, and hands the value back from set', () => {
    const m = new BoundedMemo<string, boolean>(3);
    assert.equal(m.get('a'), undefined);
    assert.equal(m.set('a', false), false);
    assert.equal(m.get('a'), false);
    assert.equal(m.get('a') ?? m.set('a', true), false, 'a remembered false is an answer, not a miss');
  });

  it('starts over once it holds its most, so a peer making every key new cannot grow it', () => {
    const m = new BoundedMemo<number, number>(3);
    for (let i = 0; i < 3; i++) m.set(i, i * 10);
    assert.equal(m.size, 3);
    m.set(3, 30);
    assert.deepEqual([m.size, m.get(0), m.get(3)], [1, undefined, 30]);
    for (let i = 0; i < 10_000; i++) m.set(i, i);
    assert.ok(m.size <= 3);
  });
});
