// The sealed sidecar: the writer's running cipher (applyInOrder) must seal
// exactly as the reader's cipher-per-slice (apply) unseals, whatever the
// chunk sizes (partial AES blocks) and after a jump in offsets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { BodySeal } from '../../capture/body-seal.js';

const key = Buffer.alloc(32, 7);

test('a running cipher over consecutive chunks seals as one cipher per chunk does, partial blocks included', () => {
  const writer = new BodySeal(key, 'ab'.repeat(16));
  const reader = new BodySeal(key, 'ab'.repeat(16));
  let offset = 0;
  for (const size of [1, 3, 16, 17, 5, 100, 31, 0, 64, 9]) {
    const clear = randomBytes(size);
    const sealed = writer.applyInOrder(clear, offset);
    assert.deepEqual(sealed, reader.apply(clear, offset), `chunk of ${size} at ${offset}`);
    if (size > 0) assert.notDeepEqual(sealed, clear);
    assert.deepEqual(reader.apply(sealed, offset), clear, 'unsealed back');
    offset += size;
  }
});

test('an offset that does not follow the last one starts a new keystream at that offset', () => {
  const writer = new BodySeal(key, 'cd'.repeat(16));
  const reader = new BodySeal(key, 'cd'.repeat(16));
  const a = randomBytes(20);
  writer.applyInOrder(a, 0);
  const b = randomBytes(13);
  assert.deepEqual(writer.applyInOrder(b, 7), reader.apply(b, 7), 'a write that failed moved the offsets back');
  assert.deepEqual(writer.applyInOrder(b, 1000), reader.apply(b, 1000), 'and forward');
});

test('a run of buffers sealed at once (small ones together, large ones alone) gives the bytes a cipher per chunk gives', () => {
  const writer = new BodySeal(key, 'cd'.repeat(16));
  const reader = new BodySeal(key, 'cd'.repeat(16));
  const start = 37; // not on a block boundary
  const run = [5, 100, 3, 20_000, 1, 17, 70_000, 64, 2].map((n) => randomBytes(n));
  const sealed = writer.applyToRun(run, start);
  assert.ok(sealed.length < run.length, 'neighbouring small buffers are sealed together');
  const whole = Buffer.concat(sealed);
  assert.equal(whole.length, run.reduce((n, b) => n + b.length, 0));
  let offset = start;
  for (const plain of run) {
    assert.deepEqual(whole.subarray(offset - start, offset - start + plain.length), reader.apply(plain, offset));
    offset += plain.length;
  }
  // And the next run goes on where this one stopped (the running cipher).
  const next = randomBytes(33);
  assert.deepEqual(writer.applyToRun([next], offset)[0], reader.apply(next, offset));
});
