import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { demoConfigWith, runCompare } from '../../scenario/compare/helpers.js';
import { tempDir } from '../../helpers/tmp.js';

describe('bb compare on the bundled demo', () => {
  const dir = tempDir().dir;
  const env = { BB_HOME: join(dir, 'home') };

  it('old vs new: exit 0, MATCH with the one registered KNOWN-DIFF, captures and reports written', async () => {
    const out = join(dir, 'demo');
    const run = await runCompare(['demo', '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^MATCH with 1 known\b/);
    assert.match(run.stdout, /KNOWN-DIFF/);
    assert.match(run.stdout, /response\.body\.error\.stack/);
    // A run folder outside the working directory is named as given, not as ../../tmp/...
    assert.ok(run.stderr.includes(`bb: wrote the captures old.har, new.har and the reports report.json, report.html in ${out}/\n`), run.stderr);
    assert.doesNotMatch(run.stderr, /bb: captures /);
    for (const file of ['old.har', 'new.har', 'report.json', 'old.stdout.log', 'new.stderr.log']) assert.ok(existsSync(join(out, file)), file);
    const har = JSON.parse(await readFile(join(out, 'old.har'), 'utf8'));
    assert.equal(har.log._bb.label, 'old');
    assert.match(har.log._bb.serverHome, /bb-home-old-/);
    assert.ok(har.log.pages.some((p: { title: string }) => p.title === 'ws replay'));
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8'));
    assert.equal(report.counts.known, 1);
    assert.equal(report.counts.real, 0);
  });

  for (const trees of ['old,old', 'new,new']) {
    it(`${trees}: the same tree twice matches (the self-check)`, async () => {
      const out = join(dir, trees.replace(',', '-'));
      const run = await runCompare(['demo', '--trees', trees, '--out', out], env);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /^MATCH\b/);
      assert.doesNotMatch(run.stdout, /KNOWN-DIFF/);
      const [tree] = trees.split(',');
      assert.ok(existsSync(join(out, `${tree}.har`)) && existsSync(join(out, `${tree}-2.har`)));
    });
  }

  it('--noise: what differs between two old runs is noise, reported apart, and the run matches', async () => {
    const config = await demoConfigWith(dir, 'jitter.json', { oldArgs: ['--jitter'], newArgs: ['--jitter'] });
    const plain = await runCompare(['compare', '--config', config, '--out', join(dir, 'jitter')], env);
    assert.equal(plain.code, 1, 'without --noise the jitter is a real difference');
    assert.match(plain.stdout, /response\.body\.nonce changed .* in 1 of 1 GET \/v1\/meta/);
    const out = join(dir, 'jitter-noise');
    const run = await runCompare(['compare', '--config', config, '--noise', '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^MATCH with 1 known\b/);
    assert.ok(existsSync(join(out, 'old-noise.har')));
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8'));
    assert.ok(report.counts.noise >= 1, JSON.stringify(report.counts));
  });

  it('old,old that differs says what that means and what to do', async () => {
    const config = await demoConfigWith(dir, 'jitter-self.json', { oldArgs: ['--jitter'], newArgs: ['--jitter'] });
    const run = await runCompare(['compare', '--config', config, '--trees', 'old,old', '--out', join(dir, 'jitter-self')], env);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /The same build \(old,old\) differs from itself: these fields vary run to run\. bb noise \S+old\.har \S+old-2\.har -o noise\.json writes rules for them/);
  });

  it('a new variant with an unregistered change: exit 1 naming the entry and the field', async () => {
    const config = await demoConfigWith(dir, 'drift.json', { newArgs: ['--drift'] });
    const run = await runCompare(['compare', '--config', config, '--out', join(dir, 'drift')], env);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /^DIFF: \d+ real/);
    assert.match(run.stdout, /response\.body\.pinned added false in \d+ of \d+ entries, \d+ routes\n\s+e\.g\. POST \/v1\/sessions /);
  });
});
