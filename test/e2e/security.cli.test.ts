// Security, end to end through the proxy: secrets redacted at every position
// (request and response headers, Set-Cookie with its attributes kept, HAR
// cookies, query strings, JSON bodies, WebSocket JSON messages), the same
// secret giving the same placeholder in two captures, --no-redact keeping
// values; the admin endpoint and forward mode refusing non-loopback binds;
// the proxied port never answering bb's routes; capture files, the redaction
// key and the CA key owner-only even under umask 000.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import type { Har } from '../../capture/har.js';
import { runBb, startBb } from '../helpers/cli.js';
import { startAdmin } from '../../cli/admin.js';
import { isLoopbackHost as isLoopback } from '../../core/index.js';
import { startForwardProxy } from '../../proxy/forward.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { record } from '../helpers/recording.js';
import { cliProblem } from '../helpers/readers.js';
import { lazy } from '../helpers/steps.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';

/** Secrets, each unique, so a leak is found by searching the file for it. */
const S = {
  auth: 'Bearer sekrit-auth-0001',
  proxyAuth: 'Basic sekrit-proxy-0002',
  cookie: 'sid=sekrit-cookie-0003; theme=dark',
  apiKey: 'sekrit-apikey-0004',
  setCookie: 'sekrit-setcookie-0005',
  queryToken: 'sekrit-query-0006',
  password: 'sekrit-password-0007',
  accessToken: 'sekrit-access-0008',
  responseSecret: 'sekrit-response-0009',
  wsSend: 'sekrit-ws-send-0010',
  wsReceive: 'sekrit-ws-recv-0011',
  extraHeader: 'sekrit-extra-0012',
} as const;
const PLACEHOLDER = /^<redacted:[0-9a-f]{8}>$/;
/** The part of a secret that must never appear in a redacted file. */
const needle = (secret: string): string => /sekrit-[a-z-]+-\d{4}/.exec(secret)![0];

describe('security', () => {
  const cleanups = new Cleanups();
  let target: string;
  let upstreamHits: string[] = [];

  before(async () => {
    const server = http.createServer((req, res) => {
      upstreamHits.push(`${req.method} ${req.url}`);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.stringify({ secret: S.responseSecret, count: 3, token: 7, echo: Buffer.concat(chunks).length });
        res.setHeader('Set-Cookie', [`session=${S.setCookie}; Path=/app; HttpOnly; Max-Age=60; SameSite=Strict`]);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', () => ws.send(JSON.stringify({ type: 'reply', token: S.wsReceive, n: 1 }))));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.add(() => new Promise<void>((r) => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      server.close(() => r());
    }));
    target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => cleanups.run());

  /** Drives one request with a secret in every position, and one WebSocket message each way. */
  async function drive(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ user: 'ann', password: S.password, nested: { access_token: S.accessToken, prompt_tokens: 11 } });
      const req = http.request({
        host: '127.0.0.1', port, method: 'POST', path: `/app/login?token=${S.queryToken}&page=2`, agent: false,
        headers: {
          Authorization: S.auth, 'Proxy-Authorization': S.proxyAuth, Cookie: S.cookie, 'X-Api-Key': S.apiKey,
          'X-Extra-Secret': S.extraHeader, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body),
        },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
    const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
    await once(ws, 'open');
    const reply = once(ws, 'message');
    ws.send(JSON.stringify({ type: 'auth', token: S.wsSend, retries: 2 }));
    await reply;
    ws.close(1000);
    await once(ws, 'close');
  }

  async function captureOnce(name: string, bbHome: string, redact?: false): Promise<{ har: Har; text: string }> {
    const dir = tempDir(cleanups).dir;
    const rec = await record(cleanups, target, { out: join(dir, `${name}.har`), bbHome, redact: redact ?? { headers: ['x-extra-secret'] } });
    await drive(rec.port);
    const har = await rec.finish();
    return { har, text: await readFile(join(dir, `${name}.har`), 'utf8') };
  }

  // One bb home, and the first capture in it, made when a test first needs them: the second capture and
  // --no-redact use the same home (its redaction key), the second compares its placeholders with the first's.
  const sharedHome = lazy(async () => tempDir(cleanups).bbHome);
  const firstCapture = lazy(async () => captureOnce('first', await sharedHome()));

  it('redacts every secret in every position and keeps the rest', async () => {
    const first = await firstCapture();
    for (const [name, secret] of Object.entries(S)) {
      assert.ok(!first.text.includes(needle(secret)), `${name} leaked into the HAR`);
    }
    const http = first.har.log.entries.find((e) => e.request.url.includes('/app/login'))!;
    const header = (list: Array<{ name: string; value: string }>, name: string) => list.find((h) => h.name.toLowerCase() === name)?.value;
    // The auth scheme may stay readable ("Bearer <redacted:…>"); the credential never.
    for (const name of ['authorization', 'proxy-authorization', 'x-api-key', 'x-extra-secret']) {
      assert.match(header(http.request.headers, name) ?? '', /^(?:[A-Za-z]+ )?<redacted:[0-9a-f]{8}>$/, name);
    }
    assert.match(header(http.request.headers, 'cookie') ?? '', /<redacted:[0-9a-f]{8}>/);
    assert.equal(header(http.request.headers, 'content-type'), 'application/json', 'other headers untouched');
    // Set-Cookie: the value part only; the attributes stay readable.
    const setCookie = header(http.response.headers, 'set-cookie') ?? '';
    assert.match(setCookie, /^session=<redacted:[0-9a-f]{8}>; Path=\/app; HttpOnly; Max-Age=60; SameSite=Strict$/);
    for (const c of [...http.request.cookies, ...http.response.cookies]) assert.match(c.value, PLACEHOLDER, `cookie ${c.name}`);
    assert.ok(http.response.cookies.some((c) => c.name === 'session' && c.path === '/app' && c.httpOnly === true));
    // Query: the token is redacted in the URL and in queryString; page=2 stays.
    assert.match(http.request.url, /[?&]token=(%3C|<)redacted/);
    assert.match(http.request.url, /page=2/);
    assert.match(http.request.queryString.find((q) => q.name === 'token')!.value, PLACEHOLDER);
    // JSON bodies: string values of secret keys, at any depth; numbers never.
    const sent = JSON.parse(http.request.postData!.text!) as { user: string; password: string; nested: { access_token: string; prompt_tokens: number } };
    assert.equal(sent.user, 'ann');
    assert.match(sent.password, PLACEHOLDER);
    assert.match(sent.nested.access_token, PLACEHOLDER);
    assert.equal(sent.nested.prompt_tokens, 11);
    const got = JSON.parse(http.response.content.text!) as { secret: string; count: number; token: number };
    assert.match(got.secret, PLACEHOLDER);
    assert.equal(got.token, 7, 'a number is never redacted');
    // WebSocket JSON messages, both directions.
    const ws = first.har.log.entries.find((e) => e._resourceType === 'websocket')!;
    const msgs = (ws._webSocketMessages ?? []).filter((m) => m.opcode === 1).map((m) => ({ type: m.type, data: JSON.parse(m.data) as { token: string; retries?: number } }));
    assert.match(msgs.find((m) => m.type === 'send')!.data.token, PLACEHOLDER);
    assert.equal(msgs.find((m) => m.type === 'send')!.data.retries, 2);
    assert.match(msgs.find((m) => m.type === 'receive')!.data.token, PLACEHOLDER);
  });

  it('maps the same secret to the same placeholder in a second capture, and different secrets apart', async () => {
    const first = await firstCapture();
    const second = await captureOnce('second', await sharedHome());
    const placeholders = (text: string) => [...text.matchAll(/<redacted:[0-9a-f]{8}>/g)].map((m) => m[0]);
    assert.deepEqual(placeholders(second.text), placeholders(first.text));
    assert.ok(new Set(placeholders(first.text)).size >= 8, 'distinct secrets, distinct placeholders');
    // Another bb home has another key: its placeholders differ.
    const other = await captureOnce('other', tempDir(cleanups).bbHome);
    assert.notDeepEqual(new Set(placeholders(other.text)), new Set(placeholders(first.text)));
  });

  it('keeps every value with --no-redact', async () => {
    const plain = await captureOnce('plain', await sharedHome(), false);
    for (const [name, secret] of Object.entries(S)) assert.ok(plain.text.includes(needle(secret)), `${name} is kept`);
    assert.doesNotMatch(plain.text, /<redacted:/);
  });

  it('refuses a non-loopback admin endpoint, and forward mode on a non-loopback address without allowRemote', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.1', '10.0.0.1', '127.0.0.1.example.com', 'localhost.example.com', '0', '']) {
      assert.equal(isLoopback(host), false, host);
      await assert.rejects(startAdmin({ host, port: 0 }, []), (err: Error) => isBbError(err) && exitStatusFor(err) === 2 && /loopback/.test(err.message), host);
    }
    for (const host of ['127.0.0.1', '::1', '[::1]', 'localhost', '127.1.2.3']) assert.equal(isLoopback(host), true, host);
    await assert.rejects(startForwardProxy({ listen: { host: '0.0.0.0', port: 0 } }), /--allow-remote/);
    // Through the CLI: exit 2 and one line, nothing started.
    const home = tempDir(cleanups).bbHome;
    const fwd = await runBb(['capture', '--mode', 'forward', '--listen', '0.0.0.0:0', '--out', join(home, 'f.har')], { BB_HOME: home });
    assert.equal(cliProblem(fwd, true), undefined);
    assert.match(fwd.stderr, /--allow-remote/);
    const adm = await runBb(['capture', '--target', target, '--admin', '0.0.0.0:0', '--out', join(home, 'a.har')], { BB_HOME: home });
    assert.equal(cliProblem(adm, true), undefined);
    assert.match(adm.stderr, /loopback/);
  });

  it('never answers bb\'s own routes on the proxied port; files and keys are owner-only under umask 000', async () => {
    const dir = tempDir(cleanups).dir;
    const home = join(dir, 'home');
    const out = join(dir, 'cap.har');
    const env = { BB_HOME: home };
    const bb = startBb(['capture', '--target', target, '--out', out, '--admin', '127.0.0.1:0', '--quiet'], env, { sh: 'umask 000' });
    await bb.waitFor(/admin: http/, 30_000);
    const proxy = /(http:\/\/127\.0\.0\.1:\d+) -> /.exec(bb.stdout())![1]!;
    const admin = /admin: (http:\/\/127\.0\.0\.1:\d+)/.exec(bb.stdout())![1]!;
    upstreamHits = [];
    const status = await fetch(`${proxy}/status`);
    assert.match(await status.text(), /"secret"/, 'the server answered /status, not bb');
    const step = await fetch(`${proxy}/step`, { method: 'POST', body: '{"name": "sneaky"}' });
    assert.match(await step.text(), /"secret"/);
    assert.deepEqual(upstreamHits, ['GET /status', 'POST /step']);
    const own = (await (await fetch(`${admin}/status`)).json()) as { captures: unknown[] };
    assert.equal(own.captures.length, 1, 'the admin port does answer them');
    const mode = async (path: string) => (await stat(path)).mode & 0o777;
    assert.equal(await mode(`${out}.journal`), 0o600);
    assert.equal(await mode(`${out}.bodies`), 0o600);
    assert.equal(await mode(home), 0o700);
    assert.equal(await mode(join(home, 'redact.key')), 0o600);
    bb.child.kill('SIGTERM');
    await bb.exited;
    assert.equal(await mode(out), 0o600, 'the HAR');
    // The CA, made on first use by `bb ca path`, under the same umask.
    const ca = await runBb(['ca', 'path'], env, { sh: 'umask 000' });
    assert.equal(ca.code, 0);
    assert.match(ca.stdout, /ca\.pem/);
    assert.equal(await mode(join(home, 'ca.key')), 0o600, 'the CA key');
    assert.equal(await mode(home), 0o700);
  });
});
