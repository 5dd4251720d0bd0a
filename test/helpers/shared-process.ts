// The entry of one shared test process (test/run.mjs): imports each pure test
// file named in BB_TEST_SHARED_FILES inside a suite named after the file, so
// its tests and its top-level hooks stay grouped under it and a failure names
// the file. Files run one after another, as they would in their own process.
import { describe } from 'node:test';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
// Imported here first, so its one after() hook (atFileEnd's list) belongs to
// this process's root and runs once every file is done. Imported first by a
// test file instead, it would run after that file's suite and remove what the
// files after it made at their top level (their suites are built up front).
import './cleanups.js';

const root = new URL('../..', import.meta.url).pathname;
const files = (process.env['BB_TEST_SHARED_FILES'] ?? '').split('\n').filter(Boolean);
if (files.length === 0) throw new Error('BB_TEST_SHARED_FILES names no test file: run the suite through test/run.mjs');
for (const file of files) {
  describe(file, async () => {
    await import(pathToFileURL(join(root, file)).href);
  });
}
