// Headless Debian chromium through bb's forward proxy: an HTTPS page with a
// subresource that opens a WSS socket, recorded into one HAR. Chromium trusts
// bb's CA by its key (--ignore-certificate-errors-spki-list matches keys in the
// chain the server sends: bb sends leaf + CA). Skipped when chromium is absent.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';
import { startCapture, type CaptureHandle } from '../../index.js';
import { forwardProxyFlags } from '../helpers/browser-app.js';
import { tempDir } from '../helpers/tmp.js';

const CHROMIUM = '/usr/bin/chromium';
let dir: string;
let server: https.Server;
let wss: WebSocketServer;
let port: number;
let capture: CaptureHandle | undefined;
let browser: Browser | undefined;

const PAGE = `<!doctype html><html><head><title>loading</title><script src="/app.js"></script></head><body>bb</body></html>`;
const APP = `
const ws = new WebSocket('wss://' + location.host + '/ws');
ws.onopen = () => ws.send('from-browser');
ws.onmessage = (e) => { document.title = e.data; ws.close(1000, 'bye'); };
`;

before(async () => {
  dir = tempDir().dir;
  const upstreamCa = await loadOrCreateCa(join(dir, 'upstream-ca'));
  const pem = await createLeafFactory(upstreamCa).pemFor('localhost');
  server = https.createServer({ key: pem.keyPem, cert: pem.chainPem }, (req, res) => {
    if (req.url === '/') res.writeHead(200, { 'Content-Type': 'text/html' }).end(PAGE);
    else if (req.url === '/app.js') res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(APP);
    else res.writeHead(404).end();
  });
  wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo:${data.toString()}`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  if (existsSync(CHROMIUM)) {
    capture = await startCapture({
      mode: 'forward',
      out: join(dir, 'browser.har'),
      label: 'browser',
      bbHome: join(dir, 'home'),
      upstreamTls: { extraCa: [upstreamCa.certPem] },
    });
  }
});
after(async () => {
  await browser?.close().catch(() => undefined);
  await capture?.close(100).catch(() => undefined);
  for (const client of wss?.clients ?? []) client.terminate();
  wss?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

interface Entry {
  request: { method: string; url: string };
  response: { status: number };
  _resourceType?: string;
  _webSocketMessages?: Array<{ type: string; opcode: number; data: string }>;
}

describe('chromium through the forward proxy', () => {
  it('loads an HTTPS page whose script opens a WSS socket, all recorded', async (t) => {
    if (!capture) {
      t.skip(`${CHROMIUM} is not installed`);
      return;
    }
    const proxyFlags = await forwardProxyFlags(capture.url, join(dir, 'home'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      timeout: 30_000,
      args: [
        '--no-sandbox',
        ...proxyFlags,
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    const page = await browser.newPage();
    await page.goto(`https://localhost:${port}/`, { timeout: 30_000 });
    await page.waitForFunction(() => document.title === 'echo:from-browser', undefined, { timeout: 15_000 });
    await browser.close();
    browser = undefined;
    const out = await capture.close(2_000);
    capture = undefined;
    const har = JSON.parse(await readFile(out, 'utf8')) as { log: { entries: Entry[] } };
    const byUrl = (url: string): Entry | undefined => har.log.entries.find((e) => e.request.url === url);
    const origin = `https://localhost:${port}`;
    assert.equal(byUrl(`${origin}/`)?.response.status, 200, JSON.stringify(har.log.entries.map((e) => e.request.url)));
    assert.equal(byUrl(`${origin}/app.js`)?.response.status, 200);
    const socket = byUrl(`${origin}/ws`);
    assert.ok(socket, 'the WebSocket upgrade is an entry');
    assert.equal(socket._resourceType, 'websocket');
    const texts = (socket._webSocketMessages ?? []).filter((m) => m.opcode === 1).map((m) => `${m.type} ${m.data}`);
    assert.deepEqual(texts, ['send from-browser', 'receive echo:from-browser']);
  });
});
