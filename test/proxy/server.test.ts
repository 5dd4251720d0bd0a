// What crosses bb must arrive unchanged at the other end: compared byte by
// byte with raw sockets on both sides. bb is a tap: the server receives
// exactly the client's bytes (framing included), the client exactly the server's.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import http from 'node:http';
import { Client } from 'undici';
import { startProxy, type Fact } from '../../proxy/index.js';
import { rawClient, rawUpstream, until, hasHead, type RawUpstream } from '../helpers/raw.js';

const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function proxyTo(upstream: RawUpstream | { port: number }, facts: Fact[] = []) {
  const proxy = await startProxy({ target: `http://127.0.0.1:${upstream.port}` });
  proxy.bus.on((f) => facts.push(f));
  cleanups.push(() => proxy.close(100));
  return proxy;
}

const joined = (u: RawUpstream, i = 0) => () => Buffer.concat(u.received[i] ?? []);

test('forwards the request line, header case, order and duplicates unchanged', async () => {
  const upstream = await rawUpstream((s) => s.on('data', () => s.write('HTTP/1.1 204 No Content\r\n\r\n')));
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  const sent =
    'GET /a/b?c=1&c=2 HTTP/1.1\r\nHost: example.test:8080\r\nX-Mixed-Case: v\r\nx-dup: 1\r\nX-Dup: 2\r\nuser-agent: raw\r\nAccept: */*\r\n\r\n';
  client.send(sent);
  const got = await until(joined(upstream), hasHead);
  assert.deepEqual(got, Buffer.from(sent), 'the server receives exactly the client\'s bytes');
  assert.ok(!/^(date|via|x-forwarded-)/im.test(got.toString()), 'bb adds no Date, Via or X-Forwarded-*');
  client.socket.destroy();
});

test('returns the status line, headers, chunked body and trailers unchanged', async () => {
  const response =
    'HTTP/1.1 200 Fine Thanks\r\nX-Mixed: a\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\nTrailer: X-Checksum\r\nTransfer-Encoding: chunked\r\n\r\n' +
    '5\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: abc\r\n\r\n';
  const upstream = await rawUpstream((s) => s.once('data', () => s.write(response)));
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const got = await until(client.bytes, (b) => b.toString().endsWith('\r\n\r\n') && b.includes('X-Checksum: abc'));
  assert.deepEqual(got, Buffer.from(response), 'the client receives exactly the server\'s bytes');
  const body = got.toString().slice(got.indexOf('\r\n\r\n') + 4);
  assert.match(body, /hello/);
  assert.match(body, / world/);
  assert.match(body, /0\r\nX-Checksum: abc\r\n\r\n$/);
  assert.ok(!/^date:/im.test(got.toString()), 'no Date added');
  client.socket.destroy();
});

test('passes gzip bodies through untouched, byte for byte', async () => {
  const payload = zlib.gzipSync(Buffer.from(JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ i })) })));
  const upstream = await rawUpstream((s) =>
    s.once('data', () => {
      s.write(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`);
      s.write(payload);
    }),
  );
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  client.send('GET /data HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n');
  const got = await until(client.bytes, (b) => hasHead(b) && b.length - (b.indexOf('\r\n\r\n') + 4) >= payload.length);
  assert.deepEqual(got.subarray(got.indexOf('\r\n\r\n') + 4), payload);
  client.socket.destroy();
});

test('forwards a POST body with Content-Length and with chunked framing', async () => {
  const upstream = await rawUpstream((s, _i, rec) =>
    s.on('data', () => {
      const all = Buffer.concat(rec).toString();
      const chunked = /chunked/i.test(all);
      if (chunked ? all.endsWith('0\r\n\r\n') : all.endsWith('ping-pong-body')) {
        s.write('HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok');
      }
    }),
  );
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const a = await rawClient(proxy.port);
  a.send('POST /p HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 14\r\n\r\nping-pong-body');
  await until(a.bytes, (b) => b.toString().endsWith('ok'));
  const got = Buffer.concat(upstream.received[0]).toString();
  assert.ok(got.endsWith('\r\n\r\nping-pong-body'), got);
  assert.match(got, /^Content-Length: 14$/m);
  a.socket.destroy();

  const b = await rawClient(proxy.port);
  const chunkedPost = 'POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nping-\r\n9\r\npong-body\r\n0\r\n\r\n';
  b.send(chunkedPost);
  await until(b.bytes, (x) => x.toString().endsWith('ok'));
  const got2 = Buffer.concat(upstream.received[1]).toString();
  assert.equal(got2, chunkedPost);
  const body = got2.slice(got2.indexOf('\r\n\r\n') + 4);
  assert.equal(dechunk(body), 'ping-pong-body');
  b.socket.destroy();
});

test('a chunked body reaches the server with the client\'s own chunk sizes, extensions and trailers, and is recorded decoded', async () => {
  const upstream = await rawUpstream((s, _i, rec) =>
    s.on('data', () => {
      if (Buffer.concat(rec).toString().endsWith('X-Sum: 14\r\n\r\n')) s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    }),
  );
  cleanups.push(() => upstream.close());
  const facts: Fact[] = [];
  const proxy = await proxyTo(upstream, facts);
  const client = await rawClient(proxy.port);
  // Odd sizes (leading zeros, upper-case hex), extensions with quoted values, a trailer: none of it may be re-framed.
  const head = 'POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n';
  const body = '03;part=1\r\npin\r\n0B;name="two words";x\r\ng-pong-body\r\n000;last\r\nX-Sum: 14\r\n\r\n';
  client.send(head + body.slice(0, 20));
  await until(joined(upstream), (x) => x.length >= head.length + 20);
  client.send(body.slice(20));
  await until(client.bytes, (x) => x.toString().endsWith('ok'));
  assert.equal(Buffer.concat(upstream.received[0]).toString('latin1'), head + body);
  const recorded = facts.filter((f) => f.type === 'request-body').map((f) => (f.type === 'request-body' ? f.chunk.toString() : '')).join('');
  assert.equal(recorded, 'ping-pong-body', 'the recorded body is the payload without framing');
  const ended = facts.find((f) => f.type === 'request-ended');
  assert.deepEqual(ended?.type === 'request-ended' && ended.rawTrailers, ['X-Sum', '14']);
  client.socket.destroy();
});

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, nl), 16);
    if (size === 0) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

test('passes 204 and 304 responses without inventing a body', async () => {
  const upstream = await rawUpstream((s) => {
    let n = 0;
    s.on('data', (d) => {
      const lines = d.toString().split('\r\n\r\n').filter((x) => x.startsWith('GET'));
      for (const _ of lines) {
        s.write(n++ === 0 ? 'HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n' : 'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n');
      }
    });
  });
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  client.send('GET /1 HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(client.bytes, (b) => b.includes('204'));
  client.send('GET /2 HTTP/1.1\r\nHost: x\r\nIf-None-Match: "v1"\r\n\r\n');
  const got = (await until(client.bytes, (b) => b.includes('304') && b.toString().endsWith('\r\n\r\n'))).toString();
  assert.equal(got, 'HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n');
  assert.ok(!/transfer-encoding|content-length/i.test(got), got);
  assert.equal(upstream.sockets.length, 1, 'both requests on one upstream connection');
  client.socket.destroy();
});

test('pipelined keep-alive requests reach the server on one connection, in order', async () => {
  const upstream = await rawUpstream((s, _i, rec) => {
    let answered = 0;
    s.on('data', () => {
      const heads = Buffer.concat(rec).toString().split('\r\n\r\n').length - 1;
      for (; answered < heads; answered++) s.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr${answered}`);
    });
  });
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  client.send('GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHost: x\r\n\r\nGET /three HTTP/1.1\r\nHost: x\r\n\r\n');
  const got = (await until(client.bytes, (b) => b.toString().endsWith('r2'))).toString();
  assert.equal(got, [0, 1, 2].map((i) => `HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr${i}`).join(''));
  assert.equal(upstream.sockets.length, 1);
  assert.equal(Buffer.concat(upstream.received[0]).toString(), 'GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHost: x\r\n\r\nGET /three HTTP/1.1\r\nHost: x\r\n\r\n');
  client.socket.destroy();
});

test('each client connection gets its own upstream connection, closed with it', async () => {
  const upstream = await rawUpstream((s) => s.on('data', () => s.write('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx')));
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const a = await rawClient(proxy.port);
  const b = await rawClient(proxy.port);
  a.send('GET /a HTTP/1.1\r\nHost: x\r\n\r\n');
  b.send('GET /b HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(a.bytes, (x) => x.toString().endsWith('x'));
  await until(b.bytes, (x) => x.toString().endsWith('x'));
  assert.equal(upstream.sockets.length, 2);
  const upClosed = new Promise<void>((r) => upstream.sockets[0].once('close', () => r()));
  a.socket.end();
  await upClosed;
  b.socket.destroy();
});

test('a server closing its side ends the client connection too', async () => {
  const upstream = await rawUpstream((s) =>
    s.once('data', () => s.end('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye')),
  );
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await client.closed;
  assert.match(client.bytes().toString(), /^HTTP\/1\.1 200 OK\r\nConnection: close\r\n[\s\S]*bye$/);
});

test('passes an upgrade through byte for byte, including a frame glued to the 101', async () => {
  const head101 = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nconnection: Upgrade\r\nSec-WebSocket-Accept: abc=\r\nX-Odd-Case: 1\r\n\r\n';
  const glued = Buffer.from('810548656c6c6f', 'hex'); // text frame "Hello"
  const upstream = await rawUpstream((s) => {
    s.once('data', () => s.write(Buffer.concat([Buffer.from(head101), glued])));
  });
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  const clientFrame = Buffer.from('818537fa213d7f9f4d5158', 'hex'); // masked "Hello"
  client.send(Buffer.concat([
    Buffer.from('GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'),
    clientFrame,
  ]));
  const got = await until(client.bytes, (b) => b.length >= head101.length + glued.length);
  assert.deepEqual(got, Buffer.concat([Buffer.from(head101), glued]));
  const up = await until(joined(upstream), (b) => hasHead(b) && b.length >= b.indexOf('\r\n\r\n') + 4 + clientFrame.length);
  assert.deepEqual(up.subarray(up.indexOf('\r\n\r\n') + 4), clientFrame);
  // After the upgrade, arbitrary bytes flow both ways.
  client.send(Buffer.from([1, 2, 3]));
  await until(joined(upstream), (b) => b.subarray(-3).equals(Buffer.from([1, 2, 3])));
  upstream.sockets[0].write(Buffer.from([9, 8, 7]));
  await until(client.bytes, (b) => b.subarray(-3).equals(Buffer.from([9, 8, 7])));
  client.socket.destroy();
});

test('a listener that throws does not break traffic', async () => {
  const upstream = await rawUpstream((s) => s.on('data', () => s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')));
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const delivered: string[] = [];
  proxy.bus.on((f) => {
    delivered.push(f.type);
    throw new Error(`broken listener on ${f.type}`);
  });
  const client = await rawClient(proxy.port);
  client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(client.bytes, (b) => b.toString().endsWith('ok'));
  // Every fact reached the listener and each throw was kept, in order, while the client got its answer.
  assert.deepEqual(proxy.bus.listenerErrors.map((e) => e.message), delivered.map((t) => `broken listener on ${t}`));
  // The upstream writes its answer in one write, and exchange-completed and the turn's flush are out before the client sees the end.
  assert.deepEqual(delivered, ['connection-opened', 'exchange-started', 'request-ended', 'response-started', 'response-body', 'exchange-completed', 'flush']);
  client.socket.destroy();
});

test('a --listen address bb cannot take is refused in words with what to do, not as a raw errno message', async () => {
  const refusal = async (host: string): Promise<string> =>
    startProxy({ target: 'http://127.0.0.1:9', listen: { host, port: 0 } }).then(
      async (p) => (await p.close(100), assert.fail(`listened on ${host}`)),
      (err: Error) => err.message,
    );
  // 192.0.2.1 (TEST-NET-1, RFC 5737) is no address of this machine.
  assert.equal(await refusal('192.0.2.1'), 'cannot listen on 192.0.2.1:0: no network interface of this machine has that address (give --listen 127.0.0.1 or an address of this machine)');
  assert.equal(await refusal('no-such-host.invalid'), 'cannot listen on no-such-host.invalid:0: the host name does not resolve (give --listen an address such as 127.0.0.1)');
});

test('a proxy never sends to itself: its own port named as the target is refused, in words', async () => {
  // A target that is down frees its port; a proxy listening there would connect to itself at each accept until descriptors ran out.
  const probe = await startProxy({ target: 'http://127.0.0.1:9' });
  const port = probe.port;
  await probe.close(100);
  for (const target of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
    await assert.rejects(startProxy({ target, listen: { host: '127.0.0.1', port } }), (err: Error) => {
      assert.equal(err.message, `cannot listen on 127.0.0.1:${port}: it is the target's own address, so bb would proxy to itself; pick another --listen port`);
      return true;
    });
  }
  // The port is free again: the refusal closed what it had opened.
  const again = await startProxy({ target: 'http://127.0.0.1:9', listen: { host: '127.0.0.1', port } });
  await again.close(100);
});

// Stopping under keep-alive load (found probing `bb shadow`: SIGTERM, SIGINT and `--until` alike): a connection
// whose exchange was done had its socket destroyed before the last chunk of the answer left (it waits for the
// turn's journal write), so the client got 'other side closed' for an answer the capture held complete; and a
// stopping proxy kept taking a keep-alive client's next requests until its grace ran out, then cut them.
test('close() under keep-alive load: every exchange it completed reached its client whole; a request after the stop is not taken', async () => {
  const upstream = http.createServer((req, res) => res.end(JSON.stringify({ path: req.url })));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => (upstream.closeAllConnections(), upstream.close(r))));
  const facts: Fact[] = [];
  const proxy = await proxyTo({ port: (upstream.address() as { port: number }).port }, facts);
  const got = new Set<string>();
  const failed = new Set<string>();
  let n = 0;
  let stopAt = -1;
  const lane = async () => {
    const c = new Client(proxy.url, { pipelining: 1 });
    try {
      for (;;) {
        const path = `/k${n++}`;
        try {
          const res = await c.request({ method: 'GET', path });
          if (JSON.parse(await res.body.text()).path !== path) throw new Error('another answer');
          got.add(path);
        } catch {
          failed.add(path);
          return;
        }
      }
    } finally {
      await c.destroy();
    }
  };
  const lanes = Array.from({ length: 8 }, lane);
  await new Promise((r) => setTimeout(r, 300));
  stopAt = n;
  await proxy.close(2_000);
  await Promise.all(lanes);
  const targetOf = new Map<number, string>();
  const completed = new Set<string>();
  for (const f of facts) {
    if (f.type === 'exchange-started') targetOf.set(f.exchangeId, f.target);
    else if (f.type === 'exchange-completed') completed.add(targetOf.get(f.exchangeId)!);
  }
  assert.ok(got.size > 0 && failed.size === 8, `${got.size} answered, ${failed.size} failed`);
  assert.deepEqual([...completed].filter((p) => !got.has(p)), [], 'completed by the proxy, never whole at its client');
  assert.deepEqual([...got].filter((p) => !completed.has(p)), []);
  // Every lane's last request came after the stop began, or was one under way then: at most one a lane past the stop.
  assert.ok(n - stopAt <= 16, `${n - stopAt} requests sent after the stop began`);
});

test('stopTaking(): the exchange under way finishes; the keep-alive client\'s next request is not taken, its connection ends', async () => {
  let seen = 0;
  const upstream = await rawUpstream((s) =>
    s.on('data', () => {
      seen++;
      setTimeout(() => s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'), 100);
    }),
  );
  cleanups.push(() => upstream.close());
  const proxy = await proxyTo(upstream);
  const client = await rawClient(proxy.port);
  client.send('GET /first HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => Buffer.from(String(seen)), () => seen === 1);
  proxy.stopTaking();
  await until(client.bytes, (b) => b.toString('latin1').endsWith('ok'));
  client.send('GET /second HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise<void>((r) => (client.socket.readableEnded || client.socket.destroyed ? r() : client.socket.once('close', () => r())));
  assert.equal(seen, 1, 'the request after the stop reached the upstream');
  assert.match(client.bytes().toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*ok$/);
});
