// Two recordings through bb of one app that sets a random session cookie
// (Max-Age, Expires) and answers epoch seconds and milliseconds under short
// keys compare MATCH with no config; the same app minus Max-Age is one real
// finding, `response.cookies.sid.max-age removed`; with the cookie and
// timestamp rules switched off by name the two runs differ as they did before.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

/** How the app sets its session cookie. */
interface Build {
  maxAge: boolean;
}

/** The app: POST /login sets `sid` (random), GET /me and /items want it back and answer epoch fields. */
async function app(cleanups: Cleanups, build: Build): Promise<string> {
  const server = http.createServer((req, res) => {
    const now = Date.now();
    if (req.method === 'POST' && req.url === '/login') {
      const attrs = ['Path=/', ...(build.maxAge ? ['Max-Age=3600'] : []), `Expires=${new Date(now + 3_600_000).toUTCString()}`, 'HttpOnly', 'SameSite=Lax'];
      res.writeHead(200, { 'Content-Type': 'application/json', 'Set-Cookie': [`sid=${randomBytes(16).toString('hex')}; ${attrs.join('; ')}`, 'theme=dark; Path=/'] });
      res.end(JSON.stringify({ ok: true }));
      return;
    }
    const signedIn = /(^|; )sid=[0-9a-f]{32}(;|$)/.test(req.headers.cookie ?? '');
    res.writeHead(signedIn ? 200 : 401, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(req.url === '/me' ? { user: 'u', t: now, s: Math.floor(now / 1000) } : { items: [{ id: 1, at: now }], n: 1 }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One request through the proxy; resolves to its Set-Cookie headers. */
function call(port: number, method: string, path: string, cookie?: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: cookie ? { Cookie: cookie } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers['set-cookie'] ?? []));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Records one session against a fresh app of `build` (its own bb home, so its own redaction key); returns the HAR's path. */
async function session(cleanups: Cleanups, build: Build): Promise<string> {
  const rec = await record(cleanups, await app(cleanups, build));
  const set = await call(rec.port, 'POST', '/login');
  const cookie = set.map((c) => c.split(';')[0]).join('; ');
  await call(rec.port, 'GET', '/me', cookie);
  await call(rec.port, 'GET', '/items', cookie);
  await rec.finish();
  return join(rec.dir, 'cap.har');
}

describe('bb diff on two recordings of an app with a session cookie', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const t = tempDir();
  const hars: Record<string, string> = {};
  const env = { NO_COLOR: '1' };

  it('matches two runs of one build with no config', async () => {
    hars.a = await session(cleanups, { maxAge: true });
    // A second apart: Expires and the epoch fields differ between the runs.
    await sleep(1100);
    hars.b = await session(cleanups, { maxAge: true });
    const r = await runBb(['diff', hars.a, hars.b], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^MATCH/, r.stdout);
  });

  it('reports a Set-Cookie that lost its Max-Age as its one real finding', async () => {
    const c = await session(cleanups, { maxAge: false });
    const r = await runBb(['diff', hars.a!, c], env);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^DIFF: 1 real finding\b/, r.stdout);
    assert.match(r.stdout, /response\.cookies\.sid\.max-age removed/, r.stdout);
  });

  it('differs as before with the rules switched off by name', async () => {
    const config = await t.write('off.json', { normalize: { disable: ['cookies', 'redacted', 'http-dates', 'epoch-timestamps', 'issued-values'] } });
    const r = await runBb(['diff', hars.a!, hars.b!, '--config', config], env);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /response\.headers\.set-cookie/, r.stdout);
    assert.match(r.stdout, /request\.headers\.cookie/, r.stdout);
    assert.match(r.stdout, /response\.body\.t\b/, r.stdout);
  });
});
