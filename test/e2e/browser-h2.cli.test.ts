// Headless Debian chromium through bb's forward proxy to an h2-only HTTPS
// server of our own (node:http2, no HTTP/1.1 fallback): bb mirrors the
// browser's ALPN list upstream, so the page, its script and its fetches go
// over h2 end to end and bb records them from the frames. Playwright's own
// HAR (recordHar) of the same visit is the reference: the same requests, in
// HTTP/2 on both sides, the same statuses and bodies. Skipped when chromium
// is absent.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';
import { startCapture, type CaptureHandle } from '../../index.js';
import { CHROMIUM, chromiumLaunchOptions, forwardProxyFlags } from '../helpers/browser-app.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let dir: string;
let server: http2.Http2SecureServer;
let port: number;
let capture: CaptureHandle | undefined;
let browser: Browser | undefined;
/** The protocol each request reached the server with, by path. */
const seenVersions = new Map<string, string>();

const PAGE = '<!doctype html><html><head><title>loading</title><script src="/app.js"></script></head><body>bb over h2</body></html>';
const APP = `
(async () => {
  const items = await (await fetch('/api/items?page=1')).json();
  const made = await (await fetch('/api/items', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'third' }) })).json();
  document.title = 'done ' + items.length + ' ' + made.name;
})();
`;

before(async () => {
  dir = tempDir().dir;
  const upstreamCa = await loadOrCreateCa(join(dir, 'upstream-ca'));
  const pem = await createLeafFactory(upstreamCa).pemFor('localhost');
  server = http2.createSecureServer({ key: pem.keyPem, cert: pem.chainPem, allowHTTP1: false });
  server.on('stream', (stream, headers) => {
    const path = String(headers[':path']);
    seenVersions.set(`${headers[':method']} ${path}`, stream.session?.alpnProtocol ?? '?');
    stream.on('error', () => {});
    const send = (status: number, type: string, text: string): void => {
      stream.respond({ ':status': status, 'content-type': type });
      stream.end(text);
    };
    if (path === '/') send(200, 'text/html', PAGE);
    else if (path === '/app.js') send(200, 'text/javascript', APP);
    else if (path === '/api/items?page=1') send(200, 'application/json', '[{"id":1,"name":"one"},{"id":2,"name":"two"}]');
    else if (path === '/api/items' && headers[':method'] === 'POST') {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const made = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name: string };
        send(201, 'application/json', JSON.stringify({ id: 3, name: made.name }));
      });
    } else send(404, 'text/plain', 'no such page');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  if (CHROMIUM) {
    capture = await startCapture({
      mode: 'forward',
      out: join(dir, 'bb.har'),
      label: 'browser-h2',
      bbHome: join(dir, 'home'),
      upstreamTls: { extraCa: [upstreamCa.certPem] },
    });
  }
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await capture?.close(100).catch(() => undefined);
  await new Promise((r) => server?.close(r));
});

interface Entry {
  request: { method: string; url: string; httpVersion: string; postData?: { text?: string } };
  response: { status: number; httpVersion: string; content: { text?: string; encoding?: string } };
}

function body(entry: Entry): string {
  const { text, encoding } = entry.response.content;
  return encoding === 'base64' ? Buffer.from(text ?? '', 'base64').toString('utf8') : (text ?? '');
}

describe('chromium through the forward proxy to an h2-only server', () => {
  it('records the page over h2, as Playwright records the same visit', async (t) => {
    if (!capture) {
      t.skip('chromium is not installed');
      return;
    }
    browser = await chromium.launch({
      ...chromiumLaunchOptions(await forwardProxyFlags(capture.url, join(dir, 'home'))),
      timeout: 30_000,
    });
    const pwHar = join(dir, 'playwright.har');
    const context = await browser.newContext({ recordHar: { path: pwHar, content: 'embed' } });
    const page = await context.newPage();
    await page.goto(`https://localhost:${port}/`, { timeout: 30_000 });
    await page.waitForFunction(() => document.title.startsWith('done'), undefined, { timeout: 15_000 });
    assert.equal(await page.title(), 'done 2 third');
    await context.close();
    await browser.close();
    browser = undefined;
    const out = await capture.close(2_000);
    capture = undefined;

    // The server saw every request over h2: bb did not fall back to HTTP/1.1 on either hop.
    for (const request of ['GET /', 'GET /app.js', 'GET /api/items?page=1', 'POST /api/items']) assert.equal(seenVersions.get(request), 'h2', request);
    assert.deepEqual(new Set(seenVersions.values()), new Set(['h2']), 'the favicon too, if the browser asked for it');

    const bb = (JSON.parse(await readFile(out, 'utf8')) as { log: { entries: Entry[] } }).log.entries;
    const pw = (JSON.parse(await readFile(pwHar, 'utf8')) as { log: { entries: Entry[] } }).log.entries;
    const origin = `https://localhost:${port}`;
    const ours = (entries: Entry[]): Entry[] => entries.filter((e) => e.request.url.startsWith(origin) && !e.request.url.endsWith('/favicon.ico'));
    const line = (e: Entry): string => `${e.request.method} ${e.request.url} ${e.response.status}`;
    const expected = [`GET ${origin}/ 200`, `GET ${origin}/app.js 200`, `GET ${origin}/api/items?page=1 200`, `POST ${origin}/api/items 201`];
    assert.deepEqual(ours(bb).map(line).sort(), [...expected].sort(), 'bb recorded the four requests');
    assert.deepEqual(ours(pw).map(line).sort(), ours(bb).map(line).sort(), 'the same requests as Playwright saw');
    for (const entry of ours(bb)) {
      assert.equal(entry.request.httpVersion, 'HTTP/2.0', line(entry));
      assert.equal(entry.response.httpVersion, 'HTTP/2.0', line(entry));
    }
    for (const entry of ours(pw)) assert.match(entry.request.httpVersion + ' ' + entry.response.httpVersion, /^(HTTP\/2\.0|h2) (HTTP\/2\.0|h2)$/i, line(entry));
    for (const entry of ours(bb)) {
      const twin = ours(pw).find((e) => line(e) === line(entry))!;
      assert.equal(body(entry), body(twin), `the same response body for ${line(entry)}`);
    }
    const post = ours(bb).find((e) => e.request.method === 'POST')!;
    assert.equal(post.request.postData?.text, '{"name":"third"}');

    // bb reads Playwright's HTTP/2 HAR beside its own: the request lines are one set.
    const shown = await runBb(['show', pwHar]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /POST .*\/api\/items/);
  });
});
