// Engine.IO / Socket.IO payloads (diff/normalize/engine-io.ts). The literal
// packets come from the protocol documents: the Socket.IO protocol's
// "Packet encoding" tables and "Sample session"
// (https://github.com/socketio/socket.io-protocol), and the Engine.IO
// protocol's payload examples (https://github.com/socketio/engine.io-protocol,
// v4 and the v3 branch).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEnginePacket, decodeEnginePayload, decodeSocketIoPacket, engineIoVersion } from '../../../diff/normalize/engine-io.js';
import { renderText, type DiffResult } from '../../../diff/index.js';
import { capture, type ExchangeSpec } from '../../helpers/har.js';
import { diffBothPaths } from '../diff-bounded.js';
import { tempDir } from '../../helpers/tmp.js';

const show = (r: DiffResult) => renderText(r, { color: false });


describe('Engine.IO / Socket.IO packets', () => {
  it('reads the Engine.IO revision from the EIO and transport parameters, whatever the path', () => {
    const table: Array<[string, string | undefined]> = [
      ['http://127.0.0.1:3000/socket.io/?EIO=4&transport=polling&t=N8hyd6w', '4'],
      ['ws://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket&sid=lv_VI97HAXpY6yYWAAAC', '4'],
      ['https://chat.test/custom/path/?transport=polling&EIO=3', '3'],
      ['http://a.test/socket.io/?EIO=4', undefined], // no transport
      ['http://a.test/api?transport=polling', undefined], // no EIO
      ['http://a.test/api?EIO=x&transport=polling', undefined],
      ['http://a.test/socket.io/', undefined],
    ];
    for (const [url, want] of table) assert.equal(engineIoVersion(url), want, url);
  });

  it('decodes the Socket.IO encoding table', () => {
    const table: Array<[string, unknown]> = [
      ['0', { sio: 'CONNECT', nsp: '/' }],
      ['0{"sid":"wZX3oN0bSVIhsaknAAAI"}', { sio: 'CONNECT', nsp: '/', data: { sid: 'wZX3oN0bSVIhsaknAAAI' } }],
      ['0/admin,', { sio: 'CONNECT', nsp: '/admin' }],
      ['0/admin,{"sid":"oSO0OpakMV_3jnilAAAA"}', { sio: 'CONNECT', nsp: '/admin', data: { sid: 'oSO0OpakMV_3jnilAAAA' } }],
      ['4{"message":"Not authorized"}', { sio: 'CONNECT_ERROR', nsp: '/', data: { message: 'Not authorized' } }],
      ['2["foo"]', { sio: 'EVENT', nsp: '/', event: 'foo', args: [] }],
      ['2/admin,["bar"]', { sio: 'EVENT', nsp: '/admin', event: 'bar', args: [] }],
      ['51-["baz",{"_placeholder":true,"num":0}]', { sio: 'BINARY_EVENT', nsp: '/', attachments: 1, event: 'baz', args: [{ _placeholder: true, num: 0 }] }],
      ['212["foo"]', { sio: 'EVENT', nsp: '/', ack: 12, event: 'foo', args: [] }],
      ['312[]', { sio: 'ACK', nsp: '/', ack: 12, args: [] }],
      ['2/admin,13["foo"]', { sio: 'EVENT', nsp: '/admin', ack: 13, event: 'foo', args: [] }],
      ['3/admin,13["bar"]', { sio: 'ACK', nsp: '/admin', ack: 13, args: ['bar'] }],
      ['61-15["bar",{"_placeholder":true,"num":0}]', { sio: 'BINARY_ACK', nsp: '/', attachments: 1, ack: 15, args: ['bar', { _placeholder: true, num: 0 }] }],
      ['1', { sio: 'DISCONNECT', nsp: '/' }],
      ['1/admin,', { sio: 'DISCONNECT', nsp: '/admin' }],
    ];
    for (const [wire, want] of table) assert.deepEqual(decodeSocketIoPacket(wire), want, wire);
  });

  it('leaves text that is not Socket.IO encoded to Engine.IO', () => {
    for (const wire of ['hello', '2', '3', '2[not json', '7["x"]', '2{"a":1}']) assert.equal(decodeSocketIoPacket(wire), undefined, wire);
    assert.deepEqual(decodeEnginePacket('4hello'), { eio: 'message', data: 'hello' });
  });

  it('decodes the frames of the sample session, keeping both packet types', () => {
    const table: Array<[string, unknown]> = [
      ['2probe', { eio: 'ping', data: 'probe' }],
      ['3probe', { eio: 'pong', data: 'probe' }],
      ['5', { eio: 'upgrade' }],
      ['42["hello"]', { eio: 'message', sio: 'EVENT', nsp: '/', event: 'hello', args: [] }],
      ['40/admin,', { eio: 'message', sio: 'CONNECT', nsp: '/admin' }],
      ['40/admin,{"sid":"-G5j-67EZFp-q59rADQM"}', { eio: 'message', sio: 'CONNECT', nsp: '/admin', data: { sid: '-G5j-67EZFp-q59rADQM' } }],
      ['42/admin,1["tellme"]', { eio: 'message', sio: 'EVENT', nsp: '/admin', ack: 1, event: 'tellme', args: [] }],
      ['461-/admin,1[{"_placeholder":true,"num":0}]', { eio: 'message', sio: 'BINARY_ACK', nsp: '/admin', attachments: 1, ack: 1, args: [{ _placeholder: true, num: 0 }] }],
      ['2', { eio: 'ping' }],
      ['3', { eio: 'pong' }],
      ['1', { eio: 'close' }],
      ['6', { eio: 'noop' }],
      ['bAQID', { eio: 'message', binary: '<binary 3 bytes sha256:039058c6f2c0cb49>' }],
    ];
    for (const [wire, want] of table) assert.deepEqual(decodeEnginePacket(wire), want, wire);
    assert.equal(decodeEnginePacket('ok'), undefined);
    assert.equal(decodeEnginePacket(''), undefined);
  });

  it('splits polling bodies: v4 on the record separator, v3 by length prefix', () => {
    const open = '0{"sid":"lv_VI97HAXpY6yYWAAAC","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":5000,"maxPayload":1000000}';
    assert.deepEqual(decodeEnginePayload(open), [
      { eio: 'open', data: { sid: 'lv_VI97HAXpY6yYWAAAC', upgrades: ['websocket'], pingInterval: 25000, pingTimeout: 5000, maxPayload: 1000000 } },
    ]);
    assert.deepEqual(decodeEnginePayload('42["hello"]\x1e42["world"]'), [
      { eio: 'message', sio: 'EVENT', nsp: '/', event: 'hello', args: [] },
      { eio: 'message', sio: 'EVENT', nsp: '/', event: 'world', args: [] },
    ]);
    assert.deepEqual(decodeEnginePayload('2probe\x1e4test\x1e1'), [{ eio: 'ping', data: 'probe' }, { eio: 'message', data: 'test' }, { eio: 'close' }]);
    // Engine.IO v3: `<length>:<packet>`, the length counted in characters ("4€€€" is 4).
    assert.deepEqual(decodeEnginePayload('6:4hello4:4€€€', '3'), [{ eio: 'message', data: 'hello' }, { eio: 'message', data: '€€€' }]);
    assert.deepEqual(decodeEnginePayload('2:4010:42["hi",1]', '3'), [
      { eio: 'message', sio: 'CONNECT', nsp: '/' },
      { eio: 'message', sio: 'EVENT', nsp: '/', event: 'hi', args: [1] },
    ]);
    assert.equal(decodeEnginePayload('7:4hello', '3'), undefined);
    assert.equal(decodeEnginePayload('ok'), undefined);
  });
});

describe('bb diff of Socket.IO traffic', () => {
  const t = tempDir();

  // One Socket.IO session: the polling handshake, then a WebSocket with chat events carrying a timestamp.
  function session(ts: number, opts: { pollPrefix?: string; wsPrefix?: string; sid?: string; t?: string } = {}): ExchangeSpec[] {
    const poll = `http://127.0.0.1:3000/socket.io/?EIO=4&transport=polling&t=${opts.t ?? 'OzX3k1a'}`;
    return [
      { url: poll, mime: 'text/plain; charset=UTF-8', body: `0{"sid":"${opts.sid ?? 'lv_VI97HAXpY6yYWAAAC'}","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}` },
      { method: 'POST', url: `${poll}&sid=${opts.sid ?? 'lv_VI97HAXpY6yYWAAAC'}`, requestBody: '40', mime: 'text/plain; charset=UTF-8', body: 'ok' },
      { url: `${poll}&sid=${opts.sid ?? 'lv_VI97HAXpY6yYWAAAC'}`, mime: 'text/plain; charset=UTF-8', body: `${opts.pollPrefix ?? '42'}["motd",{"text":"hi","ts":${ts}}]\x1e40{"sid":"wZX3oN0bSVIhsaknAAAI"}` },
      {
        url: `http://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket&sid=${opts.sid ?? 'lv_VI97HAXpY6yYWAAAC'}`,
        ws: [
          { type: 'send', data: '2probe' },
          { type: 'receive', data: '3probe' },
          { type: 'send', data: '5' },
          { type: 'send', data: `${opts.wsPrefix ?? '42'}["chat",{"room":"a","text":"hello","ts":${ts + 5}}]` },
          { type: 'receive', data: `42["chat",{"room":"a","text":"hello","from":"u1","ts":${ts + 7}}]` },
          { type: 'receive', data: '2' },
          { type: 'send', data: '3' },
        ],
      },
    ];
  }

  const both = (a: ExchangeSpec[], b: ExchangeSpec[]) => diffBothPaths(t, capture(a), capture(b));

  it('two sessions that differ only in timestamps inside 42[...] match, on both paths', async () => {
    // Epoch milliseconds of the captures' own day (test/helpers/har.ts dates them 2026-01-01): inside their windows.
    const at = Date.parse('2026-01-01T00:10:00Z');
    for (const r of await both(session(at), session(at + 93_123))) assert.equal(r.verdict, 'match', show(r));
  });

  it('the session id the open packet hands out corresponds across runs, and the t cache-buster is masked', async () => {
    for (const r of await both(session(1, { sid: 'lv_VI97HAXpY6yYWAAAC', t: 'OzX3k1a' }), session(1, { sid: 'Qm3bT0zz1xYVAAAB', t: 'P0aa91' }))) {
      assert.equal(r.verdict, 'match', show(r));
    }
    // A later URL that carries another session than the one handed out breaks the binding.
    const wrong = session(1, { sid: 'Qm3bT0zz1xYVAAAB' });
    wrong[3]!.url = wrong[3]!.url.replace('Qm3bT0zz1xYVAAAB', 'someOtherSession1');
    for (const r of await both(session(1), wrong)) assert.deepEqual(r.differences.map((d) => d.path), ['request.query.sid'], show(r));
  });

  it('a changed packet type is still a difference', async () => {
    // The client's chat event now asks for an acknowledgement (421[...]); the server's poll sends a CONNECT_ERROR code instead of an EVENT.
    const at = Date.parse('2026-01-01T00:10:00Z');
    for (const r of await both(session(at), session(at + 93_123, { wsPrefix: '421', pollPrefix: '43' }))) {
      const rows = r.differences.map((d) => [d.kind, d.path, d.old, d.new]);
      assert.deepEqual(rows.filter(([, p]) => String(p).startsWith('ws.')), [['added', 'ws.messages[3].data.ack', undefined, 1]], show(r));
      assert.ok(rows.some(([kind, p, o, n]) => kind === 'changed' && p === 'response.body[0].sio' && o === 'EVENT' && n === 'ACK'), show(r));
    }
  });
});
