// A config or report that is not JSON is refused in one line, whichever
// command reads it (V8's JSON.parse message quotes the text, newlines included).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runBb } from '../../helpers/cli.js';
import { har } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

describe('configs that are not JSON', () => {
  it('bb diff --config, bb known add --config / --from and bb compare --config answer one line, exit 2', async (t) => {
    const tmp = tempDir(t);
    const dir = tmp.dir;
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{\n  "known": [\n}\n');
    const report = join(dir, 'report.json');
    await writeFile(report, JSON.stringify({ differences: [{ id: 'abc', kind: 'changed', entry: '/GET /x#1', path: 'response.status' }] }));
    const empty = await tmp.write('x.har', har([]));
    const runs = [
      ['diff', empty, empty, '--config', bad],
      ['known', 'add', 'abc', '--from', report, '--reason', 'r', '--config', bad],
      ['known', 'add', 'abc', '--from', bad, '--reason', 'r', '--config', join(dir, 'new.json')],
      ['compare', '--config', bad, '--out', join(dir, 'run')],
    ];
    for (const args of runs) {
      const r = await runBb(args, { BB_HOME: join(dir, 'home') });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^bb: [^\n]*bad\.json[^\n]* (is not valid JSON|is not a bb diff --json report) \([^\n]+\)[^\n]*\n$/, `${args.join(' ')}: ${r.stderr}`);
    }
  });
});
