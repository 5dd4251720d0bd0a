// Ordinal numbers across entries, recorded for real (docs/diff.md "Ids
// numbered along aligned places"): a server in two builds, the new one
// naming the account's id in a header and a WebSocket message earlier than
// the old one did, recorded through bb while a client drives both the same
// way; `bb diff` lists the two new places and nothing else, not every later
// use of the id read as `changed <UUID:2> → <UUID:1>`.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { runBb } from '../helpers/cli.js';

type Build = 'old' | 'new';

/** The server: /login makes an account (a fresh uuid each run), /me and /accounts/:id use it, /live greets over WebSocket. */
async function start(cleanups: Cleanups, build: () => Build): Promise<string> {
  let account = '';
  const server = http.createServer((req, res) => {
    const json = (v: unknown, headers: http.OutgoingHttpHeaders = {}) => {
      res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(v));
    };
    if (req.url === '/login') {
      account = randomUUID();
      // The new build names the account already here, in a header.
      json({ ok: true }, build() === 'new' ? { 'X-Account': account } : {});
    } else if (req.url === '/me') json({ account, name: 'ann' });
    else if (req.url === `/accounts/${account}`) json({ account, orders: [{ n: 1, account }] });
    else {
      res.writeHead(404);
      res.end();
    }
  });
  const wss = new WebSocketServer({ server, path: '/live' });
  wss.on('connection', (ws) => {
    // The new build greets with the account before the message both send.
    if (build() === 'new') ws.send(JSON.stringify({ type: 'hello', account }));
    ws.on('message', () => ws.send(JSON.stringify({ type: 'subscribed', account })));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => { wss.close(); server.closeAllConnections(); server.close(r); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The client: a WebSocket first (so its early message comes before every later use), then the HTTP calls. */
async function drive(base: string): Promise<void> {
  const get = async (path: string) => (await fetch(base + path)).json() as Promise<{ account?: string }>;
  await get('/login');
  const ws = new WebSocket(base.replace('http', 'ws') + '/live');
  await once(ws, 'open');
  ws.send(JSON.stringify({ type: 'subscribe' }));
  await new Promise<void>((resolve) => ws.on('message', (d) => { if (String(d).includes('subscribed')) resolve(); }));
  ws.close();
  await once(ws, 'close');
  const me = await get('/me');
  await get(`/accounts/${me.account}`);
}

describe('bb diff on two real recordings: an id sent earlier by the new build', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  it('lists the new header and the new message, and no later use of the id', async () => {
    let build: Build = 'old';
    const target = await start(cleanups, () => build);
    const files: string[] = [];
    for (const b of ['old', 'new'] as const) {
      build = b;
      const rec = await record(cleanups, target);
      await drive(`http://127.0.0.1:${rec.port}`);
      await rec.finish();
      files.push(join(rec.dir, 'cap.har'));
    }
    const r = await runBb(['diff', files[0]!, files[1]!, '--rows']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^DIFF: 2 real findings \(2 differences\)/, r.stdout);
    assert.match(r.stdout, /response\.headers\.x-account added "<UUID:\d+>"/, r.stdout);
    assert.match(r.stdout, /ws\.messages\[\] extra .*"hello"/, r.stdout);
    assert.doesNotMatch(r.stdout, /changed "[^"]*<UUID/, r.stdout);
  });
});
