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
