// Load through a real `bb capture` child: 500 concurrent keep-alive
// connections making 20 000 exchanges, then 200 concurrent WebSocket
// connections exchanging messages. No crash, nothing lost or duplicated (the
// HAR's counts equal what the clients counted), bb's RSS bounded throughout.
// BB_LOAD_HEAVY=1 multiplies the counts by five.
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import type { Har } from '../../capture/har.js';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { Steps } from '../helpers/steps.js';
import { tempDir } from '../helpers/tmp.js';
import { waitUntil } from '../helpers/recording.js';

const HEAVY = process.env.BB_LOAD_HEAVY === '1' ? 5 : 1;
const CONNECTIONS = 500;
const EXCHANGES = 20_000 * HEAVY;
const WS_CONNECTIONS = 200;
const WS_MESSAGES = 20 * HEAVY;
const RSS_LIMIT_MB = 400;

/** VmRSS of a process in MiB (Linux). */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

describe('load through bb capture', () => {
  const cleanups = new Cleanups();
  let child: BbProcess;
  let proxyPort: number;
  let out: string;
  let maxRss = 0;
  const rssSamples: number[] = [];
  let httpOk = 0;
  const wsCounts = { sent: 0, received: 0 };

  before(async () => {
    const server = http.createServer((req, res) => {
      const body = `ok ${req.url}`;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    server.keepAliveTimeout = 60_000;
    server.maxConnections = 5000;
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => {
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
      ws.on('error', () => {});
    });
    server.listen(0, '127.0.0.1', 1024);
    await once(server, 'listening');
    cleanups.add(() => new Promise<void>((r) => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      server.close(() => r());
    }));
    const dir = tempDir(cleanups, 'bb-load-').dir;
    out = join(dir, 'load.har');
    child = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet'], { BB_HOME: join(dir, 'home') });
    cleanups.add(() => {
      if (child.child.exitCode === null) child.child.kill('SIGKILL');
    });
    const m = await child.waitFor(/http:\/\/127\.0\.0\.1:(\d+) -> /, 30_000);
    proxyPort = Number(m[1]);
    const sampler = setInterval(() => {
      void rssMiB(child.child.pid!).then((mb) => {
        rssSamples.push(mb);
        maxRss = Math.max(maxRss, mb);
      });
    }, 250);
    cleanups.add(() => clearInterval(sampler));
  });
  after(() => cleanups.run());
  // Each load runs once, by its own test or by the HAR test, which counts them all.
  const steps = new Steps<TestContext>();

  it(`carries ${EXCHANGES} exchanges on ${CONNECTIONS} concurrent keep-alive connections`, steps.add(async (t) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS, maxFreeSockets: CONNECTIONS, keepAliveMsecs: 60_000 });
    cleanups.add(() => agent.destroy());
    const sockets = new Set<unknown>();
    const started = Date.now();
    const failures: string[] = [];
    const perLoop = EXCHANGES / CONNECTIONS;
    const one = (path: string) =>
      new Promise<void>((resolve) => {
        const req = http.request({ host: '127.0.0.1', port: proxyPort, path, agent, method: 'GET' }, (res) => {
          sockets.add(res.socket);
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => {
            if (res.statusCode === 200 && body === `ok ${path}`) httpOk++;
            else if (failures.length < 5) failures.push(`${path}: ${res.statusCode} ${body}`);
            resolve();
          });
        });
        req.on('error', (err) => {
          if (failures.length < 5) failures.push(`${path}: ${err.message}`);
          resolve();
        });
        req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
        req.end();
      });
    await Promise.all(Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let n = 0; n < perLoop; n++) await one(`/c${c}/n${n}`);
    }));
    const took = Date.now() - started;
    t.diagnostic(`${httpOk} exchanges in ${took} ms (${Math.round(httpOk / (took / 1000))}/s) on ${sockets.size} client sockets; bb RSS max ${Math.round(maxRss)} MiB`);
    assert.deepEqual(failures, []);
    assert.equal(httpOk, EXCHANGES);
    assert.ok(sockets.size >= CONNECTIONS * 0.9 && sockets.size <= CONNECTIONS, `${sockets.size} keep-alive sockets used`);
  }));

  it(`carries ${WS_CONNECTIONS} concurrent WebSocket connections exchanging ${WS_MESSAGES} messages each`, steps.add(async () => {
    await Promise.all(Array.from({ length: WS_CONNECTIONS }, async (_, c) => {
      const ws = new WebSocket(`ws://127.0.0.1:${proxyPort}/ws/${c}`, { perMessageDeflate: c % 2 === 0 });
      await once(ws, 'open');
      const got: string[] = [];
      const all = new Promise<void>((resolve) => ws.on('message', (d) => {
        got.push(d.toString());
        wsCounts.received++;
        if (got.length === WS_MESSAGES) resolve();
      }));
      for (let n = 0; n < WS_MESSAGES; n++) {
        ws.send(JSON.stringify({ c, n, pad: 'x'.repeat(n * 10) }));
        wsCounts.sent++;
      }
      await all;
      assert.deepEqual(got.map((g) => (JSON.parse(g) as { n: number }).n), Array.from({ length: WS_MESSAGES }, (_, n) => n), 'in order');
      ws.close(1000, 'done');
      await once(ws, 'close');
    }));
    assert.equal(wsCounts.received, WS_CONNECTIONS * WS_MESSAGES);
  }));

  it('writes a HAR whose counts equal the clients\' counts, with no entry lost or duplicated, and RSS stayed bounded', async (t) => {
    await steps.runAll(t);
    // Let the last close frames reach the journal, then stop bb and let it write the HAR.
    await new Promise((r) => setTimeout(r, 300));
    child.child.kill('SIGTERM');
    assert.equal(await child.exited, 0, child.stderr());
    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    const httpEntries = har.log.entries.filter((e) => e._resourceType !== 'websocket');
    const urls = new Set(httpEntries.map((e) => new URL(e.request.url).pathname));
    assert.equal(httpEntries.length, EXCHANGES, 'one entry per exchange');
    assert.equal(urls.size, EXCHANGES, 'no duplicates');
    assert.ok(httpEntries.every((e) => e.response.status === 200 && e.response.content.text === `ok ${new URL(e.request.url).pathname}`));
    // 1:1 connections: the HAR names at most as many client connections as the clients opened.
    const conns = new Set(httpEntries.map((e) => e.connection));
    assert.ok(conns.size <= CONNECTIONS, `${conns.size} connections`);
    const wsEntries = har.log.entries.filter((e) => e._resourceType === 'websocket');
    assert.equal(wsEntries.length, WS_CONNECTIONS);
    const data = (type: string) => wsEntries.flatMap((e) => (e._webSocketMessages ?? []).filter((m) => m.type === type && m.opcode === 1));
    assert.equal(data('send').length, wsCounts.sent);
    assert.equal(data('receive').length, wsCounts.received);
    assert.equal(wsEntries.flatMap((e) => e._webSocketMessages ?? []).filter((m) => m.type === 'error').length, 0);
    for (const e of wsEntries) {
      const sends = (e._webSocketMessages ?? []).filter((m) => m.type === 'send' && m.opcode === 1).map((m) => (JSON.parse(m.data) as { n: number }).n);
      assert.deepEqual(sends, Array.from({ length: WS_MESSAGES }, (_, n) => n), `${e.request.url}: messages in order`);
      assert.equal(e._bb?.close?.code, 1000);
    }
    assert.equal(har.log._bb?.counts.entries, EXCHANGES + WS_CONNECTIONS);
    await waitUntil(() => rssSamples.length > 0, 'an RSS sample');
    assert.ok(maxRss > 0 && maxRss < RSS_LIMIT_MB, `bb's RSS peaked at ${Math.round(maxRss)} MiB`);
  });
});
