// Missing arguments, unknown commands and misspelt flags speak bb, not
// yargs: one line saying what to type, exit 2, through the real CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { commands } from '../../cli/commands/index.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const cases: Array<[string, string[], RegExp]> = [
  ['one capture given to bb diff', ['diff', 'one.har'], /^bb: bb diff needs two captures, the old and the new: bb diff OLD\.har NEW\.har\n$/],
  ['bb show without a capture', ['show'], /^bb: bb show needs a capture: bb show CAPTURE\.har\n$/],
  ['bb frames without a capture', ['frames'], /^bb: bb frames needs a capture: bb frames CAPTURE\.har\n$/],
  ['bb recover without a capture', ['recover'], /^bb: bb recover needs the capture to recover: bb recover captures\/capture\.har\n$/],
  ['a misspelt command', ['dif', 'a.har', 'b.har'], /^bb: unknown command 'dif' — did you mean 'diff'\?\n$/],
  ['a swapped-letter command', ['shwo', 'a.har'], /^bb: unknown command 'shwo' — did you mean 'show'\?\n$/],
  ['a command nothing like bb\'s', ['frobnicate'], /^bb: unknown command 'frobnicate': bb --help lists the commands \(capture, .*\)\n$/],
  ['a misspelt flag', ['capture', '--targt', 'http://127.0.0.1:1'], /^bb: unknown flag --targt — did you mean --target\?\n$/],
  ['a misspelt flag of bb show', ['show', 'a.har', '--metod', 'GET'], /^bb: unknown flag --metod — did you mean --method\?\n$/],
  ['a misspelt negated flag', ['capture', '--target', 'http://127.0.0.1:1', '--no-redakt'], /^bb: unknown flag --no-redakt — did you mean --no-redact\?\n$/],
  ['a flag nothing like any', ['capture', '--target', 'http://127.0.0.1:1', '--zzzzzz'], /^bb: unknown flag --zzzzzz: bb capture --help lists the flags\n$/],
  ['a value flag typed last without its value', ['diff', 'a.har', 'b.har', '--json'], /^bb: --json needs a value \(see bb diff --help\)\n$/],
  ['a capture too many', ['show', 'a.har', 'b.har'], /^bb: unexpected argument 'b\.har': bb show CAPTURE\.har\n$/],
  ['bb known add without --from and --reason', ['known', 'add', 'F0123456789'], /^bb: bb known add needs --from and --reason: bb known add FINDING-ID\.\.\. --from report\.json --reason "\.\.\."\n$/],
  ['bb known add without --reason', ['known', 'add', 'F0123456789', '--from', 'report.json'], /^bb: bb known add needs --reason: bb known add FINDING-ID\.\.\. --from report\.json --reason "\.\.\."\n$/],
  ['a flag value not among its choices', ['diff', 'a.har', 'b.har', '--timing-metric', 'p99'], /^bb: --timing-metric needs one of ttfb, total, got 'p99' \(see bb diff --help\)\n$/],
  ['an action not among the command\'s', ['ca', 'show'], /^bb: bb ca needs one of path, print, export, trust-info, got 'show' \(see bb ca --help\)\n$/],
];

for (const [what, args, says] of cases) {
  test(`${what}: one line in bb's words, exit 2, nothing written`, async (t) => {
    const dir = tempDir(t).dir;
    const r = await runBb(args, { BB_HOME: join(dir, 'home') }, { cwd: dir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, says);
    assert.doesNotMatch(r.stderr, /Not enough non-option|Not enough arguments|Unknown argument|Invalid values|Missing required|internal error/);
    assert.equal(r.stdout, '');
    assert.deepEqual(readdirSync(dir), []);
  });
}

// Every command with a required argument says what it needs in bb's words (a new command without a USAGE line fails here).
test('every command with a required argument, run without it: "bb NAME needs …", exit 2', async (t) => {
  const dir = tempDir(t).dir;
  const needing: string[] = [];
  for (const lazy of commands) {
    const spec = [(await lazy.load()).command].flat().join(' ');
    if (!/<[^>]+>/.test(spec)) continue;
    needing.push(lazy.name);
    const r = await runBb([lazy.name], { BB_HOME: join(dir, 'home') }, { cwd: dir });
    assert.equal(r.code, 2, `${lazy.name}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^bb: bb ${lazy.name} needs [^\\n]+: bb ${lazy.name} [^\\n]+\\n$`), lazy.name);
  }
  assert.deepEqual(needing.sort(), ['ca', 'diff', 'frames', 'known', 'noise', 'recover', 'replay', 'show']);
});
