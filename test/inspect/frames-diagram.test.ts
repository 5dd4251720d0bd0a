// framesDiagram (what `bb frames --html` draws), on hand-made HARs in the
// shapes Chrome, Playwright, mitmproxy and bb write.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Har } from '../../capture/har.js';
import { readCapture } from '../../capture/reader.js';
import { filterConnectionsByPage, framesDiagram, wsConnections } from '../../inspect/index.js';
import { har, wsEntry } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { sharedFixture } from '../helpers/fixtures.js';
import { b64, bbHar, chrome, chromeMessagesA, labels, t0 } from './frames-hars.js';

describe('framesDiagram', () => {
  it('draws a Chrome export in time order across connections, one lane each, with close code and pages', () => {
    const d = framesDiagram(chrome as Har);
    assert.deepEqual(d.lanes.map((l) => [l.kind, l.id, l.url, l.rows]), [['ws', '11', 'wss://app.test/a', 3], ['ws', '12', 'wss://app.test/b', 2]]);
    assert.deepEqual(labels(d), [
      '11 send text 14B {"op":"hello"}',
      '12 send binary 4B 0x000102ff',
      '11 receive text 16B {"op":"welcome"}',
      '12 receive ping 5B ping!',
      '11 receive close 5B 1000 bye',
    ]);
    assert.deepEqual(d.rows[4]!.close, { code: 1000, reason: 'bye' });
    assert.deepEqual(d.bands, [{ name: 'home', from: 0, to: 0 }, { name: 'items', from: 1, to: 1 }, { name: 'home', from: 2, to: 2 }, { name: 'items', from: 3, to: 3 }, { name: 'home', from: 4, to: 4 }]);
    assert.deepEqual(d.payloads[1], { kind: 'ws', opcode: 2, encoding: 'base64', data: b64(Buffer.from([0, 1, 2, 255])) });
    assert.equal(d.server, 'server');
  });

  it('orders a bb capture by seq, marks error rows, and draws HTTP with --timeline in its own lane', () => {
    const ws = framesDiagram(bbHar as Har);
    assert.deepEqual(ws.rows.map((r) => r.seq), [2, 4, 6, 7]);
    assert.deepEqual(ws.rows.map((r) => r.dir), ['send', 'receive', 'send', 'receive']);
    assert.equal(ws.rows[3]!.error, 'WS_ERR_INVALID_OPCODE');
    assert.deepEqual(ws.rows[2]!.close, { code: 4000, reason: 'b' });
    assert.deepEqual(ws.bands, [{ name: 'sign in', from: 0, to: 0 }, { name: 'chat', from: 1, to: 3 }]);

    const all = framesDiagram(bbHar as Har, {}, { http: true });
    assert.deepEqual(all.lanes.map((l) => l.id), ['HTTP', 'c1']);
    assert.deepEqual(all.rows.map((r) => `${r.seq} ${all.lanes[r.lane]!.id} ${r.kind}`), [
      '1 c1 request', '2 c1 ws', '3 HTTP request', '4 c1 ws', '5 HTTP response', '6 c1 ws', '7 c1 ws',
    ]);
    const response = all.rows[4]!;
    assert.equal(response.error, 'ECONNREFUSED');
    assert.match(response.label, /^502! 42B GET http:\/\/127\.0\.0\.1:4000\/api\/state$/);
    assert.equal(all.payloads[2]!.kind, 'http');
  });

  it('leaves the HTTP lane out when nothing is drawn in it', () => {
    const onlyWs = har([wsEntry('ws://x.test/', '2024-05-01T10:00:00.000Z', [{ type: 'send', time: t0, opcode: 1, data: 'a' }], { connection: 'c9' })]);
    const d = framesDiagram(onlyWs as Har, {}, { http: true });
    assert.deepEqual(d.lanes.map((l) => l.id), ['c9']);
    assert.deepEqual(d.rows.map((r) => [r.lane, r.kind]), [[0, 'request'], [0, 'ws']]);
  });

  it('applies the frames filters and --page by title or id', () => {
    assert.deepEqual(framesDiagram(chrome as Har, { type: 'receive' }).rows.map((r) => r.label.split(' ')[0]), ['text', 'ping', 'close']);
    assert.deepEqual(framesDiagram(chrome as Har, { conn: '12' }).lanes.map((l) => l.id), ['12']);
    assert.deepEqual(framesDiagram(chrome as Har, { opcodes: [8] }).lanes.map((l) => l.id), ['11']);
    assert.deepEqual(framesDiagram(chrome as Har, { grep: /welcome/ }).rows.length, 1);
    const chat = framesDiagram(bbHar as Har, {}, { page: 'chat', http: true });
    assert.deepEqual(chat.rows.map((r) => r.seq), [3, 4, 5, 6, 7]);
    assert.deepEqual(framesDiagram(bbHar as Har, {}, { page: 'page_1' }).rows.map((r) => r.seq), [2]);
    assert.deepEqual(filterConnectionsByPage(wsConnections(bbHar as Har), bbHar as Har, 'nope'), []);
  });

  it('previews long payloads in one clipped line, whole in the payload', () => {
    const long = 'x'.repeat(5000);
    const emoji = '😀'.repeat(300);
    const d = framesDiagram(har([wsEntry('ws://x.test/', '2024-05-01T10:00:00.000Z', [
      { type: 'send', time: t0, opcode: 1, data: long },
      { type: 'send', time: t0 + 1, opcode: 1, data: emoji },
      { type: 'send', time: t0 + 2, opcode: 1, data: '\n'.repeat(300) },
    ])]) as Har, {}, { previewWidth: 50 });
    assert.equal(d.rows[0]!.label, `text 4.9KB ${'x'.repeat(49)}…`);
    assert.equal(d.rows[1]!.label, `text 1.2KB ${'😀'.repeat(49)}…`);
    assert.equal(d.rows[2]!.label, `text 300B ${'\\n'.repeat(24)}\\…`);
    assert.equal((d.payloads[0] as { data: string }).data, long);
  });

  it('reads Playwright milliseconds and mitmproxy exports', async (t) => {
    const files = tempDir(t);
    const pw = await readCapture(await files.write('pw.har', har([wsEntry('ws://127.0.0.1:5000/pw', '2024-05-01T10:00:00.000Z', chromeMessagesA.map((m) => ({ ...m, time: m.time * 1000 })))])));
    const d = framesDiagram(pw);
    assert.deepEqual(d.rows.map((r) => r.time), chromeMessagesA.map((m) => m.time));
    assert.equal(d.lanes[0]!.id, '0', 'the entry index names a connection without a connection field');
    const MITM = sharedFixture(t, 'mitmproxy-websocket.har');
    if (!MITM) return;
    const mitm = framesDiagram(await readCapture(MITM));
    assert.equal(mitm.rows.length, 5);
    assert.equal(mitm.lanes.length, 3);
  });
});
