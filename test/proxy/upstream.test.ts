// Reverse mode opens the upstream connection as the client's is accepted
// (issue 39: a first request, an SSE stream's first event, pays no connect),
// one upstream per client connection as before; it closes with the client,
// whether or not a request ever came. Forward mode knows no target at accept
// and connects nothing. Counted with a server that tallies the connections
// it accepts and the ones still open, before any request byte.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import http2 from 'node:http2';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { probeUpstream, startProxy } from '../../proxy/index.js';
import { localhostCert } from '../helpers/localhost-cert.js';
import { tempDir } from '../helpers/tmp.js';
import { FREED_HOST, freedPort } from '../helpers/freed-port.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A server that answers each GET with a small 200 and counts its connections. */
async function countingUpstream() {
  const state = { accepted: 0, open: 0, bytesBeforeFirstRequest: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    state.accepted++;
    state.open++;
    sockets.add(s);
    s.on('data', (chunk) => {
      if (chunk.includes('\r\n\r\n')) s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    s.on('error', () => {});
    s.on('close', () => {
      state.open--;
      sockets.delete(s);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    return new Promise((r) => server.close(r));
  });
  return { port, state };
}

async function connect(port: number): Promise<net.Socket> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  await once(socket, 'connect');
  return socket;
}

async function until(what: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('reverse mode connects upstream at accept, before the client sends a byte, and uses that connection for the first request', async () => {
  const up = await countingUpstream();
  const proxy = await startProxy({ target: `http://127.0.0.1:${up.port}` });
  cleanups.push(() => proxy.close(100));
  const client = await connect(proxy.port);
  await until(() => up.state.accepted === 1);
  assert.equal(up.state.accepted, 1, 'one upstream connection, opened at accept');
  const answer: Buffer[] = [];
  client.on('data', (c: Buffer) => answer.push(c));
  client.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => Buffer.concat(answer).toString().endsWith('ok'));
  client.write('GET /b HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => Buffer.concat(answer).toString().split('200 OK').length === 3);
  assert.equal(up.state.accepted, 1, 'both requests went over the connection opened at accept (one upstream per client connection)');
  client.destroy();
  await until(() => up.state.open === 0);
});

test('a client that connects and never sends a request leaves no upstream connection behind once it closes', async () => {
  const up = await countingUpstream();
  const proxy = await startProxy({ target: `http://127.0.0.1:${up.port}` });
  cleanups.push(() => proxy.close(100));
  const clients = await Promise.all([1, 2, 3].map(() => connect(proxy.port)));
  await until(() => up.state.accepted === 3);
  assert.equal(up.state.open, 3, 'one upstream per client connection');
  for (const c of clients) c.destroy();
  await until(() => up.state.open === 0);
  assert.equal(up.state.open, 0, 'every upstream closed with its client');
});

test('a client the head timeout closes takes its upstream connection with it', async () => {
  const up = await countingUpstream();
  const proxy = await startProxy({ target: `http://127.0.0.1:${up.port}`, headTimeoutMs: 100 });
  cleanups.push(() => proxy.close(100));
  const client = await connect(proxy.port);
  await until(() => up.state.accepted === 1);
  await once(client, 'close');
  await until(() => up.state.open === 0);
});

test('a refused head (bb answers 400 itself and ends the connection) closes the unused upstream connection with it', async () => {
  const up = await countingUpstream();
  const proxy = await startProxy({ target: `http://127.0.0.1:${up.port}` });
  cleanups.push(() => proxy.close(100));
  const client = await connect(proxy.port);
  const answer: Buffer[] = [];
  client.on('data', (c: Buffer) => answer.push(c));
  client.write('NOT HTTP AT ALL\r\n\r\n');
  await once(client, 'end');
  assert.match(Buffer.concat(answer).toString(), /^HTTP\/1\.1 400 /);
  // bb ended the client connection: the unused upstream goes at once, before the client closes its side.
  await until(() => up.state.open === 0);
  client.destroy();
});

test('an upstream that refuses the connection opened at accept still gets the first request its 502', async () => {
  const proxy = await startProxy({ target: `http://${FREED_HOST}:${await freedPort()}` });
  cleanups.push(() => proxy.close(100));
  const client = await connect(proxy.port);
  // Let the connection made at accept fail before the request comes.
  await new Promise((r) => setTimeout(r, 50));
  const answer: Buffer[] = [];
  client.on('data', (c: Buffer) => answer.push(c));
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => Buffer.concat(answer).includes('\r\n\r\n'));
  assert.match(Buffer.concat(answer).toString(), /^HTTP\/1\.1 502 /);
  client.destroy();
});

test('forward mode connects nothing at accept (no target is known before the request)', async () => {
  const up = await countingUpstream();
  const proxy = await startProxy({ resolveUpstream: () => ({ origin: `http://127.0.0.1:${up.port}`, tls: false, hostname: '127.0.0.1', port: up.port }) });
  cleanups.push(() => proxy.close(100));
  const client = await connect(proxy.port);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(up.state.accepted, 0, 'no upstream connection before a request');
  const answer: Buffer[] = [];
  client.on('data', (c: Buffer) => answer.push(c));
  client.write(`GET http://127.0.0.1:${up.port}/ HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\n\r\n`);
  await until(() => Buffer.concat(answer).toString().endsWith('ok'));
  assert.equal(up.state.accepted, 1);
  client.destroy();
  await until(() => up.state.open === 0);
});

// bb replay and bb shadow ask probeUpstream before they start: up, trusted, and over TLS which protocol the target
// chose of h2 and http/1.1 (bb replay sends its HTTP/2 entries as HTTP/1.1 to a target that does not choose h2).
test('probeUpstream: up and trusted, with the ALPN choice over TLS; untrusted and down said apart', async () => {
  const dir = tempDir();
  const { key, cert, caFile } = await localhostCert(dir.path('ca'));
  const h2 = http2.createSecureServer({ key, cert, allowHTTP1: true }, (_req, res) => res.end());
  const h1 = https.createServer({ key, cert }, (_req, res) => res.end());
  const plain = net.createServer((s) => s.destroy());
  const url = async (server: net.Server, scheme: string) => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((r) => server.close(r)));
    return `${scheme}://localhost:${(server.address() as net.AddressInfo).port}`;
  };
  const trust = { extraCa: [readFileSync(caFile, 'utf8')] };
  const h2Url = await url(h2, 'https');
  assert.deepEqual(await probeUpstream(h2Url, trust, 5_000), { ok: true, alpn: 'h2' });
  // node:https chooses http/1.1 of what the client offers.
  assert.deepEqual(await probeUpstream(await url(h1, 'https'), trust, 5_000), { ok: true, alpn: 'http/1.1' });
  assert.deepEqual(await probeUpstream(await url(plain, 'http'), trust, 5_000), { ok: true });
  const untrusted = await probeUpstream(h2Url, {}, 5_000);
  assert.deepEqual(untrusted.ok ? untrusted : { ok: untrusted.ok, untrusted: untrusted.untrusted }, { ok: false, untrusted: true });
  const down = await probeUpstream(`http://${FREED_HOST}:${await freedPort()}`, {}, 5_000);
  assert.deepEqual(down.ok ? down : { ok: down.ok, untrusted: down.untrusted }, { ok: false, untrusted: false });
});
