// The h2 tap end to end: real h2 peers (node:http2, curl, nghttp) through a
// recording bb in reverse mode with h2c prior knowledge. Frames cross byte
// for byte; each stream becomes one HAR entry (HTTP/2.0, pseudo-headers
// first, _bb.stream, trailers, resets, pushes); SSE reaches the client live.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http2 from 'node:http2';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { h2Client, h2Request, h2Server, h2WebSocketServer, openH2WebSocket, streamBytes } from '../helpers/h2-peers.js';
import { deflatePayload, OP, parseFrames, wsFrame } from '../helpers/ws-frames.js';
import { once } from 'node:events';
import { constants as zlibConstants, inflateRawSync } from 'node:zlib';
import { wsConnections } from '../../inspect/model.js';
import { T } from '../helpers/h2-frames.js';
import type { HarEntry } from '../../capture/har.js';

const run = promisify(execFile);
const cleanups = new Cleanups();
after(() => cleanups.run());

const names = (e: HarEntry, side: 'request' | 'response') => e[side].headers.map((h) => h.name);
const header = (e: HarEntry, side: 'request' | 'response', name: string) => e[side].headers.find((h) => h.name === name)?.value;
/** The types of the whole frames in `bytes` (a cut frame fails the test). */
function frameTypes(bytes: Buffer): number[] {
  const types: number[] = [];
  for (let at = 0; at < bytes.length; ) {
    assert.ok(at + 9 <= bytes.length, 'whole frame headers');
    const length = bytes.readUIntBE(at, 3);
    types.push(bytes[at + 3]!);
    at += 9 + length;
    assert.ok(at <= bytes.length, 'whole frames');
  }
  return types;
}
const byPath = (entries: HarEntry[], path: string) => entries.find((e) => new URL(e.request.url).pathname === path);

/** A server that echoes each request: status 200, its path and body as JSON, and a trailer. */
async function echoH2() {
  return h2Server(cleanups, (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/json', 'x-echo': 'yes' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': String(Buffer.concat(chunks).length) }));
      stream.end(JSON.stringify({ path: headers[':path'], method: headers[':method'], body: Buffer.concat(chunks).toString() }));
    });
  });
}

describe('h2c with prior knowledge in reverse mode', () => {
  it('records each stream of a node:http2 client as one HTTP/2.0 entry, and the bytes cross unchanged both ways', async () => {
    const server = await echoH2();
    const rec = await record(cleanups, server.url);
    const { session, wire } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h2Request(session, { ':method': i % 2 ? 'POST' : 'GET', ':path': `/s/${i}?q=${i}`, 'x-order-b': 'b', 'x-order-a': 'a' }, i % 2 ? `body-${i}` : undefined),
      ),
    );
    for (const [i, r] of results.entries()) {
      assert.equal(r.status, 200);
      assert.equal(JSON.parse(r.body.toString()).path, `/s/${i}?q=${i}`);
      assert.equal(r.trailers?.['x-checksum'], String(i % 2 ? `body-${i}`.length : 0));
    }
    session.close();
    await new Promise((r) => session.once('close', r));
    const har = await rec.finish();
    // Byte for byte: what the server received is what the client sent, and the other way round.
    assert.equal(server.wires.length, 1, 'one upstream connection for one client connection');
    assert.ok(Buffer.concat(server.wires[0]!.received).equals(Buffer.concat(wire.sent)), 'server got the client bytes');
    // The client closes its socket once its streams are done; a connection-level frame the server writes meanwhile
    // (its GOAWAY, an ACK, a WINDOW_UPDATE) may cross bb after that and reach no one. Everything before it did, in order.
    const fromServer = Buffer.concat(server.wires[0]!.sent);
    const atClient = Buffer.concat(wire.received);
    assert.ok(fromServer.subarray(0, atClient.length).equals(atClient), 'client got the server bytes, in order');
    const late = frameTypes(fromServer.subarray(atClient.length));
    assert.deepEqual(late.filter((t) => ![T.SETTINGS, T.PING, T.GOAWAY, T.WINDOW_UPDATE].includes(t as never)), [], `only connection-level frames after the client closed: ${late}`);

    const entries = har.log.entries;
    assert.equal(entries.length, 20);
    const streams = new Set<number>();
    for (const [i] of results.entries()) {
      const e = byPath(entries, `/s/${i}`)!;
      assert.ok(e, `entry for /s/${i}`);
      assert.equal(e.request.httpVersion, 'HTTP/2.0');
      assert.equal(e.response.httpVersion, 'HTTP/2.0');
      assert.equal(e.request.method, i % 2 ? 'POST' : 'GET');
      assert.equal(e.request.url, `http://127.0.0.1:${rec.port}/s/${i}?q=${i}`);
      assert.deepEqual(names(e, 'request').slice(0, 4).sort(), [':authority', ':method', ':path', ':scheme'], 'pseudo-headers first');
      assert.deepEqual(names(e, 'request').filter((n) => n.startsWith('x-order')), ['x-order-b', 'x-order-a'], 'header order as sent');
      assert.equal(names(e, 'response')[0], ':status');
      assert.equal(header(e, 'response', 'x-echo'), 'yes');
      assert.equal(e.response.status, 200);
      assert.equal(JSON.parse(e.response.content.text!).path, `/s/${i}?q=${i}`);
      if (i % 2) assert.equal(e.request.postData?.text, `body-${i}`);
      assert.deepEqual(e.response._trailers, [{ name: 'x-checksum', value: String(i % 2 ? `body-${i}`.length : 0) }]);
      assert.equal(e.request.headersSize, -1);
      const bb = e._bb!;
      assert.equal(typeof bb.stream, 'number');
      assert.equal(bb.stream! % 2, 1, 'client streams are odd');
      streams.add(bb.stream!);
      assert.ok(bb.seqEnd! > bb.seq);
      assert.equal(e.connection, entries[0]!.connection, 'one h2 connection');
    }
    assert.equal(streams.size, 20);
  });

  it('records curl --http2-prior-knowledge and nghttp requests', async () => {
    const server = await echoH2();
    const rec = await record(cleanups, server.url);
    const curl = await run('curl', ['-sS', '--http2-prior-knowledge', '-H', 'X-From: curl', '-d', 'from-curl', `http://127.0.0.1:${rec.port}/curl`]);
    assert.equal(JSON.parse(curl.stdout).body, 'from-curl');
    const ng = await run('nghttp', ['-n', '-H', 'x-from: nghttp', `http://127.0.0.1:${rec.port}/nghttp`]);
    assert.equal(ng.stderr, '');
    const har = await rec.finish();
    const c = byPath(har.log.entries, '/curl')!;
    assert.equal(c.request.httpVersion, 'HTTP/2.0');
    assert.equal(header(c, 'request', 'x-from'), 'curl');
    assert.equal(c.request.postData?.text, 'from-curl');
    assert.equal(c.response.status, 200);
    const n = byPath(har.log.entries, '/nghttp')!;
    assert.equal(header(n, 'request', 'x-from'), 'nghttp');
    assert.equal(JSON.parse(n.response.content.text!).method, 'GET');
    assert.notEqual(c.connection, n.connection);
  });

  it('streams that came in the first packet with the preface name the upstream they went to', async () => {
    const server = await echoH2();
    const rec = await record(cleanups, server.url);
    // nghttp writes the preface, its SETTINGS and the three requests' HEADERS in one write: the h1 tap hands them over as the head.
    const ng = await run('nghttp', ['-n', '-m', '3', `http://127.0.0.1:${rec.port}/first`]);
    assert.equal(ng.stderr, '');
    const journal = await readFile(join(rec.dir, 'cap.har.journal'), 'utf8');
    const starts = journal.split('\n').filter((l) => l.startsWith('{"r":"start"')).map((l) => JSON.parse(l) as { up: string; target: string });
    assert.deepEqual(starts.map((s) => [s.target, s.up]), Array.from({ length: 3 }, () => ['/first', server.url]));
    await rec.finish();
  });

  it('HTTP/1.1 clients of the same proxy are tapped as before', async () => {
    const server = await h2Server(cleanups, () => {});
    const h1 = await import('node:http');
    const origin = h1.createServer((_req, res) => res.end('h1 ok'));
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise((r) => origin.close(r)));
    const rec = await record(cleanups, `http://127.0.0.1:${(origin.address() as { port: number }).port}`);
    const res = await fetch(`http://127.0.0.1:${rec.port}/plain`);
    assert.equal(await res.text(), 'h1 ok');
    const har = await rec.finish();
    assert.equal(har.log.entries[0]!.request.httpVersion, 'HTTP/1.1');
    assert.equal(server.wires.length, 0);
  });

  it('a server push becomes an entry with _bb.pushed', async () => {
    const server = await h2Server(cleanups, (stream) => {
      stream.pushStream({ ':path': '/style.css' }, (err, push) => {
        if (err) throw err;
        push.respond({ ':status': 200, 'content-type': 'text/css' });
        push.end('body{}');
      });
      stream.respond({ ':status': 200, 'content-type': 'text/html' });
      stream.end('<link rel=stylesheet href=/style.css>');
    });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups, { enablePush: true });
    const pushed = new Promise<string>((resolve) => {
      session.on('stream', (push) => {
        const chunks: Buffer[] = [];
        push.on('data', (c: Buffer) => chunks.push(c));
        push.on('end', () => resolve(Buffer.concat(chunks).toString()));
      });
    });
    const page = await h2Request(session, { ':path': '/' });
    assert.match(page.body.toString(), /stylesheet/);
    assert.equal(await pushed, 'body{}');
    session.close();
    const har = await rec.finish();
    const css = byPath(har.log.entries, '/style.css')!;
    const root = byPath(har.log.entries, '/')!;
    assert.ok(css, 'the pushed stream is an entry');
    assert.equal(css._bb!.pushed, root._bb!.stream);
    assert.equal(css._bb!.stream! % 2, 0, 'pushed streams are even');
    assert.equal(css.response.content.text, 'body{}');
    assert.equal(css.request.method, 'GET');
  });

  it('RST_STREAM from either side ends the entry as aborted with the code name', async () => {
    const server = await h2Server(cleanups, (stream, headers) => {
      stream.on('error', () => {});
      if (headers[':path'] === '/server-resets') {
        stream.respond({ ':status': 200 });
        stream.write('partial');
        // close(code) ends a stream with data in flight gracefully; destroy(err) sends RST_STREAM(INTERNAL_ERROR).
        setTimeout(() => stream.destroy(new Error('server gives up')), 50);
        return;
      }
      // /client-cancels: a slow stream the client gives up on.
      stream.respond({ ':status': 200 });
      stream.write('first');
    });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const reset = await h2Request(session, { ':path': '/server-resets' });
    assert.equal(reset.body.toString(), 'partial');
    const req = session.request({ ':path': '/client-cancels' });
    req.on('error', () => {});
    await new Promise((r) => req.once('data', r));
    req.close(http2.constants.NGHTTP2_CANCEL);
    await new Promise((r) => req.once('close', r));
    // The tap reads the reset before the peers see the connection close.
    await new Promise((r) => setTimeout(r, 100));
    session.close();
    const har = await rec.finish();
    const s = byPath(har.log.entries, '/server-resets')!;
    assert.equal(s._bb!.aborted, 'upstream');
    assert.equal(s._bb!.reset, 'INTERNAL_ERROR');
    assert.equal(s.response.content.text, 'partial');
    const c = byPath(har.log.entries, '/client-cancels')!;
    assert.equal(c._bb!.aborted, 'client');
    assert.equal(c._bb!.reset, 'CANCEL');
  });

  it('SSE over h2 reaches the client while the stream is open and is recorded as _eventSourceMessages', async () => {
    let send!: (s: string) => void;
    let finish!: () => void;
    const server = await h2Server(cleanups, (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'text/event-stream' });
      send = (s) => stream.write(s);
      finish = () => stream.end();
    });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const req = session.request({ ':path': '/events' });
    let got = '';
    req.on('data', (c: Buffer) => (got += c.toString()));
    await new Promise((r) => req.once('response', r));
    send('event: tick\ndata: 1\n\n');
    for (let i = 0; i < 200 && !got.includes('data: 1'); i++) await new Promise((r) => setTimeout(r, 10));
    assert.match(got, /data: 1/, 'the first event arrived before the stream ended');
    send('data: 2\n\n');
    finish();
    await new Promise((r) => req.once('close', r));
    session.close();
    const har = await rec.finish();
    const e = byPath(har.log.entries, '/events')!;
    assert.deepEqual(e._eventSourceMessages!.map((m) => [m.eventName, m.data]), [['tick', '1'], ['message', '2']]);
  });

  it('graceful stop waits for an h2 stream under way', async () => {
    let finish!: () => void;
    const server = await h2Server(cleanups, (stream) => {
      stream.respond({ ':status': 200 });
      stream.write('a');
      finish = () => stream.end('b');
    });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const result = h2Request(session, { ':path': '/slow' });
    for (let i = 0; i < 200 && !finish; i++) await new Promise((r) => setTimeout(r, 10));
    const closing = rec.cap.close(5_000);
    setTimeout(() => finish(), 200);
    const r = await result;
    assert.equal(r.body.toString(), 'ab');
    await closing;
    const har = await rec.finish();
    const e = byPath(har.log.entries, '/slow')!;
    assert.equal(e._bb!.aborted, undefined);
    assert.equal(e.response.content.text, 'ab');
  });

  it('a stopping proxy tells its h2 client with a graceful GOAWAY: the stream under way finishes, no new one is opened', async () => {
    let finish!: () => void;
    let streams = 0;
    const server = await h2Server(cleanups, (stream) => {
      streams++;
      stream.respond({ ':status': 200 });
      stream.write('a');
      finish = () => stream.end('b');
    });
    const rec = await record(cleanups, server.url);
    const { session, wire } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const result = h2Request(session, { ':path': '/slow' });
    for (let i = 0; i < 200 && !finish; i++) await new Promise((r) => setTimeout(r, 10));
    const goaway = once(session, 'goaway') as Promise<[number, number, Buffer]>;
    const closing = rec.cap.close(10_000);
    try {
      // Told before its stream ends (the old proxy only ended the connection once it was idle).
      const told = await Promise.race([goaway, closing.then(() => undefined)]);
      assert.ok(told, 'the client got no GOAWAY while its stream was under way');
      const [code, lastStreamId, debug] = told;
      assert.equal(code, http2.constants.NGHTTP2_NO_ERROR);
      assert.equal(lastStreamId, 2 ** 31 - 1, 'the graceful form: no stream the client opened is refused');
      assert.match(debug.toString(), /proxy is stopping/);
      // node:http2 opens no stream on a session told to go away.
      assert.throws(() => session.request({ ':path': '/after' }), { code: 'ERR_HTTP2_GOAWAY_SESSION' });
    } finally {
      // The stream ends whatever was asserted (an open one holds the server's cleanup).
      finish();
    }
    const r = await result;
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'ab');
    await closing;
    assert.equal(streams, 1);
    // bb's frame went to the client between whole frames of the server's: every frame the client read is whole.
    assert.ok(frameTypes(Buffer.concat(wire.received)).includes(T.GOAWAY));
    const har = await rec.finish();
    assert.deepEqual(har.log.entries.map((e) => new URL(e.request.url).pathname), ['/slow']);
    assert.equal(har.log.entries[0]!._bb!.aborted, undefined);
  });
});

// WebSocket over HTTP/2 (RFC 8441): a node:http2 server that enables the
// extended CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL), a node:http2 client
// that opens a stream with `:method CONNECT` and `:protocol websocket`. After
// the 200 the stream's DATA are WebSocket frames: the entry is a WebSocket
// with its messages in order both ways, the DATA cross unchanged, and a
// refused CONNECT (a 4xx) stays an ordinary exchange.
describe('WebSocket over HTTP/2 (RFC 8441) through a recording bb', () => {
  // Echoes each frame of /chat, a text frame's payload upper-cased (its FIN as it came).
  const echoChat = () =>
    h2WebSocketServer(cleanups, (f) => wsFrame({ opcode: f.opcode, fin: f.fin, payload: f.opcode === OP.text ? f.payload.toString().toUpperCase() : f.payload }), { accept: (h) => h[':path'] === '/chat' });

  it('records the stream as a WebSocket: every message both ways in order, the close, the bytes unchanged', async () => {
    const server = await echoChat();
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    // The client may send :protocol only once the server's SETTINGS (relayed by bb unchanged) allowed it.
    const [settings] = (await once(session, 'remoteSettings')) as [http2.Settings];
    assert.equal(settings.enableConnectProtocol, true);
    const { stream, head } = await openH2WebSocket(session, { ':path': '/chat', ':authority': `127.0.0.1:${rec.port}`, 'sec-websocket-version': '13' });
    assert.equal(head[':status'], 200);
    const received = streamBytes(stream);
    // A text message, a binary one, a text message in two fragments cut across DATA frames, then the close.
    const sent = [
      wsFrame({ opcode: OP.text, payload: 'hello', mask: true }),
      wsFrame({ opcode: OP.binary, payload: Buffer.from([0, 1, 2, 255]), mask: true }),
      Buffer.concat([wsFrame({ opcode: OP.text, payload: 'frag', fin: false, mask: true }), wsFrame({ opcode: OP.continuation, payload: 'mented', mask: true })]),
    ];
    for (const bytes of sent) stream.write(bytes);
    const close = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('done')]);
    stream.end(wsFrame({ opcode: OP.close, payload: close, mask: true }));
    const back = parseFrames(await received);
    assert.deepEqual(back.frames.map((f) => [f.opcode, f.payload.toString('hex')]), [
      [OP.text, Buffer.from('HELLO').toString('hex')],
      [OP.binary, '000102ff'],
      [OP.text, Buffer.from('FRAG').toString('hex')],
      [OP.continuation, Buffer.from('mented').toString('hex')],
      [OP.close, close.toString('hex')],
    ]);

    const har = await rec.finish();
    assert.equal(har.log.entries.length, 1);
    const e = har.log.entries[0]!;
    assert.equal(e._resourceType, 'websocket');
    assert.equal(e.request.method, 'CONNECT');
    assert.equal(e.request.httpVersion, 'HTTP/2.0');
    assert.equal(e.response.status, 200);
    assert.equal(e.request.headers.find((h) => h.name === ':protocol')?.value, 'websocket');
    const messages = (e._webSocketMessages ?? []).map((m) => [m.type, m.opcode, m.opcode === 2 ? Buffer.from(m.data, 'base64').toString('hex') : m.data]);
    // Echoes follow what they answer; the server's close answers the client's.
    assert.deepEqual(messages.filter((m) => m[0] === 'send').map((m) => m.slice(1)), [[1, 'hello'], [2, '000102ff'], [1, 'fragmented'], [8, messages.find((m) => m[0] === 'send' && m[1] === 8)![2]]]);
    assert.deepEqual(messages.filter((m) => m[0] === 'receive' && m[1] !== 8).map((m) => m.slice(1)), [[1, 'HELLO'], [2, '000102ff'], [1, 'FRAGmented']]);
    const closes = (e._webSocketMessages ?? []).filter((m) => m.opcode === 8).map((m) => [m.type, (m._bb as { code?: number; reason?: string }).code, (m._bb as { reason?: string }).reason]);
    assert.deepEqual(closes, [['send', 1000, 'done'], ['receive', 1000, 'done']]);
    // bb frames names it by its exchange, as a gRPC call: many WebSockets may share one h2 connection.
    assert.deepEqual(wsConnections(har).map((c) => [c.id, c.messages.length]), [[`#${e._bb!.seq}`, 8]]);
  });

  it('permessage-deflate negotiated in the stream\'s headers: compressed messages both ways are recorded inflated', async () => {
    const inflate = (payload: Buffer) => inflateRawSync(Buffer.concat([payload, Buffer.from([0, 0, 0xff, 0xff])]), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const server = await h2WebSocketServer(cleanups, (f) => wsFrame({ opcode: OP.text, rsv1: true, payload: deflatePayload(`echo ${inflate(f.payload)}`) }), {
      answer: { 'sec-websocket-extensions': 'permessage-deflate; server_no_context_takeover; client_no_context_takeover' },
    });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const { stream } = await openH2WebSocket(session, { ':path': '/z', ':authority': `127.0.0.1:${rec.port}`, 'sec-websocket-version': '13', 'sec-websocket-extensions': 'permessage-deflate; client_no_context_takeover; server_no_context_takeover' });
    const answers = streamBytes(stream);
    stream.write(wsFrame({ opcode: OP.text, rsv1: true, payload: deflatePayload('squeeze '.repeat(20)), mask: true }));
    await new Promise((r) => setTimeout(r, 30));
    stream.end(wsFrame({ opcode: OP.close, payload: Buffer.from([0x03, 0xe8]), mask: true }));
    await answers;
    const har = await rec.finish();
    const text = (har.log.entries[0]!._webSocketMessages ?? []).filter((m) => m.opcode === 1).map((m) => [m.type, m.data, (m._bb as { compressed?: boolean }).compressed]);
    assert.deepEqual(text, [['send', 'squeeze '.repeat(20), true], ['receive', `echo ${'squeeze '.repeat(20)}`, true]]);
  });

  it('a refused extended CONNECT is an ordinary exchange with its answer', async () => {
    const server = await echoChat();
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const { stream, head } = await openH2WebSocket(session, { ':path': '/nowhere', ':authority': `127.0.0.1:${rec.port}` });
    assert.equal(head[':status'], 404);
    assert.equal((await streamBytes(stream)).toString(), 'no such socket');
    const har = await rec.finish();
    const e = har.log.entries[0]!;
    assert.notEqual(e._resourceType, 'websocket');
    assert.equal(e._webSocketMessages, undefined);
    assert.equal(e.response.status, 404);
    assert.equal(e.response.content.text, 'no such socket');
  });
});
