// The live Frames tab's search at 50,000 frames (the most it keeps: ui/frames-feed.ts FRAMES_SHOWN), during a
// capture driven by this test: `bb capture --ui` (bin/bb.js) in front of a WebSocket server on
// 127.0.0.1 port 0, two clients that each ask for 24,999 messages, headless
// Debian chromium on the live view. Every frame reaches the open tab (no
// reload; a tab that falls behind gets the window again), and each search narrows the 50,000 frames to exactly the matches
// (payload words and phrases, direction, lane); Enter jumps through them and
// Escape shows the one it reached among all. How long a search takes is
// printed (t.diagnostic), not asserted: the cores are shared.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import WebSocket, { WebSocketServer } from 'ws';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveViewUrl, openLiveView, type LiveViewPage } from '../helpers/live-view.js';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { closeHttpAndWs } from '../helpers/servers.js';
import { tempDir } from '../helpers/tmp.js';
import { FRAMES_SHOWN } from '../../ui/frames-feed.js';

/** Messages the server sends on each of the two connections: with the clients' two, the frames the tab keeps. */
const PER_CONNECTION = 24_999;
/** The frames the tab lists: per connection the client's "go" and the server's messages. */
const TOTAL = 2 * (PER_CONNECTION + 1);
assert.equal(TOTAL, FRAMES_SHOWN);

/** The server's i-th message on a connection. */
const message = (i: number): string => JSON.stringify({ type: 'item', n: i, user: `u${i % 97}`, text: i % 1000 === 7 ? 'needle in the stack' : 'lorem ipsum dolor' });

const dir = tempDir().dir;
/** The open live view (browser, page, what it fetched elsewhere and complained of), once before() ran with chromium. */
let live: LiveViewPage | undefined;
/** bb capture --ui and the WebSocket server it records. */
const run: { bb?: BbProcess; server?: http.Server; wss?: WebSocketServer; proxy: string; clients: WebSocket[] } = { proxy: '', clients: [] };
/** The live view's page (tests run only when before() opened it). */
const page = (): Page => live!.page;

before(async () => {
  if (!CHROMIUM) return;
  const server = (run.server = http.createServer());
  const wss = (run.wss = new WebSocketServer({ server }));
  // On "go", the messages in one go (the socket buffers them; bb records each).
  wss.on('connection', (ws) => ws.on('message', () => { for (let i = 0; i < PER_CONNECTION; i++) ws.send(message(i)); }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bb = (run.bb = startBb(['capture', '--target', target, '--ui', '--out', join(dir, 'big.har')], { BB_HOME: join(dir, 'home') }, { timeoutMs: 240_000 }));
  run.proxy = (await bb.waitFor(/bb: capture: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  live = await openLiveView(await liveViewUrl(bb), { width: 1280, height: 720 });
  await page().click('#tabs button[data-view="frames"]');
  await page().waitForFunction(() => document.querySelector('[data-view="frames"] .count')?.textContent === '0 frames on 0 connections');
});

after(async () => {
  for (const ws of run.clients) ws.terminate();
  await live?.browser.close();
  if (run.bb) {
    run.bb.child.kill('SIGINT');
    await run.bb.exited;
  }
  if (run.server) await closeHttpAndWs(run.server, run.wss!);
});

/** Fills the search box with `query` and waits until the tab counts `count`; returns the ms it took. */
async function search(query: string, count: string): Promise<number> {
  const since = Date.now();
  await page().fill('.f-frames', query);
  await page().waitForFunction((c) => document.querySelector('[data-view="frames"] .count')?.textContent === c, count, { polling: 'raf', timeout: 30_000 });
  return Date.now() - since;
}

test('a search in the live Frames tab narrows 50,000 frames of a running capture to the matches', async (t) => {
  if (!live) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const sent = Date.now();
  for (const k of ['a', 'b']) {
    const ws = new WebSocket(`${run.proxy.replace(/^http/, 'ws')}/feed?k=${k}`);
    run.clients.push(ws);
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    let got = 0;
    const all = new Promise<void>((r) => ws.on('message', () => ++got === PER_CONNECTION && r()));
    ws.send('go');
    await all;
  }
  await page().waitForFunction((n) => document.querySelector('[data-view="frames"] .count')?.textContent === `${n} frames on 2 connections`, TOTAL, { timeout: 120_000 });
  t.diagnostic(`${TOTAL} frames listed in the open tab ${Date.now() - sent} ms after the clients asked`);

  const receivedMatching = (f: (i: number) => boolean): number => 2 * Array.from({ length: PER_CONNECTION }, (_, i) => i).filter(f).length;
  const times: string[] = [];
  const timed = async (query: string, n: number): Promise<void> => void times.push(`${query}: ${await search(query, `${n} of ${TOTAL} frames`)} ms`);
  // A phrase: the 50 messages per connection that carry it.
  await timed('"needle in the stack"', receivedMatching((i) => i % 1000 === 7));
  // A word and a direction (the closing quote keeps u42 from matching u420…: there is none, u is i % 97).
  await timed('u42" dir:receive', receivedMatching((i) => i % 97 === 42));
  await timed('dir:send', 2);
  // One lane by its label (host, path, then the query that tells the two apart).
  await timed('conn:k=b needle', receivedMatching((i) => i % 1000 === 7) / 2);
  await timed('no-such-payload', 0);
  const cleared = await search('', `${TOTAL} frames on 2 connections`);
  t.diagnostic(`search ms over ${TOTAL} frames: ${times.join(', ')}; cleared ${cleared} ms`);

  // Enter jumps from match to match (Shift+Enter back, round the end), marking each; Escape clears the search and
  // keeps the marked frame in sight among all of them.
  await search('"needle in the stack"', `${receivedMatching((i) => i % 1000 === 7)} of ${TOTAL} frames`);
  const marked = (): Promise<string[][]> =>
    page().$$eval('[data-view="frames"] .row.frame.sel:not([hidden])', (rows) => rows.map((r) => [(r.querySelector('.mark') as HTMLElement).style.left, r.querySelector('.c-data')!.textContent!]));
  const jumpTo = async (key: string, lane: string, n: number): Promise<void> => {
    await page().press('.f-frames', key);
    await page().waitForFunction(([l, want]) => [...document.querySelectorAll('[data-view="frames"] .row.frame.sel:not([hidden])')].some((r) => (r.querySelector('.mark') as HTMLElement).style.left === l && r.querySelector('.c-data')!.textContent!.includes(want!)), [lane, `"n":${n},`]);
    assert.equal((await marked()).length, 1);
  };
  await jumpTo('Enter', '0px', 7);
  await jumpTo('Enter', '0px', 1007);
  await jumpTo('Shift+Enter', '0px', 7);
  await jumpTo('Shift+Enter', '22px', 24_007);
  await page().press('.f-frames', 'Escape');
  await page().waitForFunction((c) => document.querySelector('[data-view="frames"] .count')?.textContent === c, `${TOTAL} frames on 2 connections`);
  assert.equal(await page().inputValue('.f-frames'), '');
  assert.deepEqual(await marked(), [['22px', message(24_007)]]);
  // In sight: the list scrolled to it, about a thousand frames before the end.
  const place = await page().evaluate(() => {
    const list = document.querySelector('[data-view="frames"] .list') as HTMLElement;
    const row = document.querySelector('[data-view="frames"] .row.frame.sel:not([hidden])') as HTMLElement;
    return { top: row.offsetTop - list.scrollTop, height: list.clientHeight, fromEnd: list.scrollHeight - list.scrollTop - list.clientHeight };
  });
  assert.ok(place.top >= 0 && place.top < place.height, JSON.stringify(place));
  assert.ok(place.fromEnd > 10_000, JSON.stringify(place));

  // Only the rows in sight exist in the page.
  assert.ok((await page().$$eval('[data-view="frames"] .row.frame', (r) => r.length)) < 100);
  assert.deepEqual(live.elsewhere, []);
  assert.deepEqual(live.complaints, []);
});
