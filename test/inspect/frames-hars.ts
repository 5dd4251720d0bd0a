// Hand-made HARs in the shapes Chrome and bb write, with WebSocket messages,
// shared by the framesDiagram and framesHtml tests.
import type { framesDiagram } from '../../inspect/index.js';
import { entry, har, wsEntry, type Msg } from '../helpers/har.js';

/** 10:00:00 on 2024-05-01 in epoch seconds, the time the HARs below start at. */
export const t0 = Date.parse('2024-05-01T10:00:00.000Z') / 1000;
/** Base64 of a string or bytes (how HAR holds binary messages). */
export const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
/** A diagram's rows as "lane dir label" lines. */
export const labels = (d: ReturnType<typeof framesDiagram>) => d.rows.map((r) => `${d.lanes[r.lane]!.id} ${r.dir} ${r.label}`);

// Chrome: no seq, two connections whose messages interleave by time; pages by pageref.
export const chromeMessagesA: Msg[] = [
  { type: 'send', time: t0 + 0.1, opcode: 1, data: '{"op":"hello"}' },
  { type: 'receive', time: t0 + 0.4, opcode: 1, data: '{"op":"welcome"}' },
  { type: 'receive', time: t0 + 0.9, opcode: 8, data: b64(Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')])) },
];
export const chromeMessagesB: Msg[] = [
  { type: 'send', time: t0 + 0.2, opcode: 2, data: b64(Buffer.from([0, 1, 2, 255])) },
  { type: 'receive', time: t0 + 0.5, opcode: 9, data: b64('ping!') },
];
export const chrome = har([
  wsEntry('wss://app.test/a', '2024-05-01T10:00:00.000Z', chromeMessagesA, { connection: '11', pageref: 'page_1' }),
  entry('https://app.test/api/items', '2024-05-01T10:00:00.300Z', { pageref: 'page_2' }),
  wsEntry('wss://app.test/b', '2024-05-01T10:00:00.050Z', chromeMessagesB, { connection: '12', pageref: 'page_2' }),
], { pages: [{ id: 'page_1', title: 'home', startedDateTime: '2024-05-01T10:00:00.000Z', pageTimings: {} }, { id: 'page_2', title: 'items', startedDateTime: '2024-05-01T10:00:00.040Z', pageTimings: {} }] });

// bb: seq decides over time; messages carry their own page; an error row; an HTTP error (bb's 502).
export const bbHar = har([
  wsEntry('ws://127.0.0.1:4000/chat', '2024-05-01T10:00:00.000Z', [
    { type: 'receive', time: t0 + 0.1, opcode: 1, data: 'second', _bb: { seq: 4, page: 'page_2' } },
    { type: 'send', time: t0 + 0.2, opcode: 1, data: 'first', _bb: { seq: 2, page: 'page_1' } },
    { type: 'error', time: t0 + 0.3, opcode: -1, data: 'Invalid WebSocket frame: invalid opcode 3', _bb: { seq: 7, error: 'WS_ERR_INVALID_OPCODE', direction: 'receive', page: 'page_2' } },
    { type: 'send', time: t0 + 0.25, opcode: 8, data: b64(Buffer.from([0x0f, 0xa0, 0x62])), _bb: { seq: 6, code: 4000, reason: 'b', page: 'page_2' } },
  ], { connection: 'c1', _bb: { seq: 1 } }),
  entry('http://127.0.0.1:4000/api/state', '2024-05-01T10:00:00.200Z', { connection: 'c2', status: 502, pageref: 'page_2', _bb: { seq: 3, seqEnd: 5, error: { code: 'ECONNREFUSED', message: 'refused', phase: 'connect' } } }),
], { pages: [{ id: 'page_1', title: 'sign in', startedDateTime: '2024-05-01T10:00:00.000Z', pageTimings: {} }, { id: 'page_2', title: 'chat', startedDateTime: '2024-05-01T10:00:00.150Z', pageTimings: {} }] });
