// Redaction (capture/redact.ts): at every position of a capture, stable placeholders
// across captures, --no-redact, and the Redactor's rules as tables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Duplex } from 'node:stream';
import type { Fact } from '../../proxy/events.js';
import type { Har } from '../../capture/har.js';
import { loadRedactKey, parseRedactSpecs, Redactor } from '../../capture/index.js';
import { exchange, only, recordFacts, TEST_T0 } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';

const SECRET = 's3cr3t-value-42';
const PLACEHOLDER = /^<redacted:[0-9a-f]{8}>$/;
const tmp = tempDir();
let n = 0;

/** One exchange carrying SECRET in every place redaction covers, plus a WebSocket and an SSE stream. */
function secretFacts(): Fact[] {
  const reqJson = JSON.stringify({ user: 'ann', password: SECRET, nested: [{ Token: SECRET }], token: 5, prompt_tokens: 11, my_token: 'visible' });
  const resJson = JSON.stringify({ access_token: SECRET, refresh_token: SECRET, expires_in: 3600 });
  const http = exchange({
    id: 1, method: 'POST', target: `/login?api_key=${SECRET}&page=2`,
    reqHeaders: [
      'Host', 'h:8080', 'Authorization', `Bearer ${SECRET}`, 'Proxy-Authorization', `Basic ${SECRET}`,
      'Cookie', `sid=${SECRET}; theme=dark`, 'X-Api-Key', SECRET, 'Content-Type', 'application/json',
    ],
    reqBody: [Buffer.from(reqJson)],
    status: 200,
    resHeaders: ['Content-Type', 'application/json', 'Content-Encoding', 'gzip', 'Set-Cookie', `sid=${SECRET}; Path=/; HttpOnly`],
    resBody: [gzipSync(resJson)],
  });
  const form = exchange({
    id: 2, method: 'POST', target: '/form',
    reqHeaders: ['Host', 'h:8080', 'Content-Type', 'application/x-www-form-urlencoded'],
    reqBody: [Buffer.from(`user=ann&passwd=${SECRET}`)], status: 204, resHeaders: [],
  });
  const sse = exchange({
    id: 3, target: '/events', status: 200, resHeaders: ['Content-Type', 'text/event-stream'],
    resBody: [Buffer.from(`data: {"id_token":"${SECRET}","n":1}\n\n`)],
  });
  const sock = () => new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
  const t = TEST_T0 + 100;
  const ws: Fact[] = [
    { type: 'exchange-started', exchangeId: 4, connectionId: 'c2', time: t, scheme: 'http', method: 'GET', target: '/ws', httpVersion: '1.1',
      rawHeaders: ['Host', 'h:8080', 'Upgrade', 'websocket'], upstream: 'http://127.0.0.1:3001', upgrade: true },
    { type: 'upgrade-opened', exchangeId: 4, time: t + 1, statusCode: 101, statusMessage: 'Switching Protocols', httpVersion: '1.1', rawHeaders: ['Upgrade', 'websocket'], client: sock(), upstream: sock() },
    { type: 'ws-message', exchangeId: 4, time: t + 2, direction: 'send', opcode: 1, data: Buffer.from(`{"op":"auth","secret":"${SECRET}"}`), frames: 1, compressed: false },
    { type: 'upgrade-closed', exchangeId: 4, time: t + 3, by: 'none' },
  ];
  return [...http, ...form, ...sse, ...ws];
}

async function record(bbHome: string, redact?: false | ReturnType<typeof parseRedactSpecs>, facts = secretFacts()): Promise<{ har: Har; text: string }> {
  const name = `r${++n}`;
  const har = await recordFacts(tmp.dir, bbHome, facts, { name, ...(redact !== undefined ? { redact } : {}) });
  return { har, text: await readFile(join(tmp.dir, `${name}.har`), 'utf8') };
}

describe('redaction', () => {
  it('leaves the secret nowhere in the file, and replaces it at every position', async () => {
    const { har, text } = await record(tmp.bbHome);
    assert.equal(text.includes(SECRET), false, 'the secret leaked into the HAR');
    const byPath = (path: string) => har.log.entries.find((e) => new URL(e.request.url).pathname === path);
    const [login, form, sse, ws] = ['/login', '/form', '/events', '/ws'].map(byPath);
    const p = new Redactor(loadRedactKey(tmp.bbHome)).placeholder(SECRET);
    assert.match(p, PLACEHOLDER);
    const h = Object.fromEntries(login!.request.headers.map((x) => [x.name, x.value]));
    assert.equal(h.Authorization, `Bearer ${p}`);
    assert.equal(h['Proxy-Authorization'], `Basic ${p}`);
    assert.equal(h.Cookie, `sid=${p}; theme=${new Redactor(loadRedactKey(tmp.bbHome)).placeholder('dark')}`);
    assert.equal(h['X-Api-Key'], p);
    assert.equal(h.Host, 'h:8080');
    assert.equal(login!.request.url, `http://h:8080/login?api_key=${p}&page=2`);
    assert.deepEqual(login!.request.queryString, [{ name: 'api_key', value: p }, { name: 'page', value: '2' }]);
    assert.equal(login!.request.cookies.find((c) => c.name === 'sid')?.value, p);
    const body = JSON.parse(login!.request.postData!.text!);
    assert.deepEqual(body, { user: 'ann', password: p, nested: [{ Token: p }], token: 5, prompt_tokens: 11, my_token: 'visible' });
    assert.match(login!.request.postData!.comment!, /redacted/);
    assert.deepEqual(JSON.parse(login!.response.content.text!), { access_token: p, refresh_token: p, expires_in: 3600 });
    assert.equal(login!.response.headers.find((x) => x.name === 'Set-Cookie')?.value, `sid=${p}; Path=/; HttpOnly`);
    assert.deepEqual(login!.response.cookies, [{ name: 'sid', value: p, path: '/', httpOnly: true }]);
    assert.equal(form!.request.postData!.text, `user=ann&passwd=${p}`);
    assert.deepEqual(form!.request.postData!.params, [{ name: 'user', value: 'ann' }, { name: 'passwd', value: p }]);
    assert.deepEqual(JSON.parse(sse!._eventSourceMessages![0]!.data), { id_token: p, n: 1 });
    assert.equal(sse!.response.content.text, `data: {"id_token":"${p}","n":1}\n\n`);
    assert.deepEqual(JSON.parse(ws!._webSocketMessages![0]!.data), { op: 'auth', secret: p });
    assert.equal(har.log._bb?.redacted, true);
  });

  it('gives the same secret the same placeholder in two captures with one key, another with another key', async () => {
    const a = await record(tmp.bbHome);
    const b = await record(tmp.bbHome);
    const other = await record(join(tmp.dir, 'other-home'));
    const auth = (har: Har) => only({ log: { ...har.log, entries: har.log.entries.filter((e) => e.request.url.includes('/login')) } })
      .request.headers.find((x) => x.name === 'X-Api-Key')!.value;
    assert.match(auth(a.har), PLACEHOLDER);
    assert.equal(auth(a.har), auth(b.har));
    assert.notEqual(auth(a.har), auth(other.har));
  });

  it('keeps every value with --no-redact', async () => {
    const { har, text } = await record(tmp.bbHome, false);
    assert.equal(har.log._bb?.redacted, false);
    assert.ok(text.includes(`Bearer ${SECRET}`));
    assert.ok(text.includes(`api_key=${SECRET}`));
    assert.equal(text.includes('<redacted:'), false);
    const login = har.log.entries.find((e) => e.request.url.includes('/login'))!;
    assert.equal(JSON.parse(login.request.postData!.text!).password, SECRET);
  });

  it('redacts the extra names a config adds', async () => {
    const facts = exchange({
      id: 9, target: '/x?sig=abc&keep=1', reqHeaders: ['Host', 'h', 'X-Custom', 'hidden'],
      status: 200, resHeaders: ['Content-Type', 'application/json'], resBody: [Buffer.from('{"session_key":"k1","other":"v"}')],
    });
    const { har } = await record(tmp.bbHome, parseRedactSpecs(['header:x-custom', 'query:SIG', 'json:session_key']), facts);
    const e = only(har);
    assert.match(e.request.headers.find((x) => x.name === 'X-Custom')!.value, PLACEHOLDER);
    assert.match(e.request.url, /\?sig=<redacted:[0-9a-f]{8}>&keep=1$/);
    const body = JSON.parse(e.response.content.text!);
    assert.match(body.session_key, PLACEHOLDER);
    assert.equal(body.other, 'v');
  });

  it('refuses a malformed --redact spec with a sentence', () => {
    assert.throws(() => parseRedactSpecs(['cookie:x']), /header:NAME, query:NAME or json:KEY/);
  });

  it('keeps the key owner-only in an owner-only bb home', async () => {
    const home = join(tmp.dir, 'fresh-home');
    const key = loadRedactKey(home);
    assert.equal(key.length, 32);
    assert.equal((await stat(join(home, 'redact.key'))).mode & 0o777, 0o600);
    assert.equal((await stat(home)).mode & 0o777, 0o700);
    assert.ok(loadRedactKey(home).equals(key), 'the key changed between loads');
  });
});

describe('Redactor', () => {
  const r = new Redactor(Buffer.alloc(32, 7), { json: ['extra'] });
  it('redacts string values of whole keys only, at any depth, any case', () => {
    const v = { TOKEN: 'a', token_count: 'b', prompt_tokens: 11, token: 5, list: [{ password: 'p' }, 'password'], extra: 'e', deep: { client_secret: null } };
    assert.equal(r.jsonValue(v), true);
    assert.deepEqual(v, {
      TOKEN: r.placeholder('a'), token_count: 'b', prompt_tokens: 11, token: 5, list: [{ password: r.placeholder('p') }, 'password'],
      extra: r.placeholder('e'), deep: { client_secret: null },
    });
  });
  it('leaves non-secret text untouched, byte for byte', () => {
    assert.equal(r.jsonText('{ "a" : 1 }'), undefined);
    assert.equal(r.jsonText('not json'), undefined);
    assert.equal(r.queryString('a=1&b=%20'), 'a=1&b=%20');
  });
  it('keeps the Authorization scheme and Set-Cookie attributes', () => {
    assert.equal(r.headerValue('authorization', 'Bearer abc'), `Bearer ${r.placeholder('abc')}`);
    assert.equal(r.headerValue('Set-Cookie', 'a=b; Path=/'), `a=${r.placeholder('b')}; Path=/`);
    assert.equal(r.headerValue('X-Other', 'v'), 'v');
  });
  it('keeps cookie names and parts without "=" in Cookie and Set-Cookie', () => {
    assert.equal(r.headerValue('Cookie', 'a=1; b= 2;flag'), `a=${r.placeholder('1')}; b=${r.placeholder('2')};flag`);
    assert.equal(r.headerValue('set-cookie', 'sid=x'), `sid=${r.placeholder('x')}`);
    assert.equal(r.headerValue('set-cookie', 'novalue; Path=/'), 'novalue; Path=/');
  });
  it('keeps an empty cookie value empty: a cleared cookie stays visibly cleared', () => {
    assert.equal(r.headerValue('set-cookie', 'sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT'), 'sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT');
    assert.equal(r.headerValue('Cookie', 'a=; b=2'), `a=; b=${r.placeholder('2')}`);
  });
});
