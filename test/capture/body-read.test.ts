// Body slices read back through one read-ahead window (capture/body-read.ts):
// every slice, in any order, of any size, sealed or not, must come back as a
// direct read of the file gives it; bytes a window read at the file's end did
// not get must be read again once they are there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SliceReader } from '../../capture/body-read.js';
import { BodySeal } from '../../capture/body-seal.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
const fds: number[] = [];
after(() => fds.forEach((fd) => closeSync(fd)));

function open(name: string, bytes: Buffer): { fd: number; path: string } {
  const path = join(tmp.dir, name);
  writeFileSync(path, bytes);
  const fd = openSync(path, 'r+');
  fds.push(fd);
  return { fd, path };
}

function direct(fd: number, o: number, n: number): Buffer {
  const buf = Buffer.alloc(n);
  const got = readSync(fd, buf, 0, n, o);
  return buf.subarray(0, got);
}

/** Slices as a recording lays them out: consecutive, small mostly, a few large, some empty. */
function layout(total: number, seed: number): Array<{ o: number; n: number; w: number; ts: number }> {
  const slices = [];
  let x = seed;
  for (let o = 0; o < total; ) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const n = Math.min(total - o, x % 10 === 0 ? 20_000 + (x % 50_000) : x % 7 === 0 ? 0 : 1 + (x % 900));
    slices.push({ o, n, w: n });
    o += n;
  }
  return slices;
}

test('slices in file order, out of order, repeated and larger than the window read as the file holds them', () => {
  const bytes = randomBytes(300_000);
  const { fd } = open('plain.bodies', bytes);
  const slices = layout(bytes.length, 1);
  const reader = new SliceReader(fd, undefined, 4096);
  for (const s of slices) assert.deepEqual(reader.read(s), bytes.subarray(s.o, s.o + s.n), `slice ${s.o}+${s.n}`);
  // Backwards, and every third one twice (window hits and misses both ways).
  for (const s of [...slices].reverse()) {
    assert.deepEqual(reader.read(s), bytes.subarray(s.o, s.o + s.n));
    if (s.o % 3 === 0) assert.deepEqual(reader.read(s), bytes.subarray(s.o, s.o + s.n));
  }
  // Slices that straddle the window's end, and one past the file's end (fewer bytes: never written).
  const r2 = new SliceReader(fd, undefined, 1000);
  assert.deepEqual(r2.read({ o: 10, n: 100, w: 100 }), bytes.subarray(10, 110));
  assert.deepEqual(r2.read({ o: 900, n: 300, w: 300 }), bytes.subarray(900, 1200));
  assert.deepEqual(r2.read({ o: bytes.length - 5, n: 20, w: 20 }), bytes.subarray(bytes.length - 5));
});

test('a slice inside the window is served from it, without reading the file again, as a copy of its own', () => {
  const bytes = Buffer.alloc(10_000, 1);
  const { fd } = open('window.bodies', bytes);
  const reader = new SliceReader(fd);
  const first = reader.read({ o: 0, n: 10, w: 10 });
  // Changed under the reader (a recording never does this: the file only grows): the window's bytes still answer.
  writeSync(fd, Buffer.alloc(10, 9), 0, 10, 100);
  assert.deepEqual(reader.read({ o: 100, n: 10, w: 10 }), Buffer.alloc(10, 1));
  assert.deepEqual(direct(fd, 100, 10), Buffer.alloc(10, 9));
  first.fill(5);
  assert.deepEqual(reader.read({ o: 0, n: 10, w: 10 }), Buffer.alloc(10, 1), 'what read() returned shares nothing with the window');
});

test('bytes written after a window read at the file end are read when a slice asks for them', () => {
  const { fd, path } = open('growing.bodies', Buffer.from('hello'));
  const reader = new SliceReader(fd);
  assert.equal(reader.read({ o: 0, n: 5, w: 5 }).toString(), 'hello');
  // The next body, not yet written: fewer bytes (none), as before the window.
  assert.equal(reader.read({ o: 5, n: 6, w: 6 }).length, 0);
  appendFileSync(path, ' world');
  assert.equal(reader.read({ o: 5, n: 6, w: 6 }).toString(), ' world');
  assert.equal(reader.read({ o: 0, n: 11, w: 11 }).toString(), 'hello world');
  // Half written: what is there, then all of it once it is.
  appendFileSync(path, 'ab');
  assert.equal(reader.read({ o: 11, n: 4, w: 4 }).toString(), 'ab');
  appendFileSync(path, 'cd');
  assert.equal(reader.read({ o: 11, n: 4, w: 4 }).toString(), 'abcd');
});

test('a sealed sidecar: each slice unsealed at its offset gives what the recorder sealed, in order or not', () => {
  const key = randomBytes(32);
  const nonce = BodySeal.nonce();
  const clear = randomBytes(200_000);
  const slices = layout(clear.length, 7);
  // Sealed as the recorder seals: one running cipher over the bodies in file order.
  const writer = new BodySeal(key, nonce);
  const sealed = Buffer.concat(slices.map((s) => writer.applyInOrder(clear.subarray(s.o, s.o + s.n), s.o)));
  assert.equal(sealed.length, clear.length);
  const { fd } = open('sealed.bodies', sealed);
  // Unsealed with a cipher a slice, and with one running cipher (the writer's entryContext: a new one when offsets jump).
  for (const unseal of ['apply', 'applyInOrder'] as const) {
    const seal = new BodySeal(key, nonce);
    const reader = new SliceReader(fd, (b, o) => seal[unseal](b, o), 8192);
    for (const s of [...slices, ...slices.slice().reverse(), ...slices]) assert.deepEqual(reader.read(s), clear.subarray(s.o, s.o + s.n), `${unseal}: slice ${s.o}+${s.n}`);
  }
});

test('no file, no offset, or no bytes: an empty buffer', () => {
  const { fd } = open('empty.bodies', Buffer.from('x'));
  assert.equal(new SliceReader(undefined).read({ o: 0, n: 1, w: 1 }).length, 0);
  assert.equal(new SliceReader(fd).read({ n: 1, w: 1 }).length, 0);
  assert.equal(new SliceReader(fd).read({ o: 0, n: 0, w: 0 }).length, 0);
});
