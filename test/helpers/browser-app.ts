// A small web app for browser tests: a page that fetches JSON (with fresh
// uuids and timestamps each run) and talks over a WebSocket, and headless
// Debian chromium driven by playwright-core.
import http from 'node:http';
import { createHash, createPublicKey, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { loadOrCreateCa } from '../../proxy/tls/index.js';

/** Path of Debian's chromium, or undefined when it is not installed. */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/**
 * Chromium flags that send every request through bb's forward proxy at `proxyUrl` and trust the CA in
 * `bbHome` by its key (--ignore-certificate-errors-spki-list matches keys in the chain: bb sends leaf + CA).
 */
export async function forwardProxyFlags(proxyUrl: string, bbHome: string): Promise<string[]> {
  const ca = await loadOrCreateCa(bbHome);
  const spki = createHash('sha256').update(createPublicKey(ca.key).export({ type: 'spki', format: 'der' })).digest('base64');
  return [`--proxy-server=${proxyUrl}`, '--proxy-bypass-list=<-loopback>', `--ignore-certificate-errors-spki-list=${spki}`];
}

/** Launch options for headless chromium on this machine (no downloads, no background traffic). */
export function chromiumLaunchOptions(extraArgs: string[] = []) {
  return {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  };
}

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>bb test app</title>
<link rel="icon" href="data:,"></head>
<body><pre id="out"></pre>
<script>
(async () => {
  const out = document.getElementById('out');
  const data = await (await fetch('/api/data?n=1')).json();
  out.textContent = JSON.stringify(data);
  const ws = new WebSocket('ws://' + location.host + '/ws');
  const replies = [];
  ws.onmessage = (ev) => {
    replies.push(ev.data);
    if (replies.length === 1) ws.send(JSON.stringify({ type: 'subscribe', cursor: 0 }));
    else if (replies.length === 3) ws.close(1000, 'done');
  };
  ws.onopen = () => ws.send(JSON.stringify({ type: 'hello', id: data.id }));
  // The title stays fixed: browsers' HARs name pages by it, whenever they read it.
  ws.onclose = () => { document.body.dataset.done = '1'; };
})();
</script></body></html>`;

/** A running app. */
export interface BrowserApp {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Starts the app on 127.0.0.1:0. Each run answers with fresh ids and times. */
export async function startBrowserApp(): Promise<BrowserApp> {
  const server = http.createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(PAGE);
      return;
    }
    if (req.url?.startsWith('/api/data')) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify({ id: randomUUID(), createdAt: new Date().toISOString(), items: [{ name: 'a' }, { name: 'b' }] }));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found');
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      if (msg.type === 'hello') ws.send(JSON.stringify({ type: 'welcome', session: `session_${randomUUID()}`, at: new Date().toISOString() }));
      if (msg.type === 'subscribe') {
        ws.send(JSON.stringify({ type: 'event', seq: 1, at: new Date().toISOString() }));
        ws.send(JSON.stringify({ type: 'event', seq: 2, at: new Date().toISOString() }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
