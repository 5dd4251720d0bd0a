// Flags given the wrong way are one line and exit 2, before anything starts:
// a flag repeated that takes one value, a number flag given a word or a negative.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

/** Runs bb to its end; a bb that starts anyway is stopped after 8 s (the test then fails on its output). */
const runBounded = (args: string[], env: NodeJS.ProcessEnv = {}) => runBb(args, env, { timeoutMs: 8000 });

describe('bb flags given the wrong way', () => {
  const cases: Array<{ name: string; args: (dir: string) => string[]; says: RegExp }> = [
    {
      name: 'a single-value flag given twice',
      args: (d) => ['capture', '--target', 'http://127.0.0.1:9', '--out', join(d, 'a.har'), '--out', join(d, 'b.har')],
      says: /^bb: --out is given 2 times: give it once\n$/,
    },
    {
      name: 'a number flag given a word',
      args: (d) => ['capture', '--target', 'http://127.0.0.1:9', '--out', join(d, 'a.har'), '--connect-timeout', 'abc'],
      says: /^bb: --connect-timeout needs a number of 0 or more, got 'abc'\n$/,
    },
    {
      name: 'a number flag given a negative',
      args: (d) => ['capture', '--target', 'http://127.0.0.1:9', '--out', join(d, 'a.har'), '--grace=-5'],
      says: /^bb: --grace needs a number of 0 or more, got '-5'\n$/,
    },
    {
      name: 'a diff report flag given twice',
      args: (d) => ['diff', join(d, 'x.har'), join(d, 'y.har'), '--json', join(d, 'r1.json'), '--json', join(d, 'r2.json')],
      says: /^bb: --json is given 2 times: give it once\n$/,
    },
  ];
  for (const c of cases) {
    it(`refuses ${c.name} with one line and exit 2, writing nothing`, async (t) => {
      const dir = tempDir(t).dir;
      const r = await runBounded(c.args(dir), { BB_HOME: join(dir, 'home') });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, c.says);
      assert.equal(r.stdout, '');
      assert.deepEqual((await readdir(dir)).filter((f) => f !== 'home'), []);
    });
  }

  it("puts yargs' own multi-line refusals on one line", async () => {
    const r = await runBounded(['ca', 'bogus']);
    assert.equal(r.code, 2);
    // yargs' "Invalid values:\n  Argument: …" is said in bb's words (cli/usage.ts), on one line.
    assert.match(r.stderr, /^bb: bb ca needs one of path, print, export, trust-info, got 'bogus' \(see bb ca --help\)\n$/);
  });

  it('still takes repeatable flags many times', async (t) => {
    const dir = tempDir(t).dir;
    // Two --target and two --listen are fine; the second --listen is refused only for its port.
    const r = await runBounded(['capture', '--target', 'a=http://127.0.0.1:9', '--target', 'b=http://127.0.0.1:9', '--listen', '127.0.0.1:0', '--listen', '127.0.0.1:99999', '--out', dir]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^bb: --listen port must be 0-65535/);
  });
});
