// A long WebSocket conversation opened in `bb capture --ui`, in a real browser
// (bb as users run it, headless Debian chromium): the page is sent the latest
// 1,000 messages (ui/capture-feed.ts ENTRY_MESSAGES), says how many came
// before, keeps 1,000 as new ones arrive (the oldest go), and shows the latest
// 10,000 when asked. Opening a conversation used to build and send every
// message it lists (200,000: 1 s of the relay's thread, 22 MB to the page).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import WebSocket, { WebSocketServer } from 'ws';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveCaptureInBrowser, type LiveCaptureInBrowser } from '../helpers/live-view.js';
import { tempDir } from '../helpers/tmp.js';
import { closeHttpAndWs } from '../helpers/servers.js';

let run: LiveCaptureInBrowser | undefined;
let page: Page;
let server: http.Server;
let wss: WebSocketServer;

before(async () => {
  if (!CHROMIUM) return;
  server = http.createServer((_req, res) => res.end('ok'));
  wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  run = await liveCaptureInBrowser(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, tempDir().dir, { width: 1280, height: 720 });
  page = run.page;
});

after(async () => {
  await run?.stop();
  if (server) await closeHttpAndWs(server, wss);
});

/** The open exchange's message lines as "direction data". */
const shown = (): Promise<string[]> => page.$$eval('.detail .messages .msg', (ms) => ms.map((m) => `${m.querySelector('.m-dir')!.textContent} ${m.querySelector('.m-data')!.textContent}`));
const note = (): Promise<string | null> => page.evaluate(() => document.querySelector('.detail .messages .earlier')?.textContent ?? null);
/** Message k of the conversation as the page lines it: m0, its echo, m1, ... */
const line = (k: number): string => (k % 2 === 0 ? `↑ send m${k / 2}` : `↓ receive echo m${(k - 1) / 2}`);
const lines = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, k) => line(from + k));

test('a long conversation opens with its latest 1,000 messages, keeps 1,000 as more come, and shows 10,000 when asked', async (t) => {
  if (!run) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const ws = new WebSocket(`${run.proxy.replace(/^http/, 'ws')}/long`);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  // Round trips, one at a time: the conversation's order is known.
  const say = async (from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i++) {
      const echo = new Promise((r) => ws.once('message', r));
      ws.send(`m${i}`);
      await echo;
    }
  };
  await say(0, 750);
  await page.waitForFunction(() => [...document.querySelectorAll('.list .row .c-path')].some((c) => c.textContent === '/long'));
  await page.evaluate(() => [...document.querySelectorAll<HTMLElement>('.list .row .c-path')].find((c) => c.textContent === '/long')!.click());
  await page.waitForSelector('.detail .dtabs button[data-tab="messages"]');
  await page.click('.detail .dtabs button[data-tab="messages"]');
  await page.waitForFunction(() => document.querySelectorAll('.detail .messages .msg').length === 1000);
  assert.deepEqual(await shown(), lines(500, 1500));
  assert.match((await note())!, /^500 earlier messages are not shown: this view holds the latest 1,000 .*show the latest 10,000$/);

  // New messages: the page keeps 1,000, the oldest go, and the count before them grows.
  await say(750, 760);
  await page.waitForFunction(() => document.querySelector('.detail .messages .msg:last-child .m-data')?.textContent === 'echo m759');
  assert.deepEqual(await shown(), lines(520, 1520));
  assert.match((await note())!, /^520 earlier messages are not shown/);

  await page.click('.detail .messages .earlier button.more');
  await page.waitForFunction(() => document.querySelectorAll('.detail .messages .msg').length === 1520);
  assert.deepEqual(await shown(), lines(0, 1520));
  assert.equal(await note(), null);
  // Still live, on the messages tab.
  await say(760, 761);
  await page.waitForFunction(() => document.querySelectorAll('.detail .messages .msg').length === 1522);
  // Closed: the entry comes again without its messages; the page keeps its own, the two closes added.
  ws.close(1000, 'done');
  await page.waitForFunction(() => /closed/.test(document.querySelector('.detail .dhead .badge')?.textContent ?? ''));
  await page.waitForFunction(() => document.querySelectorAll('.detail .messages .msg').length === 1524);
  assert.deepEqual((await shown()).slice(0, 2), lines(0, 2));
  assert.deepEqual(run.complaints, []);
});
