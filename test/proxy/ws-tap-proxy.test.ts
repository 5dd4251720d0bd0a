// The WebSocket tap inside bb's own proxy: facts on the bus, bytes intact at both ends.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import crypto from 'node:crypto';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import { startProxy, FactBus, type Fact, type RunningProxy } from '../../proxy/index.js';

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
