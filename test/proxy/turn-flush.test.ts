// One flush per loop turn for every completion of the turn, and held bytes
// released only after it (the crash rule at a turn's cost).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FactBus } from '../../proxy/events.js';
import { TurnFlush } from '../../proxy/turn-flush.js';

test('many completions in one turn: one flush fact, then every release, in the order deferred', async () => {
  const bus = new FactBus();
  const seen: string[] = [];
  bus.on((f) => seen.push(f.type));
  const turn = TurnFlush.of(bus);
  assert.equal(TurnFlush.of(bus), turn, 'one per bus');
  for (const name of ['a', 'b', 'c']) turn.defer(() => seen.push(`release ${name}`));
  assert.deepEqual(seen, [], 'nothing before the end of the turn');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, ['flush', 'release a', 'release b', 'release c']);
  turn.defer(() => seen.push('release d'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen.slice(4), ['flush', 'release d'], 'a later turn flushes again');
});

test('flushNow emits the flush fact at once', () => {
  const bus = new FactBus();
  const seen: string[] = [];
  bus.on((f) => seen.push(f.type));
  TurnFlush.of(bus).flushNow();
  assert.deepEqual(seen, ['flush']);
});

test('through the HTTP/1 tap: responses completing in one turn share one flush, and each client sees its last byte only after it', async () => {
  const N = 8;
  const { startProxy } = await import('../../proxy/index.js');
  const net = await import('node:net');
  const { once } = await import('node:events');
  // An upstream that answers every connection at once, when all N requests are in: bb reads N completions in one poll.
  const waiting: import('node:net').Socket[] = [];
  const upstream = net.createServer((s) => {
    s.once('data', () => {
      waiting.push(s);
      if (waiting.length === N) for (const w of waiting) w.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    s.on('error', () => {});
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const proxy = await startProxy({ target: `http://127.0.0.1:${(upstream.address() as import('node:net').AddressInfo).port}` });
  type Seen = { type: string; exchangeId?: number; connectionId?: string; remotePort?: number };
  const facts: Seen[] = [];
  proxy.bus.on((f) => facts.push(f as Seen));
  try {
    const clients = await Promise.all(Array.from({ length: N }, async () => {
      const c = net.connect({ port: proxy.port, host: '127.0.0.1' });
      await once(c, 'connect');
      return c;
    }));
    const seen = clients.map((c) => new Promise<{ port: number; at: number }>((resolve) => {
      let got = '';
      c.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        if (got.endsWith('ok')) resolve({ port: c.localPort!, at: facts.length });
      });
    }));
    for (const c of clients) c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const factsWhenSeen = await Promise.all(seen);
    const completed = facts.filter((f) => f.type === 'exchange-completed').length;
    const flushes = facts.filter((f) => f.type === 'flush').length;
    assert.equal(completed, N);
    assert.ok(flushes >= 1 && flushes < N, `${flushes} flushes for ${N} completions`);
    for (const { port, at } of factsWhenSeen) {
      // The client has its last byte: its own exchange's completion, and a flush after it, were told before.
      const conn = facts.find((f) => f.type === 'connection-opened' && f.remotePort === port)!.connectionId;
      const x = facts.find((f) => f.type === 'exchange-started' && f.connectionId === conn)!.exchangeId;
      const before = facts.slice(0, at);
      const done = before.findIndex((f) => f.type === 'exchange-completed' && f.exchangeId === x);
      assert.ok(done >= 0, 'completed before the client saw the end');
      assert.ok(before.findIndex((f, i) => i > done && f.type === 'flush') > done, 'and flushed before the client saw the end');
    }
    for (const c of clients) c.destroy();
  } finally {
    await proxy.close(100);
    await new Promise((r) => upstream.close(r));
  }
});

test('through the h2 tap: every completion read from an upstream chunk is flushed before that chunk is written to the client', async () => {
  const { startProxy } = await import('../../proxy/index.js');
  const net = await import('node:net');
  const http2 = await import('node:http2');
  const { once } = await import('node:events');
  // An h2c upstream answering each stream at once: one of bb's reads carries several streams' HEADERS, then their DATA.
  const upstream = http2.createServer();
  upstream.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    stream.respond({ ':status': 200 });
    stream.end(`ok ${headers[':path']}`);
  });
  upstream.on('sessionError', () => {});
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const proxy = await startProxy({ target: `http://127.0.0.1:${(upstream.address() as import('node:net').AddressInfo).port}` });
  const log: string[] = [];
  proxy.bus.on((f) => log.push(f.type));
  // Every write bb makes to a client socket (its local port is the proxy's), in one log with the facts.
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (this: import('node:net').Socket, ...args: unknown[]) {
    if (this.localPort === proxy.port) log.push('client-write');
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  const session = http2.connect(`http://127.0.0.1:${proxy.port}`);
  session.on('error', () => {});
  try {
    const bodies = await Promise.all(Array.from({ length: 40 }, (_, i) => new Promise<string>((resolve, reject) => {
      const req = session.request({ ':path': `/s${i}` });
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => resolve(body));
      req.on('error', reject);
    })));
    assert.deepEqual(bodies, Array.from({ length: 40 }, (_, i) => `ok /s${i}`));
    assert.equal(log.filter((t) => t === 'exchange-completed').length, 40);
    // A completion not yet flushed when bytes go to the client breaks the crash rule.
    let unflushed = 0;
    for (const [i, t] of log.entries()) {
      if (t === 'exchange-completed') unflushed++;
      else if (t === 'flush') unflushed = 0;
      else if (t === 'client-write') assert.equal(unflushed, 0, `bytes to the client with ${unflushed} completions unflushed (event ${i}: ${log.slice(Math.max(0, i - 6), i + 1).join(', ')})`);
    }
  } finally {
    net.Socket.prototype.write = write;
    session.destroy();
    await proxy.close(100);
    await new Promise((r) => upstream.close(r));
  }
});
