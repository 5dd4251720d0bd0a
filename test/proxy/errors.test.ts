// Failures are data: each ends as exactly one terminal fact, the client gets
// what a direct connection would show (or bb's 502), and the proxy lives on.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startProxy, type Fact } from '../../proxy/index.js';
import { rawClient, rawUpstream, until } from '../helpers/raw.js';
import { FREED_HOST, freedPort } from '../helpers/freed-port.js';

const cleanups: Array<() => Promise<unknown> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function proxyTo(port: number, extra: Parameters<typeof startProxy>[0] = {}, host = '127.0.0.1') {
  const facts: Fact[] = [];
  const proxy = await startProxy({ target: `http://${host}:${port}`, ...extra });
  proxy.bus.on((f) => facts.push(f));
  cleanups.push(() => proxy.close(100));
  return { proxy, facts };
}

const terminal = (facts: Fact[]) => facts.filter((f) => ['exchange-completed', 'exchange-failed', 'exchange-aborted'].includes(f.type));


test('an upstream that is down gives a 502 with a JSON reason, then works once it is up', async () => {
  const port = await freedPort();
  const { proxy, facts } = await proxyTo(port, {}, FREED_HOST);
  const res = await fetch(`${proxy.url}/x`);
  assert.equal(res.status, 502);
  const body = await res.json();
  assert.equal(body.code, 'ECONNREFUSED');
  assert.match(body.message, /refused/);
  const failed = facts.find((f) => f.type === 'exchange-failed');
  assert.ok(failed && failed.type === 'exchange-failed');
  assert.equal(failed.error.code, 'ECONNREFUSED');
  assert.equal(failed.error.phase, 'connect');
  assert.equal(failed.response?.statusCode, 502);

  const server = http.createServer((_q, r) => r.end('up now'));
  await new Promise<void>((r) => server.listen(port, FREED_HOST, r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const res2 = await fetch(`${proxy.url}/x`);
  assert.equal(await res2.text(), 'up now');
});

test('an upstream reset mid-body closes the client connection and is recorded as aborted by the upstream', async () => {
  const upstream = await rawUpstream((s) =>
    s.once('data', () => {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial');
      setTimeout(() => s.resetAndDestroy(), 30);
    }),
  );
  cleanups.push(() => upstream.close());
  const { proxy, facts } = await proxyTo(upstream.port);
  const client = await rawClient(proxy.port);
  client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await client.closed;
  assert.match(client.bytes().toString(), /partial$/);
  await until(() => Buffer.from(String(terminal(facts).length)), (b) => b.toString() === '1');
  const [end] = terminal(facts);
  assert.equal(end.type, 'exchange-aborted');
  assert.equal(end.type === 'exchange-aborted' && end.by, 'upstream');
});

test('a client hanging up mid-response closes the upstream request and is recorded as aborted by the client', async () => {
  let upstreamClosed!: () => void;
  const closed = new Promise<void>((r) => (upstreamClosed = r));
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('first');
    res.on('close', () => upstreamClosed());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  const { proxy, facts } = await proxyTo((server.address() as AddressInfo).port);
  const client = await rawClient(proxy.port);
  client.send('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(client.bytes, (b) => b.includes('first'));
  client.socket.destroy();
  await closed;
  await until(() => Buffer.from(String(terminal(facts).length)), (b) => b.toString() === '1');
  const [end] = terminal(facts);
  assert.equal(end.type === 'exchange-aborted' && end.by, 'client');
});

test('SSE events reach the client while the stream is still open', async () => {
  let send!: (s: string) => void;
  let finish!: () => void;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    send = (s) => res.write(s);
    finish = () => res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  const { proxy, facts } = await proxyTo((server.address() as AddressInfo).port);
  const client = await rawClient(proxy.port);
  client.send('GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
  await until(client.bytes, (b) => b.includes('text/event-stream'));
  send('event: tick\ndata: 1\n\n');
  await until(client.bytes, (b) => b.includes('data: 1'));
  assert.equal(terminal(facts).length, 0, 'the stream is still open');
  send('data: 2\n\n');
  await until(client.bytes, (b) => b.includes('data: 2'));
  finish();
  await until(client.bytes, (b) => b.toString().endsWith('0\r\n\r\n'));
  assert.equal(terminal(facts)[0]?.type, 'exchange-completed');
  client.socket.destroy();
});

test('an HTTP/2-only upstream gives a 502 that says so', async () => {
  const server = http2.createServer();
  server.on('stream', (stream) => stream.respond({ ':status': 200 }) && stream.end('h2'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const { proxy, facts } = await proxyTo((server.address() as AddressInfo).port);
  const res = await fetch(`${proxy.url}/`);
  assert.equal(res.status, 502);
  const body = await res.json();
  assert.equal(body.code, 'BB_UPSTREAM_HTTP2');
  assert.ok(facts.some((f) => f.type === 'exchange-failed' && f.error.code === 'BB_UPSTREAM_HTTP2'));
});

test('an upstream that accepts but never answers times out with a 502', async () => {
  const upstream = await rawUpstream(() => {});
  cleanups.push(() => upstream.close());
  const { proxy } = await proxyTo(upstream.port, { upstreamTimeoutMs: 200 });
  const res = await fetch(`${proxy.url}/slow`);
  assert.equal(res.status, 502);
  assert.equal((await res.json()).code, 'BB_UPSTREAM_TIMEOUT');
});

test('a request Node cannot parse gets a 400, is a fact, and other connections are unaffected', async () => {
  const server = http.createServer((_q, r) => r.end('fine'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const { proxy, facts } = await proxyTo((server.address() as AddressInfo).port);
  const good = await rawClient(proxy.port);
  const bad = await rawClient(proxy.port);
  bad.send('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc');
  await bad.closed;
  assert.match(bad.bytes().toString(), /^HTTP\/1\.1 400 Bad Request/);
  const fact = facts.find((f) => f.type === 'client-error');
  assert.ok(fact && fact.type === 'client-error');
  assert.match(fact.error.code, /^HPE_/);
  good.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(good.bytes, (b) => b.toString().endsWith('fine'));
  good.socket.destroy();
});

test('request trailers reach the server', async () => {
  let trailers: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      trailers = req.rawTrailers;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const { proxy } = await proxyTo((server.address() as AddressInfo).port);
  const client = await rawClient(proxy.port);
  client.send('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 42\r\n\r\n');
  await until(client.bytes, (b) => b.toString().endsWith('ok'));
  assert.deepEqual(trailers, ['X-Sum', '42']);
  client.socket.destroy();
});

test('facts of one exchange come in order with the raw heads', async () => {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, 'OK', ['Content-Type', 'text/plain', 'X-Up', 'yes']);
      res.end('body');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const { proxy, facts } = await proxyTo((server.address() as AddressInfo).port);
  const res = await fetch(`${proxy.url}/path?q=1`, { method: 'POST', body: 'hello' });
  assert.equal(await res.text(), 'body');
  const types = facts.map((f) => f.type).filter((t) => !t.startsWith('connection'));
  // flush: the turn's completions made durable before the client gets the last byte (proxy/turn-flush.ts).
  assert.deepEqual(types, ['exchange-started', 'request-body', 'request-ended', 'response-started', 'response-body', 'exchange-completed', 'flush']);
  const started = facts.find((f) => f.type === 'exchange-started');
  assert.ok(started?.type === 'exchange-started');
  assert.equal(started.method, 'POST');
  assert.equal(started.target, '/path?q=1');
  const head = facts.find((f) => f.type === 'response-started');
  assert.ok(head?.type === 'response-started');
  assert.deepEqual(head.rawHeaders.slice(0, 4), ['Content-Type', 'text/plain', 'X-Up', 'yes']);
});
