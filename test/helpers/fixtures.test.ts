// sharedFixture's rule: a checkout without ../shared/fixtures/har skips the
// tests that read it, but under CI=true the missing folder fails the test, so
// no CI run passes by skipping; a folder without the named file always fails.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixtureIn } from './fixtures.js';
import { tempDir } from './tmp.js';

describe('shared fixtures', () => {
  it('skips when the folder is absent, and throws instead under CI', () => {
    const missing = join(tempDir().dir, 'no-such-folder');
    const skipped: string[] = [];
    assert.equal(fixtureIn(missing, { skip: (m) => skipped.push(m ?? '') }, 'chrome.har', false), undefined);
    assert.match(skipped[0]!, /shared HAR fixtures absent/);
    assert.throws(() => fixtureIn(missing, { skip: () => assert.fail('must not skip under CI') }, 'chrome.har', true), /a CI run needs them, it does not skip/);
  });

  it('throws for a name the folder does not have, CI or not', async () => {
    const tmp = tempDir();
    await tmp.write('there.har', '{}');
    assert.equal(fixtureIn(tmp.dir, undefined, 'there.har', false), join(tmp.dir, 'there.har'));
    assert.equal(fixtureIn(tmp.dir, undefined, undefined, true), tmp.dir);
    for (const ci of [false, true]) assert.throws(() => fixtureIn(tmp.dir, undefined, 'gone.har', ci), /have no gone\.har/);
  });
});
