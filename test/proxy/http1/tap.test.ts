// The HTTP/1 tap as one connection (proxy/http1/tap.ts), probed with raw
// sockets on both sides for what a hostile or unlucky peer can do to it:
// bytes piled up behind an upgrade request, a connection that never speaks,
// a close-delimited response with a request pipelined behind it, and a
// request line in absolute-form (issue 34, items 1, 2, 8 and 9).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { startProxy, PROXY_DEFAULTS, type Fact, type ProxyOptions } from '../../../proxy/index.js';
import { rawClient, rawUpstream, until, hasHead } from '../../helpers/raw.js';
import { scriptedUpstream } from '../../helpers/scripted-upstream.js';
import { atFileEnd } from '../../helpers/cleanups.js';

async function proxyTo(port: number, facts: Fact[] = [], options: Partial<ProxyOptions> = {}) {
  const proxy = await startProxy({ target: `http://127.0.0.1:${port}`, ...options });
  proxy.bus.on((f) => facts.push(f));
  atFileEnd(() => proxy.close(100));
  return proxy;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const UPGRADE =
  'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
const SWITCHED =
  'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
  'Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n';

/** An upstream that keeps only a count and a hash of what it receives past the first head, and answers when told. */
async function countingUpstream() {
  const state = { socket: undefined as net.Socket | undefined, head: '', after: 0, hash: createHash('sha256') };
  const server = net.createServer((socket) => {
    state.socket = socket;
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      if (state.head === '') {
        pending = Buffer.concat([pending, chunk]);
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        state.head = pending.subarray(0, end + 4).toString('latin1');
        chunk = pending.subarray(end + 4);
      }
      state.after += chunk.length;
      state.hash.update(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  atFileEnd(() => new Promise<void>((r) => {
    state.socket?.destroy();
    server.close(() => r());
  }));
  return { port: (server.address() as net.AddressInfo).port, state };
}

/** Writes `total` bytes (1 MiB pieces of a fixed pattern) as fast as the socket takes them; `taken()` is what the kernel accepted so far. */
function pump(socket: net.Socket, total: number) {
  const piece = Buffer.alloc(1 << 20);
  for (let i = 0; i < piece.length; i++) piece[i] = (i * 31 + 7) & 0xff;
  const hash = createHash('sha256');
  let written = 0;
  let taken = 0;
  const more = (): void => {
    while (written < total) {
      written += piece.length;
      hash.update(piece);
      if (!socket.write(piece, () => (taken += piece.length))) {
        socket.once('drain', more);
        return;
      }
    }
  };
  more();
  return { taken: () => taken, digest: () => hash.digest('hex') };
}

/** Resolves once `value()` has not changed for `quietMs` (or reached `limit`). */
async function settles(value: () => number, limit: number, quietMs = 400, timeoutMs = 20_000): Promise<number> {
  const start = Date.now();
  let last = -1;
  let since = Date.now();
  for (;;) {
    const v = value();
    if (v >= limit) return v;
    if (v !== last) {
      last = v;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`still moving after ${timeoutMs} ms: ${v}`);
    await sleep(20);
  }
}

describe('bytes after an upgrade request', () => {
  // 64 MiB is enough to tell a bound from none: with the client paused, what
  // it can push is bb's small hold plus the two loopback socket buffers (a
  // few MiB: the receive buffer does not grow while nobody reads it); without
  // a bound bb reads all 64 MiB into memory within a second. The no-op tap
  // keeps the WebSocket parser out of it: only the relay's bytes count here.
  const TOTAL = 64 << 20;

  it('stops reading the client past a small hold until the 101, then passes every byte on unchanged', async (t) => {
    const up = await countingUpstream();
    const proxy = await proxyTo(up.port, [], { tap: () => {} });
    const client = await rawClient(proxy.port);
    client.send(UPGRADE);
    await until(() => Buffer.from(up.state.head), (b) => b.length > 0);
    const sent = pump(client.socket, TOTAL);
    const taken = await settles(sent.taken, TOTAL);
    t.diagnostic(`the client got ${(taken / 2 ** 20).toFixed(1)} MiB into its socket before bb stopped reading it`);
    assert.ok(taken < TOTAL / 2, `the client got ${(taken / 2 ** 20).toFixed(1)} MiB of ${TOTAL / 2 ** 20} MiB into bb before any answer: bb should stop reading it`);
    assert.equal(up.state.after, 0, 'nothing past the upgrade head goes upstream before the answer');

    up.state.socket!.write(SWITCHED);
    await until(() => client.bytes(), (b) => b.toString('latin1') === SWITCHED);
    await settles(() => up.state.after, TOTAL, 2_000);
    assert.equal(up.state.after, TOTAL, 'every byte reaches the server after the 101');
    assert.equal(up.state.hash.digest('hex'), sent.digest(), 'unchanged, in order');
    client.socket.destroy();
  });

  it('reads the held bytes as HTTP again after an answer without 101, and resumes the client', async () => {
    // A 1 MiB pipelined POST fills the hold, so the client is paused when the upgrade is refused.
    const body = Buffer.alloc(1 << 20, 'b');
    const post = Buffer.concat([Buffer.from(`POST /after HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
    const up = await scriptedUpstream(() => [
      { wait: 'head' },
      { wait: 200 },
      { send: 'HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\nno' },
      { wait: 'request' },
      { send: 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes' },
    ]);
    atFileEnd(() => up.close());
    const proxy = await proxyTo(up.port);
    const client = await rawClient(proxy.port);
    client.send(UPGRADE);
    client.send(post);
    const got = await until(client.bytes, (b) => b.toString('latin1').endsWith('yes'), 10_000);
    assert.match(got.toString('latin1'), /^HTTP\/1\.1 400 Bad Request\r\n[^]*\r\n\r\nnoHTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nyes$/);
    assert.deepEqual(up.received(0), Buffer.concat([Buffer.from(UPGRADE), post]), 'the server got the upgrade request and the POST, byte for byte');
    client.socket.destroy();
  });
});

describe('a connection that never sends a byte', () => {
  it('keeps the head timeout of Node (60 s) by default', () => {
    assert.equal(PROXY_DEFAULTS.headTimeoutMs, 60_000);
  });

  it('is closed after the head timeout, silently: it holds no request to answer or record', async () => {
    const up = await rawUpstream(() => {});
    atFileEnd(() => up.close());
    const facts: Fact[] = [];
    const proxy = await proxyTo(up.port, facts, { headTimeoutMs: 300 });
    const client = await rawClient(proxy.port);
    const closed = await Promise.race([client.closed.then(() => true), sleep(5_000).then(() => false)]);
    assert.ok(closed, 'bb closes a silent connection after the head timeout');
    assert.equal(client.bytes().length, 0, 'nothing written to it');
    await until(() => Buffer.from(facts.map((f) => f.type).join()), (b) => b.includes('connection-closed'));
    assert.deepEqual(facts.map((f) => f.type), ['connection-opened', 'connection-closed'], 'no exchange, no client error');
    // Reverse mode connects upstream at accept (issue 39); that connection goes with the client.
    assert.ok(up.sockets.length <= 1, 'at most the one upstream connection opened at accept');
    await until(() => Buffer.from(up.sockets.every((s) => s.destroyed || s.readableEnded) ? 'y' : ''), (b) => b.length > 0);
  });

  it('answers a started head with 408 after the same timeout', async () => {
    const up = await rawUpstream(() => {});
    atFileEnd(() => up.close());
    const proxy = await proxyTo(up.port, [], { headTimeoutMs: 300 });
    const client = await rawClient(proxy.port);
    client.send('GET / HTTP/1.1\r\nHost:');
    const closed = await Promise.race([client.closed.then(() => true), sleep(5_000).then(() => false)]);
    assert.ok(closed, 'bb closes a stalled head after the head timeout');
    assert.match(client.bytes().toString('latin1'), /^HTTP\/1\.1 408 /);
  });

  it('is not closed while a request it sent waits for its answer', async () => {
    const up = await scriptedUpstream(() => [{ wait: 'request' }, { wait: 800 }, { send: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok' }]);
    atFileEnd(() => up.close());
    const proxy = await proxyTo(up.port, [], { headTimeoutMs: 300 });
    const client = await rawClient(proxy.port);
    client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const got = await until(client.bytes, (b) => b.toString('latin1').endsWith('ok'), 5_000);
    assert.match(got.toString('latin1'), /^HTTP\/1\.1 200 OK/);
    client.socket.destroy();
  });
});

describe('a close-delimited response with a request pipelined behind it', () => {
  it('ends the client after the body, adds nothing to it, and records the request behind as unanswered', async () => {
    const response = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello, ';
    const up = await scriptedUpstream(() => [{ wait: 'request' }, { send: response }, { wait: 50 }, { send: 'world' }, { close: true }]);
    atFileEnd(() => up.close());
    const facts: Fact[] = [];
    const proxy = await proxyTo(up.port, facts);
    const client = await rawClient(proxy.port);
    client.send('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    const closed = await Promise.race([client.closed.then(() => true), sleep(5_000).then(() => false)]);
    assert.equal(client.bytes().toString('latin1'), response + 'world', 'the body the client reads is the server\'s, nothing after it');
    assert.ok(closed, 'the client connection ends with the body');
    const ends = facts.filter((f) => f.type === 'exchange-completed' || f.type === 'exchange-failed' || f.type === 'exchange-aborted');
    assert.deepEqual(ends.map((f) => [f.type, f.exchangeId]), [['exchange-completed', 1], ['exchange-failed', 2]]);
    const failed = ends[1] as Extract<Fact, { type: 'exchange-failed' }>;
    assert.equal(failed.response, undefined, 'bb wrote no answer of its own');
    assert.equal(failed.error.code, 'BB_UPSTREAM_CLOSED');
    assert.match(failed.error.message, /close-delimited/);
  });
});

describe('an absolute-form request line', () => {
  it('reaches the server of a reverse proxy as sent', async () => {
    const up = await rawUpstream((s) => s.on('data', () => s.write('HTTP/1.1 204 No Content\r\n\r\n')));
    atFileEnd(() => up.close());
    const proxy = await proxyTo(up.port);
    const client = await rawClient(proxy.port);
    const sent = `GET http://127.0.0.1:${up.port}/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\n\r\n`;
    client.send(sent);
    const got = await until(() => Buffer.concat(up.received[0] ?? []), hasHead);
    assert.equal(got.toString('latin1'), sent);
    client.socket.destroy();
  });

  it('keeps its form when a flag rebuilds the head', async () => {
    const up = await rawUpstream((s) => s.on('data', () => s.write('HTTP/1.1 204 No Content\r\n\r\n')));
    atFileEnd(() => up.close());
    const proxy = await proxyTo(up.port, [], { xfwd: true });
    const client = await rawClient(proxy.port);
    client.send(`GET http://example.test/x HTTP/1.1\r\nHost: example.test\r\n\r\n`);
    const got = await until(() => Buffer.concat(up.received[0] ?? []), hasHead);
    assert.match(got.toString('latin1'), /^GET http:\/\/example\.test\/x HTTP\/1\.1\r\nHost: example\.test\r\nX-Forwarded-For: /);
    client.socket.destroy();
  });
});
