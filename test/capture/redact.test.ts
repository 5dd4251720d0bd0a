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
import { mulberry32 } from '../../core/index.js';
import { exchange, only, recordFacts, TEST_T0 } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';
import { F, PREFACE, T, h2Frame } from '../helpers/h2-frames.js';
import { decodedStrings } from '../helpers/decoded.js';

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
  it("redacts a secret's name however it is spelled, and the names that end in one or hold a password", () => {
    const fresh = new Redactor(Buffer.alloc(32, 7));
    // A Cognito answer, a Firebase one, a signup form's confirmation, an echo of the request's headers (httpbin's /headers), a GraphQL socket's init.
    const secret = [
      'AccessToken', 'IdToken', 'RefreshToken', 'accessToken', 'refreshToken', 'idToken', 'clientSecret', 'privateKey', 'apiKey', 'authToken',
      'auth_token', 'sessionToken', 'SecretAccessKey', 'newPassword', 'confirmPassword', 'password_confirmation', 'currentPasswd', 'Authorization',
      'Cookie', 'Set-Cookie', 'X-Api-Key', 'x-goog-api-key', 'X-Shopify-Access-Token', 'webhook_secret', 'csrfToken', 'code_verifier', 'Proxy-Authorization',
    ];
    const plain = ['nextPageToken', 'pageToken', 'token_type', 'token_count', 'max_tokens', 'expires_in', 'session', 'sessionId', 'key', 'keys', 'Sec-WebSocket-Key', 'code', 'cursor', 'id', 'user', 'signature'];
    assert.deepEqual(secret.filter((n) => !fresh.isSecretJsonKey(n)), []);
    assert.deepEqual(plain.filter((n) => fresh.isSecretJsonKey(n)), []);
    // The same names as parameters (bracketed parts too) and as headers.
    assert.equal(fresh.queryString('accessToken=zq1&user[password_confirmation]=zq2&pageToken=CAE'), `accessToken=${fresh.placeholder('zq1')}&user[password_confirmation]=${fresh.placeholder('zq2')}&pageToken=CAE`);
    assert.equal(fresh.headerValue('X-Goog-Api-Key', 'zq3'), fresh.placeholder('zq3'));
    assert.equal(fresh.headerValue('X-Request-Id', 'zq4'), 'zq4');
    // A header named as a token carries a credential (a JSON key or parameter so named may be a page's cursor), and
    // gRPC binary metadata is named by what precedes its -bin.
    for (const name of ['Authorization-Token', 'X-Session-Token', 'X-Token', 'x-token-bin', 'x-api-key-bin', 'authorization-bin']) assert.equal(fresh.headerValue(name, 'zq7'), fresh.placeholder('zq7'), name);
    for (const name of ['X-Next-Page', 'grpc-status-details-bin', 'x-trace-bin']) assert.equal(fresh.headerValue(name, 'zq8'), 'zq8', name);
    // An echo of the request's headers: the secret the header carried stays out of the answer too.
    const echo = { headers: { Authorization: 'Bearer zq5', Cookie: 'sid=zq6', Host: 'x' } };
    assert.equal(fresh.jsonValue(echo), true);
    assert.deepEqual(echo, { headers: { Authorization: fresh.placeholder('Bearer zq5'), Cookie: fresh.placeholder('sid=zq6'), Host: 'x' } });
    // An extra name is a secret wherever it stands, in any spelling.
    const extra = new Redactor(Buffer.alloc(32, 7), { json: ['session_key'] });
    assert.deepEqual(['sessionKey', 'Session-Key', 'SESSION_KEY'].filter((n) => !extra.isSecretJsonKey(n) || !extra.isSecretParam(n)), []);
  });

  it('reads JSON behind a Socket.IO packet prefix, in Engine.IO polling payloads, inside JSON strings, and a STOMP CONNECT frame', () => {
    const fresh = new Redactor(Buffer.alloc(32, 7));
    const P1 = fresh.placeholder('zq1');
    const rows: Array<[string, string]> = [
      ['40{"token":"zq1"}', `40{"token":"${P1}"}`],
      ['42["login",{"password":"zq1"}]', `42["login",{"password":"${P1}"}]`],
      ['42/chat,17["auth",{"accessToken":"zq1"}]', `42/chat,17["auth",{"accessToken":"${P1}"}]`],
      ['451-["upload",{"apiKey":"zq1"},{"_placeholder":true,"num":0}]', `451-["upload",{"apiKey":"${P1}"},{"_placeholder":true,"num":0}]`],
      // Engine.IO 4 long polling: packets joined by a record separator.
      ['40{"sid":"abc"}\x1e42["msg",{"token":"zq1"}]', `40{"sid":"abc"}\x1e42["msg",{"token":"${P1}"}]`],
      // SockJS: each message a JSON string inside a JSON array; a payload encoded twice.
      ['a["{\\"token\\":\\"zq1\\"}"]', `a${JSON.stringify([JSON.stringify({ token: P1 })])}`],
      ['{"payload":"{\\"password\\":\\"zq1\\"}"}', JSON.stringify({ payload: JSON.stringify({ password: P1 }) })],
      ['CONNECT\naccept-version:1.2\nlogin:ann\npasscode:zq1\n\n\0', `CONNECT\naccept-version:1.2\nlogin:ann\npasscode:${P1}\n\n\0`],
    ];
    for (const [raw, want] of rows) assert.equal(fresh.textValue(raw), want, raw);
    // Words and numbers stay; nothing secret, nothing changed.
    for (const raw of ['2', '3probe', '42["chat",{"text":"hi"}]', 'SEND\ndestination:/q\n\nhello\0']) assert.equal(fresh.textValue(raw), undefined, raw);
  });

  it('reads a text of one token run millions of characters long, and still finds the secret at its end (a long run used to overflow the regex stack)', () => {
    const fresh = new Redactor(Buffer.alloc(32, 7));
    const blob = 'a1'.repeat(3_500_000);
    assert.equal(fresh.textValue(blob), undefined);
    const key = `sk-${'A'.repeat(6_000_000)}`;
    assert.equal(fresh.textValue(`{"note":"${key}"}`), `{"note":"${fresh.placeholder(key)}"}`);
    const jwt = `eyJ${'b'.repeat(6_000_000)}.eyJzdWIiOiJhbm4ifQ.c2ln`;
    assert.equal(fresh.textValue(jwt), fresh.placeholder(jwt));
  });

  it('redacts a JWT wherever it stands, whatever names it', () => {
    const fresh = new Redactor(Buffer.alloc(32, 7));
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJlLWJ5dGVz';
    const P = fresh.placeholder(jwt);
    assert.equal(fresh.textValue(JSON.stringify({ data: { value: jwt } })), JSON.stringify({ data: { value: P } }));
    assert.equal(fresh.textValue(jwt), P);
    assert.equal(fresh.textValue(`<script>window.__T="${jwt}"</script>`), `<script>window.__T="${P}"</script>`);
    assert.equal(fresh.url(`/magic/${jwt}?next=/home#${jwt}`), `/magic/${P}?next=/home#${P}`);
    assert.equal(fresh.queryString(`state=${jwt}&x=1`), `state=${P}&x=1`);
    assert.deepEqual(fresh.head(['X-Amzn-Oidc-Data', jwt, 'X-Request-Id', 'r1']), ['X-Amzn-Oidc-Data', P, 'X-Request-Id', 'r1']);
    // JSON in a parameter that names no secret (Slack's interaction payloads), re-encoded once redacted; untouched otherwise.
    const payload = encodeURIComponent(JSON.stringify({ type: 'block_actions', token: 'zq-slack', user: { id: 'U1' } }));
    assert.equal(fresh.queryString(`payload=${payload}&x=1`), `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', token: fresh.placeholder('zq-slack'), user: { id: 'U1' } }))}&x=1`);
    assert.equal(fresh.queryString('filter=%7B%22a%22%3A1%7D'), 'filter=%7B%22a%22%3A1%7D');
    // kubectl exec offers its bearer token as a WebSocket subprotocol; the channel protocol beside it stays.
    const k8s = Buffer.from('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ6cSJ9.sig').toString('base64url');
    assert.deepEqual(fresh.head(['Sec-WebSocket-Protocol', `base64url.bearer.authorization.k8s.io.${k8s}, v4.channel.k8s.io`]), ['Sec-WebSocket-Protocol', `base64url.bearer.authorization.k8s.io.${fresh.placeholder(k8s)}, v4.channel.k8s.io`]);
    assert.deepEqual(fresh.head(['Sec-WebSocket-Protocol', 'graphql-transport-ws']), ['Sec-WebSocket-Protocol', 'graphql-transport-ws']);
    // Google Identity Services' form post names its ID token `credential`.
    assert.equal(fresh.queryString('credential=opaque-zq&g_state=1'), `credential=${fresh.placeholder('opaque-zq')}&g_state=1`);
    // Other secrets any text may hold: a URL's password (alone), a PEM private key (whole), well-known tokens by their prefix.
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEzq1\n-----END RSA PRIVATE KEY-----';
    const tokens = ['ghp_' + 'a'.repeat(36), 'github_pat_' + 'B'.repeat(30), 'xoxb-1234567890-abcdef', 'sk_live_' + 'c'.repeat(24), 'sk-proj-' + 'd'.repeat(40), 'AIza' + 'e'.repeat(35)];
    const config = { DATABASE_URL: 'postgres://app:zq-pw@db:5432/app', key: pem, note: `keys: ${tokens.join(', ')}` };
    assert.equal(
      fresh.textValue(JSON.stringify(config)),
      JSON.stringify({ DATABASE_URL: `postgres://app:${fresh.placeholder('zq-pw')}@db:5432/app`, key: fresh.placeholder(pem), note: `keys: ${tokens.map((t) => fresh.placeholder(t)).join(', ')}` }),
    );
    assert.equal(fresh.textValue(`key:\n${pem}\n`), `key:\n${fresh.placeholder(pem)}\n`);
    // Not secrets: a port, a path with @, prefixes inside words or too short, a public key.
    for (const text of ['http://host:8080/a@b', 'https://example.com/@ann', 'task-force-alpha-bravo-charlie-delta', 'sk-short', 'mask_live_session', '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----']) {
      assert.equal(fresh.textValue(text), undefined, text);
    }
    // Not a JWT: base64 that does not open a JSON header, two segments, a word with eyJ inside.
    for (const text of ['abc.def.ghi', 'eyJhbGciOiJ9.only-two', 'heyJude.song.lyrics']) assert.equal(fresh.embedded(text), text);
  });

  it('masks a JWT in bytes at its length: a protobuf message with one still decodes, its framing unchanged', () => {
    const fresh = new Redactor(Buffer.alloc(32, 7));
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJlLWJ5dGVz';
    // A LoginReply { string token = 1; int32 ttl = 2; }: tag 0x0a, the token's length, the token, tag 0x10, 3600 as a varint.
    const message = Buffer.concat([Buffer.from([0x0a, jwt.length]), Buffer.from(jwt, 'latin1'), Buffer.from([0x10, 0x90, 0x1c])]);
    const masked = fresh.secretBytes(message);
    assert.equal(masked.length, message.length);
    assert.deepEqual([...masked.subarray(0, 2), ...masked.subarray(-3)], [...message.subarray(0, 2), ...message.subarray(-3)]);
    const text = masked.subarray(2, 2 + jwt.length).toString('latin1');
    assert.match(text, /^<redacted:[0-9a-f]{8}~+>$/);
    assert.equal(text.slice(0, 18), fresh.placeholder(jwt).slice(0, 18), 'the same identity as the text placeholder');
    assert.ok(!masked.includes(Buffer.from('c2lnbmF0dXJl')));
    // Its length byte may read as a letter (90 is `Z`): the token is still found.
    const long = `${jwt}${'x'.repeat(90 - jwt.length)}`;
    assert.match(fresh.secretBytes(Buffer.concat([Buffer.from([0x0a, 90]), Buffer.from(long, 'latin1')])).subarray(2).toString('latin1'), /^<redacted:[0-9a-f]{8}~+>$/);
    // Two token fields glued by bytes that read as token characters (field 8's tag B, a length Z): both masked.
    const glued = Buffer.from(`\x0a\x3e${jwt}BZ${jwt.replace('c2ln', 'b3Ro')}`, 'latin1');
    const both = fresh.secretBytes(glued).toString('latin1');
    assert.ok(!both.includes('c2lnbmF0dXJl') && !both.includes('b3RobmF0dXJl'), both);
    assert.equal(both.length, glued.length);
    // A JWE (its header names an enc): all five segments.
    const jwe = `${Buffer.from('{"alg":"RSA-OAEP","enc":"A256GCM"}').toString('base64url')}.ZW5jcnlwdGVka2V5.aXZpdml2.Y2lwaGVydGV4dA.dGFndGFn`;
    assert.match(fresh.secretBytes(Buffer.from(`\x0a${jwe}`, 'latin1')).toString('latin1'), /^\x0a<redacted:[0-9a-f]{8}~+>$/);
    // Nothing to mask: the same buffer.
    const plain = Buffer.from([0x0a, 3, 0x61, 0x62, 0x63]);
    assert.equal(fresh.secretBytes(plain), plain);
  });

  // Each of these made a search quadratic in the HAR writer (minutes at 1 MB for the bytes case): linear now, they
  // finish well inside the file's timeout. Their speed is measured in bench/redact.ts, not asserted here; this
  // asserts what each must give.
  it('reads hostile bodies of 1 MB to the right answer: runs of eyJ, BEGIN without END, endless schemes, runs of sk-', () => {
    const fresh = new Redactor(Buffer.alloc(32, 7));
    const N = 1_000_000;
    const eyjBytes = Buffer.from('eyJ'.repeat(N / 3), 'latin1');
    assert.equal(fresh.secretBytes(eyjBytes), eyjBytes);
    const oneDot = Buffer.from(`${'eyJ'.repeat(N / 6)}.${'x'.repeat(N / 2)}`, 'latin1');
    assert.equal(fresh.secretBytes(oneDot), oneDot);
    assert.equal(fresh.textValue('eyJ'.repeat(N / 3)), undefined);
    assert.equal(fresh.textValue(`${'-----BEGIN RSA PRIVATE KEY-----'.repeat(N / 31)} PRIVATE KEY-----`), undefined);
    // No scheme is a million letters long, nor 2,000.
    assert.equal(fresh.textValue(`${'a'.repeat(N)}://x:y@`), undefined);
    assert.equal(fresh.textValue(`${`${'a'.repeat(2000)}://x`.repeat(N / 2004)}@`), undefined);
    // One run of token characters after sk-: one token.
    const sk = 'sk-'.repeat(N / 3);
    assert.equal(fresh.textValue(sk), fresh.placeholder(sk));
    // A real secret after such a run is still found.
    const mixed = fresh.textValue(`${'eyJ'.repeat(N / 6)} ${'-----BEGIN RSA PRIVATE KEY-----'.repeat(1000)} postgres://u:zqpw@db`)!;
    assert.ok(mixed.endsWith(`postgres://u:${fresh.placeholder('zqpw')}@db`) && !mixed.includes('zqpw'));
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
  it('keeps cookie names and hides a part without "=" (a cookie without a name is its value) in Cookie and Set-Cookie', () => {
    assert.equal(r.headerValue('Cookie', 'a=1; b= 2;flag'), `a=${r.placeholder('1')}; b=${r.placeholder('2')};${r.placeholder('flag')}`);
    assert.equal(r.headerValue('set-cookie', 'sid=x'), `sid=${r.placeholder('x')}`);
    assert.equal(r.headerValue('set-cookie', 'novalue; Path=/'), `${r.placeholder('novalue')}; Path=/`);
  });
  it('keeps an empty cookie value empty: a cleared cookie stays visibly cleared', () => {
    assert.equal(r.headerValue('set-cookie', 'sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT'), 'sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT');
    assert.equal(r.headerValue('Cookie', 'a=; b=2'), `a=; b=${r.placeholder('2')}`);
  });
  it('keeps redactsHeader\'s answers per name bounded: a peer making up a million header names grows no cache without limit', () => {
    const fresh = new Redactor(Buffer.alloc(32, 7));
    const cached = () => (fresh as unknown as { redactsByName: Map<string, boolean> }).redactsByName.size;
    for (let i = 0; i < 1_000_000; i++) {
      assert.equal(fresh.redactsHeader(`x-made-up-${i}`), false);
      assert.ok(cached() <= 1000, `${cached()} names cached after ${i + 1}`);
    }
    // The answers stay right across the cache's clearing, in any case.
    for (const name of ['Authorization', 'authorization', 'COOKIE', 'Location']) assert.equal(fresh.redactsHeader(name), true, name);
    assert.equal(fresh.redactsHeader('X-Other'), false);
  });
});

// Redaction gaps of issue 34 (items 4, 5, 6) as tables: every place a secret
// was found in a HAR, and what bb must write there instead. Entries are built
// through a real capture (journal → HAR), and every base64 field is decoded
// before it is searched. They share the file's temp folder and bb home.
// The bb home's key: placeholders in tables and in captured entries agree.
const r = new Redactor(loadRedactKey(tmp.bbHome));
const P = (v: string) => r.placeholder(v);

/** Every string in a value, decoded as a reader would (test/helpers/decoded.ts). */
const decodedText = (value: unknown): string => decodedStrings(value).join('\n');

function assertNoSecret(text: string, secrets: string[]): void {
  for (const s of secrets) assert.ok(!text.includes(s), `secret ${s} is in the capture`);
}

async function capture(facts: Fact[], redact = true): Promise<Har> {
  return recordFacts(tmp.dir, tmp.bbHome, facts, { name: `g${++n}`, ...(redact ? {} : { redact: false }) });
}

describe('header values that are secrets', () => {
  for (const name of ['X-Auth-Token', 'X-Amz-Security-Token', 'X-CSRF-Token', 'Authentication-Info']) {
    it(`${name} becomes a placeholder`, () => {
      assert.equal(r.headerValue(name, 'zqtok-123'), P('zqtok-123'));
    });
  }
  it('Refresh keeps its delay and redacts the URL it names', () => {
    assert.equal(r.headerValue('Refresh', '0; url=/next?token=zqabc&x=1'), `0; url=/next?token=${P('zqabc')}&x=1`);
  });
  it('Location redacts the query and the fragment', () => {
    assert.equal(
      r.headerValue('Location', 'https://app/cb?access_token=zqq1&state=s#access_token=zqf1&token_type=bearer'),
      `https://app/cb?access_token=${P('zqq1')}&state=s#access_token=${P('zqf1')}&token_type=bearer`,
    );
  });
  it('Link redacts each URL it names and keeps its parameters', () => {
    assert.equal(
      r.headerValue('Link', '<https://api/x?page=2&access_token=zqlk1>; rel="next", </x?page=9#token=zqlk2>; rel="last"'),
      `<https://api/x?page=2&access_token=${P('zqlk1')}>; rel="next", </x?page=9#token=${P('zqlk2')}>; rel="last"`,
    );
  });
  it('a Location without secrets stays byte for byte', () => {
    assert.equal(r.headerValue('Location', '/a?b=1#top'), '/a?b=1#top');
  });
  it("HTTP/2's :path redacts its query like the request URL, in the head the journal holds too", () => {
    assert.deepEqual(r.head([':method', 'GET', ':path', '/plain?access_token=zqh2q&x=1', 'accept', '*/*']),
      [':method', 'GET', ':path', `/plain?access_token=${P('zqh2q')}&x=1`, 'accept', '*/*']);
  });
  it(":authority keeps its host and hides the userinfo a client put before it (the password, or a bare token whole)", () => {
    assert.deepEqual(r.head([':authority', 'ann:zqauthpw@h:8443', ':authority', 'zqauthtok@h']), [':authority', `ann:${P('zqauthpw')}@h:8443`, ':authority', `${P('zqauthtok')}@h`]);
    assert.equal(r.headerValue(':authority', 'h:8443'), 'h:8443');
  });
  it('a cookie without a name (a bare value, as browsers send one) becomes a placeholder; attributes stay', () => {
    assert.equal(r.headerValue('Cookie', 'zqnameless'), P('zqnameless'));
    assert.equal(r.headerValue('Cookie', 'a=1; zqnameless2 ; b=2'), `a=${P('1')}; ${P('zqnameless2')} ; b=${P('2')}`);
    assert.equal(r.headerValue('Set-Cookie', 'zqnamelessset; Path=/; HttpOnly; Secure'), `${P('zqnamelessset')}; Path=/; HttpOnly; Secure`);
    assert.equal(r.headerValue('Set-Cookie', 'sid=; Path=/'), 'sid=; Path=/', 'a cleared cookie stays cleared');
  });
});

describe('query parameters', () => {
  const rows: Array<[string, string]> = [
    ['token[]=zqa&token[]=zqb&x=1', `token[]=${P('zqa')}&token[]=${P('zqb')}&x=1`],
    ['token%5B%5D=zqa', `token%5B%5D=${P('zqa')}`],
    ['password[0]=zqa', `password[0]=${P('zqa')}`],
    ['user[password]=zqa', `user[password]=${P('zqa')}`],
    ['page=2', 'page=2'],
    // `;` separates parameters too; a secret's value runs to the next `&`.
    ['a=1;token=zqsemi&b=2', `a=1;token=${P('zqsemi')}&b=2`],
    ['token=zqsemi2;a=1&b=2', `token=${P('zqsemi2;a=1')}&b=2`],
    ['a=1;b=2;c', 'a=1;b=2;c'],
  ];
  for (const [raw, want] of rows) it(`${raw} → ${want}`, () => assert.equal(r.queryString(raw), want));
  it("a decoded parameter that holds a `;`-separated secret (HAR's queryString) hides it as the URL does", () => {
    assert.deepEqual(r.param({ name: 'a', value: '1;token=zqsemi' }), { name: 'a', value: `1;token=${P('zqsemi')}` });
    assert.deepEqual(r.param({ name: 'a;token', value: 'zqsemi3' }), { name: 'a;token', value: P('zqsemi3') });
    assert.deepEqual(r.param({ name: 'a', value: '1;b=2' }), { name: 'a', value: '1;b=2' });
  });
});

describe('event streams', () => {
  it('redacts JSON that spans several data: lines of one event, each line kept where it was', () => {
    const text = 'id: 1\ndata: {"token":\ndata: "zqsse1", "n": 1}\n\ndata: {"n":2}\n\n';
    assert.equal(r.eventStreamText(text), `id: 1\ndata: {"token":\ndata: "${P('zqsse1')}", "n": 1}\n\ndata: {"n":2}\n\n`);
  });
  it('reads CRLF line ends and keeps events apart at blank lines', () => {
    const text = 'data: {"password":\r\ndata: "zqsse2"}\r\n\r\ndata: {"token":\r\n\r\ndata: "not-a-secret"}\r\n\r\n';
    assert.equal(r.eventStreamText(text), `data: {"password":\r\ndata: "${P('zqsse2')}"}\r\n\r\ndata: {"token":\r\n\r\ndata: "not-a-secret"}\r\n\r\n`);
  });
  it('puts the data on the first line when only re-serializing redacts it (a secret JSON encoded twice), the other lines left empty', () => {
    const inner = JSON.stringify(JSON.stringify({ password: 'zqsse3' }));
    const out = r.eventStreamText(`data: {"payload":\ndata: ${inner}}\n\n`)!;
    assert.equal(out.includes('zqsse3'), false, out);
    const lines = out.split('\n');
    assert.equal(lines.length, 4);
    assert.equal(lines[1], 'data: ');
    // The event's data (its lines joined by LF) is still the redacted JSON.
    assert.deepEqual(JSON.parse(`${lines[0]!.slice('data: '.length)}\n`), { payload: JSON.stringify({ password: P('zqsse3') }) });
  });
  it('an event without secrets stays byte for byte', () => {
    assert.equal(r.eventStreamText('data: {"a":\ndata: 1}\n\n'), undefined);
  });
});

describe('JSON bodies', () => {
  const rows: Array<[string, unknown, string[]]> = [
    ['an array under a secret key', { password: ['zqp1', 'zqp2'], n: 1 }, ['zqp1', 'zqp2']],
    ['an object under a secret key', { client_secret: { v: 'zqc1', w: ['zqc2'] } }, ['zqc1', 'zqc2']],
    ['jwt, private_key and client_secret at any depth', { a: [{ b: { jwt: 'zqj1', private_key: 'zqk1', c: { client_secret: 'zqc3' } } }] }, ['zqj1', 'zqk1', 'zqc3']],
    ['a password 300 levels down', nest(300, { password: 'zqdeep1' }), ['zqdeep1']],
  ];
  for (const [what, value, secrets] of rows) {
    it(what, () => {
      const out = r.jsonText(JSON.stringify(value));
      assert.ok(out !== undefined, 'the body changed');
      assertNoSecret(out!, secrets);
      assert.ok(out!.includes(P(secrets[0]!)), 'the same secret gives the same placeholder');
    });
  }
  it('numbers under a secret key stay', () => {
    assert.equal(r.jsonText(JSON.stringify({ token: [5, 6] })), undefined);
  });
  it('JSON behind an XSSI prefix keeps the prefix and redacts the JSON', () => {
    const out = r.jsonText(`)]}',\n{"access_token":"zqx1"}`);
    assert.equal(out, `)]}',\n{"access_token":"${P('zqx1')}"}`);
  });
  it('a body too deep to re-serialize is replaced and marked (fail closed)', () => {
    const depth = 200_000;
    const text = '['.repeat(depth) + '{"password":"zqdeep2"}' + ']'.repeat(depth);
    const out = r.jsonText(text);
    assert.ok(out !== undefined);
    assertNoSecret(out!, ['zqdeep2']);
    assert.match(out!, /^<redacted: .*too deep/);
  });
  it('a JSON text cut short (past the body cap) still has its secrets redacted', () => {
    const out = r.jsonText('{"a":1,"password":"zqcut1","b":"xxxxxxxx');
    assert.ok(out !== undefined);
    assertNoSecret(out!, ['zqcut1']);
  });
});

function nest(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { n: v };
  return v;
}

describe('entries', () => {
  it('a redirect: Location (query and fragment) and redirectURL are redacted like the request URL', async () => {
    const har = await capture(exchange({
      target: '/login', status: 302,
      resHeaders: ['Location', '/cb?access_token=zqloc1#access_token=zqfrag1', 'Content-Location', '/c?token=zqcl1', 'Refresh', '0; url=/r?token=zqref1'],
    }));
    const e = har.log.entries[0]!;
    assertNoSecret(decodedText(har), ['zqloc1', 'zqfrag1', 'zqcl1', 'zqref1']);
    assert.equal(e.response.redirectURL, `/cb?access_token=${P('zqloc1')}#access_token=${P('zqfrag1')}`);
  });

  it('a multipart password field is redacted', async () => {
    const body = '--XB\r\nContent-Disposition: form-data; name="user"\r\n\r\nann\r\n--XB\r\nContent-Disposition: form-data; name="password"\r\n\r\nzqmp1\r\n--XB--\r\n';
    const har = await capture(exchange({
      method: 'POST', target: '/up', reqHeaders: ['Host', 'h:1', 'Content-Type', 'multipart/form-data; boundary=XB'], reqBody: [Buffer.from(body)], status: 204,
    }));
    const text = decodedText(har);
    assertNoSecret(text, ['zqmp1']);
    assert.ok(text.includes(P('zqmp1')), JSON.stringify(har.log.entries[0]!.request.postData));
    assert.ok(text.includes('name="user"\r\n\r\nann'), 'other fields stay');
  });

  it('a refused request (431, a 17 KiB Cookie) keeps no cookie and no credentials in _bb.rawPacket', async () => {
    const raw = Buffer.from(`GET /a?token=zqrq1 HTTP/1.1\r\nHost: h:1\r\nAuthorization: Basic zqcred1\r\nCookie: sid=zqck1; pad=${'x'.repeat(17 * 1024)}\r\n\r\n`);
    const har = await capture([{
      type: 'client-error', connectionId: 'c1', exchangeId: 90, time: TEST_T0,
      error: { code: 'HPE_HEADER_OVERFLOW', message: 'Header overflow', phase: 'parse' }, rawPacket: raw,
      response: { statusCode: 431, statusMessage: 'Request Header Fields Too Large', rawHeaders: ['Connection', 'close'], body: Buffer.alloc(0) },
    }]);
    const e = har.log.entries[0]!;
    assertNoSecret(decodedText(har), ['zqrq1', 'zqcred1', 'zqck1']);
    const kept = Buffer.from(e._bb!.rawPacket!, 'base64').toString('latin1');
    assert.ok(kept.startsWith('GET /a?token=<redacted:'), kept.slice(0, 60));
    assert.ok(kept.includes(`Authorization: Basic ${P('zqcred1')}`));
    assert.ok(kept.includes('Host: h:1\r\n'), 'what shows the fault stays');
  });

  it('a broken h2 connection keeps frame headers but no header block or data bytes in _bb.rawPacket', async () => {
    const literal = (name: string, value: string) =>
      Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
    const block = Buffer.concat([Buffer.from([0x82, 0x86, 0x84]), literal('authorization', 'Bearer zqh2sec1')]);
    const raw = Buffer.concat([PREFACE, h2Frame(T.SETTINGS, 0, 0), h2Frame(T.HEADERS, F.END_HEADERS, 1, block), h2Frame(T.DATA, 0, 1, Buffer.from('{"password":"zqh2sec2"}')), h2Frame(T.DATA, 0, 0, 'ff')]);
    const har = await capture([{
      type: 'client-error', connectionId: 'c1', exchangeId: 91, time: TEST_T0,
      error: { code: 'BB_H2_PROTOCOL_ERROR', message: 'the client broke HTTP/2: DATA on stream 0', phase: 'parse' }, rawPacket: raw,
    }]);
    assertNoSecret(decodedText(har), ['zqh2sec1', 'zqh2sec2']);
    const kept = Buffer.from(har.log.entries[0]!._bb!.rawPacket!, 'base64');
    assert.equal(kept.length, raw.length, 'frame lengths and positions stay');
    assert.ok(kept.subarray(0, PREFACE.length).equals(PREFACE));
  });

  it('--no-redact keeps every value (the searches above can fail)', async () => {
    const raw = Buffer.from('GET / HTTP/1.1\r\nCookie: sid=zqck2\r\n\r\n');
    const har = await capture([
      ...exchange({ target: '/x', status: 302, resHeaders: ['Location', '/cb#access_token=zqfrag2'] }),
      { type: 'client-error', connectionId: 'c1', exchangeId: 92, time: TEST_T0 + 5, error: { code: 'HPE_HEADER_OVERFLOW', message: 'x', phase: 'parse' }, rawPacket: raw },
    ], false);
    const text = decodedText(har);
    for (const s of ['zqfrag2', 'zqck2']) assert.ok(text.includes(s), s);
  });
});

// Redaction against seeded random input: JSON of random shape with secrets under secret names in any spelling,
// in JWTs, URL passwords and known tokens, nested as JSON inside strings, framed as Socket.IO, SockJS, Engine.IO
// or behind an XSSI prefix; and bytes (protobuf-like) with JWTs after random framing bytes, some reading as token
// characters. Every secret put in must be gone from what comes out, and bytes keep their length. A run of this
// kind found JSON encoded twice kept its secrets, and JWTs after two framing letters (a protobuf field 8's tag
// and length) or glued to another were missed.
const jwt = (s: string) => `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx${'A'.repeat(s.length % 7)}In0.${s}`;
const SECRET_KEYS = ['password', 'accessToken', 'Access-Token', 'refresh_token', 'IdToken', 'client_secret', 'apiKey', 'X-Api-Key', 'Authorization', 'newPassword', 'password_confirmation', 'sessionToken', 'privateKey', 'credential', 'passcode', 'webhookSecret'];
const PLAIN_KEYS = ['id', 'name', 'data', 'items', 'nextPageToken', 'token_type', 'value', 'note', 'url'];

function randomText(seed: number): { text: string; secrets: string[] } {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const secrets: string[] = [];
  const secret = () => {
    const s = `zqf${seed.toString(36)}x${secrets.length}`;
    secrets.push(s);
    return s;
  };
  const value = (depth: number): unknown => {
    const k = rnd();
    if (depth > 3 || k < 0.3) {
      const w = rnd();
      if (w < 0.15) return jwt(secret());
      if (w < 0.22) return `postgres://u:${secret()}@db/x`;
      if (w < 0.26) return `ghp_${secret().padEnd(36, '0')}`;
      return pick(['plain', 'hello world', 42, true, null, 'https://example.com/a']);
    }
    if (k < 0.5) return Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => value(depth + 1));
    if (k < 0.6) return JSON.stringify({ wrapped: value(depth + 1) });
    const o: Record<string, unknown> = {};
    for (let i = 0; i < 1 + Math.floor(rnd() * 4); i++) {
      if (rnd() < 0.35) {
        const s = secret();
        o[pick(SECRET_KEYS)] = rnd() < 0.5 ? s : [s, { x: s }];
      } else o[pick(PLAIN_KEYS)] = value(depth + 1);
    }
    return o;
  };
  const json = JSON.stringify(value(0));
  const frame = pick(['json', 'sio', 'sockjs', 'eio', 'xssi'] as const);
  const text = { json, sio: `42["ev",${json}]`, sockjs: `a${JSON.stringify([json])}`, eio: `40{"sid":"a"}\x1e42["ev",${json}]`, xssi: `)]}'\n${json}` }[frame];
  return { text, secrets };
}

function randomBytes(seed: number): { bytes: Buffer; secrets: string[] } {
  const rnd = mulberry32(seed);
  const parts: Buffer[] = [];
  const secrets: string[] = [];
  const junk = () => Buffer.from(Array.from({ length: Math.floor(rnd() * 8) }, () => Math.floor(rnd() * 256)));
  for (let k = 0; k < 1 + Math.floor(rnd() * 5); k++) {
    const s = `zqb${seed.toString(36)}x${k}`;
    secrets.push(s);
    parts.push(junk(), Buffer.from(jwt(`sig${s}`), 'latin1'));
  }
  parts.push(junk());
  return { bytes: Buffer.concat(parts), secrets };
}

describe('redaction against seeded random input', () => {
  const fuzz = new Redactor(Buffer.alloc(32, 7));
  it('leaves no secret in 2,000 random texts', () => {
    const leaks: string[] = [];
    for (let seed = 1; seed <= 2000; seed++) {
      const { text, secrets } = randomText(seed);
      const out = fuzz.textValue(text) ?? text;
      for (const s of secrets) if (out.includes(s)) leaks.push(`seed ${seed}: ${s} in ${out.slice(0, 200)}`);
    }
    assert.deepEqual(leaks.slice(0, 3), []);
  });

  it('leaves no JWT in 3,000 random buffers, and keeps their lengths', () => {
    const leaks: string[] = [];
    for (let seed = 1; seed <= 3000; seed++) {
      const { bytes, secrets } = randomBytes(seed);
      const out = fuzz.secretBytes(bytes);
      if (out.length !== bytes.length) leaks.push(`seed ${seed}: length ${bytes.length} → ${out.length}`);
      const text = out.toString('latin1');
      for (const s of secrets) if (text.includes(s)) leaks.push(`seed ${seed}: ${s}`);
    }
    assert.deepEqual(leaks.slice(0, 3), []);
  });
});
