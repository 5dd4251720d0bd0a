// A value the client chose, that the candidate echoes otherwise (scenario/shadow/tee.ts, batch-binding.ts,
// diff/bind/counterparts.ts ClientSends). `bb diff` never binds a value the client sent before any server
// issued it (diff/bind/bound.ts: the client's own), nor a word. A new build that capitalizes the user name the
// client signed up with (`alice42` → `Alice42`) is a regression of its answers; bb shadow learned `Alice42` as
// the candidate's counterpart of `alice42` as it learns a server's ids, so the relay sent the candidate
// `GET /users/Alice42` for the client's `GET /users/alice42`, and the live comparison bound the two names:
// live, the sign-up's answer compared equal and its request changed; `bb diff` of the captures found the
// changed name and a missing and an extra read. Now the relay sends the client's value as written and the
// comparison compares it as it is: the live findings equal bb diff's, the changed name on both routes.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import { WebSocketServer, WebSocket } from 'ws';
import { startShadow } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { compared, findingKeys, offlineKeys } from './compared.js';

const tmp = tempDir();

/** A user service; the new build capitalizes the name it stores and answers (and finds users whatever the case). */
async function users(build: 'old' | 'new'): Promise<{ url: string; paths: string[]; said: string[] }> {
  const known = new Map<string, string>();
  const paths: string[] = [];
  const said: string[] = [];
  const shown = (name: string) => (build === 'new' ? name[0]!.toUpperCase() + name.slice(1) : name);
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url}`);
      const send = (status: number, doc: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      if (req.method === 'POST' && req.url === '/users') {
        const name = (JSON.parse(body) as { username: string }).username;
        const username = build === 'new' ? name[0]!.toUpperCase() + name.slice(1) : name;
        known.set(name.toLowerCase(), username);
        return send(201, { username, created: true });
      }
      if (req.url?.startsWith('/feed?')) {
        // An event stream of what the user the client named follows, the name as the server shows it.
        const user = new URL(req.url, 'http://x').searchParams.get('user') ?? '';
        known.set(user.toLowerCase(), shown(user));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ user: shown(user), n: 1 })}\n\n`);
        return void res.end(`data: ${JSON.stringify({ user: shown(user), n: 2 })}\n\n`);
      }
      const m = /^\/users\/([^/?]+)$/.exec(req.url ?? '');
      if (m && known.has(m[1]!.toLowerCase())) return send(200, { username: known.get(m[1]!.toLowerCase()), plan: 'free' });
      send(404, { error: 'no such user' });
    });
  });
  // A chat: the client joins with the name it chose, then speaks as it; the server answers with the name as it shows it.
  const wss = new WebSocketServer({ server, path: '/chat' });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const text = data.toString();
      said.push(text);
      const m = JSON.parse(text) as { join?: string; as?: string; say?: string; whoami?: boolean };
      if (m.whoami) ws.send(JSON.stringify({ me: [...known.values()].at(-1) ?? null }));
      else if (m.join) {
        known.set(m.join.toLowerCase(), shown(m.join));
        ws.send(JSON.stringify({ joined: shown(m.join), room: 'lobby' }));
      } else ws.send(JSON.stringify({ from: shown(m.as ?? ''), text: m.say }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => closeHttpAndWs(server, wss));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, said };
}

describe('bb shadow: a value the client chose, echoed otherwise by the candidate', () => {
  for (const name of ['alice42', 'alicewonder']) {
    it(`${name === 'alice42' ? 'a made value' : 'a word'} (${name}): sent on as written, compared as it is; live = bb diff of the captures`, async () => {
      const [primary, candidate, secondary] = [await users('old'), await users('new'), await users('old')];
      const out = tmp.path(name);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
      const c = new Client(shadow.url);
      try {
        const made = await c.request({ method: 'POST', path: '/users', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: name }) });
        assert.equal(made.statusCode, 201);
        await made.body.text();
        // The sign-up compared (and its answers learned from) before the read: a later batch.
        await compared(shadow, 1);
        for (let i = 0; i < 100 && (shadow.report()?.totals.regressions ?? 0) < 1; i++) await new Promise((r) => setTimeout(r, 20));
        const read = await c.request({ method: 'GET', path: `/users/${name}` });
        assert.equal(read.statusCode, 200);
        await read.body.text();
      } finally {
        await c.close();
      }
      const report = await shadow.close();
      // Each target got the client's name as the client wrote it.
      assert.deepEqual(candidate.paths, ['POST /users', `GET /users/${name}`]);
      assert.deepEqual(secondary.paths, ['POST /users', `GET /users/${name}`]);
      const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
      assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: ['real changed response.body.username'], offline: ['real changed response.body.username'] });
      assert.deepEqual(Object.fromEntries(Object.entries(report.routes).map(([r, n]) => [r, n.regressions])), { 'POST /users': 1, [`GET /users/${name}`]: 1 });
    });
  }

  it('a name the client joined a chat with: its later messages and reads reach each target as written; live = bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await users('old'), await users('new'), await users('old')];
    const out = tmp.path('chat');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
    const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/chat`);
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    const answers: string[] = [];
    const next = () => new Promise<void>((r) => ws.once('message', (d) => (answers.push(d.toString()), r())));
    let got = next();
    ws.send(JSON.stringify({ join: 'bob42' }));
    await got;
    // The targets' answers to the join crossed (the relay pairs them) before the client speaks again.
    await new Promise((r) => setTimeout(r, 200));
    got = next();
    ws.send(JSON.stringify({ say: 'hi', as: 'bob42' }));
    await got;
    await new Promise((r) => setTimeout(r, 200));
    const c = new Client(shadow.url);
    const read = await c.request({ method: 'GET', path: '/users/bob42' });
    assert.equal(read.statusCode, 200);
    await read.body.text();
    await c.close();
    ws.close();
    await new Promise((r) => ws.once('close', r));
    await compared(shadow, 2);
    const report = await shadow.close();
    // The client saw the primary's answers only.
    assert.deepEqual(answers, ['{"joined":"bob42","room":"lobby"}', '{"from":"bob42","text":"hi"}']);
    // Each target heard the client's name as the client wrote it.
    for (const t of [candidate, secondary]) {
      assert.deepEqual(t.said, ['{"join":"bob42"}', '{"say":"hi","as":"bob42"}']);
      assert.deepEqual(t.paths, ['GET /users/bob42']);
    }
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(findingKeys(report), offlineKeys(offline), JSON.stringify(report.findings.map((f) => [f.pattern, f.samples[0]])));
    assert.ok(findingKeys(report).includes('real changed response.body.username'), findingKeys(report).join('\n'));
    assert.ok(findingKeys(report).some((k) => k.startsWith('real changed ws.messages')), findingKeys(report).join('\n'));
  });

  it('a name the client asked an event stream for: its later read reaches each target as written; live = bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await users('old'), await users('new'), await users('old')];
    const out = tmp.path('feed');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
    const c = new Client(shadow.url);
    try {
      const feed = await c.request({ method: 'GET', path: '/feed?user=carol42' });
      assert.match(await feed.body.text(), /"user":"carol42"/);
      await compared(shadow, 1);
      for (let i = 0; i < 100 && (shadow.report()?.totals.regressions ?? 0) < 1; i++) await new Promise((r) => setTimeout(r, 20));
      const read = await c.request({ method: 'GET', path: '/users/carol42' });
      assert.equal(read.statusCode, 200);
      await read.body.text();
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    for (const t of [candidate, secondary]) assert.deepEqual(t.paths, ['GET /feed?user=carol42', 'GET /users/carol42']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: offlineKeys(offline), offline: ['real changed response.body.username', 'real changed response.events[].data.user'] });
  });

  it('a name the client signed up with, then echoed by a socket opened later: the later read reaches each target as written; live = bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await users('old'), await users('new'), await users('old')];
    const out = tmp.path('whoami');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
    const c = new Client(shadow.url);
    const made = await c.request({ method: 'POST', path: '/users', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'dave42' }) });
    assert.equal(made.statusCode, 201);
    await made.body.text();
    const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/chat`);
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    const me = new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
    ws.send(JSON.stringify({ whoami: true }));
    assert.equal(await me, '{"me":"dave42"}');
    ws.close();
    await new Promise((r) => ws.once('close', r));
    // The socket's entry compared (and learned from) before the read.
    await compared(shadow, 2);
    for (let i = 0; i < 100 && (shadow.report()?.routes['GET /chat']?.regressions ?? 0) < 1; i++) await new Promise((r) => setTimeout(r, 20));
    const read = await c.request({ method: 'GET', path: '/users/dave42' });
    assert.equal(read.statusCode, 200);
    await read.body.text();
    await c.close();
    const report = await shadow.close();
    for (const t of [candidate, secondary]) assert.deepEqual(t.paths, ['POST /users', 'GET /users/dave42']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: offlineKeys(offline), offline: ['real changed response.body.username', 'real changed ws.messages[].data.me'] });
  });
});
