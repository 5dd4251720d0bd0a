// The WebSocket tap fed literal frame bytes through real loopback sockets.
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { harness, type Harness } from './ws-tap-harness.js';
import { Compressor, MASK, wsFrame } from '../helpers/ws-frames.js';

const hex = (s: string) => Buffer.from(s, 'hex');
const deflateHeaders = (value: string) => ['Upgrade', 'websocket', 'Sec-WebSocket-Extensions', value];

let open: Harness[] = [];
afterEach(() => {
  for (const h of open) h.close();
  open = [];
});
async function start(opts?: Parameters<typeof harness>[0]): Promise<Harness> {
  const h = await harness(opts);
  open.push(h);
  return h;
}
function messages(h: Harness) {
  return h.of('ws-message').map((m) => ({
    direction: m.direction,
    opcode: m.opcode,
    data: m.opcode === 1 ? m.data.toString('utf8') : m.data.toString('hex'),
    frames: m.frames,
    compressed: m.compressed,
  }));
}

describe('tapWebSocket', () => {
  it('parses an unmasked text message from the server', async () => {
    const h = await start();
    h.driverServer.write(hex('810548656c6c6f'));
    await h.until(() => h.of('ws-message').length === 1, 'one message');
    assert.deepEqual(messages(h), [{ direction: 'receive', opcode: 1, data: 'Hello', frames: 1, compressed: false }]);
    const [m] = h.of('ws-message');
    assert.equal(m!.exchangeId, 7);
  });

  it('parses a masked text message from the client (RFC 6455 section 5.7)', async () => {
    const h = await start();
    h.driverClient.write(hex('818537fa213d7f9f4d5158'));
    await h.until(() => h.of('ws-message').length === 1, 'one message');
    assert.deepEqual(messages(h), [{ direction: 'send', opcode: 1, data: 'Hello', frames: 1, compressed: false }]);
  });

  it('parses a fragmented message with a ping between its fragments', async () => {
    const h = await start();
    h.driverServer.write(hex('010348656c' + '890548656c6c6f' + '80026c6f'));
    await h.until(() => h.of('ws-message').length === 2, 'two messages');
    assert.deepEqual(messages(h), [
      { direction: 'receive', opcode: 9, data: '48656c6c6f', frames: 1, compressed: false },
      { direction: 'receive', opcode: 1, data: 'Hello', frames: 2, compressed: false },
    ]);
  });

  it('parses a close message spanning two writes', async () => {
    const h = await start();
    h.driverServer.write(hex('880503e8'));
    await new Promise((r) => setTimeout(r, 30));
    h.driverServer.write(Buffer.from('bye'));
    await h.until(() => h.of('ws-message').length === 1, 'the close');
    const [close] = h.of('ws-message');
    assert.equal(close!.opcode, 8);
    assert.equal(close!.closeCode, 1000);
    assert.equal(close!.closeReason, 'bye');
    assert.equal(close!.data.toString('hex'), '03e8627965');
  });

  it('reports an empty close without a code, and pings and pongs with their payloads', async () => {
    const h = await start();
    h.driverClient.write(Buffer.concat([wsFrame({ opcode: 9, payload: 'p', mask: MASK }), wsFrame({ opcode: 8, mask: MASK })]));
    h.driverServer.write(wsFrame({ opcode: 10, payload: 'p' }));
    await h.until(() => h.of('ws-message').length === 3, 'three messages');
    const send = h.of('ws-message').filter((m) => m.direction === 'send');
    assert.deepEqual(send.map((m) => [m.opcode, m.data.toString()]), [[9, 'p'], [8, '']]);
    assert.equal(send[1]!.closeCode, undefined);
    assert.equal(send[1]!.closeReason, undefined);
    const [pong] = h.of('ws-message').filter((m) => m.direction === 'receive');
    assert.deepEqual([pong!.opcode, pong!.data.toString()], [10, 'p']);
  });

  it('parses frames glued to the heads (bytes that came with the request and the 101)', async () => {
    const h = await start({
      clientHead: wsFrame({ opcode: 1, payload: 'from client', mask: MASK }),
      upstreamHead: hex('810548656c6c6f'),
    });
    await h.until(() => h.of('ws-message').length === 2, 'two messages');
    assert.deepEqual(messages(h).map((m) => [m.direction, m.data]).sort(), [['receive', 'Hello'], ['send', 'from client']]);
  });

  it("stamps a message with the arrival of its first frame's first byte", async () => {
    const h = await start();
    const before = performance.timeOrigin + performance.now();
    h.driverServer.write(hex('0103'));
    await new Promise((r) => setTimeout(r, 120));
    const middle = performance.timeOrigin + performance.now();
    h.driverServer.write(Buffer.concat([Buffer.from('Hel'), hex('80026c6f')]));
    await h.until(() => h.of('ws-message').length === 1, 'one message');
    const [m] = h.of('ws-message');
    assert.ok(m!.time >= before - 1 && m!.time < middle, `time ${m!.time} should be before ${middle}`);
    assert.equal(m!.frames, 2);
  });

  it('records binary and invalid UTF-8 payloads as bytes', async () => {
    const h = await start();
    h.driverServer.write(Buffer.concat([hex('8102c328'), wsFrame({ opcode: 2, payload: hex('00ff10') })]));
    await h.until(() => h.of('ws-message').length === 2, 'two messages');
    assert.deepEqual(h.of('ws-message').map((m) => [m.opcode, m.data.toString('hex')]), [[1, 'c328'], [2, '00ff10']]);
    assert.equal(h.of('ws-error').length, 0);
  });

  it('inflates both directions with default permessage-deflate, keeping context across messages', async () => {
    const h = await start({ responseHeaders: deflateHeaders('permessage-deflate') });
    const server = new Compressor(15, false);
    const client = new Compressor(15, false);
    const text = 'the same words again and again '.repeat(8);
    for (let i = 0; i < 3; i++) {
      h.driverServer.write(wsFrame({ opcode: 1, rsv1: true, payload: await server.message(text + i) }));
      h.driverClient.write(wsFrame({ opcode: 1, rsv1: true, payload: await client.message(text + i), mask: MASK }));
    }
    server.close();
    client.close();
    await h.until(() => h.of('ws-message').length === 6, 'six messages');
    for (const direction of ['send', 'receive']) {
      assert.deepEqual(
        messages(h).filter((m) => m.direction === direction),
        [0, 1, 2].map((i) => ({ direction, opcode: 1, data: text + i, frames: 1, compressed: true })),
      );
    }
  });

  it('reports messages in wire order across directions while a compressed one is still inflating', async () => {
    const h = await start({ responseHeaders: deflateHeaders('permessage-deflate') });
    const client = new Compressor(15, false);
    // 16 MiB that deflate to a few KiB: inflating takes milliseconds, the reply's loopback hop far less.
    const big = 'x'.repeat(16 * 1024 * 1024);
    const frame = wsFrame({ opcode: 1, rsv1: true, payload: await client.message(big), mask: MASK });
    client.close();
    // The server answers as soon as the client's first bytes reach it, uncompressed.
    h.driverServer.once('data', () => h.driverServer.write(wsFrame({ opcode: 1, payload: 'ack' })));
    h.driverClient.write(frame);
    await h.until(() => h.of('ws-message').length === 2, 'two messages');
    const got = h.of('ws-message').map((m) => [m.direction, m.data.length]);
    assert.deepEqual(got, [['send', big.length], ['receive', 3]]);
  });

  it('inflates a compressed message split across fragments', async () => {
    const h = await start({ responseHeaders: deflateHeaders('permessage-deflate') });
    const server = new Compressor(15, true);
    const packed = await server.message('x'.repeat(3000) + 'end');
    server.close();
    const cut = Math.floor(packed.length / 2);
    h.driverServer.write(wsFrame({ opcode: 2, rsv1: true, fin: false, payload: packed.subarray(0, cut) }));
    h.driverServer.write(wsFrame({ opcode: 0, payload: packed.subarray(cut) }));
    await h.until(() => h.of('ws-message').length === 1, 'one message');
    const [m] = h.of('ws-message');
    assert.equal(m!.data.toString(), 'x'.repeat(3000) + 'end');
    assert.deepEqual([m!.opcode, m!.frames, m!.compressed], [2, 2, true]);
  });

  // Each case fails if the tap picks the wrong side's parameters: a window
  // smaller than the sender's, or a reset where the sender kept its context.
  const negotiations = [
    { header: 'permessage-deflate; client_no_context_takeover', client: [15, true], server: [15, false] },
    { header: 'permessage-deflate; server_no_context_takeover', client: [15, false], server: [15, true] },
    { header: 'permessage-deflate; client_max_window_bits=9', client: [9, false], server: [15, false] },
    { header: 'permessage-deflate; server_max_window_bits=10; client_no_context_takeover', client: [15, true], server: [10, false] },
  ] as const;
  for (const n of negotiations) {
    it(`inflates with the negotiated parameters: ${n.header}`, async () => {
      const h = await start({ responseHeaders: deflateHeaders(n.header) });
      const server = new Compressor(...n.server);
      const client = new Compressor(...n.client);
      // Long-distance repeats: back-references beyond 512 bytes and into earlier messages.
      const body = Array.from({ length: 120 }, (_, i) => `item-${i % 40}-${(i * 7919) % 1000}`).join(',');
      for (let i = 0; i < 3; i++) {
        h.driverServer.write(wsFrame({ opcode: 1, rsv1: true, payload: await server.message(`${i}:${body}`) }));
        h.driverClient.write(wsFrame({ opcode: 1, rsv1: true, payload: await client.message(`${i}:${body}`), mask: MASK }));
      }
      server.close();
      client.close();
      await h.until(() => h.of('ws-message').length === 6 || h.of('ws-error').length > 0, 'six messages');
      assert.deepEqual(h.of('ws-error'), []);
      for (const direction of ['send', 'receive']) {
        const got = messages(h).filter((m) => m.direction === direction).map((m) => m.data);
        assert.deepEqual(got, [0, 1, 2].map((i) => `${i}:${body}`));
      }
    });
  }

  it('turns an invalid frame into one error fact, keeps parsing the other direction, and forwards every byte', async () => {
    const h = await start();
    const bad = Buffer.concat([wsFrame({ opcode: 3, payload: 'zz', mask: MASK }), wsFrame({ opcode: 1, payload: 'after', mask: MASK })]);
    h.driverClient.write(bad);
    await h.until(() => h.of('ws-error').length === 1, 'the error');
    h.driverServer.write(hex('810548656c6c6f'));
    await h.until(() => h.of('ws-message').length === 1 && h.serverGot().length === bad.length, 'the message and the bytes');
    const [err] = h.of('ws-error');
    assert.deepEqual([err!.direction, err!.code, err!.exchangeId], ['send', 'WS_ERR_INVALID_OPCODE', 7]);
    assert.match(err!.message, /invalid opcode 3/);
    assert.deepEqual(messages(h), [{ direction: 'receive', opcode: 1, data: 'Hello', frames: 1, compressed: false }]);
    assert.deepEqual(h.serverGot(), bad);
    await h.until(() => h.clientGot().length === 7, 'the bytes to the client');
  });

  const badFrames = [
    { name: 'RSV1 without deflate', bytes: wsFrame({ opcode: 1, rsv1: true, payload: 'x' }), code: 'WS_ERR_UNEXPECTED_RSV_1', headers: [] },
    { name: 'RSV2', bytes: hex('a100'), code: 'WS_ERR_UNEXPECTED_RSV_2_3', headers: [] },
    { name: 'a masked server frame', bytes: wsFrame({ opcode: 1, payload: 'x', mask: MASK }), code: 'WS_ERR_UNEXPECTED_MASK', headers: [] },
    { name: 'a fragmented ping', bytes: hex('0900'), code: 'WS_ERR_EXPECTED_FIN', headers: [] },
    { name: 'a bad close code', bytes: hex('880203ed'), code: 'WS_ERR_INVALID_CLOSE_CODE', headers: [] },
    {
      name: 'invalid deflate data',
      bytes: wsFrame({ opcode: 1, rsv1: true, payload: hex('ffffffff') }),
      code: 'Z_DATA_ERROR',
      headers: deflateHeaders('permessage-deflate'),
    },
  ];
  for (const bad of badFrames) {
    it(`reports ${bad.name} as ${bad.code}`, async () => {
      const h = await start({ responseHeaders: bad.headers });
      h.driverServer.write(Buffer.concat([bad.bytes, hex('810548656c6c6f')]));
      await h.until(() => h.of('ws-error').length === 1, 'the error');
      await new Promise((r) => setTimeout(r, 30));
      assert.deepEqual(h.of('ws-error').map((e) => [e.direction, e.code]), [['receive', bad.code]]);
      assert.equal(h.of('ws-message').length, 0, 'nothing after the bad frame is parsed');
    });
  }

  it('keeps the first `keep` bytes of a message over it, compressed or not, and parses what follows', async () => {
    const h = await start({ keep: 100, responseHeaders: deflateHeaders('permessage-deflate') });
    h.driverClient.write(Buffer.concat([wsFrame({ opcode: 2, payload: Buffer.alloc(101, 1), mask: MASK }), wsFrame({ opcode: 1, payload: 'next', mask: MASK })]));
    const server = new Compressor(15, false);
    h.driverServer.write(wsFrame({ opcode: 1, rsv1: true, payload: await server.message('a'.repeat(500)) }));
    h.driverServer.write(wsFrame({ opcode: 1, rsv1: true, payload: await server.message('after') }));
    server.close();
    await h.until(() => h.of('ws-message').length === 4, 'four messages');
    assert.equal(h.of('ws-error').length, 0);
    const seen = h.of('ws-message').map((m) => [m.direction, m.data.toString('latin1'), m.size]);
    assert.deepEqual(seen.filter((m) => m[0] === 'send'), [['send', '\x01'.repeat(100), 101], ['send', 'next', undefined]]);
    assert.deepEqual(seen.filter((m) => m[0] === 'receive'), [['receive', 'a'.repeat(100), 500], ['receive', 'after', undefined]]);
  });

  it('reports unparseable negotiated extensions as an error for each direction', async () => {
    const h = await start({ responseHeaders: deflateHeaders('permessage-deflate; server_max_window_bits=99') });
    h.driverServer.write(hex('810548656c6c6f'));
    await h.until(() => h.of('ws-error').length === 2, 'two errors');
    assert.deepEqual(h.of('ws-error').map((e) => e.code), ['WS_ERR_INVALID_EXTENSIONS', 'WS_ERR_INVALID_EXTENSIONS']);
  });

  it('forwards masked traffic unchanged while the far end lags (the tap unmasks a copy)', async () => {
    const h = await start();
    // Small frames sit inside one socket chunk, where ws would unmask in place;
    // a paused far end keeps the pipe's writes queued while the tap parses.
    h.driverServer.pause();
    const frames = Array.from({ length: 20000 }, (_, i) => wsFrame({ opcode: 2, payload: Buffer.alloc(1000, i % 251), mask: MASK }));
    const bytes = Buffer.concat(frames);
    h.driverClient.write(bytes);
    // Let the pipe back up: the tap has parsed what the pipe still holds.
    let seen = -1;
    for (let i = 0; i < 100 && h.of('ws-message').length !== seen; i++) {
      seen = h.of('ws-message').length;
      await new Promise((r) => setTimeout(r, 100));
    }
    h.driverServer.resume();
    await h.until(() => h.of('ws-message').length === 20000, 'the messages');
    await h.until(() => h.serverGot().length === bytes.length, 'the bytes');
    assert.ok(h.serverGot().equals(bytes), 'the server got the exact masked bytes');
    assert.ok(h.of('ws-message').every((m, i) => m.data.equals(Buffer.alloc(1000, i % 251))));
  });

  it('reports upgrade-closed with the first close frame once both sockets closed', async () => {
    const h = await start();
    h.driverClient.write(wsFrame({ opcode: 8, payload: Buffer.concat([hex('0bb8'), Buffer.from('going')]), mask: MASK }));
    await h.until(() => h.of('ws-message').length === 1, 'the client close');
    h.driverServer.write(hex('880203e8'));
    await h.until(() => h.of('ws-message').length === 2, 'the server close');
    assert.equal(h.of('upgrade-closed').length, 0, 'not before the sockets close');
    h.driverServer.end();
    h.driverClient.end();
    await h.until(() => h.of('upgrade-closed').length === 1, 'upgrade-closed');
    const [closed] = h.of('upgrade-closed');
    assert.deepEqual([closed!.code, closed!.reason, closed!.by, closed!.exchangeId], [3000, 'going', 'client', 7]);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(h.of('upgrade-closed').length, 1, 'exactly once');
    assert.ok(h.facts.at(-1)!.type === 'upgrade-closed', 'last fact');
  });

  it("reports by 'none' when the sockets are destroyed without a close frame", async () => {
    const h = await start();
    h.driverServer.write(hex('810548656c6c6f'));
    await h.until(() => h.of('ws-message').length === 1, 'the message');
    h.driverClient.destroy();
    h.driverServer.destroy();
    await h.until(() => h.of('upgrade-closed').length === 1, 'upgrade-closed');
    const [closed] = h.of('upgrade-closed');
    assert.equal(closed!.by, 'none');
    assert.equal(closed!.code, undefined);
  });

  it('reports a server close sent first with its code', async () => {
    const h = await start();
    h.driverServer.write(hex('88021001'));
    await h.until(() => h.of('ws-message').length === 1, 'the close');
    h.proxyClient.destroy();
    h.proxyUpstream.destroy();
    await h.until(() => h.of('upgrade-closed').length === 1, 'upgrade-closed');
    assert.deepEqual([h.of('upgrade-closed')[0]!.by, h.of('upgrade-closed')[0]!.code], ['server', 4097]);
  });

  it('emits nothing after stop()', async () => {
    const h = await start();
    h.tap.stop();
    h.driverServer.write(hex('810548656c6c6f'));
    await h.until(() => h.clientGot().length === 7, 'the bytes');
    h.driverClient.destroy();
    h.driverServer.destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(h.facts, []);
  });
});
