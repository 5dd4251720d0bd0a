// The live Frames tab of `bb capture --ui` beyond WebSocket, in a real
// browser (headless Debian chromium) against bb as users run it: a server-sent
// event stream's events and a gRPC server stream's messages (grpc-js over h2c
// through bb) appear live, in bb's order, each stream its own lane labelled as
// `bb frames` labels it; the search covers them; clicking a frame opens its
// exchange, messages and all, in the Exchanges tab.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveViewUrl, openLiveView } from '../helpers/live-view.js';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { itemMethod, type ItemValue } from '../helpers/grpc-items.js';
import { tempDir } from '../helpers/tmp.js';

const cleanups = new Cleanups();
const dir = tempDir(cleanups).dir;
let browser: Browser | undefined;
let page: Page;
let bb: BbProcess;
let sseProxy = '';
let grpcProxy = '';
let complaints: string[] = [];
let elsewhere: string[] = [];
/** Writes one event to the open /events stream (undefined ends it). */
let pushEvent: (data: string | undefined) => void = () => {};
/** Writes one item to the open List call (undefined ends it). */
let pushItem: (name: string | undefined) => void = () => {};

const LIST = itemMethod('/demo.Items/List', false, true);

before(async () => {
  if (!CHROMIUM) return;
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    let id = 0;
    pushEvent = (data) => (data === undefined ? res.end() : res.write(`event: tick\nid: ${++id}\ndata: ${data}\n\n`));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => { server.closeAllConnections(); return new Promise((r) => server.close(() => r(undefined))); });
  const grpcServer = new grpc.Server();
  grpcServer.addService({ list: LIST } as unknown as grpc.ServiceDefinition, {
    list: (call: grpc.ServerWritableStream<ItemValue, ItemValue>) => {
      let n = 0;
      pushItem = (name) => (name === undefined ? call.end() : call.write({ name, n: n++ }));
    },
  });
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.add(() => new Promise<void>((r) => grpcServer.tryShutdown(() => r())));
  bb = startBb(
    ['capture', '--target', `sse=http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--target', `grpc=http://127.0.0.1:${grpcPort}`, '--ui', '--out', join(dir, 'out')],
    { BB_HOME: join(dir, 'home') },
    { timeoutMs: 120_000 },
  );
  sseProxy = (await bb.waitFor(/bb: sse: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  grpcProxy = (await bb.waitFor(/bb: grpc: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  const ui = await liveViewUrl(bb);
  ({ browser, page, elsewhere, complaints } = await openLiveView(ui, { width: 1280, height: 720 }));
  await page.click('#tabs button[data-view="frames"]');
  await page.waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '0 frames on 0 connections');
});

after(async () => {
  await browser?.close();
  if (bb) {
    bb.child.kill('SIGINT');
    await bb.exited;
  }
  await cleanups.run();
});

/** The frames tab's visible rows: lane mark, its left offset, kind, payload. */
const frames = (p: Page): Promise<string[][]> =>
  p.$$eval('[data-view="frames"] .row.frame:not([hidden])', (rows) =>
    rows.map((r) => [r.querySelector('.mark')!.textContent!, (r.querySelector('.mark') as HTMLElement).style.left, r.querySelector('.c-op')!.textContent!, r.querySelector('.c-data')!.textContent!]),
  );

/** Waits (polling each frame) until the tab counts `text`; returns how long it took. */
async function counted(text: string): Promise<number> {
  const since = Date.now();
  await page.waitForFunction((t) => document.querySelector('[data-view="frames"] .count')?.textContent === t, text, { polling: 'raf' });
  return Date.now() - since;
}

test("an SSE stream's events and a gRPC server stream's messages appear live in the frames tab, in order, one lane each", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  // The SSE stream: its events, one by one.
  const sse = http.get(`${sseProxy}/events?topic=news`);
  const sseRes = await new Promise<http.IncomingMessage>((r) => sse.once('response', r));
  sseRes.resume();
  pushEvent('{"n":1}');
  await counted('1 frames on 1 connections');
  pushEvent('<b>second</b>');
  t.diagnostic(`the second event shown after ${await counted('2 frames on 1 connections')} ms`);

  // The gRPC server stream: the request goes out (send), items come back (receive), each live.
  const Client = grpc.makeGenericClientConstructor({ list: LIST } as unknown as grpc.ServiceDefinition, 'Items');
  const client = new Client(grpcProxy.replace('http://', ''), grpc.credentials.createInsecure()) as unknown as grpc.Client & { list(req: ItemValue): grpc.ClientReadableStream<ItemValue> };
  const call = client.list({ name: 'all', n: 2 });
  const got: string[] = [];
  call.on('data', (m: ItemValue) => got.push(m.name));
  const ended = new Promise((r) => call.on('status', r));
  await counted('3 frames on 2 connections');
  pushItem('item zero');
  await counted('4 frames on 2 connections');
  pushEvent('third');
  await counted('5 frames on 2 connections');
  pushItem('item one');
  await counted('6 frames on 2 connections');
  pushItem(undefined);
  await ended;
  client.close();
  assert.deepEqual(got, ['item zero', 'item one']);

  // The call's end reaches the page after the client saw its status: wait for the lane to say so.
  await page.waitForFunction(() => [...document.querySelectorAll('[data-view="frames"] .lane-name')].some((e) => /\(ended\)$/.test(e.textContent ?? '')), undefined, { timeout: 10_000 });
  const lanes = await page.$$eval('[data-view="frames"] .lane-name', (l) => l.map((e) => e.textContent));
  assert.equal(lanes.length, 2);
  assert.match(lanes[0]!, /^1: sse sse stream #\d+ 127\.0\.0\.1:\d+ \/events \?topic=news$/);
  assert.match(lanes[1]!, /^2: grpc grpc call #\d+ 127\.0\.0\.1:\d+ \/demo\.Items\/List \(ended\)$/);
  const shown = await frames(page);
  assert.deepEqual(shown.map((f) => f.slice(0, 3)), [
    ['↓', '0px', 'sse'], ['↓', '0px', 'sse'], ['↑', '22px', 'grpc'], ['↓', '22px', 'grpc'], ['↓', '0px', 'sse'], ['↓', '22px', 'grpc'],
  ]);
  assert.deepEqual(shown.filter((f) => f[2] === 'sse').map((f) => f[3]), ['event tick id 1: {"n":1}', 'event tick id 2: <b>second</b>', 'event tick id 3: third']);
  assert.equal(shown[3]![3]!, '{1: "item zero", 2: 0}'); // decoded, as bb frames previews a gRPC message
  assert.equal(await page.$$eval('[data-view="frames"] b', (b) => b.length), 0);

  // The search covers them: payload text (a gRPC message's printable strings too), direction, lane.
  await page.fill('.f-frames', 'second');
  await counted('1 of 6 frames');
  await page.fill('.f-frames', '"item one"');
  await counted('1 of 6 frames');
  await page.fill('.f-frames', 'dir:send');
  await counted('1 of 6 frames');
  await page.fill('.f-frames', 'conn:List');
  await counted('3 of 6 frames');
  await page.fill('.f-frames', '');
  await counted('6 frames on 2 connections');
  pushEvent(undefined);
  sse.destroy();
});

test("clicking a frame opens its exchange, with its messages, in the Exchanges tab", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  await page.evaluate(() => {
    const rows = [...document.querySelectorAll<HTMLElement>('[data-view="frames"] .row.frame:not([hidden])')];
    rows.find((r) => r.querySelector('.c-op')!.textContent === 'grpc')!.click();
  });
  await page.waitForSelector('[data-view="capture"]:not([hidden]) .detail:not([hidden]) .dtabs button.on[data-tab="messages"]');
  await page.waitForFunction(() => document.querySelectorAll('.detail .messages .msg').length === 3);
  assert.match((await page.textContent('.detail .dhead .what'))!, /\/demo\.Items\/List/);
  await page.click('#tabs button[data-view="frames"]');
  await page.evaluate(() => {
    const rows = [...document.querySelectorAll<HTMLElement>('[data-view="frames"] .row.frame:not([hidden])')];
    rows.find((r) => r.querySelector('.c-op')!.textContent === 'sse')!.click();
  });
  await page.waitForFunction(() => /\/events\?topic=news/.test(document.querySelector('.detail .dhead .what')?.textContent ?? ''));
  await page.waitForFunction(() => document.querySelectorAll('.detail .messages .msg').length === 3);
  assert.deepEqual(elsewhere, []);
  assert.deepEqual(complaints, []);
});

test('a long stream: the tab keeps the latest 50,000 frames and says older ones are not listed', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  await page.click('#tabs button[data-view="frames"]');
  const sse = http.get(`${sseProxy}/events?topic=flood`);
  cleanups.add(() => sse.destroy());
  const res = await new Promise<http.IncomingMessage>((r) => sse.once('response', r));
  res.resume();
  const events = 56_000;
  for (let n = 1; n <= events; n++) {
    pushEvent(`flood ${n}`);
    if (n % 2_000 === 0) await new Promise((r) => setTimeout(r, 20));
  }
  // 6 frames of the first test, then the flood: past 55,000 the oldest go, down to 50,000, and the rest follow (a
  // page that fell behind gets bb's window of 50,000 again: the count is between the two either way).
  const note = ' (older ones not listed: bb frames on the HAR lists all)';
  const since = Date.now();
  await page.fill('.f-frames', '"flood 56000"');
  await page.waitForFunction((n) => new RegExp(`^1 of 5\\d{4} frames${n.replace(/[()]/g, '\\$&')}$`).test(document.querySelector('[data-view="frames"] .count')?.textContent ?? ''), note, { timeout: 60_000 });
  t.diagnostic(`the last event shown ${Date.now() - since} ms after it was sent`);
  const kept = Number((await page.textContent('[data-view="frames"] .count'))!.split(' ')[2]);
  assert.ok(kept >= 50_000 && kept <= 55_000, `frames kept: ${kept}`);
  await page.fill('.f-frames', 'second'); // the first test's event, among the oldest: dropped
  await counted(`0 of ${kept} frames${note}`);
  await page.fill('.f-frames', '');
  // The first test's event stream ended and has no frame left in the list: its lane went, the flood's is the first.
  // (The gRPC call's frames are the latest of their own capture: kept, in the list or in bb's window after a resync.)
  await counted(`${kept} frames on 2 connections${note}`);
  const lanes = await page.$$eval('[data-view="frames"] .lane-name', (l) => l.map((e) => e.textContent!));
  assert.ok(!lanes.some((l) => l.includes('topic=news')), lanes.join(' | '));
  // Labelled beside the news lane it reads "?topic=flood"; a page resynced under load (the news lane no longer in
  // the window) labels it alone, "topic=flood". Both name the flood's query.
  assert.match(lanes[0]!, /^1: sse sse stream #\d+ 127\.0\.0\.1:\d+ \/events \??topic=flood$/);
  pushEvent(undefined);
  sse.destroy();
  assert.deepEqual(complaints, []);
});
