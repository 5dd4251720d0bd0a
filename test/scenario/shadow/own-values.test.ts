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
import { startShadow } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { compared, findingKeys, offlineKeys } from './compared.js';

const tmp = tempDir();

/** A user service; the new build capitalizes the name it stores and answers (and finds users whatever the case). */
async function users(build: 'old' | 'new'): Promise<{ url: string; paths: string[] }> {
  const known = new Map<string, string>();
  const paths: string[] = [];
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
      const m = /^\/users\/([^/?]+)$/.exec(req.url ?? '');
      if (m && known.has(m[1]!.toLowerCase())) return send(200, { username: known.get(m[1]!.toLowerCase()), plan: 'free' });
      send(404, { error: 'no such user' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => closeHttpAndWs(server));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
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
});
