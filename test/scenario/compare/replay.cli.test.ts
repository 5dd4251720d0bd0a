// bb compare with a capture as the scenario (--replay, or "scenario": "x.har"),
// through the real CLI on the bundled demo.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { demoConfigWith, paths, runCompare } from './helpers.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

// bb compare with a capture as the scenario: the bundled demo recorded once
// by its scenario module, then replayed against each server (--replay, or
// "scenario": "x.har" in the config) gives what the module gives.
describe('bb compare --replay on the bundled demo', () => {
  const dir = tempDir().dir;
  const env = { BB_HOME: join(dir, 'home') };
  let recorded: string;
  before(async () => {
    const run = await runCompare(['demo', '--out', join(dir, 'module')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    recorded = join(dir, 'module', 'old.har');
  });

  it('--replay CAPTURE.har: MATCH with 1 known, as the scenario module gives', async () => {
    const out = join(dir, 'replayed');
    const run = await runCompare(['compare', '--config', paths.demoConfig, '--replay', recorded, '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^MATCH with 1 known\b/);
    const [module, replayed] = await Promise.all([readFile(recorded, 'utf8'), readFile(join(out, 'old.har'), 'utf8')].map(async (p) => JSON.parse(await p)));
    assert.equal(replayed.log.entries.length, module.log.entries.length);
    assert.deepEqual(replayed.log.pages.map((p: { title: string }) => p.title), module.log.pages.map((p: { title: string }) => p.title));
    // The replay of the old build against the old build is the module's run again, ids and all.
    const self = await runBb(['diff', recorded, join(out, 'old.har'), '--config', paths.demoConfig], env);
    assert.equal(self.code, 0, self.stdout);
    assert.match(self.stdout, /^MATCH\b/);
  });

  it('the noise run and the self-check pair get the same replay', async () => {
    const noise = await runCompare(['compare', '--config', paths.demoConfig, '--replay', recorded, '--noise', '--out', join(dir, 'noise')], env);
    assert.equal(noise.code, 0, noise.stdout + noise.stderr);
    assert.match(noise.stdout, /^MATCH with 1 known\b/m);
    const noiseHar = JSON.parse(await readFile(join(dir, 'noise', 'old-noise.har'), 'utf8'));
    assert.equal(noiseHar.log.entries.length, 20);
    const self = await runCompare(['compare', '--config', paths.demoConfig, '--replay', recorded, '--trees', 'old,old', '--out', join(dir, 'self')], env);
    assert.equal(self.code, 0, self.stdout + self.stderr);
    assert.match(self.stdout, /^MATCH\b/m);
    // The demo's one known entry ratifies an old → new change: in old,old it is expected to match nothing.
    assert.match(self.stdout, /^1 known entry matched nothing, as expected: both captures are of one build/m);
    assert.doesNotMatch(self.stdout, /[Ss]tale/);
  });

  it('"scenario": "CAPTURE.har" in the config does the same', async () => {
    const config = await demoConfigWith(dir, 'har-scenario.json', { scenario: recorded });
    const run = await runCompare(['compare', '--config', config, '--out', join(dir, 'config-har')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^MATCH with 1 known\b/);
  });
});
