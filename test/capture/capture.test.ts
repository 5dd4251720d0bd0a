// Recording through the real proxy: real servers and clients on loopback,
// the capture attached to the proxy's bus, the HAR read back and validated.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { brotliCompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { startProxy, FactBus, type RunningProxy } from '../../proxy/index.js';
import { openCapture, type Capture } from '../../capture/index.js';
import { readCapture } from '../../capture/reader.js';
import type { Har, HarEntry } from '../../capture/har.js';
import { assertValidHar } from '../helpers/har-schema.js';
import { tempDir } from '../helpers/tmp.js';
import { freedPort } from '../helpers/freed-port.js';

const BIN = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256));
const GZ_TEXT = 'compressible text '.repeat(300);
const BIG = 'z'.repeat(50_000);

function app(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const path = new URL(req.url!, 'http://x').pathname;
    switch (path) {
      case '/json': res.setHeader('Content-Type', 'application/json'); res.end(JSON.stringify({ path, echo: Buffer.concat(chunks).toString() })); return;
      case '/gzip': res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' }); res.end(gzipSync(GZ_TEXT)); return;
      case '/br': res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'br' }); res.end(brotliCompressSync(GZ_TEXT)); return;
      case '/bin': res.writeHead(200, { 'Content-Type': 'application/octet-stream' }); res.end(BIN); return;
      case '/big': res.writeHead(200, { 'Content-Type': 'text/plain' }); res.write(BIG.slice(0, 20_000)); res.end(BIG.slice(20_000)); return;
      case '/204': res.writeHead(204); res.end(); return;
      case '/304': res.writeHead(304, { ETag: '"v1"' }); res.end(); return;
      case '/redirect': res.writeHead(302, { Location: '/json' }); res.end(); return;
      case '/sse': {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        res.write('event: first\ndata: 1\n\n');
        setTimeout(() => res.write('data: 2\n\n'), 60);
        setTimeout(() => res.end('id: 3\ndata: 3\n\n'), 120);
        return;
      }
      case '/reset':
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '100' });
        res.write('partial');
        setTimeout(() => req.socket.destroy(), 30);
        return;
      case '/hang': return; // never answers: the client gives up
      default: res.writeHead(404); res.end();
    }
  });
}

describe('capture through the proxy', () => {
  const tmp = tempDir();
  let server: http.Server;
  let wss: WebSocketServer;
  let proxy: RunningProxy;
  let capture: Capture;
  let har: Har;
  const cleanups: Array<() => Promise<unknown> | void> = [];
  const entry = (path: string): HarEntry => {
    const e = har.log.entries.find((x) => new URL(x.request.url).pathname === path);
    assert.ok(e, `no entry for ${path}`);
    return e;
  };

  before(async () => {
    server = http.createServer(app);
    wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((r) => { wss.close(); server.closeAllConnections(); server.close(r); }));
    const bus = new FactBus();
    proxy = await startProxy({ target: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, bus });
    cleanups.push(() => proxy.close(0));
    capture = await openCapture({
      out: join(tmp.dir, 'e2e.har'), label: 'old', target: proxy.target, listen: proxy.url, bbHome: tmp.bbHome, bodyCap: 10_000,
    });
    bus.on(capture.listener);

    // Keep-alive: these share one client connection.
    const client = new Client(proxy.url, { pipelining: 1 });
    cleanups.push(() => client.close());
    const get = async (path: string, opts: { method?: string; body?: string } = {}) => {
      const res = await client.request({ path, method: (opts.method ?? 'GET') as 'GET', body: opts.body, headers: opts.body ? { 'content-type': 'application/json' } : {} });
      return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()) };
    };
    capture.step('plain');
    assert.equal((await get('/json?token=abc&x=1', { method: 'POST', body: '{"password":"pw","n":1}' })).status, 200);
    assert.ok((await get('/bin')).body.equals(BIN));
    assert.equal(gunzipSync((await get('/gzip')).body).toString(), GZ_TEXT);
    await get('/br');
    assert.equal((await get('/big')).body.toString(), BIG);
    await get('/204');
    await get('/304');
    await get('/redirect');
    capture.step('streams');
    assert.equal((await get('/sse')).body.toString(), 'event: first\ndata: 1\n\ndata: 2\n\nid: 3\ndata: 3\n\n');

    // A second client connection.
    const other = new Client(proxy.url);
    cleanups.push(() => other.close());
    await (await other.request({ path: '/json', method: 'GET' })).body.text();

    // Upstream resets mid-body; the client aborts a request that hangs.
    await new Promise<void>((resolve) => {
      http.get(`${proxy.url}/reset`, (res) => { res.on('data', () => {}); res.on('error', () => resolve()); res.on('close', () => resolve()); }).on('error', () => resolve());
    });
    await new Promise<void>((resolve) => {
      const req = http.get(`${proxy.url}/hang`);
      req.on('error', () => resolve());
      setTimeout(() => req.destroy(), 80);
    });

    // A WebSocket echo.
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/ws`);
    await once(ws, 'open');
    ws.send(JSON.stringify({ op: 'hello', secret: 'sss' }));
    await once(ws, 'message');
    ws.send(Buffer.from([1, 2, 3]));
    await once(ws, 'message');
    ws.close(1000, 'done');
    await once(ws, 'close');

    // Let the proxy see the last hang-ups before finalizing.
    for (let i = 0; i < 100 && (capture.stats().inFlight > 0); i++) await new Promise((r) => setTimeout(r, 20));
    await capture.close();
    har = JSON.parse(await readFile(join(tmp.dir, 'e2e.har'), 'utf8')) as Har;
    assertValidHar(har);
    // bb's own reader (what diff and frames use) takes it as is.
    assert.equal((await readCapture(join(tmp.dir, 'e2e.har'))).log.entries.length, har.log.entries.length);
  });

  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('records JSON with the URL as addressed, redacted query and body', () => {
    const e = entry('/json');
    assert.match(e.request.url, new RegExp(`^${proxy.url}/json\\?token=<redacted:[0-9a-f]{8}>&x=1$`));
    assert.deepEqual(JSON.parse(e.request.postData!.text!).n, 1);
    assert.match(JSON.parse(e.request.postData!.text!).password, /^<redacted:/);
    assert.equal(e.response.status, 200);
    assert.equal(e.pageref, 'page_1');
  });

  it('round-trips binary bytes and decodes gzip and br with wire sizes', () => {
    assert.ok(Buffer.from(entry('/bin').response.content.text!, 'base64').equals(BIN));
    for (const path of ['/gzip', '/br']) {
      const e = entry(path);
      assert.equal(e.response.content.text, GZ_TEXT, path);
      assert.equal(e.response.content.size, GZ_TEXT.length);
      assert.ok(e.response.bodySize > 0 && e.response.bodySize < GZ_TEXT.length);
      assert.equal(e.response.content.compression, GZ_TEXT.length - e.response.bodySize);
    }
  });

  it('caps a big body, still counting every byte', () => {
    const e = entry('/big');
    assert.equal(e.response.bodySize, BIG.length);
    assert.equal(e._bb?.truncated?.response, 10_000);
    assert.equal(e.response.content.text, BIG.slice(0, 10_000));
  });

  it('records 204, 304 and a redirect', () => {
    assert.equal(entry('/204').response.status, 204);
    assert.equal(entry('/304').response.status, 304);
    assert.equal(entry('/304').response.bodySize, 0);
    assert.equal(entry('/redirect').response.redirectURL, '/json');
  });

  it('parses SSE events with the times they arrived', () => {
    const e = entry('/sse');
    assert.deepEqual(e._eventSourceMessages?.map((m) => [m.eventName, m.eventId, m.data]), [['first', '', '1'], ['message', '', '2'], ['message', '3', '3']]);
    const [a, , c] = e._eventSourceMessages!.map((m) => m.time);
    assert.ok(c! - a! >= 0.09, `events spread over time (${a} → ${c})`);
    assert.equal(e.pageref, 'page_2');
  });

  it('shows keep-alive reuse in connection', () => {
    const first = ['/bin', '/gzip', '/br', '/big', '/204', '/304', '/redirect', '/sse'].map((p) => entry(p).connection);
    assert.equal(new Set(first).size, 1, 'one keep-alive connection');
    const jsons = har.log.entries.filter((e) => new URL(e.request.url).pathname === '/json').map((e) => e.connection);
    assert.equal(new Set(jsons).size, 2, 'the second client has its own connection');
  });

  it('marks an upstream reset and a client hang-up as aborted', () => {
    assert.equal(entry('/reset')._bb?.aborted, 'upstream');
    assert.equal(entry('/hang')._bb?.aborted, 'client');
  });

  it('records the WebSocket with its messages and close', () => {
    const e = entry('/ws');
    assert.equal(e._resourceType, 'websocket');
    assert.equal(e.response.status, 101);
    const msgs = e._webSocketMessages!.filter((m) => m.opcode !== 8);
    assert.deepEqual(msgs.map((m) => [m.type, m.opcode]), [['send', 1], ['receive', 1], ['send', 2], ['receive', 2]]);
    assert.match(JSON.parse(msgs[0]!.data).secret, /^<redacted:/);
    assert.equal(msgs[2]!.data, Buffer.from([1, 2, 3]).toString('base64'));
    assert.equal(e._bb?.close?.code, 1000);
    assert.equal(e._bb?.close?.by, 'client');
    const seqs = e._webSocketMessages!.map((m) => m._bb!.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    assert.ok(seqs[0]! > e._bb!.seq);
  });

  it('records an unreachable upstream as bb\'s 502 with _bb.error', async () => {
    const port = await freedPort();
    const bus = new FactBus();
    const down = await startProxy({ target: `http://127.0.0.3:${port}`, bus });
    const cap = await openCapture({ out: join(tmp.dir, 'down.har'), label: 'd', target: down.target, listen: down.url, bbHome: tmp.bbHome });
    bus.on(cap.listener);
    const res = await fetch(`${down.url}/x`);
    assert.equal(res.status, 502);
    await res.text();
    await down.close(0);
    const downHar = JSON.parse(await readFile(await cap.close(), 'utf8')) as Har;
    assertValidHar(downHar);
    const e = downHar.log.entries[0]!;
    assert.equal(e.response.status, 502);
    assert.equal(e._bb?.error?.code, 'ECONNREFUSED');
  });
});

describe('openCapture options', () => {
  it('refuses a body cap or WebSocket budget past 128 MiB (readers parse an entry of at most 480 MB), or not a whole number', async () => {
    for (const [name, value] of [['bodyCap', 128 * 1048576 + 1], ['wsBudget', 1e9], ['bodyCap', -1], ['wsBudget', 1.5]] as const) {
      await assert.rejects(
        openCapture({ out: '/nonexistent/never.har', label: 'x', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: '/nonexistent/home', [name]: value }),
        (err: Error & { code?: string }) => err.code === 'BB_CAPTURE_OPTIONS' && err.message.startsWith(`${name} must be a whole number of bytes from 0 to 134217728`),
        `${name} ${value}`,
      );
    }
  });
});
