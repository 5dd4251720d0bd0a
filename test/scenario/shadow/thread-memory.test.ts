// One thread's memory (the shadow benchmark's per-thread figures): this
// thread's heap, and the most of it seen at any call so far.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { threadMemory } from '../../../scenario/shadow/thread-memory.js';

describe('threadMemory', () => {
  it('says the heap in use and keeps the peak across calls', () => {
    const first = threadMemory();
    assert.ok(first.heapUsed > 0 && first.heapTotal >= first.heapUsed && first.external >= 0, JSON.stringify(first));
    // 20 MB held across the next call: its peak cannot be below it.
    const held = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `x${i}` }));
    const second = threadMemory();
    assert.ok(held.length > 0 && second.peakHeapUsed >= second.heapUsed && second.peakHeapUsed >= first.peakHeapUsed, JSON.stringify(second));
  });
});
