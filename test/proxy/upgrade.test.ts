// The WebSocket tap inside bb's own proxy after the 101: facts on the bus,
// bytes intact at both ends. Then invalid WebSocket frames in each direction:
// the proxy is a tap, never a relay, so both ends get exactly the bytes the
// other sent, the first message is recorded, the bad frame becomes an error
// row (opcode -1) in the HAR, and other connections are unaffected.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import crypto from 'node:crypto';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import { startProxy, FactBus, type Fact, type RunningProxy } from '../../proxy/index.js';
import { rawClient } from '../helpers/raw.js';
import { scriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { OP, afterHead, deflatePayload, parseFrames, upgradeRequest, upgradeResponse, wsFrame, wsKey } from '../helpers/ws-frames.js';
import { Cleanups } from '../helpers/cleanups.js';
import { h2Client, h2WebSocketServer, openH2WebSocket, streamBytes } from '../helpers/h2-peers.js';
import { Steps } from '../helpers/steps.js';
import { alongside, echoServer, record, waitUntil, type Recording } from '../helpers/recording.js';
import type { Har } from '../../capture/har.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), `timed out waiting for ${what}`);
}

describe('the WebSocket tap in the proxy', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });
  async function proxyTo(port: number): Promise<{ proxy: RunningProxy; facts: Fact[] }> {
    const bus = new FactBus();
    const facts: Fact[] = [];
    bus.on((f) => facts.push(f));
    const proxy = await startProxy({ target: `http://127.0.0.1:${port}`, bus });
    cleanups.push(() => proxy.close(0));
    return { proxy, facts };
  }

  it('records a compressed echo with the negotiated parameters', async () => {
    const deflate = { threshold: 0, clientNoContextTakeover: true, serverMaxWindowBits: 10 };
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: deflate });
    await once(wss, 'listening');
    cleanups.push(() => new Promise((done) => wss.close(() => done())));
    wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
    const { proxy, facts } = await proxyTo((wss.address() as net.AddressInfo).port);
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/chat`, { perMessageDeflate: deflate });
    await once(ws, 'open');
    const got: string[] = [];
    ws.on('message', (d) => got.push(d.toString()));
    for (let i = 0; i < 5; i++) ws.send(`message ${i} ${'abc'.repeat(100)}`);
    await until(() => got.length === 5, 'the echoes');
    ws.close(1000, 'done');
    await once(ws, 'close');
    await until(() => facts.some((f) => f.type === 'upgrade-closed'), 'upgrade-closed');
    const msgs = facts.filter((f) => f.type === 'ws-message');
    const texts = (direction: string) => msgs.filter((m) => m.direction === direction && m.opcode === 1).map((m) => m.data.toString());
    const expected = Array.from({ length: 5 }, (_, i) => `message ${i} ${'abc'.repeat(100)}`);
    assert.deepEqual(texts('send'), expected);
    assert.deepEqual(texts('receive'), expected);
    assert.ok(msgs.filter((m) => m.opcode === 1).every((m) => m.compressed));
    const closed = facts.find((f) => f.type === 'upgrade-closed');
    assert.deepEqual(closed && [closed.code, closed.reason, closed.by], [1000, 'done', 'client']);
    assert.equal(facts.filter((f) => f.type === 'ws-error').length, 0);
  });

  it('records a frame glued to the 101 and an invalid frame, and both ends get every byte', async () => {
    // A raw server: 101 + a good frame in one write; later a bad frame, then a good one.
    const good = Buffer.from('810548656c6c6f', 'hex');
    const bad = Buffer.from('830000', 'hex');
    const fromClient: Buffer[] = [];
    const raw = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', (req: Buffer) => {
        const key = /sec-websocket-key: *(\S+)/i.exec(req.toString('latin1'))![1]!;
        const accept = crypto.createHash('sha1').update(key + GUID).digest('base64');
        const head = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`;
        socket.write(Buffer.concat([Buffer.from(head, 'latin1'), good]));
        socket.on('data', (c: Buffer) => {
          fromClient.push(c);
          socket.write(Buffer.concat([bad, good]));
        });
      });
    });
    raw.listen(0, '127.0.0.1');
    await once(raw, 'listening');
    cleanups.push(() => new Promise((done) => raw.close(() => done())));
    const { proxy, facts } = await proxyTo((raw.address() as net.AddressInfo).port);

    const client = net.connect(proxy.port, '127.0.0.1');
    client.on('error', () => {});
    cleanups.push(() => void client.destroy());
    await once(client, 'connect');
    const received: Buffer[] = [];
    client.on('data', (c: Buffer) => received.push(c));
    client.write(
      'GET /raw HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await until(() => Buffer.concat(received).includes(good), 'the glued frame');
    const masked = Buffer.from('818537fa213d7f9f4d5158', 'hex');
    client.write(masked);
    await until(() => Buffer.concat(received).toString('latin1').endsWith(Buffer.concat([bad, good]).toString('latin1')), 'the later frames');
    await until(() => facts.some((f) => f.type === 'ws-error'), 'the error');
    const all = Buffer.concat(received);
    const tail = all.subarray(all.indexOf('\r\n\r\n') + 4);
    assert.deepEqual(tail, Buffer.concat([good, bad, good]), 'the client got the exact bytes');
    assert.deepEqual(Buffer.concat(fromClient), masked, 'the server got the exact bytes');
    const msgs = facts.filter((f) => f.type === 'ws-message');
    assert.deepEqual(msgs.map((m) => [m.direction, m.data.toString()]).sort(), [['receive', 'Hello'], ['send', 'Hello']]);
    const errors = facts.filter((f) => f.type === 'ws-error');
    assert.deepEqual(errors.map((e) => [e.direction, e.code]), [['receive', 'WS_ERR_INVALID_OPCODE']]);
  });
});

/** One invalid frame, built for a direction (masked from the client, unmasked from the server). */
interface BadFrame {
  name: string;
  frame: (fromClient: boolean) => Buffer;
  /** Negotiate permessage-deflate for this case. */
  deflate?: boolean;
  /** The tap records it as a message on purpose (the peers judge it), so no error row. */
  tolerated?: boolean;
  /** The error row's text (ws's receiver message, or zlib's), by direction where it differs. */
  reason?: string | { send: string; receive: string };
}

const badFrames: BadFrame[] = [
  { name: 'a reserved data opcode (3)', reason: 'Invalid WebSocket frame: invalid opcode 3', frame: (m) => wsFrame({ opcode: 3, payload: 'x', mask: m }) },
  { name: 'a reserved control opcode (11)', reason: 'Invalid WebSocket frame: invalid opcode 11', frame: (m) => wsFrame({ opcode: 11, payload: 'x', mask: m }) },
  { name: 'RSV2 set', reason: 'Invalid WebSocket frame: RSV2 and RSV3 must be clear', frame: (m) => wsFrame({ payload: 'x', rsv2: true, mask: m }) },
  { name: 'RSV3 set', reason: 'Invalid WebSocket frame: RSV2 and RSV3 must be clear', frame: (m) => wsFrame({ payload: 'x', rsv3: true, mask: m }) },
  { name: 'RSV1 without a negotiated deflate', reason: 'Invalid WebSocket frame: RSV1 must be clear', frame: (m) => wsFrame({ payload: 'x', rsv1: true, mask: m }) },
  { name: 'the wrong masking for its direction', reason: { send: 'Invalid WebSocket frame: MASK must be set', receive: 'Invalid WebSocket frame: MASK must be clear' }, frame: (m) => wsFrame({ payload: 'x', mask: !m }) },
  { name: 'a fragmented ping', reason: 'Invalid WebSocket frame: FIN must be set', frame: (m) => wsFrame({ opcode: OP.ping, payload: 'x', fin: false, mask: m }) },
  { name: 'a ping over 125 bytes', reason: 'Invalid WebSocket frame: invalid payload length 126', frame: (m) => wsFrame({ opcode: OP.ping, payload: Buffer.alloc(200, 1), mask: m }) },
  { name: 'a continuation with nothing to continue', reason: 'Invalid WebSocket frame: invalid opcode 0', frame: (m) => wsFrame({ opcode: OP.continuation, payload: 'x', mask: m }) },
  // ws-tap skips UTF-8 validation by design: the text is recorded, the peer decides (1007).
  { name: 'invalid UTF-8 in a text message', tolerated: true, frame: (m) => wsFrame({ payload: Buffer.from([0xc3, 0x28]), mask: m }) },
  { name: 'a close frame with a 1-byte payload', reason: 'Invalid WebSocket frame: invalid payload length 1', frame: (m) => wsFrame({ opcode: OP.close, payload: Buffer.from([3]), mask: m }) },
  {
    // A length a number cannot hold; a long message bb can count (2^40) is no error: its first bytes are kept.
    name: 'a payload length past 2^53 - 1 (2^60 announced)',
    reason: 'Unsupported WebSocket frame: payload length > 2^53 - 1',
    frame: (m) => wsFrame({ opcode: OP.binary, payload: Buffer.alloc(8), lengthOverride: 2 ** 60, mask: m }),
  },
  {
    name: 'deflate data that does not inflate',
    reason: 'invalid block type',
    deflate: true,
    frame: (m) => wsFrame({ payload: Buffer.from('ffffffff0000deadbeef', 'hex'), rsv1: true, mask: m }),
  },
];

const GOOD_FIRST = 'first message';

function goodFirst(fromClient: boolean, deflate: boolean): Buffer {
  return deflate ? wsFrame({ payload: deflatePayload(GOOD_FIRST), rsv1: true, mask: fromClient }) : wsFrame({ payload: GOOD_FIRST, mask: fromClient });
}

describe('invalid WebSocket frames, in each direction', () => {
  const cleanups = new Cleanups();
  let rec: Recording;
  let upstream: ScriptedUpstream;
  let goodTotal = 0;
  // What each case sent, by path, for the HAR checks.
  const cases: Array<{ path: string; direction: 'send' | 'receive'; bad: BadFrame }> = [];
  const serverFrames = new Map<number, Buffer>();
  let good: { url: string };

  before(async () => {
    good = await echoServer(cleanups);
    // Connection i: read the upgrade head, answer 101 (+ frames when the case says), then wait for the client to end.
    upstream = await scriptedUpstream((i) => [
      { wait: 'head' },
      {
        call: (s) => {
          const head = upstream.received(i).toString('latin1');
          const key = /Sec-WebSocket-Key: (\S+)/i.exec(head)?.[1] ?? '';
          const deflate = /permessage-deflate/i.test(head);
          s.write(Buffer.concat([Buffer.from(upgradeResponse(key, deflate ? 'permessage-deflate' : undefined), 'latin1'), serverFrames.get(i) ?? Buffer.alloc(0)]));
        },
      },
      { wait: 'client-end' },
      { close: true },
    ]);
    cleanups.add(() => upstream.close());
    rec = await record(cleanups, upstream.url);
  });
  after(() => cleanups.run());

  // The good client needs an upstream that answers HTTP: a second recording proxy would split the HAR,
  // so the good traffic runs through its own capture in front of the echo server.
  let goodRec: Recording;
  before(async () => {
    goodRec = await record(cleanups, good.url);
  });

  // Each case is sent once, by its own test or by the HAR test, which needs them all.
  const steps = new Steps();
  for (const direction of ['send', 'receive'] as const) {
    for (const bad of badFrames) {
      it(`${direction === 'send' ? 'client → server' : 'server → client'}: ${bad.name} reaches the peer byte for byte and is an error row`, steps.add(async () => {
        goodTotal += await alongside(goodRec.port, async () => {
          const index = upstream.connections();
          const path = `/ws/${direction}/${cases.length}`;
          cases.push({ path, direction, bad });
          const fromClient = direction === 'send';
          const frames = Buffer.concat([goodFirst(fromClient, !!bad.deflate), bad.frame(fromClient), wsFrame({ payload: 'after', mask: fromClient })]);
          if (!fromClient) serverFrames.set(index, frames);
          const c = await rawClient(rec.port);
          const key = wsKey();
          c.send(upgradeRequest(path, 'x', key, bad.deflate ? 'permessage-deflate' : undefined));
          await waitUntil(() => c.bytes().includes('\r\n\r\n'), 'the 101');
          assert.match(c.bytes().toString('latin1'), /^HTTP\/1\.1 101 /);
          if (fromClient) {
            c.send(frames);
            await waitUntil(() => afterHead(upstream.received(index)).length >= frames.length, 'the frames at the server');
            assert.ok(afterHead(upstream.received(index)).equals(frames), 'the server got the exact bytes');
          } else {
            await waitUntil(() => afterHead(c.bytes()).length >= frames.length, 'the frames at the client');
            assert.ok(afterHead(c.bytes()).equals(frames), 'the client got the exact bytes');
          }
          c.socket.end();
          await c.closed;
        });
      }));
    }
  }

  it('records each connection: the first message, then one error row for the bad direction', async (t) => {
    await steps.runAll(t);
    const har: Har = await rec.finish();
    for (const { path, direction, bad } of cases) {
      const entry = har.log.entries.find((e) => e.request.url.endsWith(path));
      assert.ok(entry, `${path}: an entry`);
      assert.equal(entry._resourceType, 'websocket', path);
      const msgs = entry._webSocketMessages ?? [];
      const first = msgs.find((m) => m.type === direction);
      assert.ok(first, `${bad.name} (${direction}): the good first message is recorded`);
      assert.equal(first.data, GOOD_FIRST, `${bad.name} (${direction})`);
      const errors = msgs.filter((m) => m.type === 'error');
      if (bad.tolerated) {
        assert.equal(errors.length, 0, bad.name);
        assert.deepEqual(msgs.filter((m) => m.type === direction).map((m) => m.data).slice(-1), ['after']);
        continue;
      }
      assert.equal(errors.length, 1, `${bad.name} (${direction}): one error row, got ${JSON.stringify(msgs)}`);
      assert.equal(errors[0]!.opcode, -1);
      assert.equal(errors[0]!._bb?.direction, direction, bad.name);
      assert.equal(errors[0]!.data, typeof bad.reason === 'string' ? bad.reason : bad.reason![direction], `${bad.name} (${direction}): the error row says why`);
      // After the error that direction is no longer parsed: "after" is not a message of that direction.
      assert.equal(msgs.filter((m) => m.type === direction && m.data === 'after').length, 0);
    }
    const goodHar = await goodRec.finish();
    assert.equal(goodHar.log.entries.length, goodTotal, 'every good request recorded once');
  });
});

// A caller's own UpgradeTap (ProxyOptions.tap) reads the upgraded bytes instead of the WebSocket tap: the proxy
// reports the connection's end itself (upgrade-closed, by 'none'). It reported none before, so every such
// connection stayed in the proxy's count of open upgrades and close() waited out its grace. A WebSocket over an
// HTTP/2 stream (RFC 8441) goes to the caller's tap too, fed the stream's DATA (it went to the built-in tap).
describe("a caller's own upgrade tap", () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  /** A proxy to `target` whose tap keeps what it is fed, by direction, and the bus's facts. */
  async function tappedProxy(target: string): Promise<{ proxy: RunningProxy; facts: Fact[]; fed: { client: Buffer[]; upstream: Buffer[] }; sockets: boolean[] }> {
    const bus = new FactBus();
    const facts: Fact[] = [];
    bus.on((f) => facts.push(f));
    const fed = { client: [] as Buffer[], upstream: [] as Buffer[] };
    const sockets: boolean[] = [];
    const proxy = await startProxy({
      target,
      bus,
      tap: ({ client, upstream }) => {
        sockets.push(client !== undefined && upstream !== undefined);
        return { fromClient: (c) => fed.client.push(Buffer.from(c)), fromUpstream: (c) => fed.upstream.push(Buffer.from(c)) };
      },
    });
    cleanups.add(() => proxy.close(0));
    return { proxy, facts, fed, sockets };
  }

  it('HTTP/1.1: fed every byte both ways; the end is upgrade-closed, no WebSocket facts', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(wss, 'listening');
    cleanups.add(() => new Promise<void>((done) => wss.close(() => done())));
    wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${data}`)));
    const { proxy, facts, fed, sockets } = await tappedProxy(`http://127.0.0.1:${(wss.address() as net.AddressInfo).port}`);
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/chat`, { perMessageDeflate: false });
    await once(ws, 'open');
    ws.send('hello');
    await once(ws, 'message');
    ws.close(1000);
    await once(ws, 'close');
    await until(() => facts.some((f) => f.type === 'upgrade-closed'), 'upgrade-closed');
    assert.deepEqual(sockets, [true]);
    assert.deepEqual(facts.filter((f) => f.type === 'upgrade-closed').map((f) => f.type === 'upgrade-closed' && f.by), ['none']);
    assert.equal(facts.filter((f) => f.type === 'ws-message').length, 0);
    // What the tap was fed is the frames themselves: the client's masked text, the server's echo and both closes.
    const fromServer = parseFrames(Buffer.concat(fed.upstream)).frames.map((f) => [f.opcode, f.payload.toString()]);
    assert.deepEqual(fromServer, [[OP.text, 'echo hello'], [OP.close, fromServer[1]![1]]]);
    assert.deepEqual(parseFrames(Buffer.concat(fed.client)).frames.map((f) => f.opcode), [OP.text, OP.close]);
  });

  it('a WebSocket over an HTTP/2 stream: fed the stream\'s DATA, no sockets; the end is upgrade-closed', async () => {
    const server = await h2WebSocketServer(cleanups, (f) => wsFrame({ opcode: f.opcode, payload: `echo ${f.payload}` }));
    const { proxy, facts, fed, sockets } = await tappedProxy(server.url);
    const { session } = h2Client(proxy.url, cleanups);
    const { stream, head } = await openH2WebSocket(session, { ':path': '/chat', ':authority': new URL(proxy.url).host, 'sec-websocket-version': '13' });
    assert.equal(head[':status'], 200);
    const answers = streamBytes(stream);
    stream.write(wsFrame({ opcode: OP.text, payload: 'hello', mask: true }));
    stream.end(wsFrame({ opcode: OP.close, payload: Buffer.from([0x03, 0xe8]), mask: true }));
    await answers;
    await until(() => facts.some((f) => f.type === 'upgrade-closed'), 'upgrade-closed');
    assert.deepEqual(sockets, [false]);
    assert.equal(facts.filter((f) => f.type === 'ws-message').length, 0);
    assert.deepEqual(parseFrames(Buffer.concat(fed.client)).frames.map((f) => [f.opcode, f.payload.toString('hex')]), [[OP.text, Buffer.from('hello').toString('hex')], [OP.close, '03e8']]);
    assert.deepEqual(parseFrames(Buffer.concat(fed.upstream)).frames.map((f) => [f.opcode, f.payload.toString('hex')]), [[OP.text, Buffer.from('echo hello').toString('hex')], [OP.close, '03e8']]);
    session.close();
  });
});
