// A browser-made HAR replayed: headless Debian chromium loads a page that
// creates an item, reads it back by the id the server made up and holds a
// WebSocket conversation with server-issued cursors; Playwright's recordHar
// writes the HAR (no _bb fields, WebSocket times in ms); bb replay re-drives
// it against a fresh instance, which must see the ids it issued itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, chromiumLaunchOptions } from '../helpers/browser-app.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { startReplayService, type ReplayService } from '../scenario/replay/service.js';

const tmp = tempDir();
let browser: Browser | undefined;
const services: ReplayService[] = [];
before(async () => {
  if (CHROMIUM) browser = await chromium.launch(chromiumLaunchOptions());
});
after(async () => {
  await browser?.close();
  for (const s of services) await s.close();
});

test("Playwright's recordHar HAR replays against a fresh instance: ids and cursors followed, nothing 404s", async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const first = await startReplayService();
  services.push(first);
  const har = tmp.path('browser.har');
  const context = await browser.newContext({ recordHar: { path: har, content: 'embed' } });
  const page = await context.newPage();
  await page.goto(`${first.url}/`);
  await page.waitForFunction(() => document.body?.dataset.done === '1', undefined, { timeout: 15_000 });
  await context.close();
  const recorded = JSON.parse(await readFile(har, 'utf8'));
  assert.equal(recorded.log.creator.name, 'Playwright');

  const fresh = await startReplayService();
  services.push(fresh);
  const out = tmp.path('browser-replay.har');
  const run = await runBb(['replay', har, '--target', fresh.url, '--out', out, '--json', tmp.path('browser-replay.json')], { BB_HOME: tmp.bbHome });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.deepEqual(fresh.log.map((l) => l.replace(/item_[0-9a-f]+/, 'ID')), ['GET / 200', 'POST /items 201', 'GET /items/ID 200']);
  // The conversation went message for message, with the fresh server's session and cursor.
  assert.deepEqual(fresh.wsReceived.map((m) => JSON.parse(m).type), ['subscribe', 'ack']);
  const replayed = JSON.parse(await readFile(out, 'utf8'));
  const ws = replayed.log.entries.find((e: { _resourceType?: string }) => e._resourceType === 'websocket');
  const received = ws._webSocketMessages.filter((m: { type: string; opcode: number }) => m.type === 'receive' && m.opcode === 1).map((m: { data: string }) => JSON.parse(m.data).type);
  assert.deepEqual(received, ['hello', 'subscribed', 'event']);
  assert.equal(ws._bb.close.code, 1000);
  const report = JSON.parse(await readFile(tmp.path('browser-replay.json'), 'utf8'));
  assert.ok(report.rewritten.length >= 3, JSON.stringify(report.rewritten));
});
