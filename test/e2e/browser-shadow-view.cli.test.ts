// `bb shadow --ui` in a real browser: bb runs as users run it (bin/bb.js) in
// front of two builds of a small service (old as primary and secondary, new as
// candidate), headless Debian chromium opens the live view while the test
// drives traffic. A regression appears with its three answers side by side and
// the differing field marked, the route table with each count and latency; a
// hostile answer shows as text and runs nothing; the ratify actions write a
// known entry and a noise rule into --config that the next `bb diff` of the
// written captures honours; a POST from another origin, or without the
// run's token, is refused.
//
// Each run takes the README's and docs/shadow.md's picture; BB_SCREENSHOTS=dir keeps it as dir/live-shadow.png
// (BB_SCREENSHOTS=docs/images regenerates docs/images/live-shadow.png).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveViewUrl, openLiveView } from '../helpers/live-view.js';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { startShadowService, type ShadowService } from '../scenario/shadow/service.js';

const dir = tempDir().dir;
const out = join(dir, 'run');
const config = join(dir, 'bb.config.json');
const env = { BB_HOME: join(dir, 'home') };
let browser: Browser | undefined;
let page: Page;
let bb: BbProcess;
let services: ShadowService[] = [];
let proxy = '';
let ui = '';
let elsewhere: string[] = [];
let complaints: string[] = [];

before(async () => {
  if (!CHROMIUM) return;
  services = [await startShadowService('old'), await startShadowService('new'), await startShadowService('old')];
  const [primary, candidate, secondary] = services;
  bb = startBb(['shadow', '--primary', primary!.url, '--candidate', candidate!.url, '--secondary', secondary!.url, '--out', out, '--config', config, '--ui'], env, { timeoutMs: 180_000 });
  proxy = (await bb.waitFor(/clients → (http:\/\/\S+)/, 30_000))[1]!;
  ui = await liveViewUrl(bb);
  ({ browser, page, elsewhere, complaints } = await openLiveView(ui, { width: 1400, height: 900 }));
  await page.waitForSelector('#tabs button[data-view="shadow"].on');
});

after(async () => {
  await browser?.close();
  if (bb && bb.child.exitCode === null) {
    bb.child.kill('SIGINT');
    await bb.exited;
  }
  for (const s of services) await s.close();
});

/** Waits for the findings row of `pattern` and returns its selector. */
async function findingRow(pattern: string): Promise<string> {
  const sel = `tr.finding[data-pattern="${pattern}"]`;
  await page.waitForSelector(sel, { timeout: 30_000 }).catch(async (err) => {
    throw new Error(`${(err as Error).message}\npage: ${await page.textContent('#views')}\ncomplaints: ${complaints.join('\n')}\nbb: ${bb.stderr()}`);
  });
  return sel;
}

test('a regression appears live with its three answers side by side, the field marked', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  for (let i = 0; i < 3; i++) await (await request(`${proxy}/items`)).body.text();
  await (await request(`${proxy}/note`)).body.text();
  const row = await findingRow('response.body.total');
  assert.equal(await page.textContent(`${row} td.cls`), 'regression');
  await page.waitForFunction(() => /4 requests/.test(document.querySelector('.totals')?.textContent ?? ''));
  // The route table: each count, skipped by reason, and each target's p50/p99, per route and for all.
  const itemsRow = ['GET /items', '3', '3', '0', '3', '0', '0', '0', ''];
  const rowOf = (route: string) => page.$$eval('.routes tr', (rows, r) => [...(rows.find((x) => x.querySelector('td.route')?.textContent === r)?.querySelectorAll('td') ?? [])].map((c) => c.textContent ?? ''), route);
  await page.waitForFunction((want) => [...document.querySelectorAll('.routes tr')].some((r) => [...r.querySelectorAll('td')].slice(0, 9).map((c) => c.textContent).join('|') === want), itemsRow.join('|'));
  assert.deepEqual(await page.$$eval('.routes tr:first-child th', (h) => h.map((e) => e.textContent)), [
    'route', 'requests', 'mirrored', 'equal', 'regressions', 'noise', 'unclassified', 'errors', 'skipped', 'primary p50/p99', 'candidate p50/p99', 'secondary p50/p99',
  ]);
  const cells = await rowOf('GET /items');
  assert.deepEqual(cells.slice(0, 9), itemsRow);
  for (const q of cells.slice(9)) assert.match(q!, /^\d+(\.\d+)?\/\d+(\.\d+)? ms$/, cells.join(' | '));
  await page.click(`${row} button.sample-link`);
  await page.waitForFunction(() => document.querySelectorAll('.answers .answer').length === 3);
  const marked = await page.$$eval('.answers .answer', (cols) => cols.map((c) => [(c as HTMLElement).dataset.target, [...c.querySelectorAll('.hl')].map((h) => h.textContent!.trim())]));
  // One line marked in each: the field, with each target's value.
  assert.deepEqual(marked.map(([target, lines]) => [target, (lines as string[]).map((l) => l.replace(/,$/, ''))]), [
    ['primary', ['"total": 1']],
    ['candidate', ['"total": 2']],
    ['secondary', ['"total": 1']],
  ]);
  assert.match((await page.textContent(".sample .request"))!, /GET http:\/\/127\.0\.0\.1:\d+\/items$/);
});

test('a hostile answer shows as text and runs nothing', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const row = await findingRow('response.body.note');
  await page.click(`${row} button.sample-link`);
  await page.waitForFunction(() => document.querySelectorAll('.answers .answer').length === 3 && /note/.test(document.querySelector('.sample .what')?.textContent ?? ''));
  const candidate = (await page.textContent('.answer[data-target="candidate"] .hl'))!;
  assert.match(candidate, /<\/script><img src=x onerror=/);
  assert.match((await page.textContent('.answer[data-target="candidate"] table.hdrs'))!, /javascript:window\.__pwned/);
  assert.equal(await page.$$eval('.answers img, .answers script', (x) => x.length), 0);
  assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
  assert.deepEqual(elsewhere, []);
});

test('a POST from another origin or without the run token is refused (403), nothing written', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const token = (await (await request(ui + 'api/views')).body.json() as { token: string }).token;
  const body = JSON.stringify({ class: 'regression', kind: 'changed', pattern: 'response.body.total', reason: 'csrf' });
  const foreign = await request(ui + 'action/known', { method: 'POST', body, headers: { origin: 'http://evil.example', 'content-type': 'application/json', 'x-bb-token': token } });
  assert.equal(foreign.statusCode, 403);
  await foreign.body.text();
  const tokenless = await request(ui + 'action/known', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  assert.equal(tokenless.statusCode, 403);
  await tokenless.body.text();
  assert.equal(existsSync(config), false);
});

test('screenshot of the shadow view (into BB_SCREENSHOTS=dir when set)', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  // Taken on every run, so the picture's steps cannot rot unseen; kept only when asked for.
  const shots = process.env['BB_SCREENSHOTS'] || dir;
  await page.click(`${await findingRow('response.body.total')} button.sample-link`);
  await page.waitForFunction(() => /total/.test(document.querySelector('.sample .what')?.textContent ?? '') && document.querySelectorAll('.answers .answer').length === 3);
  await page.screenshot({ path: join(shots, 'live-shadow.png'), fullPage: true });
  assert.ok(existsSync(join(shots, 'live-shadow.png')));
});

test('ratifying a finding as known writes the config that the next bb diff honours', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const row = await findingRow('response.body.total');
  await page.click(`${row} button.act:text("known…")`);
  await page.fill(`${row} .reason input`, 'total counts the new bundle');
  await page.click(`${row} .reason button`);
  await page.waitForSelector(`${row} .done.ok`);
  const written = JSON.parse(readFileSync(config, 'utf8')) as { known: Array<Record<string, unknown>> };
  assert.deepEqual(written.known, [{ where: '*/GET /items#*', path: 'response.body.total', kind: 'changed', old: 1, new: 2, reason: 'total counts the new bundle' }]);

  // The header the new build dropped: "noise rule" writes what `bb noise` proposes for it (a known entry with the noise reason).
  const header = await findingRow('response.headers.x-served-by');
  await page.click(`${header} button.act:text("noise rule")`);
  await page.waitForSelector(`${header} .done.ok`);
  const noise = (JSON.parse(readFileSync(config, 'utf8')) as { known: Array<Record<string, unknown>> }).known.filter((k) => k.path === 'response.headers.x-served-by');
  // On the finding's route, not only on the few exchanges it kept as samples: later ones are quiet too.
  assert.deepEqual(noise.map((k) => [k.where, k.kind, typeof k.reason]), [['*/GET /items#*', 'removed', 'string'], ['*/GET /items#*', 'added', 'string']]);
  for (let i = 0; i < 4; i++) await (await request(`${proxy}/items`)).body.text();
  await page.waitForFunction(() => /^8 requests · 8 mirrored/.test(document.querySelector('.totals')?.textContent ?? ''));
  // What the page said while bb served it: once bb stops, the page's feeds retrying a closed port are the browser's own errors.
  assert.deepEqual(complaints, []);

  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 1, bb.stderr());
  const diff = await runBb(['diff', join(out, 'primary.har'), join(out, 'candidate.har'), '--noise', join(out, 'secondary.har'), '--config', config, '--json', '-'], env);
  const result = JSON.parse(diff.stdout) as { findings: Array<{ class: string; kind: string; pattern: string; reason?: string }> };
  const total = result.findings.find((f) => f.pattern === 'response.body.total');
  assert.equal(total?.class, 'known', JSON.stringify(result.findings));
  assert.equal(total?.reason, 'total counts the new bundle');
  // The header is known as noise now; the hostile note, ratified by nobody, is still real.
  const served = result.findings.find((f) => f.pattern === 'response.headers.x-served-by');
  assert.equal(served?.class, 'known', JSON.stringify(result.findings));
  assert.deepEqual(result.findings.filter((f) => f.class === 'real').map((f) => f.pattern), ['response.body.note']);
});
