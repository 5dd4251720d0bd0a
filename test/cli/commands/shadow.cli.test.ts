// bb shadow's bad input: each mistake is one line that says what to do, exit 2,
// no stack trace, and nothing is started or written.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const badConfig = tmp.path('bad-config.json');
writeFileSync(badConfig, '{ "normalize": ');
const base = ['shadow', '--primary', 'http://127.0.0.1:9', '--candidate', 'http://127.0.0.1:9', '--out', tmp.path('never')];

describe('bb shadow: bad input', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['no --candidate', ['shadow', '--primary', 'http://127.0.0.1:9'], /needs --candidate URL/],
    ['a share past 1', [...base, '--sample', '2'], /--sample needs a share between 0 and 1/],
    ['--sample-by without a kind', [...base, '--sample', '0.5', '--sample-by', 'x-user'], /--sample-by needs header:NAME or cookie:NAME/],
    ['an --until that is neither', [...base, '--until', 'soon'], /--until needs a number of requests/],
    ['a --mirror that is not a route', [...base, '--mirror', 'everything'], /--mirror needs safe, all, or routes/],
    ['a --header without its target', [...base, '--header', 'Authorization: x'], /--header needs TARGET:'Name: value'/],
    ['a --fail-on past 1', [...base, '--fail-on', '150%'], /--fail-on needs a share/],
    ['a --merge file that is not a report', ['shadow', '--merge', tmp.path('missing.json')], /cannot be read as JSON/],
    ['a --ui address other machines could reach', [...base, '--ui', '0.0.0.0:8090'], /--ui must bind a loopback address like 127\.0\.0\.1:0; '0\.0\.0\.0' would show/],
    ['--rotate with --ui (one live view per target)', [...base, '--rotate', '10m', '--ui'], /--ui shows one capture per target: leave out --rotate/],
    ['a --config that is not JSON (refused before the targets are tried)', [...base, '--config', badConfig], /bad-config\.json/],
    ['a target that is not a URL', ['shadow', '--primary', 'localhost:3000', '--candidate', 'http://127.0.0.1:9', '--out', tmp.path('never')], /--primary needs a URL like http:\/\/127\.0\.0\.1:3000/],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const run = await runBb(args, env);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.doesNotMatch(run.stderr, /\n\s+at /);
      assert.equal(existsSync(tmp.path('never')), false);
    });
  }
});
