// A regular expression with an open counted quantifier (`x{12,}`) keeps a
// counter on V8's backtracking stack for every character it repeats: on a run
// of ~5.5M such characters (a long hex dump or base64url blob in a body, well
// under the 16 MiB body cap) matching throws "Maximum call stack size
// exceeded", and that took down the live comparison of `bb shadow` and `bb
// diff` (found probing a shadow with a 9 MB JSON answer). `x{12}x*` means the
// same, with the same backtracking order, and does not. This keeps bb's own
// sources free of the open form.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { allSources, repoRoot } from '../helpers/sources.js';

// `{n,}` with n ≥ 2 (a `{0,}` or `{1,}` is a plain loop): in a regex literal or the text of a RegExp.
const OPEN_COUNT = /\{(?:[2-9]|\d{2,}),\}/;

describe('regular expressions in bb’s sources', () => {
  it('use no open counted quantifier x{n,} (write x{n}x*)', () => {
    const found: string[] = [];
    for (const path of allSources()) {
      readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
        if (OPEN_COUNT.test(line)) found.push(`${relative(repoRoot, path)}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(found, []);
  });

  it('the open form does throw on a long run here, and the written form does not (what the rule is for)', () => {
    const run = 'a'.repeat(6_000_000);
    assert.throws(() => [...run.matchAll(/[a-z0-9]{12,}(?![a-z0-9])/g)], /Maximum call stack size exceeded/);
    assert.equal([...run.matchAll(/[a-z0-9]{12}[a-z0-9]*(?![a-z0-9])/g)].length, 1);
  });
});
