// `bb capture --ui` with a page that never reads its feed: bb runs as users
// run it (bin/bb.js, port 0), a raw socket opens the exchanges feed and stops
// reading, and a bounded loop of requests drives the proxy. What bb queued for
// that page stays under the cap (the live view's /api/feeds), the capture
// has every exchange, and a fresh page opened afterwards in headless Debian
// chromium lists them all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveViewUrl, openLiveView } from '../helpers/live-view.js';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { openStalledPage, type StalledPage } from '../helpers/stalled-page.js';
import { tempDir } from '../helpers/tmp.js';
import type { FeedStat } from '../../ui/feed-stream.js';

const REQUESTS = 2_400;
const AT_ONCE = 8;
// Long URLs make big rows: a row's URL is cut at 2,048 characters (capture/live.ts ROW_URL_CHARS), so ~2 KB a row
// event, a few per exchange, several MB for the page in all.
const PADDING = 'p'.repeat(6000);

const dir = tempDir().dir;
const har = join(dir, 'stalled.har');
let bb: BbProcess;
let server: http.Server;
let proxy = '';
let ui = '';
let stalled: StalledPage | undefined;

before(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  bb = startBb(['capture', '--target', target, '--ui', '--out', har], { BB_HOME: join(dir, 'home') }, { timeoutMs: 180_000 });
  proxy = (await bb.waitFor(/bb: capture: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  ui = await liveViewUrl(bb);
});

after(async () => {
  stalled?.close();
  if (bb && bb.child.exitCode === null) {
    bb.child.kill('SIGINT');
    await bb.exited;
  }
  server?.close();
});

async function feedStats(): Promise<{ max: number; pages: FeedStat[] }> {
  return (await (await request(ui + 'api/feeds')).body.json()) as { max: number; pages: FeedStat[] };
}

test('a page that never reads holds bb to the cap, the capture keeps every exchange, and a fresh page shows them all', async (t) => {
  stalled = await openStalledPage(ui, '/feed/exchanges');
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < REQUESTS) {
      const n = ++next;
      const res = await request(`${proxy}/item/${n}?pad=${PADDING}`);
      assert.equal(res.statusCode, 200);
      await res.body.text();
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));

  const { max, pages } = await feedStats();
  const page = pages.find((p) => p.feed === 'exchanges');
  assert.ok(page, JSON.stringify(pages));
  t.diagnostic(`the stalled page: ${JSON.stringify(page)}, cap ${max}`);
  assert.equal(page.state, 'behind', 'the load was more than the page and the kernel buffers could hold');
  assert.ok(page.most <= max, `bb queued up to ${page.most} bytes for a page that never reads; the cap is ${max}`);
  assert.ok(page.queued <= max);

  if (CHROMIUM) {
    const { browser, page: fresh, complaints } = await openLiveView(ui, { width: 1280, height: 720 });
    try {
      await fresh.waitForFunction((n) => document.querySelector('.count')?.textContent === `${n} exchanges`, REQUESTS, { timeout: 60_000 });
      assert.equal(await fresh.$eval('#resync', (e) => (e as HTMLElement).hidden), true, 'a fresh page did not resync');
      assert.deepEqual(complaints, []);
    } finally {
      await browser.close();
    }
  } else t.diagnostic('Debian chromium is not installed (apt-get install chromium): the fresh page is not checked');

  bb.child.kill('SIGINT');
  await bb.exited;
  const entries = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: Array<{ request: { url: string } }> } }).log.entries;
  assert.equal(entries.length, REQUESTS);
  const seen = new Set(entries.map((e) => Number(/\/item\/(\d+)\?/.exec(e.request.url)?.[1])));
  assert.equal(seen.size, REQUESTS);
});
