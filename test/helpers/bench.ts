// A benchmark area run through bench/run.mjs (`npm run bench -- AREA ...`) in
// its smallest configuration: a benchmark is a program that prints tables and
// fails only when it cannot run, so nothing checks it but running it. The
// frames area failed at its second round for a while (bb frames --html refuses
// to overwrite a page) and nobody saw it until a whole bench run. Figures are
// not checked: speed is the benchmarks' to measure on a quiet machine, not a
// test's on shared CI cores. The proxy and shadow areas take minutes even with
// --quick and are left to `npm run bench`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CHROMIUM } from './browser-app.js';
import { repoRoot } from './sources.js';

/** Runs `node bench/run.mjs ARGS`; resolves to its exit code and output. */
function bench(args: string[]): Promise<{ code: number | null; out: string }> {
  return runNode(['bench/run.mjs', ...args]);
}

/** Runs one benchmark area outside `npm run bench`'s list (`node --import tsx bench/lib/area.ts AREA ARGS`): its exit code and output. */
export function benchArea(area: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return runNode(['--import', 'tsx', 'bench/lib/area.ts', area, ...args]);
}

function runNode(argv: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, argv, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (out += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

/** A test that `npm run bench -- ARGS` exits 0 and prints `prints`; `browser`: the area needs Debian's chromium. */
export function benchRunsToItsEnd(args: string[], prints: RegExp, opts: { browser?: boolean } = {}): void {
  test(`npm run bench -- ${args.join(' ')} runs to its end`, async (t) => {
    if (opts.browser && !CHROMIUM) return t.skip('Debian chromium is not installed (apt-get install chromium)');
    const { code, out } = await bench(args);
    assert.equal(code, 0, out);
    assert.match(out, prints, out);
  });
}

/**
 * The cells after the first of the row whose first cell is `first`, in the
 * first Markdown table printed after the line that starts with `heading`
 * (a bench's output; cells trimmed, padding or not). Fails the test when
 * there is no such row.
 */
export function benchTableRow(out: string, heading: string, first: string): string[] {
  const after = out.split('\n' + heading)[1] ?? '';
  const lines = after.split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const table: string[] = [];
  for (let i = start; i >= 0 && i < lines.length && lines[i]!.startsWith('|'); i++) table.push(lines[i]!);
  const row = table.find((l) => l.split('|')[1]?.trim() === first);
  assert.ok(row, `no ${first} row in the table after "${heading}":\n${out}`);
  return row.split('|').slice(2, -1).map((c) => c.trim());
}
