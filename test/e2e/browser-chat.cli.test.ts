// Issue 33's browser target: headless Debian chromium runs a chat app's page
// (test/e2e/chat-app.ts: a session cookie with Max-Age, Server-Sent Events
// carrying epoch-ms fields, Socket.IO over long-polling then upgraded to a
// WebSocket, every id random per run) through bb's recording proxy, twice;
// `bb diff` of the two sessions with the default config is MATCH. Controls:
// with the built-in rules for issued values, generated ids, epoch times and
// cookies switched off the same two sessions differ, and a build that
// changes one WebSocket field and one SSE field is exactly those two findings.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, chromiumLaunchOptions } from '../helpers/browser-app.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { startChatApp } from './chat-app.js';

describe('a chat app in a real browser, recorded through bb twice', () => {
  const cleanups = new Cleanups();
  const tmp = tempDir();
  let browser: Browser | undefined;
  before(async () => {
    if (CHROMIUM) browser = await chromium.launch(chromiumLaunchOptions());
  });
  after(async () => {
    await browser?.close();
    await cleanups.run();
  });

  /** One browser session against a fresh app through a fresh proxy (its own bb home); the HAR's path and the page's log. */
  const session = async (b: Browser, build: 1 | 2 = 1) => {
    const rec = await record(cleanups, await startChatApp(cleanups, build));
    const context = await b.newContext();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${rec.port}/`);
    await page.waitForFunction(() => document.body?.dataset.done === '1', undefined, { timeout: 15_000 });
    const log = await page.locator('#log').textContent();
    await context.close();
    await rec.finish();
    return { har: join(rec.dir, 'cap.har'), log: log ?? '' };
  };

  it('two sessions of one build compare MATCH with the default config', async (t) => {
    if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
    const a = await session(browser);
    const b = await session(browser);
    // The page went the whole way: SSE, polling handshake and connect, the upgrade (probe, noop poll), events and an ack.
    assert.match(a.log, /^me ann\npresence .*\ntyping .*\ntick .*\nconnect 40\n3probe\npoll 6\n42\["joined",.*\n43\d\[.*\n42\["message",/, a.log);
    const har = JSON.parse(await readFile(a.har, 'utf8')) as { log: { entries: Array<{ request: { url: string }; response: { content: { mimeType: string } } }> } };
    const urls = har.log.entries.map((e) => new URL(e.request.url).pathname + (e.request.url.includes('transport=websocket') ? ' ws' : ''));
    assert.ok(urls.includes('/events') && urls.includes('/socket.io/ ws') && urls.filter((u) => u === '/socket.io/').length === 4, urls.join('\n'));
    const r = await runBb(['diff', a.har, b.har]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^MATCH /, r.stdout);
    // Those built-ins are what makes it MATCH: off, the random ids, times and cookies differ.
    const off = await tmp.write('off.json', { normalize: { disable: ['issued-values', 'generated-ids', 'id-key-tokens', 'epoch-timestamps', 'cookies'] } });
    const plain = await runBb(['diff', a.har, b.har, '--config', off]);
    assert.equal(plain.code, 1, plain.stdout + plain.stderr);
    for (const field of [/response\.events\[\]\.data\.t changed/, /response\.body\[\]\.data\.sid changed/, /ws\.messages\[\]\.data\.args\[\]\.msgId changed/]) assert.match(plain.stdout, field, plain.stdout);
    // Nothing else is blind: a build that changes one WebSocket and one SSE field is those two findings.
    const c = await session(browser, 2);
    const json = tmp.path('chat-report.json');
    const changed = await runBb(['diff', a.har, c.har, '--json', json]);
    assert.equal(changed.code, 1, changed.stdout + changed.stderr);
    const doc = JSON.parse(await readFile(json, 'utf8')) as { findings: Array<{ class: string; kind: string; pattern: string }> };
    assert.deepEqual(doc.findings.filter((f) => f.class === 'real').map((f) => `${f.kind} ${f.pattern}`).sort(), ['changed response.events[].data.seq', 'changed ws.messages[].data.args[].members'], changed.stdout);
  });
});
