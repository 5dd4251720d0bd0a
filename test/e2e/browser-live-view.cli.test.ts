// `bb capture --ui` in a real browser: bb runs as users run it (bin/bb.js, a
// server on 127.0.0.1 port 0), headless Debian chromium opens the live view,
// and traffic driven by the test must show up in the open page without a
// reload: an exchange within 500 ms, in-flight ones with their state, a
// WebSocket conversation's messages in order, an image from its bytes. A
// hostile exchange (script in headers and body, javascript: URLs) shows as
// text and runs nothing; the page loads nothing from anywhere else.
//
// Each run takes the README's pictures of the capture view and the frames tab; BB_SCREENSHOTS=dir keeps them
// as dir/live-capture.png and dir/live-frames.png (BB_SCREENSHOTS=docs/images regenerates the README's).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { Browser, Page } from 'playwright-core';
import WebSocket, { WebSocketServer } from 'ws';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveCaptureInBrowser, type LiveCaptureInBrowser } from '../helpers/live-view.js';
import type { BbProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { closeHttpAndWs } from '../helpers/servers.js';

// A 2×2 PNG (red, green / blue, white).
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73000000164944415408d763f8cfc0f01f0818fe03020303030003fa05fd6a6b4f5e0000000049454e44ae426082',
  'hex',
);
// Bytes no text encoding reads: shown as a hex dump.
const BLOB = Buffer.from([0x00, 0x01, 0x02, 0xff, 0x41, 0x42, 0x80, 0x0a]);
const HOSTILE_BODY = `</script><img src=x onerror="window.__pwned='img'"><script>window.__pwned='script'</script>`;

const dir = tempDir().dir;
// The screenshots are taken on every run, so their steps cannot rot unseen; kept only when asked for.
const shots = process.env['BB_SCREENSHOTS'] || dir;
let run: LiveCaptureInBrowser | undefined;
let browser: Browser | undefined;
let page: Page;
let bb: BbProcess;
let server: http.Server;
let wss: WebSocketServer;
let proxy = '';
let ui = '';
let release: () => void = () => {};
let pushEvent: (data: string | undefined) => void = () => {};
/** Requests the page made that were not to the live view itself. */
let elsewhere: string[] = [];
/** Console errors and CSP refusals in the page. */
let complaints: string[] = [];

before(async () => {
  if (!CHROMIUM) return;
  server = http.createServer((req, res) => {
    if (req.url === '/slow') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('started ');
      release = () => res.end('finished');
      return;
    }
    if (req.url === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.flushHeaders();
      let id = 0;
      pushEvent = (data) => (data === undefined ? res.end() : res.write(`event: tick\nid: ${++id}\ndata: ${data}\n\n`));
      return;
    }
    if (req.url === '/pixel.png') {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': PNG.length });
      return res.end(PNG);
    }
    if (req.url === '/hostile') {
      res.writeHead(200, {
        'Content-Type': 'text/html',
        'X-Evil': `<script>window.__pwned='header'</script>`,
        Refresh: '0; url=javascript:window.__pwned="refresh"',
        Link: '<javascript:window.__pwned="link">; rel=preload',
      });
      return res.end(HOSTILE_BODY);
    }
    if (req.url === '/blob') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': BLOB.length });
      return res.end(BLOB);
    }
    if (req.url === '/missing') {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      return res.end('{"error":"no such thing"}');
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, items: [{ id: 1, name: 'first' }, { id: 2, name: 'second' }], token: 'not-for-eyes' }));
  });
  wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (data) => ws.send(JSON.stringify({ type: 'ack', of: String(data) }))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  run = await liveCaptureInBrowser(target, dir, { width: 1280, height: 720 });
  ({ bb, proxy, ui, browser, page, elsewhere, complaints } = run);
  await page.waitForFunction(() => document.querySelector('.count')?.textContent === '0 exchanges');
});

after(async () => {
  await run?.stop();
  if (server) await closeHttpAndWs(server, wss);
});

/** The visible list rows' path cells. */
const paths = (p: Page): Promise<string[]> => p.$$eval('.list .row:not([hidden]) .c-path', (cells) => cells.map((c) => c.textContent ?? ''));

/** Opens the row whose path is `path`. */
async function openRow(path: string): Promise<void> {
  await page.waitForFunction((p) => [...document.querySelectorAll('.list .row:not([hidden]) .c-path')].some((c) => c.textContent === p), path);
  await page.evaluate((p) => {
    const cell = [...document.querySelectorAll<HTMLElement>('.list .row:not([hidden]) .c-path')].find((c) => c.textContent === p)!;
    cell.click();
  }, path);
  await page.waitForSelector('.detail:not([hidden]) .dtabs');
}

/** Waits until the open exchange lists `n` messages, as they come (the page is never reloaded); how fast is bench/frames.ts's. */
async function messagesShown(n: number): Promise<void> {
  await page.waitForFunction((k) => document.querySelectorAll('.detail .messages .msg').length === k, n, { polling: 'raf' });
}

async function showTab(name: string): Promise<void> {
  await page.click(`.dtabs button[data-tab="${name}"]`);
}

test('a new exchange appears in the open page as it happens, without a reload', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const navigations: string[] = [];
  page.on('framenavigated', (f) => navigations.push(f.url()));
  for (const n of [1, 2, 3]) {
    await (await request(`${proxy}/api/items?n=${n}`)).body.text();
    const sent = Date.now();
    await page.waitForFunction((p) => [...document.querySelectorAll('.list .row .c-path')].some((c) => c.textContent === p), `/api/items?n=${n}`, { polling: 'raf' });
    t.diagnostic(`exchange ${n} shown ${Date.now() - sent} ms after its response`);
  }
  assert.deepEqual(navigations, []);
  assert.deepEqual((await paths(page)).slice(-3), ['/api/items?n=1', '/api/items?n=2', '/api/items?n=3']);
});

test('an exchange in flight shows its state, then its end, and its detail follows it', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const answer = request(`${proxy}/slow`).then((r) => r.body.text());
  const state = () => page.$$eval('.list .row:not([hidden])', (rows) => rows.filter((r) => r.querySelector('.c-path')?.textContent === '/slow').map((r) => r.querySelector('.c-state')?.textContent));
  await page.waitForFunction(() => [...document.querySelectorAll('.list .row')].some((r) => r.querySelector('.c-path')?.textContent === '/slow' && r.querySelector('.c-state')?.textContent === 'receiving'));
  await openRow('/slow');
  await showTab('response');
  await page.waitForFunction(() => document.querySelector('.detail .dbody pre')?.textContent === 'started ');
  release();
  assert.equal(await answer, 'started finished');
  await page.waitForFunction(() => document.querySelector('.detail .dbody pre')?.textContent === 'started finished');
  await page.waitForFunction(() => [...document.querySelectorAll('.list .row')].some((r) => r.querySelector('.c-path')?.textContent === '/slow' && r.querySelector('.c-state')?.textContent === 'done'));
  assert.deepEqual(await state(), ['done']);
});

test("a WebSocket conversation's messages appear live, in order, in the open exchange", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const ws = new WebSocket(`${proxy.replace(/^http/, 'ws')}/chat?room=a`);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  await openRow('/chat?room=a');
  await showTab('messages');
  const said: string[] = [];
  for (const text of ['hello', 'second <b>bold</b>', 'third']) {
    const reply = new Promise((r) => ws.once('message', r));
    ws.send(text);
    await reply;
    said.push(`↑ send ${text}`, `↓ receive ${JSON.stringify({ type: 'ack', of: text })}`);
    await messagesShown(said.length);
  }
  const shown = await page.$$eval('.detail .messages .msg', (ms) => ms.map((m) => `${m.querySelector('.m-dir')!.textContent} ${m.querySelector('.m-data')!.textContent}`));
  assert.deepEqual(shown, said);
  assert.equal(await page.$$eval('.detail .messages b', (b) => b.length), 0);
  await new Promise<void>((r) => {
    ws.once('close', () => r());
    ws.close(1000, 'done');
  });
  await page.waitForFunction(() => document.querySelectorAll('.detail .messages .msg').length === 8);
});

test('the frames tab shows every WebSocket message in its connection\'s lane, live, and its search narrows them', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  await page.click('#tabs button[data-view="frames"]');
  // The conversation of the test before: 3 sent, 3 answers, 2 closes, on lane 1.
  await page.waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '8 frames on 1 connections');
  const ws = new WebSocket(`${proxy.replace(/^http/, 'ws')}/chat?room=b`);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const reply = new Promise((r) => ws.once('message', r));
  ws.send('from b');
  await reply;
  await page.waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '10 frames on 2 connections', undefined, { polling: 'raf' });
  // Labelled as bb frames labels lanes (inspect/lanes.ts): host and path, then what tells them apart.
  await page.waitForFunction(() => [...document.querySelectorAll('[data-view="frames"] .lane-name')].some((e) => e.textContent!.endsWith(' room=b')));
  const lanes = await page.$$eval('[data-view="frames"] .lane-name', (l) => l.map((e) => e.textContent));
  assert.equal(lanes.length, 2);
  assert.match(lanes[0]!, /^1: #\d+ 127\.0\.0\.1:\d+ \/chat room=a \(closed\)$/);
  assert.match(lanes[1]!, /^2: #\d+ 127\.0\.0\.1:\d+ \/chat room=b$/);
  const last = await page.$$eval('[data-view="frames"] .row.frame:not([hidden])', (rows) =>
    rows.slice(-2).map((r) => [r.querySelector('.mark')!.textContent, (r.querySelector('.mark') as HTMLElement).style.left, r.querySelector('.c-data')!.textContent]),
  );
  assert.deepEqual(last, [['↑', '22px', 'from b'], ['↓', '22px', JSON.stringify({ type: 'ack', of: 'from b' })]]);
  await page.fill('.f-frames', 'bold');
  await page.waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '2 of 10 frames');
  await page.fill('.f-frames', '1000 done');
  await page.waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '2 of 10 frames');
  // The query language of bb frames --html (one script: inspect/frames-search.ts): a lane by its label, a direction.
  await page.fill('.f-frames', 'conn:room=b');
  await page.waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '2 of 10 frames');
  await page.fill('.f-frames', 'conn:room=b dir:send');
  await page.waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '1 of 10 frames');
  await page.fill('.f-frames', '');
  await page.screenshot({ path: join(shots, 'live-frames.png') });
  assert.ok(existsSync(join(shots, 'live-frames.png')));
  ws.close();
  await page.click('#tabs button[data-view="capture"]');
});

test("an event stream's events appear live, in order, in the open exchange", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const res = await request(`${proxy}/events`);
  const read = res.body.text();
  await openRow('/events');
  await showTab('messages');
  const said: string[] = [];
  for (const data of ['{"n":1}', '<img src=x onerror="window.__pwned=\'sse\'">', 'third']) {
    pushEvent(data);
    said.push(`tick ${data}`);
    await messagesShown(said.length);
  }
  const shown = await page.$$eval('.detail .messages .msg', (ms) => ms.map((m) => `${m.querySelector('.m-op')!.textContent} ${m.querySelector('.m-data')!.textContent}`));
  assert.deepEqual(shown, said);
  assert.equal(await page.$$eval('.detail img', (i) => i.length), 0);
  pushEvent(undefined);
  await read;
});

test('a hostile exchange shows as text and runs nothing; an image shows from its bytes', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  await (await request(`${proxy}/hostile`, { headers: { 'x-js': 'javascript:window.__pwned="req"', referer: 'javascript:window.__pwned="ref"' } })).body.text();
  await openRow('/hostile');
  const headers = await page.$eval('.detail .dbody', (b) => b.textContent ?? '');
  assert.ok(headers.includes(`<script>window.__pwned='header'</script>`), headers);
  assert.ok(headers.includes('javascript:window.__pwned="req"'));
  await showTab('response');
  assert.equal(await page.$eval('.detail .dbody pre', (p) => p.textContent), HOSTILE_BODY);
  assert.equal(await page.$$eval('.detail img, .detail script, .detail a, .detail iframe', (e) => e.length), 0);
  assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
  assert.equal(await page.$$eval('script', (s) => s.map((e) => (e as HTMLScriptElement).getAttribute('src')).join(',')), 'frames-search.js,shared.js,app.js,views/capture.js,views/frames.js');

  await (await request(`${proxy}/pixel.png`)).body.arrayBuffer();
  await openRow('/pixel.png');
  await showTab('response');
  await page.waitForSelector('.detail img.shown');
  const img = await page.$eval('.detail img.shown', (i) => ({ src: (i as HTMLImageElement).src, w: (i as HTMLImageElement).naturalWidth }));
  assert.equal(img.src, `data:image/png;base64,${PNG.toString('base64')}`);
  assert.equal(img.w, 2);
  assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
});

test('an opened exchange shows JSON pretty-printed with its redaction marks, binary bytes as a hex dump, and its timing', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  await openRow('/api/items?n=1');
  await showTab('response');
  const json = (await page.textContent('.detail .dbody pre'))!;
  // bb redacts the token as it writes the HAR; the page shows the HAR's value, marked.
  const mark = /<redacted:[0-9a-f]{8}>/.exec(json)?.[0] ?? assert.fail(json);
  assert.equal(json, JSON.stringify({ path: '/api/items?n=1', items: [{ id: 1, name: 'first' }, { id: 2, name: 'second' }], token: mark }, null, 2));
  assert.deepEqual(await page.$$eval('.detail .dbody .redacted', (m) => m.map((e) => e.textContent)), [mark]);
  await showTab('timing');
  const phases = await page.$$eval('.detail .timing .phase', (ps) => ps.map((p) => [p.querySelector('.tlabel')!.textContent, p.querySelector('.tval')!.textContent]));
  assert.deepEqual(phases.map(([label]) => label), ['request sent', 'waiting (time to first byte)', 'response received']);
  for (const [, value] of phases) assert.match(value!, /^\d+\.\d ms$/);
  assert.match((await page.textContent('.detail .timing .meta'))!, /^started \d{4}-\d\d-\d\dT.* · \d+ ms in all$/);

  await (await request(`${proxy}/blob`)).body.arrayBuffer();
  await openRow('/blob');
  await showTab('response');
  assert.match((await page.textContent('.detail .dbody .meta'))!, /^application\/octet-stream · 8 B · binary$/);
  assert.equal(await page.textContent('.detail .dbody pre.hex'), `00000000  ${'00 01 02 ff 41 42 80 0a'.padEnd(48)}  ....AB..`);
});

test('filters narrow the list; only the rows in sight exist in the page', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  await (await request(`${proxy}/missing`)).body.text();
  for (let i = 0; i < 120; i++) await (await request(`${proxy}/bulk/${i}`, { method: i % 2 ? 'POST' : 'GET', body: i % 2 ? '{}' : undefined })).body.text();
  await page.waitForFunction(() => /^1\d\d exchanges$/.test(document.querySelector('.count')?.textContent ?? '') && Number(document.querySelector('.count')!.textContent!.split(' ')[0]) >= 128);
  const rowsInPage = await page.$$eval('.list .row', (r) => r.length);
  assert.ok(rowsInPage < 60, `${rowsInPage} row elements for 128+ exchanges`);
  await page.fill('.f-status', '404');
  await page.waitForFunction(() => /^1 of /.test(document.querySelector('.count')?.textContent ?? ''));
  assert.deepEqual(await paths(page), ['/missing']);
  await page.fill('.f-status', '');
  await page.fill('.f-method', 'post');
  await page.fill('.f-route', '/bulk/*');
  await page.waitForFunction(() => /^60 of /.test(document.querySelector('.count')?.textContent ?? ''));
  await page.fill('.f-method', '');
  await page.fill('.f-route', '');
  await page.fill('.f-text', 'items?n=2');
  await page.waitForFunction(() => /^1 of /.test(document.querySelector('.count')?.textContent ?? ''));
  await page.fill('.f-text', '');
  await page.fill('.f-host', 'no-such-host');
  await page.waitForFunction(() => /^0 of /.test(document.querySelector('.count')?.textContent ?? ''));
  await page.fill('.f-host', '');
});

test('the page loaded nothing from elsewhere and broke no rule of its CSP', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  assert.deepEqual(elsewhere, []);
  assert.deepEqual(complaints, []);
});

test('the live view refuses a request from another web page (foreign Host or Origin)', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  for (const headers of [{ host: 'evil.example' }, { origin: 'http://evil.example' }]) {
    const res = await request(`${ui}feed/exchanges`, { headers });
    assert.equal(res.statusCode, 403);
    await res.body.text();
  }
});

test('screenshot of the capture view (into BB_SCREENSHOTS=dir when set)', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const out = shots;
  await page.fill('.f-text', '');
  await page.evaluate(() => document.querySelector('.list')!.scrollTo(0, 0));
  await openRow('/api/items?n=2');
  await showTab('response');
  await page.waitForSelector('.detail .dbody pre');
  await page.screenshot({ path: join(out, 'live-capture.png') });
  assert.ok(existsSync(join(out, 'live-capture.png')));
});

test('bb writes the capture the page showed when stopped', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 0, bb.stderr());
  const har = JSON.parse(readFileSync(join(dir, 'live.har'), 'utf8')) as { log: { entries: Array<{ request: { url: string } }> } };
  assert.ok(har.log.entries.some((e) => e.request.url.endsWith('/hostile')));
});
