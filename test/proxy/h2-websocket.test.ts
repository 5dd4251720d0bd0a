// WebSocket over HTTP/2 (RFC 8441): a node:http2 server that enables the
// extended CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL), a node:http2 client
// that opens a stream with `:method CONNECT` and `:protocol websocket`,
// through a recording bb (h2c with prior knowledge). After the 200 the
// stream's DATA are WebSocket frames: the entry is a WebSocket with its
// messages in order both ways, the DATA cross unchanged, and a refused
// CONNECT (a 4xx) stays an ordinary exchange.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type http2 from 'node:http2';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { h2Client, h2Server } from '../helpers/h2-peers.js';
import { deflatePayload, OP, parseFrames, wsFrame } from '../helpers/ws-frames.js';
import { constants as zlibConstants, inflateRawSync } from 'node:zlib';
import { wsConnections } from '../../inspect/model.js';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { replayCapture } from '../../scenario/index.js';
import { diffCaptures, renderText } from '../../diff/index.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

/** Answers an extended CONNECT for a WebSocket with 200 and echoes each frame (a text frame's payload upper-cased); a close ends it. */
function echoOverStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  if (headers[':method'] !== 'CONNECT' || headers[':protocol'] !== 'websocket' || headers[':path'] !== '/chat') {
    stream.respond({ ':status': 404 });
    stream.end('no such socket');
    return;
  }
  stream.respond({ ':status': 200 });
  let pending: Buffer = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    const { frames, rest } = parseFrames(Buffer.concat([pending, chunk]));
    pending = rest;
    for (const f of frames) {
      if (f.opcode === OP.close) stream.end(wsFrame({ opcode: OP.close, payload: f.payload }));
      else stream.write(wsFrame({ opcode: f.opcode, fin: f.fin, payload: f.opcode === OP.text ? f.payload.toString().toUpperCase() : f.payload }));
    }
  });
}

/** Collects what arrives on a client stream until it ends. */
function collect(stream: http2.ClientHttp2Stream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => stream.on('close', () => resolve(Buffer.concat(chunks))));
}

describe('WebSocket over HTTP/2 (RFC 8441) through a recording bb', () => {
  it('records the stream as a WebSocket: every message both ways in order, the close, the bytes unchanged', async () => {
    const server = await h2Server(cleanups, echoOverStream, { enableConnectProtocol: true });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    // The client may send :protocol only once the server's SETTINGS (relayed by bb unchanged) allowed it.
    const [settings] = (await once(session, 'remoteSettings')) as [http2.Settings];
    assert.equal(settings.enableConnectProtocol, true);
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/chat', ':authority': `127.0.0.1:${rec.port}`, 'sec-websocket-version': '13' }, { endStream: false });
    const [head] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
    assert.equal(head[':status'], 200);
    const received = collect(stream);
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
    const server = await h2Server(cleanups, (stream) => {
      stream.respond({ ':status': 200, 'sec-websocket-extensions': 'permessage-deflate; server_no_context_takeover; client_no_context_takeover' });
      stream.on('data', (chunk: Buffer) => {
        for (const f of parseFrames(chunk).frames) {
          if (f.opcode === OP.close) stream.end(wsFrame({ opcode: OP.close, payload: f.payload }));
          else stream.write(wsFrame({ opcode: OP.text, rsv1: true, payload: deflatePayload(`echo ${inflateRawSync(Buffer.concat([f.payload, Buffer.from([0, 0, 0xff, 0xff])]), { finishFlush: zlibConstants.Z_SYNC_FLUSH })}`) }));
        }
      });
    }, { enableConnectProtocol: true });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    await once(session, 'remoteSettings');
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/z', ':authority': `127.0.0.1:${rec.port}`, 'sec-websocket-version': '13', 'sec-websocket-extensions': 'permessage-deflate; client_no_context_takeover; server_no_context_takeover' }, { endStream: false });
    await once(stream, 'response');
    const answers = collect(stream);
    stream.write(wsFrame({ opcode: OP.text, rsv1: true, payload: deflatePayload('squeeze '.repeat(20)), mask: true }));
    await new Promise((r) => setTimeout(r, 30));
    stream.end(wsFrame({ opcode: OP.close, payload: Buffer.from([0x03, 0xe8]), mask: true }));
    await answers;
    const har = await rec.finish();
    const text = (har.log.entries[0]!._webSocketMessages ?? []).filter((m) => m.opcode === 1).map((m) => [m.type, m.data, (m._bb as { compressed?: boolean }).compressed]);
    assert.deepEqual(text, [['send', 'squeeze '.repeat(20), true], ['receive', `echo ${'squeeze '.repeat(20)}`, true]]);
  });

  it('a refused extended CONNECT is an ordinary exchange with its answer', async () => {
    const server = await h2Server(cleanups, echoOverStream, { enableConnectProtocol: true });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    await once(session, 'remoteSettings');
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/nowhere', ':authority': `127.0.0.1:${rec.port}` }, { endStream: false });
    const [head] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
    assert.equal(head[':status'], 404);
    assert.equal((await collect(stream)).toString(), 'no such socket');
    const har = await rec.finish();
    const e = har.log.entries[0]!;
    assert.notEqual(e._resourceType, 'websocket');
    assert.equal(e._webSocketMessages, undefined);
    assert.equal(e.response.status, 404);
    assert.equal(e.response.content.text, 'no such socket');
  });
});

// The capture of a WebSocket over HTTP/2, replayed against a server that speaks WebSocket over HTTP/1.1 (ws), diffs
// as the same conversation: the CONNECT pairs with the GET that upgrades, its 200 with the 101, the handshake's key
// and accept (HTTP/1.1 only, RFC 8441 §5) are not compared across the two; a changed message is a finding.
describe('a WebSocket over HTTP/2 replayed over HTTP/1.1', () => {
  it('bb replay sends its messages as a WebSocket over HTTP/1.1 and bb diff pairs the two: MATCH, then the changed answer', async () => {
    const server = await h2Server(cleanups, (stream, headers) => {
      stream.respond({ ':status': 200 });
      stream.on('data', (chunk: Buffer) => {
        for (const f of parseFrames(chunk).frames) {
          if (f.opcode === OP.close) stream.end(wsFrame({ opcode: OP.close, payload: f.payload }));
          else stream.write(wsFrame({ opcode: f.opcode, payload: `${headers[':path']} got ${f.payload}` }));
        }
      });
    }, { enableConnectProtocol: true });
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    await once(session, 'remoteSettings');
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/chat', ':authority': `127.0.0.1:${rec.port}`, 'sec-websocket-version': '13' }, { endStream: false });
    await once(stream, 'response');
    const answers = collect(stream);
    for (const text of ['one', 'two']) {
      stream.write(wsFrame({ opcode: OP.text, payload: text, mask: true }));
      await new Promise((r) => setTimeout(r, 30));
    }
    stream.end(wsFrame({ opcode: OP.close, payload: Buffer.from([0x03, 0xe8]), mask: true }));
    await answers;
    session.close();
    await rec.finish();
    const oldHar = join(rec.dir, 'cap.har');

    // The same service over HTTP/1.1, its 101 with a Date as node:http2 sends one; the second, changed.
    const h1 = async (changed: boolean): Promise<string> => {
      const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
      cleanups.add(() => new Promise<void>((r) => wss.close(() => r())));
      wss.on('headers', (h) => h.push(`Date: ${new Date().toUTCString()}`));
      wss.on('connection', (ws, req) => ws.on('message', (data) => ws.send(`${req.url} got ${data}${changed ? '!' : ''}`)));
      await once(wss, 'listening');
      return `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    };
    const same = join(rec.dir, 'same.har');
    await replayCapture(oldHar, { target: await h1(false), out: same, bbHome: join(rec.dir, 'home') });
    const matched = await diffCaptures(oldHar, same, {});
    assert.equal(matched.exitCode, 0, renderText(matched, { color: false }));
    const other = join(rec.dir, 'changed.har');
    await replayCapture(oldHar, { target: await h1(true), out: other, bbHome: join(rec.dir, 'home') });
    const changed = await diffCaptures(oldHar, other, {});
    assert.equal(changed.exitCode, 1);
    assert.deepEqual([...new Set(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`))], ['real changed ws.messages[].data'], renderText(changed, { color: false }));
  });
});
