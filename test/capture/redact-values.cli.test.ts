// Redaction by value through a real `bb capture`: a server sets a random
// session cookie and answers a login with an access token; the client then
// reuses both under names that are no secrets' (a multipart field `sid`, a
// form, a JSON body, a query, a path segment, a header, WebSocket messages)
// and the server echoes them back. The journal read while bb records, its
// sealed bodies file, the HAR bb writes at Ctrl-C and the HAR `bb recover`
// writes after a kill -9 are searched decoded: neither value is in any of
// them, and each stands as the placeholder its Set-Cookie or login answer got.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { fetch, FormData } from 'undici';
import { WebSocket, WebSocketServer } from 'ws';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import { decodedStrings } from '../helpers/decoded.js';
import { tempDir } from '../helpers/tmp.js';
import type { Har, HarEntry } from '../../capture/har.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
// The secrets, the same in every run (so two captures under one bb home give the same placeholders). The token
// holds `+`, `/` and `=`, so a query or a form carries it percent-encoded.
const SID = `s${randomBytes(24).toString('base64url')}`;
const TOKEN = `t${randomBytes(12).toString('hex')}+${randomBytes(6).toString('hex')}/Q==`;
const SECRETS = [SID, TOKEN, encodeURIComponent(TOKEN)];

const servers: http.Server[] = [];
let port = 0;
before(async () => {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/login') {
        // `lang` and `mode`: cookies (so redacted where they are cookies) whose values are too common to hide elsewhere.
        res.setHeader('Set-Cookie', [`sid=${SID}; Path=/; HttpOnly`, 'lang=en-US; Path=/', 'mode=undefined; Path=/']);
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ access_token: TOKEN, token_type: 'bearer', lang: 'en-US', ok: 'true' }));
        return;
      }
      // Every other answer echoes the session cookie it got and the request's body.
      const cookie = /sid=([^;]*)/.exec(req.headers.cookie ?? '')?.[1] ?? '';
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ seen: cookie, got: Buffer.concat(chunks).toString('utf8'), lang: 'en-US' }));
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (data, binary) => ws.send(data, { binary })));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  port = (server.address() as AddressInfo).port;
});
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

/** Starts `bb capture` in front of the server; its proxy's URL. */
async function capture(out: string): Promise<{ bb: BbProcess; url: string }> {
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out], env);
  return { bb, url: (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]! };
}

/** Logs in, then reuses the cookie and the token under other names, every way the test looks for them. */
async function traffic(url: string): Promise<void> {
  const login = await fetch(`${url}/login`, { method: 'POST' });
  const { access_token: token } = (await login.json()) as { access_token: string };
  assert.equal(token, TOKEN);
  assert.ok(login.headers.getSetCookie().some((c) => c.startsWith(`sid=${SID};`)));
  const cookie = { cookie: `sid=${SID}; lang=en-US` };
  const form = new FormData();
  form.append('sid', SID);
  form.append('note', `Bearer ${TOKEN}`);
  form.append('lang', 'en-US');
  const sent = [
    fetch(`${url}/upload`, { method: 'POST', body: form, headers: cookie }),
    fetch(`${url}/form`, { method: 'POST', body: new URLSearchParams({ s: SID, t: TOKEN, lang: 'en-US', ok: 'true' }), headers: cookie }),
    fetch(`${url}/json`, {
      method: 'POST', headers: { ...cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ session: SID, auth: TOKEN, cb: `https://x/cb?sid=${SID}`, lang: 'en-US', ok: 'true', mode: 'undefined' }),
    }),
    fetch(`${url}/q?s=${SID}&t=${encodeURIComponent(TOKEN)}&lang=en-US`, { headers: cookie }),
    fetch(`${url}/h`, { headers: { ...cookie, 'x-session': SID, 'x-auth': `Bearer ${TOKEN}`, 'accept-language': 'en-US' } }),
    fetch(`${url}/p/${SID}/items`, { headers: cookie }),
  ];
  for (const res of sent) assert.equal((await res).status, 200);
  await Promise.all(sent.map(async (res) => (await res).text()));
  const ws = new WebSocket(`${url.replace('http', 'ws')}/ws`);
  await once(ws, 'open');
  for (const message of [JSON.stringify({ session: SID, lang: 'en-US' }), `hello ${TOKEN}`]) {
    ws.send(message);
    await once(ws, 'message');
  }
  ws.close(1000);
  await once(ws, 'close');
}

/** Every string of each journal record decoded, and the journal's text. */
function journalText(out: string): string {
  const journal = readFileSync(`${out}.journal`, 'utf8');
  const records = journal.split('\n').filter((l) => l !== '').flatMap((l) => decodedStrings(JSON.parse(l)));
  return [journal, ...records].join('\n');
}

const found = (text: string) => SECRETS.filter((s) => text.includes(s));

/** The entry whose URL's path starts so. */
function entry(har: Har, path: string): HarEntry {
  const e = har.log.entries.find((x) => new URL(x.request.url).pathname.startsWith(path));
  assert.ok(e, `an entry for ${path}`);
  return e;
}

const header = (headers: Array<{ name: string; value: string }>, name: string) => headers.find((h) => h.name.toLowerCase() === name)?.value;

/** The placeholders the cookie and the token got where they were issued (Set-Cookie; the login's JSON). */
function issued(har: Har): { sid: string; token: string } {
  const login = entry(har, '/login');
  const sid = login.response.headers.filter((h) => h.name.toLowerCase() === 'set-cookie').map((h) => /^sid=(<redacted:[0-9a-f]{8}>);/.exec(h.value)?.[1]).find(Boolean);
  const token = (JSON.parse(login.response.content.text!) as { access_token: string }).access_token;
  assert.ok(sid, 'the session cookie is redacted where it is set');
  assert.match(token, /^<redacted:[0-9a-f]{8}>$/);
  return { sid, token };
}

/** What a reader sees of each reuse, the multipart boundary (random per run) made one. */
function reuses(har: Har): Record<string, unknown> {
  const boundary = (e: HarEntry) => /boundary=(\S+)/.exec(e.request.postData?.mimeType ?? '')?.[1] ?? '\u0000';
  const view: Record<string, unknown> = {};
  for (const e of har.log.entries) {
    const path = new URL(e.request.url).pathname;
    const b = boundary(e);
    view[path] = {
      url: e.request.url.replace(/^http:\/\/[^/]+/, ''),
      query: e.request.queryString,
      headers: ['x-session', 'x-auth', 'accept-language'].map((n) => header(e.request.headers, n)),
      post: e.request.postData?.text?.split(b).join('B'),
      params: e.request.postData?.params,
      answer: e.response.content.text?.split(b).join('B'),
      messages: e._webSocketMessages?.map((m) => m.data),
    };
  }
  return view;
}

/** Asserts each reuse stands as its placeholder, the common values as sent. */
function assertReused(har: Har): void {
  const { sid, token } = issued(har);
  const upload = entry(har, '/upload').request.postData!.text!;
  assert.match(upload, new RegExp(`name="sid"\\r\\n\\r\\n${sid}\\r\\n`), 'the multipart field sid');
  assert.match(upload, new RegExp(`name="note"\\r\\n\\r\\nBearer ${token}\\r\\n`), 'the token inside a longer field');
  assert.match(upload, /name="lang"\r\n\r\nen-US\r\n/);
  const form = entry(har, '/form').request.postData!;
  assert.deepEqual(form.params?.map((p) => [p.name, p.value]), [['s', sid], ['t', token], ['lang', 'en-US'], ['ok', 'true']]);
  assert.equal(form.text, `s=${sid}&t=${token}&lang=en-US&ok=true`);
  assert.deepEqual(JSON.parse(entry(har, '/json').request.postData!.text!), {
    session: sid, auth: token, cb: `https://x/cb?sid=${sid}`, lang: 'en-US', ok: 'true', mode: 'undefined',
  });
  const q = entry(har, '/q').request;
  assert.deepEqual(q.queryString.map((p) => [p.name, p.value]), [['s', sid], ['t', token], ['lang', 'en-US']]);
  const h = entry(har, '/h').request.headers;
  assert.deepEqual([header(h, 'x-session'), header(h, 'x-auth'), header(h, 'accept-language')], [sid, `Bearer ${token}`, 'en-US']);
  assert.ok(entry(har, '/p/').request.url.endsWith(`/p/${sid}/items`), entry(har, '/p/').request.url);
  // The server's echo of the cookie it got and of the body.
  assert.equal((JSON.parse(entry(har, '/json').response.content.text!) as { seen: string }).seen, sid);
  assert.deepEqual(JSON.parse((JSON.parse(entry(har, '/json').response.content.text!) as { got: string }).got).session, sid);
  const messages = entry(har, '/ws')._webSocketMessages!.filter((m) => m.opcode === 1).map((m) => m.data);
  assert.deepEqual(messages, [JSON.stringify({ session: sid, lang: 'en-US' }), JSON.stringify({ session: sid, lang: 'en-US' }), `hello ${token}`, `hello ${token}`]);
}

/** What a clean run left: the journal and bodies file read while bb recorded, then the HAR bb wrote at Ctrl-C. */
interface CleanRun {
  journal: string;
  secs: Array<{ p: string; n: number }>;
  bodies: string;
  har: Har;
}
let cleanRun: Promise<CleanRun> | undefined;
/** One clean run, shared by the tests (the second compares with it). */
function clean(): Promise<CleanRun> {
  return (cleanRun ??= (async () => {
    const out = tmp.path('clean.har');
    const { bb, url } = await capture(out);
    await traffic(url);
    const journal = journalText(out);
    const secs = readFileSync(`${out}.journal`, 'utf8').split('\n').filter((l) => l.startsWith('{"r":"sec"')).map((l) => JSON.parse(l) as { p: string; n: number });
    const bodies = readFileSync(`${out}.bodies`).toString('latin1');
    bb.child.kill('SIGINT');
    assert.equal(await bb.exited, 0, bb.stderr());
    return { journal, secs, bodies, har: JSON.parse(readFileSync(out, 'utf8')) as Har };
  })());
}

describe('redaction by value through bb capture', () => {
  it('hides a session cookie and an access token wherever the client reuses them: journal, bodies file and HAR', async () => {
    const { journal, secs, bodies, har } = await clean();
    // While recording: the journal holds the placeholders, never the values; `.bodies` holds them sealed.
    assert.deepEqual(found(journal), []);
    assert.ok(secs.some((s) => s.n === SID.length) && secs.some((s) => s.n === TOKEN.length), JSON.stringify(secs));
    assert.deepEqual(found(bodies), []);
    assert.deepEqual(found(decodedStrings(har).join('\n')), [], 'no secret in the HAR, decoded');
    assertReused(har);
    // The placeholders the journal announced are the HAR's.
    const { sid, token } = issued(har);
    assert.ok(secs.some((s) => s.p === sid) && secs.some((s) => s.p === token));
  });

  it('after kill -9, bb recover writes the same redactions a clean finish does', async () => {
    const out = tmp.path('killed.har');
    const { bb, url } = await capture(out);
    await traffic(url);
    // Every exchange above ended before its last byte went out: all of it is on disk.
    bb.child.kill('SIGKILL');
    await bb.exited;
    assert.deepEqual(found(journalText(out)), []);
    const r = await runBb(['recover', out], env);
    assert.equal(r.code, 0, r.stderr);
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    assert.equal(har.log._bb?.complete, false);
    assert.deepEqual(found(decodedStrings(har).join('\n')), []);
    assertReused(har);
    assert.deepEqual(reuses(har), reuses((await clean()).har));
  });
});
