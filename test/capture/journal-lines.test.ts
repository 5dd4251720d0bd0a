// The hand-written lines of the hot records must be exactly what
// JSON.stringify writes for the same records (readers parse either).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  writeClose, writeDoneLine, writeRequestEndLine, writeResponseStartOpen, writeStartOpen,
} from '../../capture/journal-lines.js';
import type { DoneRecord, RequestEndRecord, ResponseStartRecord, StartRecord } from '../../capture/journal.js';
import { LineBuffer } from '../../capture/line-buffer.js';

// A line as the recorder writes it into the turn's bytes, read back as text.
function lineOf(write: (b: LineBuffer) => void): string {
  const b = new LineBuffer();
  write(b);
  return b.text();
}
const startLine = (r: Omit<StartRecord, 'r'>): string => lineOf((b) => { writeStartOpen(b, r); writeClose(b); });
const responseStartLine = (r: Omit<ResponseStartRecord, 'r'>): string => lineOf((b) => { writeResponseStartOpen(b, r); writeClose(b); });
const requestEndLine = (r: Omit<RequestEndRecord, 'r'>): string => lineOf((b) => writeRequestEndLine(b, r));
const doneLine = (r: Omit<DoneRecord, 'r'>): string => lineOf((b) => writeDoneLine(b, r));

const odd = 'q"uo\\te\n\t\u0001 é 😀 \u2028 \ud800';
const starts: StartRecord[] = [
  { r: 'start', x: 1, seq: 1, c: 'c1', ts: 1733356800123.456, scheme: 'http', method: 'GET', target: '/a?b=1', v: '1.1', h: ['Host', 'x', 'X-Odd', odd], up: 'http://127.0.0.1:3000', upg: false },
  { r: 'start', x: 2, seq: 7, c: 'c2', ts: 1, scheme: 'https', method: 'POST', target: odd, v: '1.0', h: [], up: 'https://[::1]:8443', upg: true, page: 'page_1' },
  { r: 'start', x: 3, seq: 9, c: 'c3', ts: 2.5, scheme: 'https', method: 'GET', target: '/', v: '2.0', h: [':path', '/'], up: 'u', upg: false, page: 'p', sid: 3, push: 1 },
  { r: 'start', x: 4, seq: 10, c: 'c3', ts: 3, scheme: 'http', method: 'GET', target: '/', v: '2.0', h: [], up: 'u', upg: false, sid: 5 },
];

test('startLine writes what JSON.stringify writes, optional keys included or left out', () => {
  for (const rec of starts) {
    const { r: _r, ...rest } = rec;
    assert.equal(startLine(rest), JSON.stringify(rec));
  }
});

test('requestEndLine, responseStartLine and doneLine write what JSON.stringify writes', () => {
  const qe: RequestEndRecord = { r: 'qe', x: 5, ts: 12.25, tr: ['X-T', odd] };
  const rs: ResponseStartRecord = { r: 'rs', x: 5, ts: 13, st: 200, sm: odd, v: '1.1', h: ['Content-Type', 'text/plain'] };
  const done: DoneRecord = { r: 'done', x: 5, ts: 14.125, seq: 3, tr: [] };
  assert.equal(requestEndLine({ x: qe.x, ts: qe.ts, tr: qe.tr }), JSON.stringify(qe));
  assert.equal(responseStartLine({ x: rs.x, ts: rs.ts, st: rs.st, sm: rs.sm, v: rs.v, h: rs.h }), JSON.stringify(rs));
  assert.equal(doneLine({ x: done.x, ts: done.ts, seq: done.seq, tr: done.tr }), JSON.stringify(done));
});

test('header lists and strings remembered from one line to the next never leak into a line whose lists differ', () => {
  // Equal lists as other arrays, a list that grows, one that changes one value, the empty list: each line is still JSON.stringify's.
  const lists = [['a', '1'], ['a', '1'], ['a', '1', 'b', '2'], ['a', '1', 'b', '3'], [], ['a', '1'], [odd, odd]];
  let x = 0;
  for (const h of lists) {
    for (const c of ['c1', 'c1', 'c2']) {
      const start: StartRecord = { r: 'start', x: ++x, seq: x, c, ts: x + 0.5, scheme: 'http', method: 'GET', target: '/', v: '2.0', h: [...h], up: c === 'c2' ? 'u2' : 'u1', upg: false };
      const { r: _r, ...rest } = start;
      assert.equal(startLine(rest), JSON.stringify(start));
      const rs: ResponseStartRecord = { r: 'rs', x, ts: x, st: 200, sm: '', v: '2.0', h: [...h] };
      assert.equal(responseStartLine({ x: rs.x, ts: rs.ts, st: rs.st, sm: rs.sm, v: rs.v, h: rs.h }), JSON.stringify(rs));
    }
  }
  // A caller's array changed after its line was written does not change the next line's text.
  const h = ['k', 'v'];
  const first: StartRecord = { r: 'start', x: 100, seq: 1, c: 'c1', ts: 1, scheme: 'http', method: 'GET', target: '/', v: '1.1', h, up: 'u1', upg: false };
  const { r: _r, ...rest } = first;
  assert.equal(startLine(rest), JSON.stringify(first));
  h[1] = 'changed';
  assert.equal(startLine(rest), JSON.stringify(first));
});

test('records with real clock timestamps (printed by hand, timestamp-text.ts) write what JSON.stringify writes', () => {
  const base = performance.timeOrigin + performance.now();
  for (let i = 0; i < 2000; i++) {
    // Fractions of every length, whole milliseconds among them.
    const ts = i % 7 === 0 ? Math.floor(base) + i : base + i * 0.0137;
    const start: StartRecord = { r: 'start', x: i + 1, seq: i, c: 'c1', ts, scheme: 'http', method: 'GET', target: '/', v: '1.1', h: ['a', 'b'], up: 'u', upg: false, sid: i };
    const { r: _r, ...rest } = start;
    assert.equal(startLine(rest), JSON.stringify(start));
    const qe: RequestEndRecord = { r: 'qe', x: i, ts, tr: [] };
    assert.equal(requestEndLine({ x: qe.x, ts: qe.ts, tr: qe.tr }), JSON.stringify(qe));
    const rs: ResponseStartRecord = { r: 'rs', x: i, ts, st: 204, sm: 'No Content', v: '1.1', h: [] };
    assert.equal(responseStartLine({ x: rs.x, ts: rs.ts, st: rs.st, sm: rs.sm, v: rs.v, h: rs.h }), JSON.stringify(rs));
    const done: DoneRecord = { r: 'done', x: i, ts, seq: i * 3, tr: ['t', 'v'] };
    assert.equal(doneLine({ x: done.x, ts: done.ts, seq: done.seq, tr: done.tr }), JSON.stringify(done));
  }
});
