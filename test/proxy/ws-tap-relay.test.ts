// The WebSocket tap on real ws servers and clients, through a tiny raw TCP
// relay written here: it forwards the upgrade, finds where the 101 head ends,
// then pipes both ways and starts the tap, as the proxy does.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import crypto from 'node:crypto';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import type { Fact, WsMessage } from '../../proxy/events.js';
import { tapWebSocket, type WsTap } from '../../proxy/ws-tap.js';

interface Relay {
  port: number;
  facts: Fact[];
  close(): Promise<void>;
}

/** A raw relay to 127.0.0.1:upstreamPort; each connection gets exchange id 1, 2, ... */
async function startRelay(upstreamPort: number): Promise<Relay> {
  const facts: Fact[] = [];
  const sockets = new Set<net.Socket>();
  const taps: WsTap[] = [];
  let nextId = 0;
  const server = net.createServer((client) => {
    const exchangeId = ++nextId;
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    let request = Buffer.alloc(0);
    let clientHead = Buffer.alloc(0);
    const onRequest = (chunk: Buffer): void => {
      upstream.write(chunk);
      request = Buffer.concat([request, chunk]);
      const end = request.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.off('data', onRequest);
      client.pause();
      clientHead = request.subarray(end + 4);
    };
    client.on('data', onRequest);
    let response = Buffer.alloc(0);
    const onResponse = (chunk: Buffer): void => {
      response = Buffer.concat([response, chunk]);
      const end = response.indexOf('\r\n\r\n');
      if (end < 0) return;
      upstream.off('data', onResponse);
      upstream.pause();
      client.write(response);
      const responseHeaders = response
        .subarray(0, end)
        .toString('latin1')
        .split('\r\n')
        .slice(1)
        .flatMap((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon), line.slice(colon + 1).trim()];
        });
      taps.push(
        tapWebSocket({
          exchangeId,
          client,
          upstream,
          clientHead,
          upstreamHead: response.subarray(end + 4),
          responseHeaders,
          emit: (fact) => facts.push(fact),
        }),
      );
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    };
    upstream.on('data', onResponse);
    client.on('close', () => upstream.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    facts,
    async close() {
      for (const t of taps) t.stop();
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), `timed out waiting for ${what}`);
}

const wsMessages = (facts: Fact[], exchangeId?: number) =>
  facts.filter((f): f is WsMessage => f.type === 'ws-message' && (exchangeId === undefined || f.exchangeId === exchangeId));
const closedOf = (facts: Fact[], exchangeId: number) =>
  facts.filter((f) => f.type === 'upgrade-closed' && f.exchangeId === exchangeId);

/** An echo server: every message goes back as it came (text stays text). */
async function startEcho(perMessageDeflate: boolean | object): Promise<WebSocketServer> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate });
  await once(wss, 'listening');
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? '' : data.toString();
      if (text.startsWith('close-from-server:')) ws.close(Number(text.split(':')[1]), 'server says bye');
      else ws.send(data, { binary: isBinary });
    });
  });
  return wss;
}

function connect(port: number, perMessageDeflate: boolean | object): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`, { perMessageDeflate });
  return once(ws, 'open').then(() => ws);
}

/** Collects what a client receives, in order. */
function inbox(ws: WebSocket): Array<{ data: string; binary: boolean }> {
  const got: Array<{ data: string; binary: boolean }> = [];
  ws.on('message', (data: Buffer, binary) => got.push({ data: binary ? data.toString('hex') : data.toString(), binary }));
  return got;
}

describe('tapWebSocket through a raw relay with ws peers', () => {
  const servers: WebSocketServer[] = [];
  const relays: Relay[] = [];
  after(async () => {
    for (const r of relays) await r.close();
    for (const s of servers) await new Promise((done) => s.close(() => done(undefined)));
  });
  async function setup(deflate: boolean | object): Promise<Relay> {
    const wss = await startEcho(deflate);
    servers.push(wss);
    const relay = await startRelay((wss.address() as net.AddressInfo).port);
    relays.push(relay);
    return relay;
  }

  for (const [name, deflate] of [
    ['off', false],
    ['on', { threshold: 0 }],
    ['on with no context takeover and small windows', { threshold: 0, serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10, clientMaxWindowBits: 11 }],
  ] as const) {
    it(`records an echo with compression ${name}: text, binary, fragmented, ping/pong, client close`, async () => {
      const relay = await setup(deflate);
      const ws = await connect(relay.port, deflate);
      const got = inbox(ws);
      const pongs: string[] = [];
      ws.on('pong', (d) => pongs.push(d.toString()));
      ws.send('hello');
      ws.send(Buffer.from([0, 1, 2, 255]));
      ws.send('frag-', { fin: false });
      ws.send('ment-', { fin: false });
      ws.send('ed', { fin: true });
      ws.ping('are you there');
      await until(() => got.length === 3 && pongs.length === 1, 'the echoes');
      ws.close(4000, 'bye');
      await once(ws, 'close');
      await until(() => closedOf(relay.facts, 1).length === 1, 'upgrade-closed');

      const compressed = deflate !== false;
      assert.deepEqual(got, [
        { data: 'hello', binary: false },
        { data: '000102ff', binary: true },
        { data: 'frag-ment-ed', binary: false },
      ]);
      const show = (m: WsMessage) => [m.opcode, m.opcode === 2 || m.opcode === 8 ? m.data.toString('hex') : m.data.toString(), m.frames, m.compressed];
      const send = wsMessages(relay.facts).filter((m) => m.direction === 'send').map(show);
      const receive = wsMessages(relay.facts).filter((m) => m.direction === 'receive').map(show);
      assert.deepEqual(send, [
        [1, 'hello', 1, compressed],
        [2, '000102ff', 1, compressed],
        [1, 'frag-ment-ed', 3, compressed],
        [9, 'are you there', 1, false],
        [8, '0fa0627965', 1, false],
      ]);
      assert.deepEqual(receive, [
        [1, 'hello', 1, compressed],
        [2, '000102ff', 1, compressed],
        [1, 'frag-ment-ed', 1, compressed],
        [10, 'are you there', 1, false],
        [8, '0fa0627965', 1, false],
      ]);
      const closes = wsMessages(relay.facts).filter((m) => m.opcode === 8);
      assert.deepEqual(closes.map((m) => [m.direction, m.closeCode, m.closeReason]), [['send', 4000, 'bye'], ['receive', 4000, 'bye']]);
      const [closed] = closedOf(relay.facts, 1);
      assert.deepEqual(closed, { ...closed, code: 4000, reason: 'bye', by: 'client' });
      assert.equal(relay.facts.filter((f) => f.type === 'ws-error').length, 0);
      // Times follow each sender's order.
      for (const direction of ['send', 'receive']) {
        const times = wsMessages(relay.facts).filter((m) => m.direction === direction).map((m) => m.time);
        assert.deepEqual(times, [...times].sort((a, b) => a - b));
      }
    });
  }

  it('records a close the server sends first, and an abrupt destroy as by none', async () => {
    const relay = await setup(false);
    const first = await connect(relay.port, false);
    first.send('close-from-server:4001');
    await once(first, 'close');
    await until(() => closedOf(relay.facts, 1).length === 1, 'the first close');
    assert.deepEqual(
      (({ code, reason, by }) => ({ code, reason, by }))(closedOf(relay.facts, 1)[0] as { code: number; reason: string; by: string }),
      { code: 4001, reason: 'server says bye', by: 'server' },
    );
    const second = await connect(relay.port, false);
    second.send('then gone');
    await until(() => wsMessages(relay.facts, 2).length === 2, 'the echo');
    second.terminate();
    await until(() => closedOf(relay.facts, 2).length === 1, 'the second close');
    assert.equal((closedOf(relay.facts, 2)[0] as { by: string }).by, 'none');
  });

  it('keeps each sender\'s order over 50 concurrent connections, compressed and not', async () => {
    const plain = await setup(false);
    const packed = await setup({ threshold: 0 });
    const perConnection = 20;
    const clients = await Promise.all(
      Array.from({ length: 50 }, (_, i) => connect(i % 2 ? packed.port : plain.port, i % 2 ? { threshold: 0 } : false)),
    );
    const inboxes = clients.map(inbox);
    clients.forEach((ws, i) => {
      for (let j = 0; j < perConnection; j++) ws.send(`c${i}-m${j}-${'x'.repeat(j * 50)}`);
    });
    await until(() => inboxes.every((got) => got.length === perConnection), 'every echo');
    for (const ws of clients) ws.close(1000);
    await Promise.all(clients.map((ws) => (ws.readyState === WebSocket.CLOSED ? undefined : once(ws, 'close'))));
    for (const relay of [plain, packed]) {
      await until(() => relay.facts.filter((f) => f.type === 'upgrade-closed').length === 25, 'every close');
      assert.equal(relay.facts.filter((f) => f.type === 'ws-error').length, 0);
    }
    // Which connection (client index) each exchange is: read it off the first message.
    for (const relay of [plain, packed]) {
      for (let exchangeId = 1; exchangeId <= 25; exchangeId++) {
        const msgs = wsMessages(relay.facts, exchangeId);
        const client = Number(/^c(\d+)-/.exec(msgs[0]!.data.toString())![1]);
        const expected = Array.from({ length: perConnection }, (_, j) => `c${client}-m${j}-${'x'.repeat(j * 50)}`);
        for (const direction of ['send', 'receive'] as const) {
          const texts = msgs.filter((m) => m.direction === direction && m.opcode === 1).map((m) => m.data.toString());
          assert.deepEqual(texts, expected, `exchange ${exchangeId} ${direction}`);
        }
        assert.deepEqual(inboxes[client]!.map((g) => g.data), expected);
        assert.ok(msgs.filter((m) => m.opcode === 1).every((m) => m.compressed === (relay === packed)));
      }
    }
  });

  it('records a frame glued to the 101 and the client receives it', async () => {
    // A raw server that writes its 101 and a first frame in one write.
    const raw = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', (req: Buffer) => {
        const key = /sec-websocket-key: *(\S+)/i.exec(req.toString('latin1'))![1]!;
        const accept = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
        socket.write(
          Buffer.concat([
            Buffer.from(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`, 'latin1'),
            Buffer.from('810548656c6c6f', 'hex'),
          ]),
        );
      });
    });
    raw.listen(0, '127.0.0.1');
    await once(raw, 'listening');
    const relay = await startRelay((raw.address() as net.AddressInfo).port);
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${relay.port}/`, { perMessageDeflate: false });
      const got = inbox(ws);
      await until(() => got.length === 1, 'the glued frame');
      assert.deepEqual(got, [{ data: 'Hello', binary: false }]);
      assert.deepEqual(wsMessages(relay.facts).map((m) => [m.direction, m.data.toString()]), [['receive', 'Hello']]);
      ws.terminate();
    } finally {
      await relay.close();
      raw.close();
    }
  });
});
