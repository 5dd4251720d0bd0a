import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { diffCaptures, pairViewsFrom, renderHtml, validateDiffConfig, type DiffResult } from '../../../diff/index.js';
import { findingLine } from '../../../diff/report/text.js';
import { elide, tok } from '../../../diff/report/html-pair.js';
import { capture } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

const CHROMIUM = '/usr/bin/chromium';

// Each payload sets a window flag if it ever runs.
const IMG = '<img src=x onerror="window.__pwned=\'img\'">';
const SCRIPT_BREAK = '</script><script>window.__pwned="script"</script>';
const JS_URL = 'javascript:window.__pwned="url"';
const STYLE_BREAK = '</style><script>window.__pwned="style"</script>';
const ALERT = '<svg onload=alert(1)>';

// Long tokens and values that must wrap (ids, paths: only after / . [) or scroll in their own box.
const LONG_SEGMENT = 'segment'.repeat(30);
const LONG_VALUE = 'v'.repeat(3000);

/** Old, a second run of old (for noise) and new: real, known and noise findings from the real stages. */
function captures(): { a: unknown; a2: unknown; b: unknown } {
  const hostileKey = { [IMG]: 1, [SCRIPT_BREAK]: 2, link: JS_URL };
  const old = (jitter: number) =>
    capture([
      { url: 'http://127.0.0.1:3001/v1/items?page=1&sort=name', body: { items: [{ name: 'a' }, { name: 'b' }], total: 2 } },
      { url: 'http://127.0.0.1:3001/v1/build', body: { build: 'old' } },
      { url: 'http://127.0.0.1:3001/v1/jitter', body: { jitter } },
      { url: `http://127.0.0.1:3001/v1/${LONG_SEGMENT}/deep.path/x?q=${LONG_SEGMENT}`, body: { nested: { [LONG_SEGMENT]: { list: [LONG_VALUE] } } } },
      { page: SCRIPT_BREAK, url: `http://127.0.0.1:3001/${encodeURIComponent(SCRIPT_BREAK)}`, body: { html: IMG, s: 'x' } },
      { url: 'http://127.0.0.1:3001/ws', ws: [{ type: 'send', data: { type: 'hello' } }, { type: 'receive', data: { type: 'msg', text: 'hi' } }, { type: 'receive', data: { type: 'bye' } }] },
    ]);
  const b = capture([
    { url: 'http://127.0.0.1:3001/v1/items?page=1&sort=name', body: { items: [{ name: 'a' }, { name: 'B' }, { name: 'c' }], total: 3 } },
    { url: 'http://127.0.0.1:3001/v1/build', body: { build: 'new' } },
    { url: 'http://127.0.0.1:3001/v1/jitter', body: { jitter: 2 } },
    { url: `http://127.0.0.1:3001/v1/${LONG_SEGMENT}/deep.path/x?q=${LONG_SEGMENT}`, body: { nested: { [LONG_SEGMENT]: { list: [`${LONG_VALUE}w`] } } } },
    { page: SCRIPT_BREAK, url: `http://127.0.0.1:3001/${encodeURIComponent(SCRIPT_BREAK)}`, body: { html: SCRIPT_BREAK, s: JS_URL, ...hostileKey, css: STYLE_BREAK, svg: ALERT } },
    { url: 'http://127.0.0.1:3001/ws', ws: [{ type: 'send', data: { type: 'hello' } }, { type: 'receive', data: { type: 'msg', text: IMG } }, { type: 'receive', data: SCRIPT_BREAK }, { type: 'receive', data: { type: 'bye' } }] },
  ]);
  return { a: old(1), a2: old(3), b };
}

async function reportFor(dir: { write: (n: string, d: unknown) => Promise<string> }): Promise<{ html: string; result: DiffResult }> {
  const { a, a2, b } = captures();
  const config = validateDiffConfig({ known: [{ where: '*/GET /v1/build#*', path: 'response.body.build', reason: 'the build name <b>is</b> in the body' }] });
  const result = await diffCaptures(await dir.write('old.har', a), await dir.write('new.har', b), { views: true, config, noisePath: await dir.write('old2.har', a2) });
  return { html: await renderHtml(result, { views: pairViewsFrom(result) }), result };
}

describe('HTML report: the page text', () => {

  it('is self-contained: a CSP with a nonce, no external URL, one script with the nonce', async () => {
    const dir = tempDir();
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
    const dir = tempDir();
    const { html } = await reportFor(dir);
    for (const p of [IMG, SCRIPT_BREAK, STYLE_BREAK, ALERT]) assert.ok(!html.includes(p), `raw payload in page: ${p}`);
    assert.doesNotMatch(html, /<img|<svg|<iframe/i);
    assert.equal(html.match(/<\/script>/g)?.length, 2);
    const data = html.match(/<script type="application\/json" id="bb-data">([^]*?)<\/script>/)![1]!;
    assert.ok(!data.includes('<'));
  });

  it('puts findings first, real before known before noise, each with its id, line, counts, samples and rows', async () => {
    const dir = tempDir();
    const { html, result } = await reportFor(dir);
    assert.deepEqual(result.findings.map((f) => f.class).filter((c, i, all) => all.indexOf(c) === i), ['real', 'known', 'noise']);
    const at = (marker: string) => {
      const i = html.indexOf(marker);
      assert.ok(i >= 0, `${marker} in page`);
      return i;
    };
    assert.ok(at('<section id="findings">') < at('<section id="rows">') && at('<section id="rows">') < at('<section id="pairs">'));
    const starts = result.findings.map((f) => at(`id="finding-${f.id}"`));
    assert.deepEqual(starts, [...starts].sort((x, y) => x - y), 'findings in result order (real, known, noise)');
    for (const f of result.findings) {
      const block = html.slice(at(`id="finding-${f.id}"`), html.indexOf('</details>', at(`id="finding-${f.id}"`)));
      assert.ok(block.includes(`<code class="fid">${f.id}</code>`), `${f.id}: its id`);
      assert.ok(block.includes(tok(findingLine(f))), `${f.id}: its line`);
      assert.ok(block.includes(`${f.entries} of ${f.of} entries`), `${f.id}: its counts`);
      for (const sample of f.samples) assert.ok(block.includes(tok(sample.request)), `${f.id}: sample ${sample.request}`);
      for (const id of f.rows) assert.ok(block.includes(`data-id="${id}"`), `${f.id}: row ${id} under it`);
    }
    const items = result.findings.find((f) => f.pattern === 'response.body.total')!;
    assert.deepEqual(items.samples.map((x) => x.request), ['GET /v1/items?page=1&sort=name'], 'samples carry the query');
    const known = result.findings.find((f) => f.class === 'known')!;
    assert.ok(html.includes('reason: the build name &lt;b&gt;is&lt;/b&gt; in the body'));
    assert.equal(known.reason, 'the build name <b>is</b> in the body');
  });

  it('says the verdict and the counts once; each pair is headed by its request line and both exchanges', async () => {
    const dir = tempDir();
    const { html, result } = await reportFor(dir);
    const f = result.counts.findings;
    assert.match(html, new RegExp(`<h1 class="verdict-diff" id="verdict">DIFF: ${f.real} real findings \\(${result.counts.real} differences\\)</h1>`));
    assert.equal(html.match(/id="counts"/g)?.length, 1);
    const text = html.replace(/<[^>]+>/g, '');
    assert.equal(text.match(/real findings? \(/g)?.length, 1, 'the real counts are said by the verdict alone');
    assert.equal(text.match(/known findings? \(/g)?.length, 1);
    const counts = html.match(/<p id="counts">([^]*?)<\/p>/)![1]!.replace(/<[^>]+>/g, '');
    assert.equal(counts, `${result.counts.pairs} pairs · ${f.known} known finding (${result.counts.known} difference) · ${f.noise} noise finding (${result.counts.noise} difference)`);
    const pair = result.pairs.find((p) => p.route === 'GET /v1/items')!;
    assert.deepEqual(pair.exchange, { old: '#1', new: '#1' });
    const section = html.slice(html.indexOf('<section class="pair c-real" id="pair-0">'));
    const h3 = section.slice(0, section.indexOf('</h3>'));
    assert.ok(h3.includes(`<code class="req">${tok('GET /v1/items?page=1&sort=name')}</code>`), h3);
    assert.ok(h3.includes('old <code>#1</code> → new <code>#1</code>'), h3);
  });

  it('wraps ids, entry ids and paths only after / . [ and never mid-token', async () => {
    const dir = tempDir();
    const { html, result } = await reportFor(dir);
    // Pieces between / . [ and spaces are unbreakable spans (plain text when only word characters).
    assert.equal(tok('/GET /v1/a.b[0]'), '/<wbr>GET /<wbr>v1/<wbr>a.<wbr>b[<wbr><span class="t">0]</span>');
    assert.equal(tok('GET /v1/user-profiles?page=1&sort=name'), 'GET /<wbr>v1/<wbr><span class="t">user-profiles?page=1&amp;sort=name</span>');
    assert.equal(tok(`<a href="x/y">'&`), '<span class="t">&lt;a</span> <span class="t">href=&quot;x/</span><wbr><span class="t">y&quot;&gt;&#39;&amp;</span>');
    assert.ok(html.includes('<wbr>'));
    assert.doesNotMatch(html.replace(/<span class="t">|<\/span>/g, ''), /[^/.[]<wbr>/, 'a <wbr> only after / . [');
    assert.match(html, /\.t\{white-space:nowrap\}/);
    assert.doesNotMatch(html, /overflow-wrap:\s*anywhere|word-break:\s*break-(all|word)/, 'no CSS that breaks inside a token');
    const long = result.differences.find((d) => d.path.includes(LONG_SEGMENT))!;
    for (const token of [long.entry, long.path, long.request]) assert.ok(html.includes(tok(token)), token);
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
  before(async () => {
    if (!existsSync(CHROMIUM)) return;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  after(async () => {
    await browser?.close();
  });

  it('renders the summary and a pair, its filters hide rows, and no captured payload runs', async (t) => {
    if (!browser) return t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`);
    const dir = tempDir();
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
    await page.waitForFunction(() => document.body.getAttribute('data-ready') === '1');

    // Summary (the page's own script set data-ready, so scripts do run).
    assert.equal(await page.textContent('#verdict'), `DIFF: ${result.counts.findings.real} real findings (${result.counts.real} differences)`);
    assert.equal(await page.textContent('#bb-hidden'), '');
    const endpoints = await page.$$eval('#by-endpoint tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
    assert.ok(endpoints.includes('GET /v1/items') && endpoints.includes('GET /ws'), endpoints.join(', '));

    // A pair side by side: jsondiffpatch's view shows old and new values.
    const items = page.locator('section.pair', { hasText: '/GET /v1/items#1' });
    assert.equal(await items.count(), 1);
    assert.equal(await items.locator('.jsondiffpatch-modified').count(), 2, 'jsondiffpatch marks two nodes of this pair modified');
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

    // Filters: unchecking "known" hides known findings, rows and pairs; checking it shows them again.
    const knownRows = page.locator('#differences tr.diff-row.c-known');
    assert.equal(await knownRows.count(), 1, 'the one known difference');
    assert.equal(await knownRows.first().isVisible(), true);
    assert.equal(await page.locator('details.finding.c-known').first().isVisible(), true);
    await page.click('#filter-known');
    assert.equal(await knownRows.first().isVisible(), false);
    assert.equal(await page.locator('details.finding.c-known').first().isVisible(), false);
    assert.equal(await page.locator('details.finding.c-real').first().isVisible(), true);
    assert.equal(await page.textContent('#bb-hidden'), 'hidden: 1 known finding');
    assert.equal(await page.locator('section.pair.c-known').first().isVisible(), false);
    assert.equal(await page.locator('#differences tr.diff-row.c-real').first().isVisible(), true);
    await page.click('#filter-noise');
    assert.equal(await page.locator('#differences tr.diff-row.c-noise').first().isVisible(), false);
    assert.equal(await page.locator('details.finding.c-noise').first().isVisible(), false);
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

  it('fits a 1400 px window, shows findings before rows, unfolds a finding into its rows, logs no errors', async (t) => {
    if (!browser) return t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`);
    const dir = tempDir();
    const { html, result } = await reportFor(dir);
    const file = join(dir.dir, 'report.html');
    await writeFile(file, html);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => document.body.getAttribute('data-ready') === '1');

    // The page's scroll width, and the outermost elements that stick out past the window (to say what overflows).
    const widths = async () =>
      page.evaluate(() => {
        const wide = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > 1400 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > 1400));
        return { page: document.documentElement.scrollWidth, wide: wide.slice(0, 5).map((el) => `${el.tagName}.${el.className}#${el.id}`) };
      });
    assert.ok((await widths()).page <= 1400, `no horizontal scrollbar: ${JSON.stringify(await widths())}`);

    // Findings come first, then rows, then pairs, on screen as in the source.
    const top = async (sel: string) => (await page.locator(sel).boundingBox())!.y;
    assert.ok((await top('#findings')) < (await top('#differences')), 'findings above rows');
    assert.ok((await top('#differences')) < (await top('#pairs')), 'rows above pairs');
    const order = await page.$$eval('details.finding', (ds) => ds.map((d) => d.getAttribute('data-class')));
    assert.deepEqual(order, result.findings.map((f) => f.class));

    // A finding is folded: its line shows, its rows unfold on a click.
    const long = result.findings.find((f) => f.pattern.includes(LONG_SEGMENT))!;
    const block = page.locator(`#finding-${long.id}`);
    const row = block.locator(`tr.diff-row[data-id="${long.rows[0]}"]`);
    assert.equal(await row.isVisible(), false);
    await block.locator('summary').click();
    assert.equal(await row.isVisible(), true);
    assert.ok((await widths()).page <= 1400, `unfolded, still no horizontal scrollbar: ${JSON.stringify(await widths())}`);
    // The long path wraps at its dots and brackets; its long value scrolls inside its cell.
    const pathCell = row.locator('td').nth(3);
    const box = (await pathCell.boundingBox())!;
    assert.ok(box.x + box.width <= 1400, 'the path cell stays inside the window');
    const scroll = await row.locator('td').nth(4).locator('.x').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    assert.ok(scroll.client > 0 && scroll.client <= 1400, JSON.stringify(scroll));
    // Every finding unfolded and every pair view drawn: still fits.
    await page.$$eval('details', (ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
    assert.ok((await widths()).page <= 1400, `all unfolded: ${JSON.stringify(await widths())}`);
    // No unbreakable piece is split across lines (the browser would break after - ? % without the spans).
    assert.ok((await page.locator('.t').count()) > 10);
    const split = await page.$$eval('.t', (ts) => ts.filter((t) => t.getClientRects().length > 1).map((t) => t.textContent));
    assert.deepEqual(split, []);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
