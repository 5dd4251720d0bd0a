// Where the h2 tap must speak itself: an upstream that is down or does not
// speak h2 (bb's 502 per stream through node:http2, recorded with
// _bb.error), and peers that break the protocol (a bad preface, frames on
// stream 0 that must not be there, an oversized frame, a HPACK bomb, a
// CONTINUATION flood, a malformed frame from the server): the offending
// connection gets GOAWAY with RFC 9113's error code, the error is an entry
// of its own, nothing of the bad frame reaches the other side, and another
// client's connection is served meanwhile.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Cleanups } from '../helpers/cleanups.js';
import { record, waitUntil } from '../helpers/recording.js';
import { h2Client, h2Request, h2Server } from '../helpers/h2-peers.js';
import { rawClient, rawUpstream, until } from '../helpers/raw.js';
import { EMPTY_SETTINGS, F, PREFACE, T, h2Frame } from '../helpers/h2-frames.js';
import { FREED_HOST, freedPort } from '../helpers/freed-port.js';
import { errorName } from '../../proxy/h2/frame-types.js';
import type { HarEntry } from '../../capture/har.js';

const run = promisify(execFile);
const cleanups = new Cleanups();
after(() => cleanups.run());

/** HPACK: an indexed field from the static table (RFC 7541 section 6.1). */
const indexed = (i: number) => Buffer.from([0x80 | i]);
/** HPACK: a literal field without indexing, new name (section 6.2.2), lengths under 127. */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
}
/** A GET / request block: :method GET, :scheme http, :path /, :authority x. */
const GET_BLOCK = Buffer.concat([indexed(2), indexed(6), indexed(4), Buffer.from([0x41, 1]), Buffer.from('x')]);

/** The GOAWAY frames in bytes a peer received: [error code name, debug text]. */
function goaways(bytes: Buffer): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let pos = 0;
  while (pos + 9 <= bytes.length) {
    const length = bytes.readUIntBE(pos, 3);
    const type = bytes[pos + 3];
    if (pos + 9 + length > bytes.length) break;
    if (type === T.GOAWAY) out.push([errorName(bytes.readUInt32BE(pos + 13)), bytes.subarray(pos + 17, pos + 9 + length).toString()]);
    pos += 9 + length;
  }
  return out;
}

/** Waits for a connection's close, bounded: a peer that never closes fails the test instead of hanging it. */
async function closedWithin(closed: Promise<void>, ms = 10_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`the connection was not closed within ${ms} ms`)), ms)))]);
  clearTimeout(timer);
}

const refused = (entries: HarEntry[]) => entries.filter((e) => e._bb?.rawPacket !== undefined || e._bb?.error?.code.startsWith("BB_H2_"));

describe('bb answers h2 streams itself when the upstream cannot', () => {
  it('an upstream that is down: each stream gets a 502 that says why, recorded with _bb.error', async () => {
    const rec = await record(cleanups, `http://${FREED_HOST}:${await freedPort()}`);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const [a, b] = await Promise.all([h2Request(session, { ':path': '/a' }), h2Request(session, { ':path': '/b', ':method': 'POST' }, 'x')]);
    for (const r of [a, b]) {
      assert.equal(r.status, 502);
      assert.equal(r.headers['x-bb-error'], 'ECONNREFUSED');
      assert.equal(JSON.parse(r.body.toString()).code, 'ECONNREFUSED');
    }
    session.close();
    const har = await rec.finish();
    const entries = har.log.entries.filter((e) => e.request.method !== '-');
    assert.deepEqual(entries.map((e) => new URL(e.request.url).pathname).sort(), ['/a', '/b']);
    for (const e of entries) {
      assert.equal(e.request.httpVersion, 'HTTP/2.0');
      assert.equal(e.response.status, 502);
      assert.equal(e._bb!.error!.code, 'ECONNREFUSED');
      assert.equal(e._bb!.error!.phase, 'connect');
      assert.equal(typeof e._bb!.stream, 'number');
      assert.equal(JSON.parse(e.response.content.text!).error, 'bb_upstream_failed');
    }
  });

  it('an upstream that speaks only HTTP/1.1: 502 BB_UPSTREAM_NOT_H2 (curl --http2-prior-knowledge)', async () => {
    const h1 = http.createServer((_req, res) => res.end('h1 only'));
    await new Promise<void>((r) => h1.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise((r) => h1.close(r)));
    const rec = await record(cleanups, `http://127.0.0.1:${(h1.address() as AddressInfo).port}`);
    const out = await run('curl', ['-sS', '--http2-prior-knowledge', '-w', '%{http_code}', `http://127.0.0.1:${rec.port}/x`]);
    assert.match(out.stdout, /BB_UPSTREAM_NOT_H2/);
    assert.ok(out.stdout.endsWith('502'));
    const har = await rec.finish();
    const e = har.log.entries.find((x) => x.request.url.endsWith('/x'))!;
    assert.equal(e._bb!.error!.code, 'BB_UPSTREAM_NOT_H2');
    assert.equal(e.response.status, 502);
  });
});

describe('--upstream-timeout on h2', () => {
  it('an upstream that accepts and never speaks: each waiting stream gets a 502 BB_UPSTREAM_TIMEOUT', async () => {
    const silent = await rawUpstream(() => {});
    cleanups.add(() => silent.close());
    const rec = await record(cleanups, `http://127.0.0.1:${silent.port}`, { upstreamTimeoutMs: 300 });
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const r = await h2Request(session, { ':path': '/silent' });
    assert.equal(r.status, 502);
    assert.equal(r.headers['x-bb-error'], 'BB_UPSTREAM_TIMEOUT');
    assert.ok(Buffer.concat(silent.received[0]!).subarray(0, 24).equals(PREFACE), 'the client preface reached the upstream');
    session.close();
    const har = await rec.finish();
    const e = har.log.entries.find((x) => x.request.url.endsWith('/silent'))!;
    assert.equal(e.response.status, 502);
    assert.equal(e._bb!.error!.code, 'BB_UPSTREAM_TIMEOUT');
  });

  it('an h2 upstream that answers one stream and leaves another waiting: GOAWAY to the client, the waiting stream recorded as timed out', async () => {
    const server = await h2Server(cleanups, (stream, headers) => {
      stream.on('error', () => {});
      if (headers[':path'] === '/fast') {
        stream.respond({ ':status': 200 });
        stream.end('fast');
      } // /slow: never answered
    });
    const rec = await record(cleanups, server.url, { upstreamTimeoutMs: 400 });
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const heard: Array<[string, string]> = [];
    session.on('goaway', (code: number, _last: number, debug?: Buffer) => heard.push([errorName(code), debug?.toString() ?? '']));
    const fast = await h2Request(session, { ':path': '/fast' });
    assert.equal(fast.status, 200);
    assert.equal(fast.body.toString(), 'fast');
    const slow = await h2Request(session, { ':path': '/slow' });
    assert.equal(slow.status, 0, 'no response for the stream the server left waiting');
    await waitUntil(() => heard.length > 0, 'a GOAWAY from bb');
    assert.equal(heard.length, 1, 'bb ended the client connection with one GOAWAY');
    assert.equal(heard[0]![0], 'INTERNAL_ERROR');
    assert.match(heard[0]![1], /no data from the upstream for 400 ms/);
    const har = await rec.finish();
    const byPath = (p: string) => har.log.entries.find((x) => x.request.url.endsWith(p))!;
    assert.equal(byPath('/fast').response.status, 200);
    assert.equal(byPath('/fast')._bb!.error, undefined);
    assert.match(byPath('/slow').comment ?? '', /aborted by upstream.*BB_UPSTREAM_TIMEOUT/);
    assert.equal(byPath('/slow')._bb!.aborted, 'upstream');
  });
});

/** A served h2 upstream, a recording bb in front, and a well-behaved client running beside each offender. */
async function setup() {
  const server = await h2Server(cleanups, (stream, headers) => {
    stream.on('error', () => {});
    stream.respond({ ':status': 200 });
    stream.end(`ok ${headers[':path']}`);
  });
  const rec = await record(cleanups, server.url);
  const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
  return { server, rec, session };
}

const offenders: Array<{ name: string; bytes: () => Buffer; code: string }> = [
  { name: 'a bad preface', bytes: () => Buffer.from('PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n', 'latin1'), code: 'PROTOCOL_ERROR' },
  { name: 'DATA on stream 0', bytes: () => Buffer.concat([PREFACE, EMPTY_SETTINGS, h2Frame(T.DATA, 0, 0, 'boom')]), code: 'PROTOCOL_ERROR' },
  { name: 'HEADERS on stream 0', bytes: () => Buffer.concat([PREFACE, EMPTY_SETTINGS, h2Frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 0, GET_BLOCK)]), code: 'PROTOCOL_ERROR' },
  {
    name: 'a frame over SETTINGS_MAX_FRAME_SIZE',
    bytes: () => Buffer.concat([PREFACE, EMPTY_SETTINGS, h2Frame(T.HEADERS, F.END_HEADERS, 1, GET_BLOCK), h2Frame(T.DATA, 0, 1, Buffer.alloc(20_000, 0x61))]),
    code: 'FRAME_SIZE_ERROR',
  },
  {
    name: 'a HPACK bomb (one header block decoding far past the advertised list size)',
    // One literal field with indexing (RFC 7541 section 6.2.1; :authority lands above it at 62, so it is 63), then thousands of references to it.
    bytes: () => {
      const big = 'v'.repeat(120);
      const block = Buffer.concat([Buffer.from([0x40, 1]), Buffer.from('b'), Buffer.from([big.length]), Buffer.from(big), GET_BLOCK, Buffer.alloc(12_000, 0x80 | 63)]);
      return Buffer.concat([PREFACE, EMPTY_SETTINGS, h2Frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 1, block)]);
    },
    code: 'ENHANCE_YOUR_CALM',
  },
  {
    name: 'a CONTINUATION flood',
    bytes: () => {
      const frames = [PREFACE, EMPTY_SETTINGS, h2Frame(T.HEADERS, 0, 1, GET_BLOCK)];
      for (let i = 0; i < 2000; i++) frames.push(h2Frame(T.CONTINUATION, 0, 1, literal(`x-flood-${i % 10}`, 'y'.repeat(100))));
      return Buffer.concat(frames);
    },
    code: 'ENHANCE_YOUR_CALM',
  },
];

describe('a client that breaks h2 gets GOAWAY with the right code; others go on', () => {
  for (const o of offenders) {
    it(o.name, async () => {
      const { server, rec, session } = await setup();
      const before = await h2Request(session, { ':path': '/before' });
      assert.equal(before.body.toString(), 'ok /before');
      const bad = await rawClient(rec.port);
      bad.send(o.bytes());
      await closedWithin(bad.closed);
      assert.deepEqual(goaways(bad.bytes()).map(([code]) => code), [o.code], 'one GOAWAY with the RFC code');
      assert.match(goaways(bad.bytes())[0]![1], /^bb: /);
      const afterwards = await h2Request(session, { ':path': '/after' });
      assert.equal(afterwards.body.toString(), 'ok /after', 'the other connection is still served');
      // The offending frame never reached the server (it got at most the bytes before it).
      for (const wire of server.wires.slice(1)) {
        const got = Buffer.concat(wire.received);
        assert.ok(got.length < o.bytes().length, 'the server did not get the whole offending input');
      }
      session.close();
      const har = await rec.finish();
      const errors = refused(har.log.entries);
      assert.equal(errors.length, 1, JSON.stringify(har.log.entries.map((e) => [e.request.url, e._bb?.error])));
      assert.equal(errors[0]!._bb!.error!.code, `BB_H2_${o.code}`);
      assert.match(errors[0]!._bb!.error!.message, /^the client broke HTTP\/2/);
      assert.ok(har.log.entries.some((e) => e.request.url.endsWith('/after') && e.response.status === 200));
    });
  }
});

describe('an upstream that breaks h2', () => {
  it('a malformed frame from the server: the client gets GOAWAY(FRAME_SIZE_ERROR), recorded as the upstream’s', async () => {
    const upstream = await rawUpstream((socket) => {
      let sent = false;
      socket.on('data', () => {
        if (sent) return;
        sent = true;
        // A server preface, then a WINDOW_UPDATE whose payload is not 4 bytes (RFC 9113 section 6.9: FRAME_SIZE_ERROR).
        socket.write(Buffer.concat([EMPTY_SETTINGS, h2Frame(T.WINDOW_UPDATE, 0, 0, Buffer.alloc(3))]));
      });
    });
    cleanups.add(() => upstream.close());
    const rec = await record(cleanups, `http://127.0.0.1:${upstream.port}`);
    const client = await rawClient(rec.port);
    client.send(Buffer.concat([PREFACE, EMPTY_SETTINGS, h2Frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 1, GET_BLOCK)]));
    await closedWithin(client.closed);
    const codes = goaways(client.bytes()).map(([code]) => code);
    assert.deepEqual(codes, ['FRAME_SIZE_ERROR']);
    const har = await rec.finish();
    const errors = refused(har.log.entries);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!._bb!.error!.code, 'BB_H2_FRAME_SIZE_ERROR');
    assert.match(errors[0]!.comment ?? '', /refused the upstream's bytes/);
    const stream = har.log.entries.find((e) => e._bb?.stream === 1)!;
    assert.equal(stream._bb!.aborted, 'upstream');
    // The server heard a GOAWAY too (bb ends its side cleanly where a frame may go).
    await until(() => Buffer.concat(upstream.received[0] ?? []), (b) => goaways(b.subarray(PREFACE.length)).length > 0);
  });

  it('a server GOAWAY with an error code is recorded', async () => {
    const upstream = await rawUpstream((socket) => {
      socket.once('data', () => {
        const payload = Buffer.alloc(8);
        payload.writeUInt32BE(0, 0);
        payload.writeUInt32BE(11, 4); // ENHANCE_YOUR_CALM
        socket.end(Buffer.concat([EMPTY_SETTINGS, h2Frame(T.GOAWAY, 0, 0, Buffer.concat([payload, Buffer.from('calm down')]))]));
      });
    });
    cleanups.add(() => upstream.close());
    const rec = await record(cleanups, `http://127.0.0.1:${upstream.port}`);
    const client = await rawClient(rec.port);
    client.send(Buffer.concat([PREFACE, EMPTY_SETTINGS, h2Frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 1, GET_BLOCK)]));
    await closedWithin(client.closed);
    assert.deepEqual(goaways(client.bytes().subarray(9)), [['ENHANCE_YOUR_CALM', 'calm down']], 'the server’s GOAWAY crossed unchanged');
    const har = await rec.finish();
    const g = har.log.entries.find((e) => e._bb?.error?.code === 'BB_H2_GOAWAY')!;
    assert.match(g._bb!.error!.message, /upstream ended the connection with GOAWAY\(ENHANCE_YOUR_CALM\): calm down/);
    const stream = har.log.entries.find((e) => e._bb?.stream === 1)!;
    assert.equal(stream._bb!.aborted, 'upstream');
    assert.match(stream.comment ?? '', /GOAWAY/);
  });
});
