// `bb frames --html` in a real browser: a real bb capture (servers on
// 127.0.0.1 port 0, three ws clients taking turns, an HTTP call between
// their messages, steps) drawn as a page and opened in headless Debian
// chromium. The page must load clean, draw one lane per connection and one
// arrow per message in bb's order, open a payload on click, and run nothing
// a hostile payload carries.
//
// BB_FRAMES_SCREENSHOT=docs/frames-html.png writes the screenshot README shows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import WebSocket, { WebSocketServer } from 'ws';
import { startCapture } from '../../index.js';
import { CHROMIUM, chromiumLaunchOptions } from '../helpers/browser-app.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const HOSTILE = `</script><img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;
const HOSTILE_STEP = '</script><b id="pwn">bye</b>';

const dir = tempDir().dir;
let browser: Browser | undefined;
let server: http.Server;
let capturePath = '';

/** The next message a client receives (text as string, binary as Buffer). */
function next(ws: WebSocket): Promise<string | Buffer> {
  return new Promise((resolve) => ws.once('message', (data, binary) => resolve(binary ? (data as Buffer) : String(data))));
}

async function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

async function closed(ws: WebSocket, code: number, reason: string): Promise<void> {
  const done = new Promise((resolve) => ws.once('close', resolve));
  ws.close(code, reason);
  await done;
}

/** Records three WebSocket connections taking turns through a real bb proxy. */
async function record(): Promise<string> {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, ok: true }));
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => {
    ws.on('message', (data, binary) => {
      if (binary) return ws.send(data, { binary: true });
      const text = String(data);
      if (text === HOSTILE) return ws.send(text);
      ws.send(JSON.stringify({ type: 'ack', of: JSON.parse(text).type, at: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const cap = await startCapture({
    target: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    label: 'frames', out: join(dir, 'three.har'), bbHome: join(dir, 'home'),
  });
  const base = cap.url.replace(/^http/, 'ws');
  cap.step('connect');
  const a = await open(`${base}/chat?room=a`);
  const b = await open(`${base}/feed`);
  const c = await open(`${base}/chat?room=c`);
  cap.step('talk');
  // Each send waits for its reply, so the order is the same on every run.
  const turn = async (ws: WebSocket, msg: unknown): Promise<void> => {
    const reply = next(ws);
    ws.send(typeof msg === 'string' || Buffer.isBuffer(msg) ? msg : JSON.stringify(msg));
    await reply;
  };
  await turn(a, { type: 'hello', user: 'ann', nested: { list: [1, 2, 3] } });
  await turn(b, { type: 'subscribe', topic: 'prices' });
  await turn(c, { type: 'hello', user: 'cid' });
  await turn(a, Buffer.from([0x00, 0x01, 0x02, 0xff, 0x41]));
  assert.equal((await fetch(`${cap.url}/api/state`)).status, 200);
  await turn(b, HOSTILE);
  await new Promise<void>((resolve) => c.ping(Buffer.from('are you there'), undefined, () => c.once('pong', () => resolve())));
  await turn(c, { type: 'bye' });
  cap.step(HOSTILE_STEP);
  await closed(a, 1000, 'done');
  await closed(b, 4001, 'bye now');
  await closed(c, 1001, '');
  wss.close();
  return cap.close();
}

before(async () => {
  if (!CHROMIUM) return;
  browser = await chromium.launch(chromiumLaunchOptions());
  capturePath = await record();
});
after(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

interface TimelineJson {
  events: Array<{ kind: string; connection?: string; entry: number; seq?: number; message?: { _bb: { seq: number } } }>;
}

/** Opens a page bb wrote, collecting console errors, page errors and dialogs. */
async function openPage(file: string, height = 1300): Promise<{ page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport: { width: 1500, height } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); void d.dismiss(); });
  page.on('request', (r) => { if (!r.url().startsWith('file:')) problems.push(`request: ${r.url()}`); });
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 10_000 });
  return { page, problems };
}

test('draws one lane per connection and one arrow per message, in capture order', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const out = join(dir, 'three.html');
  const run = await runBb(['frames', capturePath, '--html', out]);
  assert.equal(run.code, 0, run.stderr);
  const { page, problems } = await openPage(out);
  const frames = JSON.parse((await runBb(['frames', capturePath, '--json'])).stdout) as { connections: Array<{ id: string; url: string; messages: unknown[] }> };
  const order = JSON.parse((await runBb(['frames', capturePath, '--timeline', '--json'])).stdout) as TimelineJson;
  const wsEvents = order.events.filter((e) => e.kind === 'ws');

  const heads = await page.$$eval('#heads .h[data-lane]', (els) => els.map((e) => e.textContent));
  assert.equal(heads.length, 3);
  frames.connections.forEach((c, i) => {
    assert.ok(heads[i]!.includes(`connection ${c.id}`) && heads[i]!.includes(c.url), `${heads[i]} names ${c.id} ${c.url}`);
  });
  const arrows = await page.$$eval('#rows .row', (els) => els.map((e) => ({ seq: Number((e as HTMLElement).dataset.seq), lane: Number((e as HTMLElement).dataset.lane) })));
  const total = frames.connections.reduce((n, c) => n + c.messages.length, 0);
  assert.equal(arrows.length, total);
  assert.deepEqual(arrows.map((a) => a.seq), wsEvents.map((e) => e.message!._bb.seq), 'arrows follow bb frames --timeline');
  assert.deepEqual(arrows.map((a) => a.seq), [...arrows.map((a) => a.seq)].sort((x, y) => x - y), 'seq ascending');
  const laneOf = new Map(frames.connections.map((c, i) => [c.id, i]));
  assert.deepEqual(arrows.map((a) => a.lane), wsEvents.map((e) => laneOf.get(e.connection!)));
  // The connections really interleave: lane changes more often than three times.
  assert.ok(arrows.filter((a, i) => i > 0 && a.lane !== arrows[i - 1]!.lane).length > 5);

  // The upgrades crossed in step "connect"; without --timeline no row of it is drawn.
  assert.deepEqual(await page.$$eval('.band .bn', (els) => els.map((e) => e.textContent)), ['step: talk', `step: ${HOSTILE_STEP}`]);
  const closes = await page.$$eval('.row.c-close .l', (els) => els.map((e) => e.textContent ?? ''));
  assert.ok(closes.some((l) => l === 'close 9B 4001 bye now'), closes.join('\n'));
  assert.equal(await page.$$eval('.row.c-binary', (els) => els.length), 2);
  assert.equal(await page.$$eval('.row.c-ping', (els) => els.length), 1);

  // A click opens the whole payload: JSON pretty-printed, binary as hex.
  assert.equal(await page.isVisible('#panel'), false);
  await page.click('#rows .row.c-text >> nth=0');
  assert.equal(await page.isVisible('#panel'), true);
  const json = await page.textContent('#panel-payload');
  assert.equal(json, JSON.stringify({ type: 'hello', user: 'ann', nested: { list: [1, 2, 3] } }, null, 2));
  assert.match((await page.textContent('#panel-title')) ?? '', /→ text · connection/);
  await page.click('#rows .row.c-binary >> nth=0');
  assert.match((await page.textContent('#panel-payload')) ?? '', /^00000000 {2}00 01 02 ff 41 .*\|\.\.\.\.A\|$/);
  if (process.env['BB_FRAMES_SCREENSHOT']) {
    await page.click('#rows .row.c-text >> nth=0');
    await page.setViewportSize({ width: 1500, height: 760 });
    await page.screenshot({ path: process.env['BB_FRAMES_SCREENSHOT'] });
  }
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('a hostile payload and step name show as text and run nothing', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const out = join(dir, 'hostile.html');
  assert.equal((await runBb(['frames', capturePath, '--html', out, '--grep', 'onerror'])).code, 0);
  const { page, problems } = await openPage(out);
  assert.equal(await page.$$eval('#rows .row', (els) => els.length), 2, 'the message and its echo');
  await page.click('#rows .row >> nth=0');
  assert.equal(await page.textContent('#panel-payload'), HOSTILE);
  assert.equal(await page.title(), 'bb frames three.har');
  assert.equal(await page.$$eval('img, #pwn', (els) => els.length), 0);
  assert.equal(await page.$$eval('script', (els) => els.length), 3, 'the two data blocks and the page script');
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('--timeline adds the HTTP lane and draws upgrades in their connection lanes', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const out = join(dir, 'timeline.html');
  assert.equal((await runBb(['frames', capturePath, '--html', out, '--timeline', '--time'])).code, 0);
  // A short window, so the rows do not all fit whatever the timing.
  const { page, problems } = await openPage(out, 400);
  const heads = await page.$$eval('#heads .h[data-lane]', (els) => els.map((e) => e.textContent ?? ''));
  assert.equal(heads.length, 4);
  assert.match(heads[0]!, /^HTTP/);
  // Spaced by time the rows outgrow the window: only what is in view exists, so scroll through it.
  assert.equal(await page.isChecked('#by-time'), true);
  const drawn = new Map<number, { seq: number; http: boolean; label: string }>();
  const bands = new Set<string>();
  for (let y = 0, more = true; more; y += 600) {
    more = await page.evaluate((top) => {
      const scroll = document.getElementById('scroll')!;
      scroll.scrollTop = top;
      return scroll.scrollTop + scroll.clientHeight < scroll.scrollHeight;
    }, y);
    // The scroll event comes with the next frame and the page draws in the frame after it.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const rows = await page.$$eval('#rows .row', (els) => els.map((e) => ({
      i: Number((e as HTMLElement).dataset.i), seq: Number((e as HTMLElement).dataset.seq),
      http: e.classList.contains('c-http'), label: e.querySelector('.l')?.textContent ?? '',
    })));
    for (const r of rows) drawn.set(r.i, r);
    for (const name of await page.$$eval('.band .bn', (els) => els.map((e) => e.textContent ?? ''))) bands.add(name);
  }
  const rows = [...drawn.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r);
  const order = JSON.parse((await runBb(['frames', capturePath, '--timeline', '--json'])).stdout) as TimelineJson;
  assert.deepEqual(rows.map((r) => r.seq), order.events.map((e) => e.seq ?? e.message!._bb.seq));
  assert.deepEqual(rows.filter((r) => r.http).map((r) => r.label.replace(/127\.0\.0\.1:\d+/, 'HOST')), [
    'GET http://HOST/chat?room=a', 'GET http://HOST/feed', 'GET http://HOST/chat?room=c', 'GET http://HOST/api/state', '200 31B GET http://HOST/api/state',
  ]);
  assert.deepEqual([...bands], ['step: connect', 'step: talk', `step: ${HOSTILE_STEP}`]);
  assert.deepEqual(problems, []);
  await page.context().close();
});
