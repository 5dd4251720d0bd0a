// bench/run.mjs (`npm run bench`) on the benchmark areas that run in seconds, in their smallest
// configurations: a benchmark is a program
// that prints tables and fails only when it cannot run, so nothing checks it
// but running it. The frames area failed at its second round for a while (bb
// frames --html refuses to overwrite a page) and nobody saw it until a whole
// bench run. Figures are not checked here: speed is the benchmarks' to
// measure on a quiet machine, not a test's on shared CI cores. The proxy and
// shadow areas take minutes even with --quick and are left to `npm run bench`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CHROMIUM } from '../helpers/browser-app.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `node bench/run.mjs ARGS`; resolves to its exit code and output. */
function bench(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['bench/run.mjs', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (out += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

const areas: Array<{ args: string[]; prints: RegExp; browser?: boolean }> = [
  // Two rounds: the second writes the page over the first's.
  { args: ['frames', '--quick', '--messages', '2000', '--rounds', '2'], prints: /\| 2,000 +\|/, browser: true },
  { args: ['diff', '--sizes', '20,1000'], prints: /\| 1,000 +\|.*DIFF: 2 real findings/ },
  { args: ['tls', '--quick'], prints: /leaves minted by bb/ },
  { args: ['replay', '--quick'], prints: /Target: the replay ≥ 0\.5× autocannon direct/ },
  { args: ['ui', '--quick'], prints: /bb --ui, one page/ },
];

for (const a of areas) {
  test(`npm run bench -- ${a.args.join(' ')} runs to its end`, async (t) => {
    if (a.browser && !CHROMIUM) return t.skip('Debian chromium is not installed (apt-get install chromium)');
    const { code, out } = await bench(a.args);
    assert.equal(code, 0, out);
    assert.match(out, a.prints, out);
  });
}
