// The live view of `bb shadow` when a verdict is revised (scenario/shadow/compare.ts revise), in headless Debian
// chromium: a creation whose Location holds each build's own order number (`/orders/1000`, the candidate's
// `/orders/5000`) is counted as noise once its verdict is due (the secondary's `/orders/9000` differs too), and
// its finding shows; the client reads the order only then. `bb diff` of the captures binds the number however
// late it was sent back, so the live run compares the creation again with it bound: the Location finding leaves
// the table, the creation counts equal, and the read's real change (the new build's order status) shows.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { openLiveView } from '../helpers/live-view.js';
import { tempDir } from '../helpers/tmp.js';
import { atFileEnd } from '../helpers/cleanups.js';
import { startShadow, type Shadow } from '../../scenario/index.js';
import { startShop, type Shop } from '../scenario/shadow/shop.js';

const tmp = tempDir();
let browser: Browser | undefined;
let page: Page;
let shadow: Shadow | undefined;
let shops: Shop[] = [];
let complaints: string[] = [];

before(async () => {
  if (!CHROMIUM) return;
  shops = [await startShop('old', 1000), await startShop('new', 5000), await startShop('old', 9000)];
  // Undone in reverse order, each even when one fails, before the temp folder goes (it was registered first).
  for (const s of shops) atFileEnd(() => s.close());
  const [primary, candidate, secondary] = shops;
  shadow = await startShadow({
    primary: primary!.url, candidate: candidate!.url, secondary: secondary!.url, outDir: tmp.path('run'), bbHome: tmp.bbHome,
    mirror: 'all', reportEveryMs: 50, ui: { host: '127.0.0.1', port: 0 },
  });
  atFileEnd(() => shadow?.close());
  ({ browser, page, complaints } = await openLiveView(shadow.uiUrl!, { width: 1200, height: 800 }));
  atFileEnd(() => browser?.close());
  await page.waitForSelector('#tabs button[data-view="shadow"].on');
});

const totals = () => page.textContent('.totals');

test('a verdict given before the read is taken back in the live view once the read binds the Location', async (t) => {
  if (!browser || !shadow) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const made = await request(`${shadow.url}/orders?located`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(made.statusCode, 201);
  await made.body.text();
  const location = made.headers.location as string;
  assert.equal(location, '/orders/1000');

  // The creation's verdict comes once it is due (5 s on the clock): noise, with its finding.
  const row = 'tr.finding[data-pattern="response.headers.location"]';
  await page.waitForSelector(row, { timeout: 20_000 });
  assert.equal(await page.textContent(`${row} td.cls`), 'noise');
  await page.waitForFunction(() => /· 1 noise ·/.test(document.querySelector('.totals')?.textContent ?? ''));

  const read = await request(`${shadow.url}${location}`);
  assert.equal(read.statusCode, 200);
  await read.body.text();

  // Compared again with the number bound: the Location finding is gone, the read's real change is there.
  await page.waitForSelector(row, { state: 'detached', timeout: 20_000 });
  await page.waitForSelector('tr.finding.regression[data-pattern="response.body.status"]', { timeout: 20_000 });
  await page.waitForFunction(() => /^2 requests · 2 mirrored · 1 equal · 1 regressions · 0 noise/.test(document.querySelector('.totals')?.textContent ?? ''));
  assert.deepEqual(await page.$$eval('tr.finding', (rows) => rows.map((r) => (r as HTMLElement).dataset.pattern)), ['response.body.status'], String(await totals()));
  assert.deepEqual(complaints, []);

  const report = await shadow.close();
  shadow = undefined;
  assert.deepEqual(report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['regression changed response.body.status']);
});
