// The benchmark's upstream, in its own process: node:http + ws on loopback.
//
//   GET  /small       a ~100-byte JSON body
//   GET  /1mib        1 MiB of bytes (Content-Length)
//   POST /upload      reads the body, answers small JSON with its size
//   GET  /sse?n=N     text/event-stream: N events, one per write, one event-loop turn apart
//   GET  /sse-paced?rate=R&seconds=S   text/event-stream: R events a second for S seconds, written every 10 ms
//   WebSocket (any path)  echoes every message back as it came (no compression)
//
// An optional first argument delays every HTTP answer by that many ms (the
// slow candidate of bench/shadow.ts); WebSocket echoes are never delayed.
import http from 'node:http';
import { WebSocketServer } from 'ws';
import { serveHelper } from './lib/serve.js';

const small = Buffer.from(JSON.stringify({ id: 4711, name: 'small', tags: ['a', 'b', 'c'], ok: true, price: 12.5, note: 'x'.repeat(24) }));
const mib = Buffer.alloc(1024 * 1024);
for (let i = 0; i < mib.length; i++) mib[i] = (i * 31 + 7) & 0xff;

const delayMs = Number(process.argv[2] ?? 0);

const server = http.createServer({ keepAliveTimeout: 60_000, noDelay: true }, (req, res) => {
  if (delayMs > 0) setTimeout(() => answer(req, res), delayMs);
  else answer(req, res);
});

function answer(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = req.url ?? '/';
  if (url === '/small') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': small.length });
    res.end(small);
  } else if (url === '/1mib') {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': mib.length });
    res.end(mib);
  } else if (url === '/upload') {
    let size = 0;
    req.on('data', (chunk: Buffer) => (size += chunk.length));
    req.on('end', () => {
      const body = Buffer.from(JSON.stringify({ received: size }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  } else if (url.startsWith('/sse-paced')) {
    const q = new URL(url, 'http://x').searchParams;
    const perTick = Math.max(1, Math.round(Number(q.get('rate') ?? 1000) / 100));
    const ticks = Math.max(1, Math.round(Number(q.get('seconds') ?? 10) * 100));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    let tick = 0;
    const started = performance.now();
    const next = (): void => {
      if (res.destroyed) return;
      let chunk = '';
      for (let i = 0; i < perTick; i++, sent++) chunk += `id: ${sent}\nevent: tick\ndata: {"n":${sent},"payload":"${'s'.repeat(40)}"}\n\n`;
      res.write(chunk);
      // Paced by the clock, not by the timers' drift: tick k is due at k × 10 ms.
      if (++tick >= ticks) res.end();
      else setTimeout(next, Math.max(0, started + tick * 10 - performance.now()));
    };
    next();
  } else if (url.startsWith('/sse')) {
    const n = Math.min(10_000, Number(new URL(url, 'http://x').searchParams.get('n') ?? 100));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    const next = (): void => {
      if (res.destroyed) return;
      res.write(`id: ${sent}\nevent: tick\ndata: {"n":${sent},"payload":"${'s'.repeat(40)}"}\n\n`);
      if (++sent >= n) res.end();
      else setImmediate(next);
    };
    next();
  } else {
    res.writeHead(404, { 'content-length': 0 });
    res.end();
  }
}
server.headersTimeout = 60_000;
server.requestTimeout = 0;
const wss = new WebSocketServer({ server, perMessageDeflate: false });
wss.on('connection', (socket) => {
  socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  serveHelper(address.port, (what) => {
    if (what === 'close') {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      server.close();
      return true;
    }
    throw new Error(`unknown ask '${what}'`);
  });
});
