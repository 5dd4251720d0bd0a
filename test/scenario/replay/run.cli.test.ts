// bb replay end to end: real services on loopback that make up their ids at
// random, recorded through bb's proxy, replayed by the real bb binary
// against a fresh instance, the two captures compared with bb diff.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import WebSocket from 'ws';
import { startRecording } from '../../../scenario/index.js';
import type { Har } from '../../../capture/index.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startReplayService, type ReplayService } from './service.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const services: ReplayService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

async function service(): Promise<ReplayService> {
  const s = await startReplayService();
  services.push(s);
  return s;
}

/** Records `drive(proxyUrl)` against a fresh service into NAME.har. */
async function recordCapture(name: string, drive: (url: string) => Promise<void>): Promise<string> {
  const s = await service();
  const rec = await startRecording({ target: s.url, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
  try {
    await drive(rec.url);
  } finally {
    await rec.close(1000);
  }
  return rec.out;
}

async function call(c: Client, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Record<string, any> }> {
  const res = await c.request({ method: method as 'GET', path, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text && /json/.test(String(res.headers['content-type'])) ? JSON.parse(text) : text };
}

const readHar = async (path: string): Promise<Har> => JSON.parse(await readFile(path, 'utf8'));
const statuses = (har: Har) => har.log.entries.sort((a, b) => a._bb!.seq - b._bb!.seq).map((e) => `${e.request.method} ${new URL(e.request.url).pathname.replace(/item_[0-9a-f]+/, 'ID')} ${e.response.status}`);

describe('bb replay: a REST service that issues random ids', () => {
  let original: string;
  const config = tmp.path('ids.config.json');
  before(async () => {
    await writeFile(config, JSON.stringify({ normalize: { patterns: [{ name: 'item-ids', regex: 'item_[0-9a-f]{16}', ordinal: 'ITEM' }] } }));
    original = await recordCapture('rest', async (url) => {
      const c = new Client(url);
      const a = (await call(c, 'POST', '/items', { name: 'alpha' })).body;
      await call(c, 'GET', `/items/${a.id}`);
      await call(c, 'PATCH', `/items/${a.id}`, { name: 'alpha, renamed' });
      const b = await call(c, 'POST', '/items', { name: 'beta' });
      // The second id goes back as the Location said it.
      await call(c, 'GET', b.headers.location);
      await call(c, 'DELETE', `/items/${a.id}`);
      await call(c, 'GET', '/items');
      await call(c, 'GET', `/items/${a.id}?fields=name`);
      await c.close();
    });
  });

  it('replayed against a fresh instance, the ids followed: bb diff says MATCH with an ordinal rule', async () => {
    const fresh = await service();
    const out = tmp.path('rest-replay.har');
    const report = tmp.path('rest-replay.json');
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', out, '--json', report], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, new RegExp(`^replayed 8 exchanges and 0 WebSocket messages to ${fresh.url}, \\d+ values? rewritten → `));
    assert.deepEqual(statuses(await readHar(out)), statuses(await readHar(original)));
    assert.deepEqual(fresh.log.map((l) => l.replace(/item_[0-9a-f]+/, 'ID')), [
      'POST /items 201', 'GET /items/ID 200', 'PATCH /items/ID 200', 'POST /items 201', 'GET /items/ID 200', 'DELETE /items/ID 204', 'GET /items 200', 'GET /items/ID 404',
    ]);
    const json = JSON.parse(await readFile(report, 'utf8'));
    assert.equal(json.replayed, 8);
    assert.deepEqual(json.failed, []);
    // The first id, issued by the first response (its Location, then its body), is used four times.
    assert.ok(json.rewritten.some((r: any) => r.from.entry === '#1' && r.uses === 4), JSON.stringify(json.rewritten));
    const diff = await runBb(['diff', original, out, '--config', config], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });

  it('with --no-correlate the old ids go out and the fresh instance answers 404', async () => {
    const fresh = await service();
    const out = tmp.path('rest-nocorrelate.har');
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', out, '--no-correlate'], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /, 0 values rewritten → /);
    assert.deepEqual(fresh.log.filter((l) => / 404$/.test(l)).length, 5, fresh.log.join('\n'));
    const diff = await runBb(['diff', original, out, '--config', config], env);
    assert.equal(diff.code, 1, diff.stdout);
  });

  it('the summary line counts in English: 1 exchange, 1 value rewritten', async () => {
    const one = await recordCapture('rest-one', async (url) => {
      const c = new Client(url);
      await call(c, 'GET', '/items');
      await c.close();
    });
    const followed = await recordCapture('rest-followed', async (url) => {
      const c = new Client(url);
      const a = (await call(c, 'POST', '/items', { name: 'a' })).body;
      await call(c, 'GET', `/items/${a.id}`);
      await c.close();
    });
    const fresh = await service();
    const single = await runBb(['replay', one, '--target', fresh.url, '--out', tmp.path('rest-one-replay.har')], env);
    assert.equal(single.code, 0, single.stdout + single.stderr);
    assert.match(single.stdout, /^replayed 1 exchange and 0 WebSocket messages to .*, 0 values rewritten → /);
    const rewritten = await runBb(['replay', followed, '--target', fresh.url, '--out', tmp.path('rest-followed-replay.har'), '--json', tmp.path('rest-followed.json')], env);
    assert.equal(rewritten.code, 0, rewritten.stdout + rewritten.stderr);
    const { rewritten: bindings } = JSON.parse(await readFile(tmp.path('rest-followed.json'), 'utf8'));
    assert.equal(bindings.length, 1, JSON.stringify(bindings));
    assert.match(rewritten.stdout, /^replayed 2 exchanges and 0 WebSocket messages to .*, 1 value rewritten → /);
  });

  it('refuses to overwrite --out without --force, before sending anything', async () => {
    const fresh = await service();
    const out = tmp.path('taken.har');
    await writeFile(out, 'precious');
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', out], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /exists: choose another --out, or add --force/);
    assert.equal(await readFile(out, 'utf8'), 'precious');
    assert.deepEqual(fresh.log, []);
  });
});

describe('bb replay: values issued in bodies that are not plain JSON', () => {
  it("Engine.IO's 0{\"sid\":…} handshake and a plain-text token sent back as a redacted query parameter are followed", async () => {
    const original = await recordCapture('eio', async (url) => {
      const c = new Client(url);
      const handshake = (await call(c, 'GET', '/eio?EIO=4&transport=polling')).body as string;
      const sid = JSON.parse(handshake.slice(1)).sid;
      assert.equal((await call(c, 'GET', `/eio?EIO=4&transport=polling&sid=${sid}`)).status, 200);
      const token = (await call(c, 'GET', '/token')).body as string;
      assert.equal((await call(c, 'GET', `/secure?token=${token}`)).status, 200);
      await c.close();
    });
    const har = await readHar(original);
    assert.ok(har.log.entries.some((e) => /\/secure\?token=<redacted:[0-9a-f]{8}>$/.test(e.request.url)), 'the token is redacted where it is sent');
    const fresh = await service();
    const report = tmp.path('eio.json');
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', tmp.path('eio-replay.har'), '--json', report], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.deepEqual(fresh.log, ['GET /eio 200', 'GET /eio 200', 'GET /token 200', 'GET /secure 200']);
    const paths = JSON.parse(await readFile(report, 'utf8')).rewritten.map((r: any) => r.from.path);
    assert.ok(paths.includes('body:$.sid~0'), paths.join(', '));
    assert.ok(paths.includes('body:~0'), paths.join(', '));
  });
});

describe('bb replay: a token sent back in a header named as one', () => {
  it('is redacted where it is issued and where it is sent, and the fresh server\'s own token is sent', async () => {
    const original = await recordCapture('api-token', async (url) => {
      const c = new Client(url);
      const token = ((await call(c, 'POST', '/api-login')).body as { user: { token: string } }).user.token;
      assert.equal((await call(c, 'GET', '/whoami', undefined, { 'Authorization-Token': token })).status, 200);
      await c.close();
    });
    const har = await readHar(original);
    const sent = har.log.entries.find((e) => e.request.url.endsWith('/whoami'))!.request.headers.find((h) => h.name === 'Authorization-Token')!.value;
    assert.match(sent, /^<redacted:[0-9a-f]{8}>$/, 'the token is redacted where it is sent');
    const fresh = await service();
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', tmp.path('api-token-replay.har')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.deepEqual(fresh.log, ['POST /api-login 200', 'GET /whoami 200']);
  });
});

describe('bb replay: a session-cookie login, through redaction', () => {
  let original: string;
  before(async () => {
    original = await recordCapture('login', async (url) => {
      const c = new Client(url);
      const login = await call(c, 'POST', '/login', { user: 'alice', password: 'hunter2' });
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      assert.equal((await call(c, 'GET', '/me', undefined, { cookie: `theme=dark; ${cookie}` })).status, 200);
      await c.close();
    });
  });

  it('the capture holds the password and the cookie redacted, the same secret as the same placeholder', async () => {
    const har = await readHar(original);
    const [login, me] = har.log.entries.sort((a, b) => a._bb!.seq - b._bb!.seq);
    assert.match(login!.request.postData!.text!, /"password":"<redacted:[0-9a-f]{8}>"/);
    const set = login!.response.headers.find((h) => h.name.toLowerCase() === 'set-cookie')!.value;
    const sent = me!.request.headers.find((h) => h.name.toLowerCase() === 'cookie')!.value;
    assert.equal(sent.split('sid=')[1], set.split(';')[0]!.split('sid=')[1]);
  });

  it('stops with exit 2 before sending anything when the password is not given, naming the field and the config key', async () => {
    const fresh = await service();
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', tmp.path('login-nosecret.har')], env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /#\d+ POST \/login carries a redacted value <redacted:[0-9a-f]{8}> that no server response explains, in JSON body field password: give it in the config's "replay": \{ "values": \{ "password": "…" \} \}\. Nothing was sent\./);
    assert.deepEqual(fresh.log, []);
  });

  it('with replay.values the login succeeds and the new session cookie is sent: both answers 200', async () => {
    const fresh = await service();
    const partial = tmp.path('login-partial.config.json');
    await writeFile(partial, JSON.stringify({ replay: { values: { password: 'hunter2' } } }));
    // A cookie the client set itself (not from a Set-Cookie) is a client secret too, asked for by name.
    const half = await runBb(['replay', original, '--target', fresh.url, '--out', tmp.path('login-half.har'), '--config', partial], env);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /GET \/me carries a redacted value .* in cookie theme: give it in the config's "replay": \{ "values": \{ "theme": "…" \} \}/);
    // A misspelt key is refused before anything is sent, not ignored (the values it meant would be missing).
    const misspelt = tmp.path('login-misspelt.config.json');
    await writeFile(misspelt, JSON.stringify({ replays: { values: { password: 'hunter2', theme: 'dark' } } }));
    const refused = await runBb(['replay', original, '--target', fresh.url, '--out', tmp.path('login-misspelt.har'), '--config', misspelt], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /^bb: config .*login-misspelt\.config\.json: unknown key "replays": did you mean "replay"\?\n$/);
    assert.deepEqual(fresh.log, []);
    const config = tmp.path('login.config.json');
    await writeFile(config, JSON.stringify({ replay: { values: { password: 'hunter2', theme: 'dark' } } }));
    const out = tmp.path('login-replay.har');
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', out, '--config', config], env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(fresh.log, ['POST /login 200', 'GET /me 200']);
    // A new session is a new secret: numbered, the cookie the server set is the one sent back.
    const ordinals = await tmp.write('secrets.config.json', { normalize: { patterns: [{ name: 'secrets', regex: '<redacted:[0-9a-f]{8}>', ordinal: 'SECRET' }] } });
    const diff = await runBb(['diff', original, out, '--config', ordinals], env);
    assert.equal(diff.code, 0, diff.stdout);
  });

  it('a redacted Authorization nobody issued asks for --header; --header supplies it', async () => {
    const withAuth = await recordCapture('auth', async (url) => {
      const c = new Client(url);
      await call(c, 'GET', '/items', undefined, { authorization: 'Bearer s3cr3t-typed-by-a-person' });
      await c.close();
    });
    const fresh = await service();
    const refused = await runBb(['replay', withAuth, '--target', fresh.url, '--out', tmp.path('auth-1.har')], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /in header authorization: give it with --header 'authorization: Bearer …'/);
    const run = await runBb(['replay', withAuth, '--target', fresh.url, '--out', tmp.path('auth-2.har'), '--header', 'Authorization: Bearer other'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(fresh.log, ['GET /items 200']);
  });
});

describe('bb replay: a WebSocket conversation with server-issued session and cursors', () => {
  it('replays message for message, each cursor the fresh server issued sent back', async () => {
    const original = await recordCapture('ws', async (url) => {
      const ws = new WebSocket(url.replace('http', 'ws') + '/ws');
      const inbox: any[] = [];
      const next = () => new Promise<any>((r) => (inbox.length ? r(inbox.shift()) : ws.once('message', () => r(inbox.shift()))));
      ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
      await new Promise((r) => ws.once('open', r));
      const hello = await next();
      ws.send(JSON.stringify({ type: 'subscribe', session: hello.session, cursor: hello.cursor }), { compress: false });
      const sub = await next();
      assert.equal(sub.type, 'subscribed');
      ws.send(JSON.stringify({ type: 'ack', cursor: sub.next }));
      assert.equal((await next()).type, 'event');
      ws.send(JSON.stringify({ type: 'ack', cursor: sub.next, note: 'x'.repeat(2000) }));
      assert.equal((await next()).type, 'event');
      ws.close(4001, 'done');
      await new Promise((r) => ws.once('close', r));
    });
    const fresh = await service();
    const out = tmp.path('ws-replay.har');
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', out], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^replayed 1 exchange and \d+ WebSocket messages/);
    assert.equal(fresh.wsReceived.length, 3);
    const har = await readHar(out);
    const ws = har.log.entries[0]!;
    const data = (h: Har) => h.log.entries[0]!._webSocketMessages!.filter((m) => m.opcode === 1).map((m) => `${m.type} ${JSON.parse(m.data).type}`);
    assert.deepEqual(data(har), data(await readHar(original)));
    assert.ok(!data(har).includes('receive error'));
    assert.equal(ws._bb!.close!.code, 4001);
    assert.ok(ws._bb!.extensions && 'permessage-deflate' in ws._bb!.extensions, 'deflate negotiated as in the original');
    // Each client message compressed or not as the original was.
    const compressed = (h: Har) => h.log.entries[0]!._webSocketMessages!.filter((m) => m.type === 'send' && m.opcode === 1).map((m) => m._bb?.compressed ?? false);
    assert.deepEqual(compressed(await readHar(original)), [false, true, true]);
    assert.deepEqual(compressed(har), [false, true, true]);
  });
});

describe('bb replay: concurrency', () => {
  /** Records `body` driven on two connections of its own. */
  const recordOnTwo = (name: string, body: (a: Client, b: Client) => Promise<void>) =>
    recordCapture(name, async (url) => {
      const a = new Client(url);
      const b = new Client(url);
      await body(a, b);
      await Promise.all([a.close(), b.close()]);
    });
  /** Replays `capture` against a fresh service; resolves to the service once bb replay exited 0. */
  const replayFresh = async (capture: string, out: string) => {
    const fresh = await service();
    const run = await runBb(['replay', capture, '--target', fresh.url, '--out', tmp.path(out)], env);
    assert.equal(run.code, 0, run.stderr);
    return fresh;
  };

  it('two requests that overlapped on two connections overlap again at the server; sequential ones stay sequential', async () => {
    const original = await recordOnTwo('overlap', async (a, b) => {
      await Promise.all([call(a, 'GET', '/slow?ms=300'), call(b, 'GET', '/slow?ms=300')]);
      await call(a, 'GET', '/slow?ms=10');
      await call(b, 'GET', '/slow?ms=10');
    });
    const fresh = await replayFresh(original, 'overlap-replay.har');
    assert.equal(fresh.maxInFlight(), 2);
    const sequential = await recordOnTwo('sequential', async (a, b) => {
      await call(a, 'GET', '/slow?ms=100');
      await call(b, 'GET', '/slow?ms=100');
    });
    const fresh2 = await replayFresh(sequential, 'sequential-replay.har');
    // On two connections, but the second started after the first ended: happens-before keeps them apart.
    assert.equal(fresh2.maxInFlight(), 1);
  });
});

describe('bb replay: bad input', () => {
  it('a file that is not a HAR, a cut-off file, a HAR without entries, an entry without a request, a truncated request body, a target that is down or has a path: exit 2, one line each', async () => {
    const fresh = await service();
    const notHar = await tmp.write('not.har', { hello: 'world' });
    const empty = await tmp.write('empty.har', { log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [] } });
    const entry = (extra: Record<string, unknown>) => ({
      startedDateTime: new Date().toISOString(), time: 1, cache: {}, timings: { send: 0, wait: 1, receive: 0 },
      request: { method: 'POST', url: 'http://127.0.0.1:1/items', httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: 10, postData: { mimeType: 'application/json', text: '{"na' } },
      response: { status: 201, statusText: 'Created', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: 'application/json' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      ...extra,
    });
    const truncated = await tmp.write('truncated.har', { log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [entry({ _bb: { seq: 1, seqEnd: 2, truncated: { request: 4 } } })] } });
    const fine = await tmp.write('fine.har', { log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [entry({})] } });
    // A WebSocket whose client message was cut at capture (past the body cap or its conversation's budget): it would go as its start.
    const wsCut = await tmp.write('ws-cut.har', { log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [entry({
      request: { method: 'GET', url: 'http://127.0.0.1:1/chat', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Upgrade', value: 'websocket' }], queryString: [], headersSize: -1, bodySize: 0 },
      response: { status: 101, statusText: 'Switching Protocols', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      _resourceType: 'websocket',
      _webSocketMessages: [{ type: 'send', time: 1, opcode: 1, data: 'hello' }, { type: 'send', time: 2, opcode: 1, data: '', _bb: { truncated: 0, size: 70000, restHash: 'sha256:00' } }],
    })] } });
    // A conversation whose client sent more messages than a capture lists: those past the list are a count and a hash.
    const wsUnlisted = await tmp.write('ws-unlisted.har', { log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [entry({
      request: { method: 'GET', url: 'http://127.0.0.1:1/chat', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Upgrade', value: 'websocket' }], queryString: [], headersSize: -1, bodySize: 0 },
      response: { status: 101, statusText: 'Switching Protocols', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      _resourceType: 'websocket',
      _webSocketMessages: [{ type: 'send', time: 1, opcode: 1, data: 'hello' }],
      _bb: { seq: 1, unlisted: { request: 7 }, unlistedHash: { request: 'sha256:00' } },
    })] } });
    const { request: _dropped, ...noRequest } = entry({}) as Record<string, unknown>;
    const requestless = await tmp.write('requestless.har', { log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [entry({}), noRequest] } });
    const cut = tmp.path('cut.har');
    await writeFile(cut, JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [entry({})] } }).slice(0, 120));
    const cases: Array<[string[], RegExp]> = [
      [[notHar, '--target', fresh.url], /not\.har/],
      [[empty, '--target', fresh.url], /no (entries|exchanges)/],
      [[requestless, '--target', fresh.url], /log\.entries\[1\]\.request must be an object/],
      [[cut, '--target', fresh.url], /cut\.har is not valid JSON .*truncated/],
      [[truncated, '--target', fresh.url], /request body of #1 POST .* was truncated at capture \(4 bytes kept\)/],
      [[wsCut, '--target', fresh.url], /a WebSocket message the client sent on #1 http:\/\/127\.0\.0\.1:1\/chat was cut at capture \(0 of 70000 bytes kept\): it cannot be re-sent; record again with a larger --body-cap or --ws-budget\.\n$/],
      [[wsUnlisted, '--target', fresh.url], /the client sent 7 WebSocket messages on #1 http:\/\/127\.0\.0\.1:1\/chat past the 100000 a capture lists; only their count and a hash were kept, so they cannot be re-sent/],
      [[fine, '--target', 'http://127.0.0.1:9'], /the target http:\/\/127\.0\.0\.1:9 does not accept connections \(ECONNREFUSED\)/],
      [[fine, '--target', 'localhost'], /--target needs a URL like http:\/\/127\.0\.0\.1:3000/],
      // Each request goes to its own recorded path: a prefix on the target would be dropped, so it is refused.
      [[fine, '--target', `${fresh.url}/prefix`], /--target is an origin \(scheme, host, port\) like http:\/\/127\.0\.0\.1:3000, without a path; got 'http:\/\/127\.0\.0\.1:\d+\/prefix'/],
      [[fine, '--target', fresh.url, '--pace', 'fast'], /--pace needs asap, original or a speed like 2x/],
      [[fine, '--target', fresh.url, '--header', 'nocolon'], /--header needs 'Name: value'/],
    ];
    for (const [args, pattern] of cases) {
      const run = await runBb(['replay', ...args, '--out', tmp.path('bad-out.har')], env);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, pattern, args.join(' '));
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    }
    assert.deepEqual(fresh.log, []);
  });

  it('a target that closes mid-replay: exit 1, the failures named, the capture written', async () => {
    const original = await recordCapture('dying', async (url) => {
      const c = new Client(url);
      for (let i = 0; i < 3; i++) await call(c, 'POST', '/items', { name: `n${i}` });
      await c.close();
    });
    // The target answers its first request, then hangs up on every later one before a byte of its answer (a
    // target closed by a timer raced the second answer: sometimes cut mid-answer, a failure of another name).
    let requests = 0;
    const dying = http.createServer((req, res) => {
      if (requests++ > 0) return void req.socket.destroy();
      req.resume();
      req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((r) => dying.listen(0, '127.0.0.1', r));
    const out = tmp.path('dying-replay.har');
    const run = await runBb(['replay', original, '--target', `http://127.0.0.1:${(dying.address() as AddressInfo).port}`, '--out', out, '--pace', 'original'], env);
    dying.closeAllConnections();
    await new Promise((r) => dying.close(r));
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /bb replay: #\d+: no response from the target \(/);
    assert.match(run.stdout, /\(2 of 3 got no response\)/);
    const har = await readHar(out);
    assert.equal(har.log.entries.length, 3);
  });
});
