// H2Streams (proxy/h2-streams.ts) fed the facts of a connection that floods
// with early resets, then opens a WebSocket over one of its streams (RFC
// 8441): a new stream is held while the connection floods, and the held
// extended CONNECT must still open its WebSocket when the upstream answers
// 2xx (its exchange starts then, as an upgrade). The facts are what
// H2Session reads from the wire (test/proxy/h2-tap.test.ts drives
// the same path with real node:http2 peers).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { H2Streams } from '../../proxy/h2-streams.js';
import { FactBus, type Fact } from '../../proxy/events.js';
import type { ConnectionState } from '../../proxy/connection.js';
import type { TapSettings } from '../../proxy/tap-settings.js';
import { OP, wsFrame } from '../helpers/ws-frames.js';

describe('H2Streams and a WebSocket over a held stream', () => {
  it('a WebSocket CONNECT held in a reset flood opens its WebSocket at the 2xx and reports its messages and end', async () => {
    const bus = new FactBus();
    const facts: Fact[] = [];
    bus.on((f) => facts.push(f));
    let ids = 0;
    const conn = { id: 'c1', scheme: 'http', active: 0 } as ConnectionState;
    const settings = { bus, nextExchangeId: () => ++ids } as unknown as TapSettings;
    const streams = new H2Streams(conn, settings, () => 'http://127.0.0.1:1');
    const t = 1_000_000;
    const get: Array<[string, string]> = [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'x']];
    // 200 streams reset before any answer within one window: the connection floods.
    for (let k = 0; k < 200; k++) {
      const streamId = 2 * k + 1;
      streams.onFact({ type: 'headers', from: 'client', streamId, time: t + k, kind: 'request', headers: get, neverIndexed: [], endStream: true });
      streams.onFact({ type: 'reset', from: 'client', streamId, time: t + k, errorCode: 8, error: 'CANCEL' });
    }
    const ws = 1001;
    const connect: Array<[string, string]> = [[':method', 'CONNECT'], [':protocol', 'websocket'], [':scheme', 'http'], [':path', '/chat'], [':authority', 'x']];
    const before = facts.length;
    streams.onFact({ type: 'headers', from: 'client', streamId: ws, time: t + 300, kind: 'request', headers: connect, neverIndexed: [], endStream: false });
    assert.equal(facts.slice(before).filter((f) => f.type === 'exchange-started').length, 0, 'held while the connection floods');
    streams.onFact({ type: 'headers', from: 'server', streamId: ws, time: t + 301, kind: 'response', headers: [[':status', '200']], neverIndexed: [], endStream: false });
    streams.onFact({ type: 'data', from: 'client', streamId: ws, time: t + 302, data: wsFrame({ opcode: OP.text, payload: 'hi', mask: true }), endStream: false });
    streams.onFact({ type: 'data', from: 'server', streamId: ws, time: t + 303, data: wsFrame({ opcode: OP.text, payload: 'HI' }), endStream: true });
    streams.onFact({ type: 'data', from: 'client', streamId: ws, time: t + 304, data: Buffer.alloc(0), endStream: true });
    // upgrade-closed follows once both directions' parsers have drained (a promise turn).
    await new Promise((r) => setImmediate(r));
    const mine = facts.slice(before).filter((f) => 'exchangeId' in f && f.type !== 'streams-reset');
    assert.deepEqual(mine.map((f) => (f.type === 'exchange-started' ? `${f.type} ${f.method} upgrade=${f.upgrade}` : f.type === 'ws-message' ? `${f.type} ${f.direction} ${f.data}` : f.type)), [
      'exchange-started CONNECT upgrade=true',
      'upgrade-opened',
      'ws-message send hi',
      'ws-message receive HI',
      'upgrade-closed',
    ]);
    assert.equal(streams.size, 0);
  });
});
