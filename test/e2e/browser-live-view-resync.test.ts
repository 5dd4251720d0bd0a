// The capture view after bb resynced it, in headless Debian chromium: the
// live view's server (ui/) with a small cap on a page's queued updates and a
// feed that sends a burst of rows in one turn, more than the cap. bb drops the
// burst for that page and sends {type:"resync"} and a snapshot instead; the
// page says it resynced and lists every row once, then follows new ones.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { captureViewFeeds, openLiveView } from '../helpers/live-view.js';
import { startUi, CAPTURE_VIEWS, type UiServer } from '../../ui/index.js';
import type { UiEvent } from '../../ui/server.js';
import type { LiveRow } from '../../capture/index.js';

const CAP = 16 * 1024;
const BURST = 400;

const rowOf = (seq: number): LiveRow => ({
  seq, method: 'GET', url: `http://127.0.0.1:8080/api/items/${seq}`, status: 200, state: 'done', kind: 'http', mime: 'application/json',
  startedAt: 1_700_000_000_000 + seq, endedAt: 1_700_000_000_003 + seq, requestBytes: 0, responseBytes: 120, messages: 0,
});

let browser: Browser | undefined;
let page: Page;
let complaints: string[] = [];
let ui: UiServer;
const rows: LiveRow[] = [];
const pages = new Set<(event: UiEvent) => void>();

// The frames tab's stand-in: one WebSocket connection (exchange #1) and its messages.
const CONNECTION: UiEvent = { type: 'connection', label: 'capture', row: { ...rowOf(1), kind: 'websocket', state: 'open' }, text: '#1 127.0.0.1:8080 /chat' };
const frames: Array<Record<string, unknown>> = [];
const framePages = new Set<(event: UiEvent) => void>();

/** A new message on the connection, as the frames feed tells it. */
function addFrame(): void {
  const seq = 1000 + frames.length;
  const data = `message ${frames.length + 1}`;
  const frame = { seq, time: 1_700_000_001 + frames.length / 1000, type: seq % 2 ? 'receive' : 'send', opcode: 1, data, length: data.length };
  frames.push(frame);
  for (const send of framePages) send({ type: 'frame', label: 'capture', exchange: 1, frame });
}

/** A new row, as a capture's feed tells it to every open page. */
function addRow(): void {
  const row = rowOf(rows.length + 1);
  rows.push(row);
  for (const send of pages) send({ type: 'row', label: 'capture', row });
}

before(async () => {
  if (!CHROMIUM) return;
  ui = await startUi({
    title: 'bb capture: resync',
    views: CAPTURE_VIEWS,
    feedQueueMax: CAP,
    feeds: captureViewFeeds((_key, send) => {
      send({ type: 'captures', labels: ['capture'] });
      for (const row of rows) send({ type: 'row', label: 'capture', row });
      pages.add(send);
      return () => pages.delete(send);
    }, (_key, send) => {
      send({ type: 'captures', labels: ['capture'] });
      send(CONNECTION);
      for (const frame of frames) send({ type: 'frame', label: 'capture', exchange: 1, frame });
      framePages.add(send);
      return () => framePages.delete(send);
    }),
  });
  ({ browser, page, complaints } = await openLiveView(ui.url, { width: 1280, height: 720 }));
});
after(async () => {
  await browser?.close();
  await ui?.close();
});

const count = (n: number): Promise<unknown> => page.waitForFunction((k) => document.querySelector('.count')?.textContent === `${k} exchanges`, n, { timeout: 30_000 });

test('a burst past the cap reaches the page as a resync and a snapshot: every row once, and it says so', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  for (let i = 0; i < 3; i++) addRow();
  await count(3);
  assert.equal(await page.$eval('#resync', (e) => (e as HTMLElement).hidden), true);
  // One turn of the event loop: more than CAP bytes of rows for the page at once.
  for (let i = 0; i < BURST; i++) addRow();
  await count(3 + BURST);
  await page.waitForSelector('#resync:not([hidden])');
  assert.equal(await page.$eval('#resync', (e) => e.textContent), 'resynced');
  const stats = (await (await fetch(ui.url + 'api/feeds')).json()) as { pages: Array<{ feed: string; resyncs: number; state: string }> };
  assert.deepEqual(stats.pages.filter((p) => p.feed === 'exchanges').map((p) => [p.state, p.resyncs]), [['live', 1]]);
  // Scrolled to the end, the last rows are the last ones sent, each once.
  const paths = await page.$$eval('.list .row:not([hidden]) .c-path', (cells) => cells.map((c) => c.textContent));
  assert.equal(paths.at(-1), `/api/items/${3 + BURST}`);
  assert.equal(new Set(paths).size, paths.length);
  // And it follows again.
  addRow();
  await count(4 + BURST);
  assert.deepEqual(complaints, []);
});

test('the frames tab after a resync: one lane, every frame once, in order', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  await page.click('#tabs button[data-view="frames"]');
  const shown = (n: number): Promise<unknown> =>
    page.waitForFunction((k) => document.querySelector('[data-view="frames"] .count')?.textContent === `${k} frames on 1 connections`, n, { timeout: 30_000 });
  for (let i = 0; i < 2; i++) addFrame();
  await shown(2);
  for (let i = 0; i < BURST; i++) addFrame();
  await shown(2 + BURST);
  await page.waitForFunction(() => document.getElementById('resync')?.textContent === 'resynced ×2');
  assert.deepEqual(await page.$$eval('[data-view="frames"] .lane-name', (l) => l.map((e) => e.textContent)), ['1: #1 127.0.0.1:8080 /chat']);
  const last = await page.$$eval('[data-view="frames"] .row.frame:not([hidden]) .c-data', (cells) => cells.map((c) => c.textContent));
  assert.equal(last.at(-1), `message ${2 + BURST}`);
  assert.equal(new Set(last).size, last.length);
  assert.deepEqual(complaints, []);
});
