// bb and a real browser's HAR, both ways: Playwright's recordHar (headless
// Debian chromium) read by bb frames / bb show / bb diff, and bb's own
// capture of the same traffic served back by Playwright's routeFromHAR.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startCapture } from '../../index.js';
import { CHROMIUM, chromiumLaunchOptions, startBrowserApp, type BrowserApp } from '../helpers/browser-app.js';
import { runBb } from '../helpers/cli.js';
import { lazy } from '../helpers/steps.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir().dir;
const bbHome = join(dir, 'home');
let browser: Browser | undefined;
let app: BrowserApp;

before(async () => {
  app = await startBrowserApp();
  if (CHROMIUM) browser = await chromium.launch(chromiumLaunchOptions());
});
after(async () => {
  await browser?.close();
  await app?.close();
});

interface FramesJson {
  connections: Array<{ id: string; url: string; entry: number; messages: Array<{ type: string; opcode: number; data: string }> }>;
}

/** Loads the app through a fresh bb proxy while Playwright records its own HAR of the same traffic. */
async function recordBoth(name: string): Promise<{ pwHar: string; bbHar: string; proxyUrl: string }> {
  const cap = await startCapture({ target: `http://127.0.0.1:${app.port}`, label: name, out: join(dir, `${name}.bb.har`), bbHome });
  const pwHar = join(dir, `${name}.pw.har`);
  const context = await browser!.newContext({ recordHar: { path: pwHar, content: 'embed' } });
  const page = await context.newPage();
  await page.goto(`${cap.url}/`);
  await page.waitForFunction(() => document.body?.dataset.done === '1', undefined, { timeout: 15_000 });
  await context.close();
  const bbHar = await cap.close();
  return { pwHar, bbHar, proxyUrl: cap.url };
}

// The first recording, made when a test first needs it: the tests after the first read it too.
const firstRecording = lazy(() => recordBoth('one'));

test('bb frames reads Playwright recordHar, and bb lists the same messages in the same order', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const first = await firstRecording();
  const pw = await runBb(['frames', first.pwHar, '--json']);
  assert.equal(pw.code, 0, pw.stderr);
  const bb = await runBb(['frames', first.bbHar, '--json']);
  assert.equal(bb.code, 0, bb.stderr);
  const pwFrames = JSON.parse(pw.stdout) as FramesJson;
  const bbFrames = JSON.parse(bb.stdout) as FramesJson;
  assert.equal(pwFrames.connections.length, 1);
  assert.equal(bbFrames.connections.length, 1);
  // Playwright writes data messages only (opcodes 1 and 2); bb also records control frames.
  const dataOnly = (c: FramesJson['connections'][0]) => c.messages.filter((m) => m.opcode === 1 || m.opcode === 2).map((m) => [m.type, m.opcode, m.data]);
  const pwMessages = dataOnly(pwFrames.connections[0]);
  assert.equal(pwMessages.length, 5, JSON.stringify(pwMessages));
  assert.deepEqual(dataOnly(bbFrames.connections[0]), pwMessages);
  assert.deepEqual(pwMessages.map((m) => m[0]), ['send', 'receive', 'send', 'receive', 'receive']);
  const close = bbFrames.connections[0].messages.find((m) => m.opcode === 8);
  assert.ok(close, 'bb records the close frame');
});

test("Playwright's HAR diffs against bb's capture of the same traffic: every request pairs", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const first = await firstRecording();
  // Playwright's HAR has pages (one per navigation), bb's has none: ids then leave pages out.
  const diff = await runBb(['diff', first.pwHar, first.bbHar, '--json', '-']);
  assert.ok(diff.code === 0 || diff.code === 1, diff.stderr);
  const report = JSON.parse(diff.stdout) as { differences: Array<{ kind: string; entry: string; path: string }> };
  assert.deepEqual(report.differences.filter((d) => d.kind === 'missing'), [], 'nothing Playwright recorded is missing from bb');
  // What bb records beyond Playwright: the close frames Playwright does not export (the page's icon is a data: URL, so no favicon request).
  for (const d of report.differences) {
    assert.ok(d.entry === '/GET /ws#1' && /^ws\.(close|messages\[\d+\])$/.test(d.path), JSON.stringify(d));
  }
});

test('bb show lists the entries of a Playwright HAR', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const first = await firstRecording();
  const shown = await runBb(['show', first.pwHar]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /GET .*\/api\/data\?n=1/);
  assert.match(shown.stdout, /\/ws/);
});

test("Playwright's routeFromHAR serves a page from bb's capture", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const first = await firstRecording();
  // The proxy is closed: only the HAR can answer this URL now.
  const context = await browser.newContext();
  await context.routeFromHAR(first.bbHar, { notFound: 'abort' });
  const page = await context.newPage();
  await page.goto(`${first.proxyUrl}/`);
  await page.waitForFunction(() => (document.getElementById('out')?.textContent ?? '').includes('items'), undefined, { timeout: 15_000 });
  const text = await page.textContent('#out');
  assert.match(text ?? '', /"items":\[\{"name":"a"\},\{"name":"b"\}\]/);
  await context.close();
});

test('two Playwright recordings of a page with fresh uuids and timestamps diff as MATCH', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const first = await firstRecording();
  const second = await recordBoth('two');
  const pwDiff = await runBb(['diff', first.pwHar, second.pwHar]);
  assert.equal(pwDiff.code, 0, pwDiff.stdout + pwDiff.stderr);
  assert.match(pwDiff.stdout, /^MATCH/m);
  const bbDiff = await runBb(['diff', first.bbHar, second.bbHar]);
  assert.equal(bbDiff.code, 0, bbDiff.stdout + bbDiff.stderr);
  assert.match(bbDiff.stdout, /^MATCH/m);
});
