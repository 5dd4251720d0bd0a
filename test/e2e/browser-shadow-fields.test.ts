// The Shadow tab of `bb shadow --ui` (ui/assets/views/shadow.js) in headless Debian chromium, over a shadow of two
// builds of a small JSON service on loopback whose answers name fields as no identifier does: keys and a header
// name with quotes, backslashes, brackets, dots, unicode, controls and bidi characters. The diff writes such a
// field in brackets (`response.body["@type"]`, diff/selector.ts joinPath); a sample opened marks that field in
// each answer, as it marks a plain one. What the page shows from the traffic is isolated from bb's own words and
// its bidi and control characters are written as \u202E: a request's U+202E reversed the sample's header.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { openLiveView } from '../helpers/live-view.js';
import { tempDir } from '../helpers/tmp.js';
import { atFileEnd } from '../helpers/cleanups.js';
import { HOSTILE_KEYS } from '../helpers/hostile-keys.js';
import { joinPath, parseFieldPath } from '../../diff/selector.js';
import { visibleText } from '../../core/visible.js';
import { startShadow, type Shadow } from '../../scenario/index.js';

const tmp = tempDir();
let browser: Browser | undefined;
let page: Page;
let shadow: Shadow;
let complaints: string[] = [];

/** The header only the new build sends (a name with quotes: the diff writes it in brackets). */
const HEADER = "x-'cand-only'";

/** One build: each hostile key (and `total`) holds the build's word; the new build adds HEADER. */
async function startBuild(build: 'old' | 'new'): Promise<string> {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (build === 'new') res.setHeader(HEADER, 'yes');
    res.end(JSON.stringify(Object.fromEntries([['total', build === 'old' ? 1 : 2], ...HOSTILE_KEYS.map((k) => [k, build])])));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  atFileEnd(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

before(async () => {
  if (!CHROMIUM) return;
  const [primary, candidate, secondary] = [await startBuild('old'), await startBuild('new'), await startBuild('old')];
  shadow = await startShadow({ primary, candidate, secondary, outDir: tmp.path('run'), bbHome: tmp.bbHome, reportEveryMs: 50, ui: { host: '127.0.0.1', port: 0 } });
  atFileEnd(() => shadow.close());
  ({ browser, page, complaints } = await openLiveView(shadow.uiUrl!, { width: 1400, height: 900 }));
  atFileEnd(() => browser?.close());
  await page.waitForSelector('#tabs button[data-view="shadow"].on');
});

/** Opens each finding's first sample in turn: its pattern and, per answer, the lines marked. */
async function markedBySample(p: Page): Promise<Array<{ pattern: string; marked: string[][] }>> {
  const rows = await p.$$('tr.finding');
  const out: Array<{ pattern: string; marked: string[][] }> = [];
  for (const row of rows) {
    const pattern = (await row.getAttribute('data-pattern')) ?? '';
    await (await row.$('button.sample-link'))!.click();
    await p.waitForFunction(() => document.querySelectorAll('.sample .answers .answer').length === 3);
    out.push({ pattern, marked: await p.$$eval('.sample .answers .answer', (cols) => cols.map((c) => [...c.querySelectorAll('.hl')].map((h) => h.textContent!.trim().replace(/,$/, '')))) });
  }
  return out;
}

test('a field written in brackets is marked in each answer, as a plain one is', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const res = await request(`${shadow.url}/ld`);
  await res.body.text();
  await page.waitForFunction((n) => document.querySelectorAll('tr.finding').length === n, HOSTILE_KEYS.length + 2, { timeout: 30_000 });
  const seen = await markedBySample(page);
  // A JSON line as the page writes it: its bidi characters as their escapes (visibleText).
  const line = (key: string, value: unknown) => visibleText(`${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  const want = [
    { pattern: 'response.body.total', marked: [[line('total', 1)], [line('total', 2)], [line('total', 1)]] },
    ...HOSTILE_KEYS.map((k) => ({ key: k, marked: [[line(k, 'old')], [line(k, 'new')], [line(k, 'old')]] })),
    { pattern: joinPath('response.headers', HEADER), marked: [[], [`${HEADER}yes`], []] },
  ];
  const marks = (m: string[][]) => JSON.stringify(m);
  for (const w of want) {
    const label = 'pattern' in w ? w.pattern : joinPath('response.body', w.key!);
    assert.ok(seen.some((s) => marks(s.marked) === marks(w.marked)), `${label} is not marked: ${JSON.stringify(seen.filter((s) => s.marked.flat().length !== 2 && s.marked.flat().length !== 3))}`);
  }
  assert.deepEqual(complaints, []);
});

test("the page reads joinPath's output with the diff's own parser, whatever the key holds", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const paths = HOSTILE_KEYS.map((k) => joinPath(joinPath(joinPath('response.body.items', 0), k), 'next'));
  const read = await page.evaluate((ps) => ps.map((p) => (window as unknown as { bbParseFieldPath(p: string): unknown }).bbParseFieldPath(p)), paths);
  assert.deepEqual(read, HOSTILE_KEYS.map((k) => ['response', 'body', 'items', 0, k, 'next']));
  assert.deepEqual(read, paths.map(parseFieldPath));
});

/** The characters visibleText (core/visible.ts) writes as escapes. */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

test("a bidi character from the request reverses none of bb's text: shown as \\u202E, the request isolated", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const res = await request(`${shadow.url}/x/%E2%80%AE?q=%E2%80%AEspoof`);
  await res.body.text();
  const row = 'tr.finding[data-pattern="response.body.total"]';
  await page.waitForFunction((r) => document.querySelectorAll(`${r} button.sample-link`).length === 2, row, { timeout: 30_000 });
  const button = `${row} button.sample-link:nth-child(2)`;
  assert.equal(await page.getAttribute(button, 'title'), 'GET /x/%E2%80%AE?q=\\u202Espoof');
  const id = (await page.textContent(button))!.slice(1);
  await page.click(button);
  await page.waitForFunction((want) => document.querySelector('.sample .what')?.textContent === want && document.querySelectorAll('.sample .answers .answer').length === 3, `GET /x/%E2%80%AE?q=\\u202Espoof #${id}: response.body.total changed (regression)`);
  assert.deepEqual(await page.$$eval('.sample .what bdi', (b) => b.map((x) => x.textContent)), ['GET /x/%E2%80%AE?q=\\u202Espoof', 'response.body.total']);
  // Nowhere on the tab: not in a finding's field (a key with U+202E), a JSON line, a value, a route or a tooltip.
  const shown = await page.evaluate(() => [document.querySelector('.shadow')!.textContent!, ...[...document.querySelectorAll('[title]')].map((e) => e.getAttribute('title')!)]);
  assert.deepEqual(shown.filter((text) => HIDDEN.test(text)), []);
  assert.ok(shown[0]!.includes(visibleText(joinPath('response.body', '\u202Espoof'))), 'the key with U+202E, escaped');
  assert.deepEqual(complaints, []);
});
