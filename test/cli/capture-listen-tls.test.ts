// `bb capture --listen-tls` through the real CLI (bin/bb.js loads dist/: `npm test` builds first).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runBb, startBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';
import { curl } from '../proxy/forward-harness.js';
import { startHttp1Upstream, type AlpnUpstream } from '../proxy/alpn-peers.js';

let dir: string;
let home: string;
let upstreamCaFile: string;
let h1: AlpnUpstream;

before(async () => {
  dir = tempDir().dir;
  home = join(dir, 'home');
  const upstreamCa = await loadOrCreateCa(join(dir, 'upstream-ca'));
  upstreamCaFile = join(dir, 'upstream-ca.pem');
  await writeFile(upstreamCaFile, upstreamCa.certPem);
  h1 = await startHttp1Upstream(createLeafFactory(upstreamCa));
});
after(async () => {
  await h1?.close();
});

describe('bb capture --listen-tls', () => {
  it('listens on https://, records what curl sends through it, and names the CA', async () => {
    const out = join(dir, 'tls.har');
    const run = startBb(['capture', '--listen-tls', '--target', `https://localhost:${h1.port}`, '--upstream-ca', upstreamCaFile, '--out', out], { BB_HOME: home, NODE_EXTRA_CA_CERTS: '' }, { timeoutMs: 60_000 });
    const [, url] = await run.waitFor(/(https:\/\/127\.0\.0\.1:\d+) -> https:\/\/localhost:\d+/, 20_000);
    const port = new URL(url!).port;
    assert.ok(run.stdout().includes(`clients trust ${join(home, 'ca.pem')}`), run.stdout());
    const res = await curl(['--cacert', join(home, 'ca.pem'), '--http1.1', `https://localhost:${port}/cli-tls?q=1`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'h1 /cli-tls?q=1');
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.stderr());
    const har = JSON.parse(await readFile(out, 'utf8')) as { log: { _bb: { listen: string }; entries: Array<{ request: { url: string }; response: { status: number } }> } };
    assert.match(har.log._bb.listen, /^https:\/\//);
    assert.deepEqual(har.log.entries.map((e) => `${e.request.url} ${e.response.status}`), [`https://localhost:${port}/cli-tls?q=1 200`]);
  });

  it('refuses an http:// target in one line, exit 2, before anything starts', async () => {
    const out = join(dir, 'never.har');
    const res = await runBb(['capture', '--listen-tls', '--target', 'http://127.0.0.1:3000', '--out', out], { BB_HOME: home });
    assert.equal(res.code, 2);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /--listen-tls needs an https:\/\/ target .*got http:\/\/127\.0\.0\.1:3000/);
    await assert.rejects(readFile(out), /ENOENT/);
  });

  it('refuses --listen-tls with --mode forward', async () => {
    const res = await runBb(['capture', '--mode', 'forward', '--listen-tls'], { BB_HOME: home });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--listen-tls is for reverse mode/);
  });
});
