// A `where` glob of seven stars in a known entry, against an exchange whose
// URL is 3,000 characters: bb diff answers (issue 34 item 12). Before, the glob
// was a backtracking regex and bb spun at 100 % CPU; a 100-character URL
// already took seconds, so runBb's 30 s kill is a bound on liveness, not a
// speed assert (the steps are bounded in test/core/glob.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runBb } from '../helpers/cli.js';
import { capture } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

describe('bb diff with a many-star where glob and a long URL', () => {
  it('classifies every difference and exits 1', async () => {
    const t = tempDir();
    const url = `http://127.0.0.1:1/${'a'.repeat(3000)}`;
    const oldHar = await t.write('old.har', capture([{ url, body: { v: 1 } }]));
    const newHar = await t.write('new.har', capture([{ url, body: { v: 2 } }]));
    const config = await t.write('bb.config.json', { known: [{ where: '*/GET /*a*a*a*a*a*b', path: 'response.body.v', reason: 'never matches' }] });
    const r = await runBb(['diff', oldHar, newHar, '--config', config, '--json', '-']);
    assert.equal(r.timedOut, false, 'bb diff spun past 30 s');
    assert.equal(r.code, 1, r.stderr);
    const report = JSON.parse(r.stdout) as { differences: Array<{ path: string; class: string }> };
    assert.deepEqual(report.differences.map((d) => [d.path, d.class]), [['response.body.v', 'real']]);
  });
});
