// Many bb capture processes starting at once on a fresh bb home: the
// redaction key and the CA are made once, atomically, and every process uses
// the same ones. Apart from test/cli/commands/capture.cli.test.ts so each file stays well
// inside the suite's per-file time on a busy machine. Real child processes.
import { test, describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import { decodedStrings } from '../helpers/decoded.js';
import { helloServer } from '../helpers/servers.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir().dir;
const servers: http.Server[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function upstream(): Promise<number> {
  const { server, port } = await helloServer();
  servers.push(server);
  return port;
}

test('ten bb capture at once on a fresh bb home share one redaction key', async () => {
  const target = await upstream();
  const home = join(dir, 'fresh-home');
  const runs = Array.from({ length: 10 }, (_, i) =>
    startBb(['capture', '--target', `http://127.0.0.1:${target}`, '--out', join(dir, 'ten', `c${i}.har`), '--quiet'], { BB_HOME: home }),
  );
  const urls = await Promise.all(runs.map(async (bb) => (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]));
  // The same secret in every capture must become the same placeholder.
  await Promise.all(urls.map((url) => fetch(`${url}/s?token=same-secret`).then((r) => r.text())));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(10).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  for (const bb of runs) assert.doesNotMatch(bb.stderr(), /internal error|redaction key/);
  assert.match(readFileSync(join(home, 'redact.key'), 'utf8'), /^[0-9a-f]{64}\n$/);
  assert.deepEqual(readdirSync(home).sort(), ['redact.key'], 'no temporary files left in bb home');
  const placeholders = new Set(
    Array.from({ length: 10 }, (_, i) => new URL(JSON.parse(readFileSync(join(dir, 'ten', `c${i}.har`), 'utf8')).log.entries[0].request.url as string).search),
  );
  assert.equal(placeholders.size, 1, [...placeholders].join('\n'));
  assert.match(decodeURIComponent([...placeholders][0]!), /^\?token=<redacted:[0-9a-f]{8}>$/);
});

test('ten bb capture at once agree on the key even while one of them is slow to write it', async () => {
  const home = join(dir, 'slow-home');
  const preload = fileURLToPath(new URL('../helpers/slow-key-writes.mjs', import.meta.url));
  const runs = Array.from({ length: 10 }, (_, i) =>
    startBb(['capture', '--target', 'http://127.0.0.1:1', '--out', join(dir, 'slow', `c${i}.har`), '--quiet'], { BB_HOME: home, NODE_OPTIONS: `--import ${preload}` }),
  );
  await Promise.all(runs.map((bb) => bb.waitFor(/capture: http/, 60_000).catch(() => undefined)));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(10).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  assert.deepEqual(readdirSync(home), ['redact.key']);
});

test('captures started while the first is still writing the key read no half-written key and use the one key', async () => {
  const target = await upstream();
  const home = join(dir, 'mid-write-home');
  const preload = fileURLToPath(new URL('../helpers/slow-key-writes.mjs', import.meta.url));
  const start = (i: number, env: NodeJS.ProcessEnv) =>
    startBb(['capture', '--target', `http://127.0.0.1:${target}`, '--out', join(dir, 'mid-write', `c${i}.har`), '--quiet'], { BB_HOME: home, ...env });
  // The first writes its key for 4 s; the others start once its file is on disk, so they meet it mid-write whatever the load.
  const first = start(0, { NODE_OPTIONS: `--import ${preload}`, BB_TEST_SLOW_KEY_MS: '4000' });
  for (let i = 0; i < 600 && !(existsSync(home) && readdirSync(home).some((n) => n.startsWith('redact.key'))); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(readdirSync(home).some((n) => n.startsWith('redact.key')), 'the first capture began its key');
  const runs = [first, ...Array.from({ length: 4 }, (_, i) => start(i + 1, {}))];
  const urls = await Promise.all(runs.map(async (bb) => (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]));
  await Promise.all(urls.map((url) => fetch(`${url}/s?token=same-secret`).then((r) => r.text())));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(runs.length).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  assert.deepEqual(readdirSync(home), ['redact.key']);
  const placeholders = new Set(
    runs.map((_, i) => new URL(JSON.parse(readFileSync(join(dir, 'mid-write', `c${i}.har`), 'utf8')).log.entries[0].request.url as string).search),
  );
  assert.equal(placeholders.size, 1, `one key, one placeholder: ${[...placeholders].join(' ')}`);
});

test('ten bb capture --mode forward at once on a fresh bb home share one CA', async () => {
  const home = join(dir, 'fresh-ca-home');
  const runs = Array.from({ length: 10 }, (_, i) =>
    startBb(['capture', '--mode', 'forward', '--listen', '127.0.0.1:0', '--out', join(dir, 'ten-ca', `f${i}.har`), '--quiet'], { BB_HOME: home }),
  );
  await Promise.all(runs.map((bb) => bb.waitFor(/forward: http:\/\/127\.0\.0\.1:\d+/, 60_000)));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(10).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  assert.deepEqual(readdirSync(home).sort(), ['ca.key', 'ca.pem', 'redact.key'], 'one CA, no temporary files');
  const path = await runBb(['ca', 'print'], { BB_HOME: home });
  assert.equal(path.code, 0, path.stderr);
});

// Secrets a probe found in clear, sent by real clients through a real bb capture (node:http2 for `:path`, ws for a
// close reason, a raw event stream, raw cookies, a `;` query): the HAR, the stdout lines, and the journal a kill -9
// leaves, all searched decoded; --no-redact finds every one, so the searches can fail.
const G = {
  h2Query: 'zqgap-h2query', h2Auth: 'zqgap-h2authpw', cookie: 'zqgap-namelesscookie', setCookie: 'zqgap-namelessset',
  semi: 'zqgap-semitoken', sse: 'zqgap-ssemultiline', closeJwt: 'zqgap-closejwt', closeGhp: 'zqgapcloseghp',
} as const;
const GAPS = Object.values(G);
const gapJwt = `eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbm4ifQ.${G.closeJwt}`;

/** An HTTP/1 upstream (a nameless Set-Cookie, a raw event stream, a WebSocket) and an h2c one; their ports. */
async function gapUpstreams(): Promise<{ h1: number; h2: number }> {
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      // One event whose JSON spans two data: lines (its data is the lines joined by LF).
      res.end(`data: {"token":\ndata: "${G.sse}"}\n\n`);
    } else {
      res.writeHead(200, { 'Set-Cookie': `${G.setCookie}; Path=/; HttpOnly` });
      res.end('ok');
    }
  });
  const wss = new WebSocketServer({ server });
  // A JWT, and a GitHub token (ghp_ and 36 letters and digits), each in a close reason.
  wss.on('connection', (ws, req) => ws.on('message', () => ws.close(1000, req.url === '/ghp' ? `bye ghp_${G.closeGhp}${'0'.repeat(36 - G.closeGhp.length)}` : `bye ${gapJwt}`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const h2 = http2.createServer((req, res) => res.end('ok'));
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  h2Servers.push(h2);
  return { h1: (server.address() as AddressInfo).port, h2: (h2.address() as AddressInfo).port };
}

const h2Servers: http2.Http2Server[] = [];
const gapChildren: BbProcess[] = [];
after(() => {
  for (const b of gapChildren) if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill('SIGKILL');
  for (const s of h2Servers) s.close();
});

async function gapCapture(target: number, out: string, redact: boolean): Promise<{ bb: BbProcess; url: string }> {
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${target}`, '--out', out, ...(redact ? [] : ['--no-redact'])], { BB_HOME: join(dir, 'gap-home') });
  gapChildren.push(bb);
  return { bb, url: (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]! };
}

/** Sends each secret through the bb at `h1` (HTTP/1 and WebSocket) and the bb at `h2` (node:http2). */
async function sendGaps(h1: string, h2: string): Promise<void> {
  const get = (path: string, headers: http.OutgoingHttpHeaders = {}) =>
    new Promise<void>((resolve, reject) => {
      http.get(`${h1}${path}`, { headers }, (res) => res.resume().on('end', resolve)).on('error', reject);
    });
  await get('/a', { Cookie: G.cookie });
  await get(`/a?a=1;token=${G.semi}`);
  await get('/events');
  const session = http2.connect(h2);
  await new Promise<void>((resolve, reject) => {
    const req = session.request({ ':path': `/plain?access_token=${G.h2Query}`, ':authority': `ann:${G.h2Auth}@127.0.0.1` });
    req.on('error', reject);
    req.resume().on('end', resolve);
  });
  await new Promise<void>((resolve) => session.close(resolve));
  for (const path of ['/ws', '/ghp']) {
    const ws = new WebSocket(`${h1.replace('http', 'ws')}${path}`);
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    ws.send('hello');
    await new Promise((resolve) => ws.once('close', resolve));
  }
}

/** Every string of each journal record decoded, and the journal's text. */
function journalText(out: string): string {
  const journal = readFileSync(`${out}.journal`, 'utf8');
  const records = journal.split('\n').filter((l) => l !== '').flatMap((l) => decodedStrings(JSON.parse(l)));
  return [journal, ...records].join('\n');
}

const found = (text: string) => GAPS.filter((s) => text.includes(s));

describe('secrets in places a probe found in clear', () => {
  it("an h2 :path's query and :authority's password, a nameless cookie, a `;` query, a multi-line SSE event, a close reason: none in the HAR or the printed lines", async () => {
    const { h1, h2 } = await gapUpstreams();
    for (const redact of [true, false]) {
      const [a, b] = await Promise.all([gapCapture(h1, join(dir, 'gaps', `h1-${redact}.har`), redact), gapCapture(h2, join(dir, 'gaps', `h2-${redact}.har`), redact)]);
      await sendGaps(a.url, b.url);
      for (const { bb } of [a, b]) bb.child.kill('SIGINT');
      assert.deepEqual(await Promise.all([a.bb.exited, b.bb.exited]), [0, 0], a.bb.stderr() + b.bb.stderr());
      const hars = ['h1', 'h2'].map((n) => JSON.parse(readFileSync(join(dir, 'gaps', `${n}-${redact}.har`), 'utf8')));
      const text = [...hars.flatMap((har) => decodedStrings(har)), a.bb.stdout(), b.bb.stdout()].join('\n');
      if (redact) {
        assert.deepEqual(found(text), []);
        const closes = hars[0].log.entries.filter((e: { _bb?: { close?: unknown } }) => e._bb?.close);
        assert.equal(closes.length, 2);
        for (const close of closes) assert.match(close._bb.close.reason, /^bye <redacted:[0-9a-f]{8}>$/, 'the reason keeps its words');
      } else assert.deepEqual(found(text), GAPS);
    }
  });

  it('after kill -9: the journal, decoded, holds none of them; bb recover writes a HAR without them', async () => {
    const { h1, h2 } = await gapUpstreams();
    for (const redact of [true, false]) {
      const outs = ['h1', 'h2'].map((n) => join(dir, 'gaps-killed', `${n}-${redact}.har`));
      const [a, b] = await Promise.all([gapCapture(h1, outs[0]!, redact), gapCapture(h2, outs[1]!, redact)]);
      await sendGaps(a.url, b.url);
      // End records are written before the last byte goes out: every exchange above is on disk.
      for (const { bb } of [a, b]) bb.child.kill('SIGKILL');
      await Promise.all([a.bb.exited, b.bb.exited]);
      const text = outs.map(journalText).join('\n');
      if (!redact) {
        // The SSE event is a body: sealed in the sidecar, never in the journal.
        assert.deepEqual(found(text), GAPS.filter((s) => s !== G.sse));
        continue;
      }
      assert.deepEqual(found(text), []);
      for (const out of outs) {
        const recover = startBb(['recover', out], { BB_HOME: join(dir, 'gap-home') });
        assert.equal(await recover.exited, 0, recover.stderr());
      }
      assert.deepEqual(found(outs.flatMap((out) => decodedStrings(JSON.parse(readFileSync(out, 'utf8')))).join('\n')), []);
    }
  });
});
