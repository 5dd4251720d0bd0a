// Files bb writes on request — a HAR (--out) and reports (--json, --html,
// --junit, bb frames --html) — follow one rule (issue 34 item 13), the HAR
// writer's: an existing file (or symlink, even dangling) is refused without
// --force; with --force it is replaced by a rename, never written through a
// symlink; a path under a regular file is one line and exit 2, no stack trace.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, readFile, symlink, writeFile } from 'node:fs/promises';
import { runBb } from '../helpers/cli.js';
import { capture } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

/** stderr is one line of bb's, without a stack trace. */
function oneLine(stderr: string): void {
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.doesNotMatch(stderr, /internal error|\n\s+at /, stderr);
}

describe('files bb writes on request', () => {
  const t = tempDir();
  const oldHar = t.write('old.har', capture([{ url: 'http://127.0.0.1:1/x', body: { v: 1 } }]));
  const newHar = t.write('new.har', capture([{ url: 'http://127.0.0.1:1/x', body: { v: 2 } }]));
  const wsHar = t.write('ws.har', capture([{ url: 'http://127.0.0.1:1/ws', ws: [{ type: 'send', data: 'hi' }] }]));

  it('refuses --out under a regular file in one line, exit 2', async () => {
    await writeFile(t.path('plain'), 'not a folder');
    const r = await runBb(['capture', '--target', 'http://127.0.0.1:1', '--listen', '127.0.0.1:0', '--out', t.path('plain', 'x.har')], { BB_HOME: t.bbHome });
    assert.equal(r.code, 2);
    oneLine(r.stderr);
    assert.match(r.stderr, /plain/);
  });

  it('refuses a run folder (bb demo --out, as bb compare) under a regular file in one line, exit 2', async () => {
    await writeFile(t.path('plain3'), 'not a folder');
    const r = await runBb(['demo', '--out', t.path('plain3', 'run')], { BB_HOME: t.bbHome });
    assert.equal(r.code, 2);
    oneLine(r.stderr);
    assert.match(r.stderr, /plain3/);
  });

  for (const flag of ['--json', '--html', '--junit']) {
    it(`bb diff ${flag}: refuses an existing file, and a symlink, without --force`, async () => {
      const report = t.path(`exists${flag}`);
      await writeFile(report, 'mine');
      const victim = t.path(`victim${flag}`);
      await writeFile(victim, 'precious');
      const link = t.path(`link${flag}`);
      await symlink(victim, link);
      const dangling = t.path(`dangling${flag}`);
      await symlink(t.path('nowhere'), dangling);
      for (const target of [report, link, dangling]) {
        const r = await runBb(['diff', await oldHar, await newHar, flag, target]);
        assert.equal(r.code, 2, `${target}: ${r.stdout}`);
        oneLine(r.stderr);
        assert.match(r.stderr, /already exists.*--force/);
      }
      assert.equal(await readFile(report, 'utf8'), 'mine');
      assert.equal(await readFile(victim, 'utf8'), 'precious');
    });

    it(`bb diff ${flag} --force: replaces the file, and the symlink itself, not what it points to`, async () => {
      const report = t.path(`forced${flag}`);
      await writeFile(report, 'mine');
      const victim = t.path(`victim-forced${flag}`);
      await writeFile(victim, 'precious');
      const link = t.path(`link-forced${flag}`);
      await symlink(victim, link);
      for (const target of [report, link]) {
        const r = await runBb(['diff', await oldHar, await newHar, flag, target, '--force']);
        assert.equal(r.code, 1, r.stderr);
        assert.notEqual(await readFile(target, 'utf8'), 'mine');
        assert.ok((await lstat(target)).isFile(), `${target} is a regular file now`);
      }
      assert.equal(await readFile(victim, 'utf8'), 'precious');
    });
  }

  it('bb frames --html refuses an existing file without --force, replaces it with --force', async () => {
    const page = t.path('frames.html');
    await writeFile(page, 'mine');
    const refused = await runBb(['frames', await wsHar, '--html', page]);
    assert.equal(refused.code, 2);
    oneLine(refused.stderr);
    assert.equal(await readFile(page, 'utf8'), 'mine');
    const forced = await runBb(['frames', await wsHar, '--html', page, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(await readFile(page, 'utf8'), /<html/i);
  });

  it('a report under a regular file is one line, exit 2', async () => {
    await writeFile(t.path('plain2'), 'not a folder');
    const r = await runBb(['diff', await oldHar, await newHar, '--json', t.path('plain2', 'r.json')]);
    assert.equal(r.code, 2);
    oneLine(r.stderr);
  });
});
