import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { createContext, defaultStages, pairViewsFrom, renderHtml, runStages, type DiffResult } from '../../diff/index.js';
import { elide, esc } from '../../diff/report/html-pair.js';
import { scriptJson } from '../../diff/report/html.js';
import { capture, tempDir } from './har-builder.js';

const CHROMIUM = '/usr/bin/chromium';

// Each payload sets a window flag if it ever runs.
const IMG = '<img src=x onerror="window.__pwned=\'img\'">';
const SCRIPT_BREAK = '</script><script>window.__pwned="script"</script>';
const JS_URL = 'javascript:window.__pwned="url"';
const STYLE_BREAK = '</style><script>window.__pwned="style"</script>';
const ALERT = '<svg onload=alert(1)>';

async function reportFor(dir: { write: (n: string, d: unknown) => Promise<string> }): Promise<{ html: string; result: DiffResult }> {
  const hostileKey = { [IMG]: 1, [SCRIPT_BREAK]: 2, link: JS_URL };
  const a = capture([
    { url: 'http://127.0.0.1:3001/v1/items', body: { items: [{ name: 'a' }, { name: 'b' }], total: 2 } },
    { url: 'http://127.0.0.1:3001/v1/build', body: { build: 'old' } },
    { url: 'http://127.0.0.1:3001/v1/jitter', body: { jitter: 1 } },
    { page: SCRIPT_BREAK, url: `http://127.0.0.1:3001/${encodeURIComponent(SCRIPT_BREAK)}`, body: { html: IMG, s: 'x' } },
    { url: 'http://127.0.0.1:3001/ws', ws: [{ type: 'send', data: { type: 'hello' } }, { type: 'receive', data: { type: 'msg', text: 'hi' } }, { type: 'receive', data: { type: 'bye' } }] },
  ]);
  const b = capture([
    { url: 'http://127.0.0.1:3001/v1/items', body: { items: [{ name: 'a' }, { name: 'B' }, { name: 'c' }], total: 3 } },
    { url: 'http://127.0.0.1:3001/v1/build', body: { build: 'new' } },
    { url: 'http://127.0.0.1:3001/v1/jitter', body: { jitter: 2 } },
    { page: SCRIPT_BREAK, url: `http://127.0.0.1:3001/${encodeURIComponent(SCRIPT_BREAK)}`, body: { html: SCRIPT_BREAK, s: JS_URL, ...hostileKey, css: STYLE_BREAK, svg: ALERT } },
    { url: 'http://127.0.0.1:3001/ws', ws: [{ type: 'send', data: { type: 'hello' } }, { type: 'receive', data: { type: 'msg', text: IMG } }, { type: 'receive', data: SCRIPT_BREAK }, { type: 'receive', data: { type: 'bye' } }] },
  ]);
  const ctx = createContext(await dir.write('old.har', a), await dir.write('new.har', b), { views: true });
  const result = await runStages(ctx, defaultStages);
  for (const d of result.differences) {
    if (d.route === 'GET /v1/build') Object.assign(d, { class: 'known', reason: 'the build name <b>is</b> in the body' });
    if (d.route === 'GET /v1/jitter') d.class = 'noise';
  }
  Object.assign(result.counts, {
    real: result.differences.filter((d) => d.class === 'real').length,
    known: result.differences.filter((d) => d.class === 'known').length,
    noise: result.differences.filter((d) => d.class === 'noise').length,
  });
  return { html: renderHtml(result, { views: pairViewsFrom(ctx) }), result };
}

describe('HTML report: the page text', () => {
  const dirs: Array<{ remove: () => Promise<void> }> = [];
  after(async () => {
    for (const d of dirs) await d.remove();
  });

  it('is self-contained: a CSP with a nonce, no external URL, one script with the nonce', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { html } = await reportFor(dir);
    const csp = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
    assert.ok(csp, 'CSP meta tag');
    assert.match(csp[1]!, /default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-[A-Za-z0-9+/=]+'/);
    assert.doesNotMatch(html, /\b(src|href|action|formaction|srcset)\s*=\s*["']?(https?:|\/\/|javascript:)/i);
    assert.doesNotMatch(html, /<link\b|@import|url\(/i);
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!.trim());
    assert.equal(scripts.length, 2, scripts.join(' | '));
    assert.equal(scripts[0], 'type="application/json" id="bb-data"');
    assert.match(scripts[1]!, /^nonce="[A-Za-z0-9+/=]+"$/);
    assert.ok(html.includes('.jsondiffpatch-delta'), "jsondiffpatch's CSS is inlined");
  });

  it('escapes everything captured; the JSON data block cannot close its element', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const { html } = await reportFor(dir);
    for (const p of [IMG, SCRIPT_BREAK, STYLE_BREAK, ALERT]) assert.ok(!html.includes(p), `raw payload in page: ${p}`);
    assert.doesNotMatch(html, /<img|<svg|<iframe/i);
    assert.equal(html.match(/<\/script>/g)?.length, 2);
    const data = html.match(/<script type="application\/json" id="bb-data">([^]*?)<\/script>/)![1]!;
    assert.ok(!data.includes('<'));
    assert.equal(esc(`<a href="x">'&`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
    assert.equal(scriptJson({ s: '</script>\u2028&' }), '{"s":"\\u003c/script\\u003e\\u2028\\u0026"}');
    assert.deepEqual(JSON.parse(scriptJson({ s: '</script>\u2028&' })), { s: '</script>\u2028&' });
  });

  it('elides huge strings and arrays, keeping different values different', () => {
    const long = 'x'.repeat(100_000);
    const a = elide({ s: long + 'a', list: Array.from({ length: 5000 }, (_, i) => i) }) as { s: string; list: unknown[] };
    const b = elide({ s: long + 'b' }) as { s: string };
    assert.ok(a.s.length < 2200 && /characters elided/.test(a.s));
    assert.notEqual(a.s, b.s);
    assert.equal(a.list.length, 501);
    assert.match(String(a.list[500]), /4500 more items/);
  });
});

describe('HTML report in headless chromium', () => {
  let browser: Browser | undefined;
  const dirs: Array<{ remove: () => Promise<void> }> = [];
  before(async () => {
    if (!existsSync(CHROMIUM)) return;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  after(async () => {
    await browser?.close();
    for (const d of dirs) await d.remove();
  });

  it('renders the summary and a pair, its filters hide rows, and no captured payload runs', async (t) => {
    if (!browser) return t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`);
    const dir = await tempDir();
    dirs.push(dir);
    const { html, result } = await reportFor(dir);
    const file = join(dir.dir, 'report.html');
    await writeFile(file, html);
    const page = await browser.newPage();
    const dialogs: string[] = [];
    const requests: string[] = [];
    const pageUrl = pathToFileURL(file).href;
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('request', (r) => {
      if (r.url() !== pageUrl) requests.push(r.url());
    });
    await page.goto(pageUrl);
    await page.waitForFunction(() => document.getElementById('bb-ready')?.textContent !== '');

    // Summary and counts (the count line is filled by the page's own script, so scripts do run).
    assert.equal(await page.textContent('#verdict'), `DIFF: ${result.counts.real} real`);
    assert.equal(await page.textContent('#bb-ready'), `${result.counts.real} real, ${result.counts.known} known, ${result.counts.noise} noise`);
    const endpoints = await page.$$eval('#by-endpoint tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
    assert.ok(endpoints.includes('GET /v1/items') && endpoints.includes('GET /ws'), endpoints.join(', '));

    // A pair side by side: jsondiffpatch's view shows old and new values.
    const items = page.locator('section.pair', { hasText: '/GET /v1/items#1' });
    assert.equal(await items.count(), 1);
    assert.ok((await items.locator('.jsondiffpatch-modified').count()) >= 1);
    const total = items.locator('li[data-key="total"]');
    assert.equal((await total.locator('.jsondiffpatch-left-value').textContent())?.trim(), '2');
    assert.equal((await total.locator('.jsondiffpatch-right-value').textContent())?.trim(), '3');
    assert.equal(await items.locator('li[data-key="items"] .jsondiffpatch-added').count(), 1, 'the added item');
    // WebSocket columns: aligned rows, the extra message on the right only.
    const ws = page.locator('section.pair', { hasText: '/GET /ws#1' }).locator('table.ws');
    assert.equal(await ws.locator('tr.ws-same').count(), 2);
    assert.equal(await ws.locator('tr.ws-changed').count(), 1);
    assert.equal(await ws.locator('tr.ws-extra').count(), 1);
    assert.ok((await ws.locator('tr.ws-changed td').nth(2).textContent())!.includes(JSON.stringify(IMG).slice(1, -1)), 'payload shown as text');

    // Filters: unchecking "known" hides known rows and pairs; checking it shows them again.
    const knownRows = page.locator('tr.diff-row.c-known');
    assert.ok((await knownRows.count()) >= 1);
    assert.equal(await knownRows.first().isVisible(), true);
    await page.click('#filter-known');
    assert.equal(await knownRows.first().isVisible(), false);
    assert.equal(await page.locator('section.pair.c-known').first().isVisible(), false);
    assert.equal(await page.locator('tr.diff-row.c-real').first().isVisible(), true);
    await page.click('#filter-noise');
    assert.equal(await page.locator('tr.diff-row.c-noise').first().isVisible(), false);
    await page.click('#filter-known');
    assert.equal(await knownRows.first().isVisible(), true);

    // Hostile content: shown as text, nothing ran, nothing was fetched.
    const hostile = page.locator('section.pair', { hasText: `${SCRIPT_BREAK}/GET /` });
    assert.equal(await hostile.count(), 1, 'the entry id (page title) holding </script> is shown as text');
    assert.ok((await hostile.textContent())!.includes(JSON.stringify(JS_URL)), "the javascript: URL is shown as JSON text");
    assert.equal(await page.locator('img, svg:not(.jsondiffpatch-arrow svg), iframe, a[href^="javascript"]').count(), 0);
    await page.waitForTimeout(200);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(requests, []);
    await page.close();
  });
});
