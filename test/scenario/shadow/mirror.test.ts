// A mirrored WebSocket closes as the client closed it: a client's close
// frame with no status code reaches each mirror target with no code too, so
// two identical builds show no difference in the close (bench/shadow.ts's
// long run found every such conversation reported as a changed ws.close.code
// and an extra close frame when the mirror sent 1000 instead).
// And a server-rendered app's values (test/helpers/orders-html.ts): the CSRF
// token of a page's hidden input and the token of a link reach each target as
// its own, so no mirrored form post is refused and the candidate's changed
// page is the one regression, live as in `bb diff` of the captures.
// Realistic flows through bb shadow are in test/e2e/shadow-flows.test.ts and
// run.test.ts.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import net from 'node:net';
import WebSocket from 'ws';
import type { Har } from '../../../capture/index.js';
import { wsServer } from '../../helpers/servers.js';
import { waitUntil } from '../../helpers/recording.js';
import { startShadow } from '../../../scenario/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';
import { diffCaptures } from '../../../diff/index.js';
import { startOrdersApp, visitOrders, type OrdersApp } from '../../helpers/orders-html.js';
import { findingKeys, offlineKeys } from './compared.js';

const tmp = tempDir();
const services: Array<ShadowService | OrdersApp> = [];
after(async () => {
  for (const s of services) await s.close();
});

/** Talks one chat conversation through `url` and closes it with `code` (none: a close frame with no status). */
async function chat(url: string, code?: number): Promise<void> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/chat`);
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => ws.send('hello'));
    ws.once('message', () => (code === undefined ? ws.close() : ws.close(code)));
    ws.once('close', () => resolve());
  });
}

describe('shadow mirror: WebSocket close', () => {
  for (const code of [undefined, 4001]) {
    it(`a client's close ${code === undefined ? 'with no status code' : `with code ${code}`} reaches the candidate as sent: identical builds compare equal`, async () => {
      const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
      services.push(primary, candidate);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path(`close-${code ?? 'none'}`), bbHome: tmp.bbHome });
      await chat(shadow.url, code);
      // The mirror's side closes a moment after the client's.
      await new Promise((r) => setTimeout(r, 300));
      const report = await shadow.close(2_000);
      assert.equal(report.totals.mirrored, 1);
      assert.deepEqual(report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), [], JSON.stringify(report.findings));
      assert.equal(report.totals.equal, 1, JSON.stringify(report.totals));
      // Each thread's memory, the comparison worker's as its last report said (the benchmark's per-thread figures).
      const memory = shadow.memory();
      assert.ok(memory.main.heapUsed > 0 && memory.compare!.heapUsed > 0 && memory.compare!.peakHeapUsed >= memory.compare!.heapUsed, JSON.stringify(memory));
    });
  }
});

/** A WebSocket server that answers "close" by closing with `code` (after `delayMs`), and echoes the rest. */
async function closingServer(code: number, delayMs = 0): Promise<{ url: string; close(): Promise<void> }> {
  return wsServer((ws) => {
    ws.on('message', (data) => {
      if (String(data) === 'close') setTimeout(() => ws.close(code, 'bye'), delayMs);
      else ws.send(`heard ${String(data)}`);
    });
  });
}

// A server that closes the conversation: the client's close frame answers it. A probe found the answer mirrored at
// once as a client's close, before the target's server had closed: identical builds differed in `ws.close.by`
// (the candidate's side closed by the client), and a candidate closing 50 ms later with another code was reported
// only as that, its code never recorded.
describe('shadow mirror: a WebSocket its server closes', () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  const talk = async (url: string) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/chat`);
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => (ws.send('hello'), ws.send('close')));
      ws.once('close', () => resolve());
    });
  };
  for (const [name, code, delayMs, want] of [
    ['the same close, 50 ms later', 4000, 50, []],
    ['another code, 50 ms later', 4001, 50, ['real changed ws.close.code', 'real changed ws.messages[].data.code']],
  ] as const) {
    it(`each target's server closes its side itself: ${name}`, async () => {
      const primary = await closingServer(4000);
      const candidate = await closingServer(code, delayMs);
      servers.push(primary, candidate);
      const outDir = tmp.path(`server-closes-${code}`);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: primary.url, outDir, bbHome: tmp.bbHome });
      await talk(shadow.url);
      await new Promise((r) => setTimeout(r, 300));
      const report = await shadow.close(2_000);
      assert.deepEqual(findingKeys(report), want, JSON.stringify(report.findings));
      const har = JSON.parse(await readFile(join(outDir, 'candidate.har'), 'utf8')) as Har;
      assert.equal(har.log.entries[0]!._bb?.close?.by, 'server', JSON.stringify(har.log.entries[0]!._bb));
      const offline = await diffCaptures(join(outDir, 'primary.har'), join(outDir, 'candidate.har'), { noisePath: join(outDir, 'secondary.har') });
      assert.deepEqual(offlineKeys(offline), findingKeys(report));
    });
  }
});

/** A WebSocket echo server on loopback that counts its open connections; `delayMs` holds each echo. */
async function echoServer(delayMs = 0): Promise<{ url: string; open(): number; close(): Promise<void> }> {
  let open = 0;
  const server = await wsServer((ws) => {
    open++;
    ws.on('close', () => open--);
    ws.on('message', (data) => setTimeout(() => ws.send(`heard ${String(data)}`), delayMs));
  });
  return { url: server.url, open: () => open, close: server.close };
}

// A client that leaves without a close frame (a tab killed, a network gone): the primary's side ends at once (the
// proxy ends the upstream socket); each target's side used to stay open until the run's end, one socket to each
// target per conversation so dropped. It is now cut as the primary's was, once the target has answered as much as
// the primary had (a slower candidate's last echo is still recorded, so the conversations compare equal).
describe('shadow mirror: a client that drops its WebSocket', () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it("each target's side is cut too, after its answer to the client's last message: equal, no socket left open", async () => {
    const primary = await echoServer();
    // The candidate echoes 150 ms late: its answer comes after the client has gone.
    const candidate = await echoServer(150);
    servers.push(primary, candidate);
    const outDir = tmp.path('dropped');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir, bbHome: tmp.bbHome });
    const conversations = 5;
    for (let i = 0; i < conversations; i++) {
      const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/live`);
      await new Promise<void>((resolve, reject) => {
        ws.once('error', reject);
        ws.once('open', () => ws.send(`hello ${i}`));
        ws.once('message', () => resolve());
      });
      ws.terminate();
    }
    // Each target's side ends with the primary's, while the run goes on (before: all still open here).
    await waitUntil(() => primary.open() === 0, 'the primary closed every conversation');
    await waitUntil(() => candidate.open() === 0, "the candidate's sides closed");
    const report = await shadow.close(2_000);
    assert.equal(report.totals.mirrored, conversations, JSON.stringify(report.totals));
    assert.equal(report.totals.equal, conversations, JSON.stringify(report.findings));
    // The candidate's late echo of each conversation is in its capture, as the primary's is in the primary's.
    for (const side of ['primary', 'candidate']) {
      const har = JSON.parse(await readFile(join(outDir, `${side}.har`), 'utf8')) as Har;
      const said = har.log.entries.map((e) => (e._webSocketMessages ?? []).filter((m) => m.type === 'receive').map((m) => m.data));
      assert.deepEqual(said.sort(), Array.from({ length: conversations }, (_, i) => [`heard hello ${i}`]).sort(), side);
    }
  });
});

describe('shadow mirror: values an HTML page issued', () => {
  it("each target gets its own CSRF token and link token back; the changed heading is the one regression, as in bb diff of the captures", async () => {
    const [primary, candidate, secondary] = [await startOrdersApp(1000), await startOrdersApp(5000, 'Your order'), await startOrdersApp(9000)];
    services.push(primary, candidate, secondary);
    const out = tmp.path('orders');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
    assert.match(await visitOrders(shadow.url, 'widget'), /Cancelled/);
    const report = await shadow.close();
    assert.deepEqual({ candidate: candidate.log, secondary: secondary.log }, {
      candidate: ['GET /orders/new 200', 'POST /orders 303', 'GET /orders/5000 200', 'GET /orders/5000/edit 200', 'POST /orders/5000/cancel 303', 'GET /orders/5000 200'],
      secondary: ['GET /orders/new 200', 'POST /orders 303', 'GET /orders/9000 200', 'GET /orders/9000/edit 200', 'POST /orders/9000/cancel 303', 'GET /orders/9000 200'],
    });
    const page = report.routes['GET /orders/{id}'];
    assert.deepEqual(page && { regressions: page.regressions, noise: page.noise }, { regressions: 2, noise: 0 }, JSON.stringify(report.routes));
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
    assert.deepEqual(findingKeys(report), ['real changed response.body']);
  });
});

// A target that takes a request and never answers nor closes (a process stopped, a server wedged): past --timeout
// the mirror counts an error and its capture's exchange ends then. Before, the mirror closed its connection with a
// FIN, which the target's recording proxy read as a client that half-closed and still waits for its answer: the
// exchange (and a connection to the target) stayed open until the run's end.
describe('shadow mirror: a target that never answers', () => {
  it("is cut at --timeout: the error counted, its capture's exchange aborted by the mirror while the run goes on", async () => {
    let closed = 0;
    const sockets = new Set<net.Socket>();
    const wedged = net.createServer({ allowHalfOpen: true }, (s) => {
      sockets.add(s);
      s.on('data', () => {});
      s.on('error', () => {});
      // Its peer going away: a FIN (this side stays half-open, as a wedged process's would) or a reset.
      s.on('end', () => closed++);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => wedged.listen(0, '127.0.0.1', r));
    const primary = await startShadowService('old');
    services.push(primary);
    const outDir = tmp.path('wedged');
    const shadow = await startShadow({ primary: primary.url, candidate: `http://127.0.0.1:${(wedged.address() as { port: number }).port}`, outDir, bbHome: tmp.bbHome, timeoutMs: 300, reportEveryMs: 50 });
    try {
      const res = await fetch(`${shadow.url}/items`);
      assert.equal(res.status, 200);
      await res.text();
      // The recording proxy gives its upstream up once the mirror left: the target's connection closes, the run still on.
      await waitUntil(() => closed > 0, "the wedged target's connection closed");
      await waitUntil(() => (shadow.report()?.totals.errors ?? 0) === 1, 'the error counted');
    } finally {
      const report = await shadow.close(1_000);
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => wedged.close(() => r()));
      assert.equal(report.totals.errors, 1);
    }
    const har = JSON.parse(await readFile(join(outDir, 'candidate.har'), 'utf8')) as Har;
    assert.equal(har.log.entries[0]?._bb?.aborted, 'client', JSON.stringify(har.log.entries[0]?._bb));
  });
});
