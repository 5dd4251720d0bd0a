// Runs the suite: every test/**/*.test.ts through node:test with tsx.
// Node 20's --test takes no globs, so the files are listed here.
// `node test/run.mjs proxy capture` runs only files whose path contains one of the words.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
const words = process.argv.slice(2);
const files = walk(join(root, 'test'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => relative(root, f))
  .filter((f) => words.length === 0 || words.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${words.join(' ') || 'test/**/*.test.ts'}`);
  process.exit(2);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', ...files],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
