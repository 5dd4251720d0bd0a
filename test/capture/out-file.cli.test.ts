// Files bb writes on request — a HAR (--out) and reports (--json, --html,
// --junit, bb frames --html) — follow one rule (issue 34 item 13), the HAR
// writer's: an existing file (or symlink, even dangling) is refused without
// --force; with --force it is replaced by a rename, never written through a
// symlink; a path under a regular file is one line and exit 2, no stack trace.
// The files bb writes beside them (the body sidecar of a capture) and bb ca
// export's --out never write through a symlink either.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFile, lstat, readFile, symlink, writeFile } from 'node:fs/promises';
import { runBb, startBb } from '../helpers/cli.js';
import { openCapture } from '../../capture/index.js';
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

  it('bb capture replaces a symlink at <out>.bodies, never fills the file it points to', async () => {
    const server = http.createServer((req, res) => req.resume().on('end', () => res.end('ok')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const victim = t.path('victim-bodies');
      await writeFile(victim, 'precious');
      const out = t.path('sidecar.har');
      await symlink(victim, `${out}.bodies`);
      const bb = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--listen', '127.0.0.1:0', '--out', out], { BB_HOME: t.bbHome });
      const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]!;
      const answer = await fetch(`${url}/up`, { method: 'POST', body: 'a body the sidecar holds' });
      assert.equal(await answer.text(), 'ok');
      bb.child.kill('SIGINT');
      assert.equal(await bb.exited, 0, bb.stderr());
      assert.equal(await readFile(victim, 'utf8'), 'precious');
      const har = JSON.parse(await readFile(out, 'utf8')) as { log: { entries: Array<{ request: { postData?: { text: string } } }> } };
      assert.equal(har.log.entries[0]?.request.postData?.text, 'a body the sidecar holds');
    } finally {
      server.close();
    }
  });

  it('bb ca export --force replaces a symlink itself, not what it points to', async () => {
    const victim = t.path('victim-ca');
    await writeFile(victim, 'precious');
    const link = t.path('link-ca.pem');
    await symlink(victim, link);
    assert.equal((await runBb(['ca', 'path'], { BB_HOME: t.bbHome })).code, 0, 'the CA is made before (its notice is a line of its own)');
    const refused = await runBb(['ca', 'export', '--out', link], { BB_HOME: t.bbHome });
    assert.equal(refused.code, 2);
    oneLine(refused.stderr);
    const forced = await runBb(['ca', 'export', '--out', link, '--force'], { BB_HOME: t.bbHome });
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(await readFile(victim, 'utf8'), 'precious');
    assert.ok((await lstat(link)).isFile(), 'the link is a regular file now');
    assert.match(await readFile(link, 'utf8'), /BEGIN CERTIFICATE/);
  });

  it('bb recover refuses a dangling symlink at the HAR path without --force, replaces the link itself with it', async () => {
    const out = t.path('recovered.har');
    // What a crash leaves: the journal of a capture whose process is gone. A copy of an open capture's
    // journal stands for it (bb recover refuses the journal a live capture is still writing).
    const open = t.path('open.har');
    const capture = await openCapture({ out: open, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: t.bbHome });
    await copyFile(`${open}.journal`, `${out}.journal`);
    await copyFile(`${open}.bodies`, `${out}.bodies`);
    await symlink(t.path('nowhere-recovered'), out);
    const refused = await runBb(['recover', out], { BB_HOME: t.bbHome });
    assert.equal(refused.code, 2, refused.stdout);
    oneLine(refused.stderr);
    assert.match(refused.stderr, /already exists/);
    const forced = await runBb(['recover', out, '--force'], { BB_HOME: t.bbHome });
    assert.equal(forced.code, 0, forced.stderr);
    assert.ok((await lstat(out)).isFile(), 'the link is a regular file now');
    capture.discard();
  });
});
