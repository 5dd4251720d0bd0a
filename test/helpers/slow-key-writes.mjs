// Preloaded into a bb child (NODE_OPTIONS=--import) by tests of concurrent
// first use: every write to a file whose path holds "redact.key" or "ca.key"
// takes 300 ms (BB_TEST_SLOW_KEY_MS sets it), so processes that start together
// really meet while one of them is writing. Only timing changes; the bytes and
// the file system are real.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const slow = new Set();
const delayMs = Number(process.env.BB_TEST_SLOW_KEY_MS ?? 300);
const openSync = fs.openSync;
const writeSync = fs.writeSync;
fs.openSync = function (path, ...rest) {
  const fd = openSync.call(this, path, ...rest);
  if (/redact\.key|ca\.key/.test(String(path))) slow.add(fd);
  return fd;
};
fs.writeSync = function (fd, ...rest) {
  if (slow.has(fd)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs);
  return writeSync.call(this, fd, ...rest);
};
syncBuiltinESMExports();
