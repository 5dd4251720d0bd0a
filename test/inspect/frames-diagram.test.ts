// framesDiagram (what `bb frames --html` draws) and framesHtml (the page),
// on hand-made HARs in the shapes Chrome, Playwright, mitmproxy and bb write.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Har } from '../../capture/har.js';
import { readCapture } from '../../capture/reader.js';
import { filterConnectionsByPage, framesDiagram, framesHtml, wsConnections } from '../../inspect/index.js';
import { runBb } from '../helpers/cli.js';
import { entry, har, wsEntry, type Msg } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { sharedFixture } from '../helpers/fixtures.js';

/** bb run to its end at the width the expected lines are laid out for. */
const bb = (args: string[], env: NodeJS.ProcessEnv = {}) => runBb(args, { COLUMNS: '100', ...env });

const t0 = Date.parse('2024-05-01T10:00:00.000Z') / 1000;
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const labels = (d: ReturnType<typeof framesDiagram>) => d.rows.map((r) => `${d.lanes[r.lane]!.id} ${r.dir} ${r.label}`);

// Chrome: no seq, two connections whose messages interleave by time; pages by pageref.
const chromeMessagesA: Msg[] = [
  { type: 'send', time: t0 + 0.1, opcode: 1, data: '{"op":"hello"}' },
  { type: 'receive', time: t0 + 0.4, opcode: 1, data: '{"op":"welcome"}' },
  { type: 'receive', time: t0 + 0.9, opcode: 8, data: b64(Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')])) },
];
const chromeMessagesB: Msg[] = [
  { type: 'send', time: t0 + 0.2, opcode: 2, data: b64(Buffer.from([0, 1, 2, 255])) },
  { type: 'receive', time: t0 + 0.5, opcode: 9, data: b64('ping!') },
];
const chrome = har([
  wsEntry('wss://app.test/a', '2024-05-01T10:00:00.000Z', chromeMessagesA, { connection: '11', pageref: 'page_1' }),
  entry('https://app.test/api/items', '2024-05-01T10:00:00.300Z', { pageref: 'page_2' }),
  wsEntry('wss://app.test/b', '2024-05-01T10:00:00.050Z', chromeMessagesB, { connection: '12', pageref: 'page_2' }),
], { pages: [{ id: 'page_1', title: 'home', startedDateTime: '2024-05-01T10:00:00.000Z', pageTimings: {} }, { id: 'page_2', title: 'items', startedDateTime: '2024-05-01T10:00:00.040Z', pageTimings: {} }] });

// bb: seq decides over time; messages carry their own page; an error row; an HTTP error (bb's 502).
const bbHar = har([
  wsEntry('ws://127.0.0.1:4000/chat', '2024-05-01T10:00:00.000Z', [
    { type: 'receive', time: t0 + 0.1, opcode: 1, data: 'second', _bb: { seq: 4, page: 'page_2' } },
    { type: 'send', time: t0 + 0.2, opcode: 1, data: 'first', _bb: { seq: 2, page: 'page_1' } },
    { type: 'error', time: t0 + 0.3, opcode: -1, data: 'Invalid WebSocket frame: invalid opcode 3', _bb: { seq: 7, error: 'WS_ERR_INVALID_OPCODE', direction: 'receive', page: 'page_2' } },
    { type: 'send', time: t0 + 0.25, opcode: 8, data: b64(Buffer.from([0x0f, 0xa0, 0x62])), _bb: { seq: 6, code: 4000, reason: 'b', page: 'page_2' } },
  ], { connection: 'c1', _bb: { seq: 1 } }),
  entry('http://127.0.0.1:4000/api/state', '2024-05-01T10:00:00.200Z', { connection: 'c2', status: 502, pageref: 'page_2', _bb: { seq: 3, seqEnd: 5, error: { code: 'ECONNREFUSED', message: 'refused', phase: 'connect' } } }),
], { pages: [{ id: 'page_1', title: 'sign in', startedDateTime: '2024-05-01T10:00:00.000Z', pageTimings: {} }, { id: 'page_2', title: 'chat', startedDateTime: '2024-05-01T10:00:00.150Z', pageTimings: {} }] });

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

describe('framesHtml', () => {
  const hostile = `</script><img src=x onerror="alert(1)"><!--<script>`;
  const evil = har([
    wsEntry(`ws://x.test/</script><b>`, '2024-05-01T10:00:00.000Z', [
      { type: 'send', time: t0, opcode: 1, data: hostile, _bb: { seq: 2, page: 'p' } },
      { type: 'receive', time: t0 + 1, opcode: 1, data: '\u2028&amp;', _bb: { seq: 3, page: 'p' } },
    ], { connection: '"><svg onload=alert(1)>', _bb: { seq: 1 } }),
  ], { pages: [{ id: 'p', title: '</style><script>alert(2)</script>', startedDateTime: '2024-05-01T10:00:00.000Z', pageTimings: {} }] });

  it('keeps captured strings out of markup: JSON blocks with < > & and U+2028 escaped, a nonce on the only script', () => {
    const html = framesHtml(framesDiagram(evil as Har), { title: 'bb frames <evil>.har', filters: '--grep <x>' });
    const nonce = /script-src 'nonce-([^']+)'/.exec(html)?.[1];
    assert.ok(nonce);
    assert.match(html, /default-src 'none'/);
    assert.equal(html.match(/<script/g)!.length, 3);
    assert.equal(html.match(new RegExp(`<script nonce="${nonce.replace(/[+/=]/g, '\\$&')}">`, 'g'))!.length, 1);
    assert.equal(html.match(/<\/script>/g)!.length, 3, 'no captured </script> closes an element');
    for (const raw of ['<img', '<svg', '<b>', '<!--', '\u2028', 'alert(2)</']) assert.ok(!html.includes(raw), raw);
    assert.ok(html.includes('<title>bb frames &lt;evil&gt;.har</title>'));
    assert.ok(html.includes('--grep &lt;x&gt;'));
    const block = /<script type="application\/json" id="bb-payloads">([^<]*)<\/script>/.exec(html)![1]!;
    assert.equal(JSON.parse(block)[0][1], hostile, 'the payload survives whole');
  });

  it('writes the page to stdout with --html -, and refuses --html with --json', async (t) => {
    const files = tempDir(t);
    const path = await files.write('bb.har', bbHar);
    const run = await bb(['frames', path, '--html', '-', '--page', 'chat']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^<!doctype html>/);
    assert.match(run.stdout, /3 rows · 1 of 1 WebSocket connection · --page chat/);
    const both = await bb(['frames', path, '--html', '-', '--json']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--html draws a finished capture as a page: drop --json/);
    const none = await bb(['frames', path, '--html', '-', '--grep', 'nothing-like-this']);
    assert.equal(none.code, 0);
    assert.match(none.stderr, /nothing to draw: no messages match/);
  });

  it('--page filters the text view too', async (t) => {
    const files = tempDir(t);
    const path = await files.write('bb.har', bbHar);
    const json = JSON.parse((await bb(['frames', path, '--json', '--page', 'sign in'])).stdout) as { connections: Array<{ messages: Msg[] }> };
    assert.deepEqual(json.connections.map((c) => c.messages.map((m) => m.data)), [['first']]);
    const tl = JSON.parse((await bb(['frames', path, '--timeline', '--json', '--page', 'chat'])).stdout) as { events: Array<{ kind: string; seq?: number }> };
    assert.deepEqual(tl.events.map((e) => e.kind), ['request', 'ws', 'response', 'ws', 'ws']);
  });
});

