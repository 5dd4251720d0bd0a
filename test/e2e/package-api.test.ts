// The library API as a user calls it: `import { startCapture } from 'bb'`,
// through the package's own exports (the built dist/), plus the README example.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = tempDir().dir;

test('startCapture records steps and exchanges, and close() returns the HAR path', async () => {
  // Imported by package name, as a user's test suite would.
  const { startCapture } = (await import('bb')) as typeof import('../../index.js');
  const server = http.createServer((req, res) => res.end(`hi ${req.url}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => server.close());
  const cap = await startCapture({
    target: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    label: 'suite',
    out: join(dir, 'suite.har'),
    bbHome: join(dir, 'home'),
  });
  assert.match(cap.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  cap.step('first');
  assert.equal(await (await fetch(`${cap.url}/one`)).text(), 'hi /one');
  cap.step('second');
  assert.equal(await (await fetch(`${cap.url}/two`)).text(), 'hi /two');
  assert.equal(cap.stats().entries, 2);
  const path = await cap.close();
  assert.equal(path, join(dir, 'suite.har'));
  const har = JSON.parse(readFileSync(path, 'utf8'));
  assert.deepEqual(har.log.pages.map((p: { title: string }) => p.title), ['first', 'second']);
  assert.deepEqual(
    har.log.entries.map((e: { pageref: string; response: { content: { text: string } } }) => [e.pageref, e.response.content.text]),
    [[har.log.pages[0].id, 'hi /one'], [har.log.pages[1].id, 'hi /two']],
  );
  assert.equal(await cap.close(), path, 'close is idempotent');
});

test('the README example runs as written', async () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const example = readFileSync(join(root, 'examples/record-in-a-test.mjs'), 'utf8');
  assert.ok(readme.includes('examples/record-in-a-test.mjs'), 'README points at the example');
  assert.ok(readme.includes("import { startCapture } from 'bb';"), 'README shows the import');
  const { stdout } = await run(process.execPath, [join(root, 'examples/record-in-a-test.mjs')], {
    cwd: root,
    env: { ...process.env, BB_HOME: join(dir, 'home2') },
  });
  assert.match(stdout, /page_1 GET http:\/\/127\.0\.0\.1:\d+\/v1\/items\?token=<redacted:[0-9a-f]{8}> 200/);
  assert.match(stdout, /page_2 GET http:\/\/127\.0\.0\.1:\d+\/v1\/items\/1 200/);
  const written = /wrote (\S+)/.exec(stdout)?.[1];
  assert.ok(written && example.includes('wrote'), 'the example says where its HAR is');
  rmSync(written, { force: true });
});

test('the replay example runs as written: the fresh server\'s id followed, the two captures MATCH', async () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  assert.ok(readme.includes('examples/replay-a-capture.mjs'), 'README points at the example');
  const { replayCapture } = (await import('bb')) as typeof import('../../index.js');
  assert.equal(typeof replayCapture, 'function', 'replayCapture is on the public entry point');
  const { stdout } = await run(process.execPath, [join(root, 'examples/replay-a-capture.mjs')], { cwd: root, env: { ...process.env, BB_HOME: join(dir, 'home3') } });
  assert.match(stdout, /^replayed 2 exchanges and 0 WebSocket messages to http:\/\/127\.0\.0\.1:\d+, 1 value rewritten → /);
  assert.match(stdout, /path: 'body:\$\.id~0'/);
  assert.match(stdout, /^MATCH {2}\(2 pairs;/m);
});

test('the shadow example runs as written: random ids are not regressions, the changed price is, the POST is not mirrored', async () => {
  const readme = readFileSync(join(root, 'docs/shadow.md'), 'utf8');
  assert.ok(readme.includes('examples/shadow-two-builds.mjs'), 'docs/shadow.md points at the example');
  const { startShadow } = (await import('bb')) as typeof import('../../index.js');
  assert.equal(typeof startShadow, 'function', 'startShadow is on the public entry point');
  const { stdout } = await run(process.execPath, [join(root, 'examples/shadow-two-builds.mjs')], { cwd: root, env: { ...process.env, BB_HOME: join(dir, 'home4') } });
  assert.match(stdout, /^4 requests, 3 mirrored, 3 with regressions, skipped \{"unsafe":1\}$/m);
  assert.match(stdout, /^regression response\.body\.price changed in 3: 9\.99 → 10$/m);
  assert.equal(stdout.trim().split('\n').length, 2, stdout);
});

test('a WebSocket still open at close() is finalized as closed by "none", not as in flight', async () => {
  const { startCapture } = (await import('bb')) as typeof import('../../index.js');
  const { WebSocketServer, WebSocket } = await import('ws');
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (d) => ws.send(String(d))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => server.close());
  const cap = await startCapture({ target: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, out: join(dir, 'open-ws.har'), bbHome: join(dir, 'home') });
  const ws = new WebSocket(`${cap.url.replace('http', 'ws')}/live`);
  ws.on('error', () => {});
  await new Promise((r) => ws.once('open', r));
  ws.send('still here');
  await new Promise((r) => ws.once('message', r));
  const har = JSON.parse(readFileSync(await cap.close(200), 'utf8'));
  const [entry] = har.log.entries;
  assert.equal(entry._bb.close.by, 'none');
  assert.equal(entry._bb.inFlight, undefined);
  assert.equal(typeof entry._bb.seqEnd, 'number');
  assert.deepEqual(entry._webSocketMessages.map((m: { type: string; data: string }) => [m.type, m.data]), [['send', 'still here'], ['receive', 'still here']]);
});

test('startCapture given upstreamTls.extraCa still trusts NODE_EXTRA_CA_CERTS, as Node would without it', async () => {
  const { startCapture } = (await import('bb')) as typeof import('../../index.js');
  const { startPeers } = await import('../proxy/forward-harness.js');
  const peers = await startPeers();
  after(() => peers.close());
  const saved = process.env.NODE_EXTRA_CA_CERTS;
  // The upstream's CA comes only from the environment; extraCa names an unrelated CA (bb's own).
  process.env.NODE_EXTRA_CA_CERTS = peers.upstreamCaFile;
  try {
    for (const [env, status] of [[peers.upstreamCaFile, 200], ['', 502]] as const) {
      process.env.NODE_EXTRA_CA_CERTS = env;
      const cap = await startCapture({
        target: `https://localhost:${peers.httpsPort}`,
        out: join(dir, `extra-ca-${status}.har`),
        bbHome: join(dir, 'home3'),
        upstreamTls: { extraCa: [readFileSync(peers.caFile, 'utf8')] },
      });
      assert.equal((await fetch(`${cap.url}/lib-env-ca`)).status, status, `NODE_EXTRA_CA_CERTS=${env || '(unset)'}`);
      await cap.close();
    }
  } finally {
    if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = saved;
  }
});
