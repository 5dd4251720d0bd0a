import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { diffCaptures, renderText, type DiffResult } from '../../diff/index.js';
import type { Har } from '../../capture/har.js';
import { capture, runTime, uuid } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { sharedFixture } from '../helpers/fixtures.js';

const show = (r: DiffResult) => renderText(r, { color: false });

describe('captures from other producers', () => {
  const t = tempDir();

  it('every shared fixture diffs against itself as MATCH', async (t2) => {
    const fixtures = sharedFixture(t2);
    if (!fixtures) return;
    const names = (await readdir(fixtures)).filter((n) => n.endsWith('.har') && n !== 'broken.har');
    assert.ok(names.length >= 10);
    for (const n of names) {
      const r = await diffCaptures(join(fixtures, n), join(fixtures, n));
      assert.equal(r.verdict, 'match', `${n}\n${show(r)}`);
      // A capture against itself pairs every entry it has.
      const entries = (JSON.parse((await readFile(join(fixtures, n), 'utf8')).replace(/^\uFEFF/, '')) as Har).log.entries.length;
      assert.equal(r.pairs.length, entries, n);
    }
  });

  it('different producers’ exports diff against each other without failing', async (t2) => {
    const fixtures = sharedFixture(t2);
    if (!fixtures) return;
    const r = await diffCaptures(join(fixtures, 'chrome.har'), join(fixtures, 'firefox.har'));
    assert.equal(r.verdict, 'diff');
    // Every difference has a 10-hex id and names its entry as <page>/METHOD path#n (a page may be a URL).
    for (const d of r.differences) {
      assert.match(d.id, /^[0-9a-f]{10}$/);
      assert.match(d.entry, /^.*\/[A-Z]+ \S*#\d+$/, d.entry);
    }
    const ws = await diffCaptures(join(fixtures, 'mitmproxy-websocket.har'), join(fixtures, 'mitmproxy-websocket.har'));
    assert.equal(ws.verdict, 'match');
  });

  it('a hand-made Chrome-style HAR with _webSocketMessages matches bb’s capture of the same traffic', async () => {
    const sid = `session_${uuid()}`;
    const traffic = (id: string) => [
      { method: 'POST', url: 'http://127.0.0.1:7001/v1/sessions', body: { id, created_at: runTime() }, page: 'create' },
      { url: `http://127.0.0.1:7001/v1/sessions/${id}`, body: { id }, page: 'create' },
      {
        url: 'http://127.0.0.1:7001/ws', page: 'ws',
        ws: [
          { type: 'send' as const, data: { type: 'hello' } },
          { type: 'receive' as const, data: { type: 'welcome', session: id, at: runTime() } },
        ],
      },
    ];
    const bb = capture(traffic(sid));
    const chrome: Har = capture(traffic(`session_${uuid()}`), { creator: 'WebInspector' });
    // What Chrome writes differently: no _bb anywhere, random page ids, lower-case header names in
    // another order, its own `_` fields, another port.
    delete chrome.log._bb;
    chrome.log.pages = chrome.log.pages!.map((p, i) => ({ ...p, id: `page_${i + 7}` }));
    for (const e of chrome.log.entries) {
      delete e._bb;
      e.pageref = `page_${(e.pageref === 'create' ? 0 : 1) + 7}`;
      e.request.url = e.request.url.replace(':7001', ':7999');
      e.request.headers = e.request.headers.map((h) => ({ name: h.name.toLowerCase(), value: h.value.replace(':7001', ':7999') })).reverse();
      e._initiator = { type: 'script' };
      e._priority = 'High';
    }
    const r = await diffCaptures(await t.write('bb.har', bb), await t.write('chrome-style.har', chrome));
    assert.equal(r.verdict, 'match', show(r));
    assert.equal(r.pairs.length, 3);
    const strict = await diffCaptures(await t.write('bb2.har', bb), await t.write('chrome-style2.har', chrome), { headerOrder: true });
    assert.ok(strict.differences.some((d) => d.path === 'request.headerOrder'), show(strict));
  });
});

describe('Playwright recordHar (headless Debian chromium)', () => {
  const chromium = '/usr/bin/chromium';
  let server: Server | undefined;
  let port = 0;
  const t = tempDir();
  before(async () => {
    if (!existsSync(chromium)) return;
    // A page whose API answers fresh uuids and timestamps on every call.
    server = createServer((req, res) => {
      if (req.url === '/api') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: randomUUID(), created_at: new Date().toISOString(), items: [{ id: randomUUID(), n: 1 }] }));
        return;
      }
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>bb demo</title><script>fetch("/api").then(r=>r.json()).then(j=>document.title="loaded "+j.items.length)</script>');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('two recordings of the same page MATCH with the default rules', async (t2) => {
    if (!existsSync(chromium)) return t2.skip('no /usr/bin/chromium on this machine');
    const { chromium: pw } = await import('playwright-core');
    const browser = await pw.launch({
      executablePath: chromium,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const record = async (name: string) => {
        const path = join(t.dir, name);
        const context = await browser.newContext({ recordHar: { path, content: 'embed' } });
        const page = await context.newPage();
        await page.goto(`http://127.0.0.1:${port}/`);
        await page.waitForFunction(() => document.title.startsWith('loaded'), undefined, { timeout: 10_000 });
        await context.close();
        return path;
      };
      const a = await record('pw-a.har');
      const b = await record('pw-b.har');
      const r = await diffCaptures(a, b);
      assert.equal(r.verdict, 'match', show(r));
      assert.ok(r.pairs.some((p) => p.id.endsWith('GET /api#1')), show(r));
    } finally {
      await browser.close();
    }
  });
});
