// The recorder writes its hottest records (qb, rb, wsm) as hand-built JSON:
// each line must be exactly what JSON.stringify writes for the record, field
// order included, whatever the optional fields and the body cap do.
import { describe, it, after } from 'node:test';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FactBus, type Fact } from '../../proxy/events.js';
import { createHash } from 'node:crypto';
import { loadRedactKey, openCapture, type Capture } from '../../capture/index.js';
import { RestHashing } from '../../capture/rest-hash.js';
import type { JournalRecord } from '../../capture/journal.js';
import { JOIN_MS, unfoldRecord } from '../../capture/journal-fold.js';
import type { Har } from '../../capture/har.js';
import { tempDir } from '../helpers/tmp.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { GATHER_BYTES, GATHER_MS } from '../../capture/options.js';
import { now } from '../../core/index.js';

const tmp = tempDir();
const T = 1764625000123.4567;
const closePayload = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye "quoted" \\ \u2028 é\n')]);

describe('recorder journal lines', () => {
  it('writes qb, rb and wsm records as JSON.stringify would, byte for byte', async () => {
    // Read before close(): a clean close removes the journal once the HAR is written.
    const out = join(tmp.dir, 'lines.har');
    const capture = await openCapture({
      out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, bodyCap: 10,
    });
    const bus = new FactBus();
    bus.on(capture.listener);
    const ws = (extra: Partial<Extract<Fact, { type: 'ws-message' }>>): Fact => ({
      type: 'ws-message', exchangeId: 2, time: T + 5, direction: 'receive', opcode: 1, data: Buffer.from('hi'), frames: 1,
      compressed: false, ...extra,
    });
    const facts: Fact[] = [
      {
        type: 'exchange-started', exchangeId: 1, connectionId: 'c1', time: T, scheme: 'http', method: 'POST', target: '/',
        httpVersion: '1.1', rawHeaders: [], upstream: 'http://127.0.0.1:3001', upgrade: false,
      },
      { type: 'request-body', exchangeId: 1, time: T + 1, chunk: Buffer.from('12345678') },
      // Past the 10-byte cap: 2 of 4 recorded, then none (no "o").
      { type: 'request-body', exchangeId: 1, time: T + 2, chunk: Buffer.from('abcd') },
      { type: 'request-body', exchangeId: 1, time: T + 3, chunk: Buffer.from('efgh') },
      { type: 'response-body', exchangeId: 1, time: T + 4, chunk: Buffer.from('ok') },
      ws({ direction: 'send', opcode: 2, data: Buffer.alloc(0), frames: 3, compressed: true }),
      ws({}),
      ws({ opcode: 8, data: closePayload, closeCode: 1000, closeReason: 'bye "quoted" \\ \u2028 é\n' }),
      ws({ opcode: 8, data: Buffer.alloc(0) }),
    ];
    for (const f of facts.slice(0, 6)) bus.emit(f);
    capture.step('a "step"');
    for (const f of facts.slice(6)) bus.emit(f);
    await new Promise((r) => setImmediate(r));
    const lines = readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean);
    await capture.close();
    assert.equal(bus.listenerErrors.length, 0);

    // The request's chunks fold into its start (journal format 3, the same turn): that line is
    // JSON.stringify's text of the folded record, and unfolds to the qb records a v2 journal held.
    const start = lines.find((l) => l.startsWith('{"r":"start"'))!;
    assert.equal(start, JSON.stringify({
      r: 'start', x: 1, seq: 1, c: 'c1', ts: T, scheme: 'http', method: 'POST', target: '/', v: '1.1', h: [], up: 'http://127.0.0.1:3001', upg: false,
      qb: [{ ts: T + 1, o: 0, n: 8, w: 8 }, { ts: T + 2, o: 8, n: 2, w: 4 }, { ts: T + 3, n: 0, w: 4 }],
    }));
    const hot = lines.flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord)).filter((r) => /^(qb|rb|wsm)$/.test(r.r)).map((r) => JSON.stringify(r));
    const expected = [
      { r: 'qb', x: 1, ts: T + 1, o: 0, n: 8, w: 8 },
      { r: 'qb', x: 1, ts: T + 2, o: 8, n: 2, w: 4 },
      { r: 'qb', x: 1, ts: T + 3, n: 0, w: 4 },
      { r: 'rb', x: 1, ts: T + 4, o: 10, n: 2, w: 2 },
      { r: 'wsm', x: 2, ts: T + 5, seq: 2, d: 'send', op: 2, n: 0, w: 0, f: 3, z: true },
      { r: 'wsm', x: 2, ts: T + 5, seq: 3, d: 'receive', op: 1, o: 12, n: 2, w: 2, f: 1, z: false, page: 'page_1' },
      {
        r: 'wsm', x: 2, ts: T + 5, seq: 4, d: 'receive', op: 8, o: 14, n: 10, w: closePayload.length, f: 1, z: false, cc: 1000,
        // Cut at the cap: the rest is hashed (keyed: the capture is redacted).
        cr: 'bye "quoted" \\ \u2028 é\n', h: new RestHashing(loadRedactKey(tmp.bbHome)).value(createHash('sha256').update(closePayload.subarray(10)).digest()), page: 'page_1',
      },
      { r: 'wsm', x: 2, ts: T + 5, seq: 5, d: 'receive', op: 8, n: 0, w: 0, f: 1, z: false, page: 'page_1' },
    ];
    assert.deepEqual(hot, expected.map((r) => JSON.stringify(r)));
  });
});

describe('a body of many small chunks', () => {
  /** Records the facts, reads the journal's records before close, then the HAR. */
  async function journalOf(name: string, facts: Fact[], bodyCap = 1024, ...later: Fact[][]): Promise<{ records: JournalRecord[]; har: Har }> {
    const out = join(tmp.dir, `${name}.har`);
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, bodyCap });
    const bus = new FactBus();
    bus.on(capture.listener);
    // Each list in a turn of its own.
    for (const turn of [facts, ...later]) {
      for (const f of turn) bus.emit(f);
      await new Promise((r) => setImmediate(r));
    }
    const records = readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord));
    await capture.close();
    assert.equal(bus.listenerErrors.length, 0);
    return { records, har: JSON.parse(readFileSync(out, 'utf8')) as Har };
  }

  const started = (x: number): Fact[] => [
    { type: 'exchange-started', exchangeId: x, connectionId: `c${x}`, time: T, scheme: 'http', method: 'GET', target: '/', httpVersion: '1.1', rawHeaders: [], upstream: 'http://127.0.0.1:3001', upgrade: false },
    { type: 'request-ended', exchangeId: x, time: T, rawTrailers: [] },
    { type: 'response-started', exchangeId: x, time: T + 1, statusCode: 200, statusMessage: 'OK', httpVersion: '1.1', rawHeaders: ['content-type', 'text/plain'] },
  ];

  it('folds the chunks of one turn that follow each other into one record: one-byte chunks were a record each', async () => {
    // 3,000 one-byte chunks read together (µs apart), past a 1 KiB cap after 1,024 of them.
    const chunks: Fact[] = Array.from({ length: 3000 }, (_, i) => ({ type: 'response-body', exchangeId: 1, time: T + 2 + i / 1e4, chunk: Buffer.from(String(i % 10)) }));
    const end: Fact = { type: 'response-ended', exchangeId: 1, time: T + 3, rawTrailers: [] };
    // The response head held in the chunks' turn (they fold into its line), and written in a turn before them.
    for (const [name, turns] of [['held', [[...started(1), ...chunks, end]]], ['open', [started(1), [...chunks, end]]]] as const) {
      const { records, har } = await journalOf(`small-chunks-${name}`, turns[0], 1024, ...turns.slice(1));
      const rb = records.filter((r) => r.r === 'rb');
      assert.deepEqual(rb.map((r) => [r.r === 'rb' && r.n, r.r === 'rb' && r.w]), [[1024, 1024], [0, 1976]], name);
      const entry = har.log.entries[0]!;
      assert.equal(entry.response.content.text, chunks.slice(0, 1024).map((f) => (f as { chunk: Buffer }).chunk.toString()).join(''));
      assert.equal(entry.response.bodySize, 3000);
      assert.equal(entry._bb!.truncated!.response, 1024);
    }
  });

  it('keeps chunks JOIN_MS or more apart as records of their own (an event is timed by its chunk), and another exchange\'s chunk between them', async () => {
    const body = (x: number, ms: number, text: string): Fact => ({ type: 'response-body', exchangeId: x, time: T + ms, chunk: Buffer.from(text) });
    const { records, har } = await journalOf('apart', [
      ...started(1), ...started(2),
      body(1, 2, 'data: a\n\n'), body(1, 2 + JOIN_MS, 'data: b\n\n'), body(1, 2.5 + JOIN_MS, 'da'), body(2, 2.6 + JOIN_MS, 'x'), body(1, 2.7 + JOIN_MS, 'ta: c\n\n'),
      { type: 'response-ended', exchangeId: 1, time: T + 9, rawTrailers: [] }, { type: 'response-ended', exchangeId: 2, time: T + 9, rawTrailers: [] },
    ]);
    const rb = records.filter((r): r is Extract<JournalRecord, { r: 'rb' }> => r.r === 'rb');
    const of = (x: number) => rb.filter((r) => r.x === x).map((r) => [r.ts, r.n]);
    // 'da' came 0.5 ms after 'data: b': one record; 'ta: c' follows another exchange's byte in .bodies: its own.
    assert.deepEqual(of(1), [[T + 2, 9], [T + 2 + JOIN_MS, 11], [T + 2.7 + JOIN_MS, 7]]);
    assert.deepEqual(of(2), [[T + 2.6 + JOIN_MS, 1]]);
    assert.equal(har.log.entries[0]!.response.content.text, 'data: a\n\ndata: b\n\ndata: c\n\n');
  });
});

describe('one-byte chunks through a recording proxy', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  it('relays the bytes unchanged and records them in a few records, not one a chunk', async () => {
    // A server that answers with 50,000 chunked-encoding chunks of one byte each (300 KB of framing for 50 KB).
    const body = Buffer.from(Array.from({ length: 50_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''));
    const server = net.createServer((s) => {
      s.once('data', () => {
        s.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n');
        s.end(Buffer.concat([...Array.from(body, (b) => Buffer.from(`1\r\n${String.fromCharCode(b)}\r\n`)), Buffer.from('0\r\n\r\n')]));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise<void>((r) => server.close(() => r())));
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const res = await request(`http://127.0.0.1:${rec.port}/trickle`);
    assert.equal(await res.body.text(), body.toString());
    const records = readFileSync(join(rec.dir, 'cap.har.journal'), 'utf8').split('\n').filter(Boolean).flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord));
    const rb = records.filter((r) => r.r === 'rb');
    // One a read of the socket at most (before: 50,000).
    assert.ok(rb.length >= 1 && rb.length <= 100, `${rb.length} rb records`);
    const har = await rec.finish();
    assert.equal(har.log.entries[0]!.response.content.text, body.toString());
  });
});

// A body whose chunks keep coming apart (a peer trickling bytes, each more
// than JOIN_MS after the last) made a journal record each, and every reader
// of the journal (the HAR's writer, bb recover, a live view, bb shadow's
// follower) an object each: hours of it took the writer past the heap and
// lost the capture. Past a body's first `piecesTimed` pieces the recorder
// gathers its bytes and writes them as one piece per window (GATHER_MS, or a
// hundredth of the exchange's age), per GATHER_BYTES, and before any other
// record of the exchange. The bytes, the cap, the rest hash and the crash
// rule (a completed exchange is whole in the journal) stay as they were.
// Far ahead of the clock: the gathering timer (which writes a piece once real time passes its window) stays out of these.
const AHEAD = Math.floor(now()) + 3_600_000;

type BodyRec = Extract<JournalRecord, { r: 'rb' }>;

function journalRecordsOf(out: string): JournalRecord[] {
  return readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord));
}

async function openGathering(name: string, opts: { piecesTimed?: number; bodyCap?: number } = {}): Promise<{ out: string; capture: Capture; emit: (turn: Fact[]) => Promise<void> }> {
  const out = join(tmp.dir, `${name}.har`);
  const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, redact: false, ...opts });
  const bus = new FactBus();
  bus.on(capture.listener);
  return {
    out,
    capture,
    // Each turn of facts, then the loop's turn (the journal's flush).
    emit: async (turn) => {
      for (const f of turn) bus.emit(f);
      await new Promise((r) => setImmediate(r));
    },
  };
}

const startedAt = (x: number, at = AHEAD): Fact[] => [
  { type: 'exchange-started', exchangeId: x, connectionId: `c${x}`, time: at, scheme: 'http', method: 'GET', target: '/', httpVersion: '1.1', rawHeaders: [], upstream: 'http://127.0.0.1:3001', upgrade: false },
  { type: 'request-ended', exchangeId: x, time: at, rawTrailers: [] },
  { type: 'response-started', exchangeId: x, time: at + 1, statusCode: 200, statusMessage: 'OK', httpVersion: '1.1', rawHeaders: ['content-type', 'text/plain'] },
];
const chunk = (x: number, at: number, bytes: Buffer | string): Fact => ({ type: 'response-body', exchangeId: x, time: at, chunk: Buffer.from(bytes) });
const completed = (x: number, at: number): Fact => ({ type: 'exchange-completed', exchangeId: x, time: at, rawTrailers: [] });
const letter = (i: number): string => String.fromCharCode(97 + (i % 26));

describe('a body trickled in pieces', () => {
  it('writes its first pieces each at its time, then one piece a window, and the whole body before its done', async () => {
    const { out, capture, emit } = await openGathering('trickle', { piecesTimed: 5 });
    await emit(startedAt(1));
    // 200 one-byte chunks 2 ms apart, a turn each: 200 records before.
    const chunks = Array.from({ length: 200 }, (_, i) => chunk(1, AHEAD + 2 + 2 * i, letter(i)));
    for (const c of chunks) await emit([c]);
    await emit([completed(1, AHEAD + 500)]);
    const records = journalRecordsOf(out);
    const rb = records.filter((r): r is BodyRec => r.r === 'rb');
    // The first five as they came; then pieces of GATHER_MS (50 chunks 2 ms apart each), each at its first chunk's time.
    const times = (from: number, step: number, count: number): number[] => Array.from({ length: count }, (_, k) => AHEAD + 2 + 2 * (from + k * step));
    assert.deepEqual(rb.map((r) => r.ts), [...times(0, 1, 5), ...times(5, GATHER_MS / 2, 4)]);
    assert.deepEqual(rb.map((r) => r.n), [1, 1, 1, 1, 1, 50, 50, 50, 45]);
    // The crash rule: every byte is in the journal before the done that says the client has it.
    const done = records.findIndex((r) => r.r === 'done');
    assert.ok(records.slice(0, done).filter((r) => r.r === 'rb').length === rb.length, 'a piece after the done');
    await capture.close();
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    assert.equal(har.log.entries[0]!.response.content.text, chunks.map((_, i) => letter(i)).join(''));
    assert.equal(har.log.entries[0]!.response.bodySize, 200);
  });

  it('spans a hundredth of the exchange\'s age once that is longer than GATHER_MS', async () => {
    const { out, capture, emit } = await openGathering('age', { piecesTimed: 1 });
    await emit(startedAt(1));
    await emit([chunk(1, AHEAD + 2, 'a')]);
    // 60 s into the exchange a piece spans 600 ms: chunks 100 ms apart make one piece of six.
    for (let i = 0; i < 12; i++) await emit([chunk(1, AHEAD + 60_000 + 100 * i, letter(i))]);
    await emit([completed(1, AHEAD + 62_000)]);
    assert.deepEqual(journalRecordsOf(out).filter((r): r is BodyRec => r.r === 'rb').map((r) => r.n), [1, 6, 6]);
    await capture.close();
  });

  it('writes a piece once it holds GATHER_BYTES, and a chunk larger than that on its own', async () => {
    const { out, capture, emit } = await openGathering('size', { piecesTimed: 1 });
    await emit(startedAt(1));
    const third = Buffer.alloc(Math.floor(GATHER_BYTES / 3) + 1, 'x');
    const big = Buffer.alloc(GATHER_BYTES + 1, 'y');
    const sent = [Buffer.from('a'), third, third, third, big, Buffer.from('z')];
    for (const [i, b] of sent.entries()) await emit([chunk(1, AHEAD + 2 + 2 * i, b)]);
    await emit([completed(1, AHEAD + 100)]);
    const rb = journalRecordsOf(out).filter((r): r is BodyRec => r.r === 'rb');
    assert.deepEqual(rb.map((r) => r.n), [1, 2 * third.length, third.length, big.length, 1]);
    await capture.close();
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    assert.equal(har.log.entries[0]!.response.content.text, Buffer.concat(sent).toString());
  });

  it('cuts at the body cap as before: the same text, sizes and rest hash as a body written piece by piece', async () => {
    const facts = (x: number): Fact[] => Array.from({ length: 40 }, (_, i) => chunk(x, AHEAD + 2 + 2 * i, Buffer.alloc(100, letter(i))));
    const entries = [];
    for (const piecesTimed of [3, 1_000_000]) {
      const { out, capture, emit } = await openGathering(`cap-${piecesTimed}`, { piecesTimed, bodyCap: 1024 });
      await emit(startedAt(1));
      for (const f of facts(1)) await emit([f]);
      await emit([completed(1, AHEAD + 200)]);
      const rb = journalRecordsOf(out).filter((r): r is BodyRec => r.r === 'rb');
      // Gathered: three pieces, one gathered up to the chunk that reaches the cap, that chunk's kept bytes, then past the cap.
      if (piecesTimed === 3) assert.deepEqual(rb.filter((r) => r.n > 0).map((r) => r.n), [100, 100, 100, 700, 24]);
      await capture.close();
      const e = (JSON.parse(readFileSync(out, 'utf8')) as Har).log.entries[0]!;
      entries.push({ text: e.response.content.text, bodySize: e.response.bodySize, truncated: e._bb?.truncated, restHash: e._bb?.restHash });
    }
    assert.equal(entries[0]!.text!.length, 1024);
    assert.ok(entries[0]!.restHash?.response, 'a rest hash');
    assert.deepEqual(entries[0], entries[1]);
  });

  it('writes the gathered bytes of a body still open when the capture closes, and of one that went quiet', async () => {
    const { out, capture, emit } = await openGathering('open', { piecesTimed: 2 });
    // Real times: the timer writes a quiet body's piece once its window has passed.
    const t0 = now();
    await emit(startedAt(1, t0));
    await emit(startedAt(2, t0));
    for (let i = 0; i < 5; i++) await emit([chunk(1, t0 + 2 + 2 * i, letter(i)), chunk(2, t0 + 2 + 2 * i, letter(i))]);
    const quietFor = async (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    await quietFor(3 * GATHER_MS + 50);
    const rb = journalRecordsOf(out).filter((r): r is BodyRec => r.r === 'rb');
    assert.equal(rb.filter((r) => r.x === 1).reduce((s, r) => s + r.n, 0), 5, 'a quiet body\'s gathered bytes reached the journal');
    await emit([chunk(2, now(), 'z')]);
    await capture.close();
    const entries = (JSON.parse(readFileSync(out, 'utf8')) as Har).log.entries;
    assert.deepEqual(entries.map((e) => [e.response.content.text, e._bb?.inFlight]), [['abcde', true], ['abcdez', true]]);
  });
});

describe('a trickling server through a recording proxy', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  it('relays every byte as it comes and records the body whole in a bounded number of records', async () => {
    // 400 one-byte chunks 2 ms apart (each its own read at the proxy, too far apart to join).
    const body = Array.from({ length: 400 }, (_, i) => letter(i)).join('');
    const server = net.createServer((s) => {
      s.once('data', () => {
        s.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n');
        let i = 0;
        const timer = setInterval(() => {
          if (i === body.length) {
            clearInterval(timer);
            s.end('0\r\n\r\n');
            return;
          }
          s.write(`1\r\n${body[i++]}\r\n`);
        }, 2);
        s.on('close', () => clearInterval(timer));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise<void>((r) => server.close(() => r())));
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, { piecesTimed: 20 });
    const res = await request(`http://127.0.0.1:${rec.port}/trickle`);
    assert.equal(await res.body.text(), body);
    const rb = journalRecordsOf(join(rec.dir, 'cap.har')).filter((r): r is BodyRec => r.r === 'rb');
    // 20 pieces as they came, then one a GATHER_MS or so: ~800 ms of trickle (longer on a busy machine), not ~400 records.
    assert.ok(rb.length >= 20 && rb.length <= 20 + 100, `${rb.length} rb records`);
    const har = await rec.finish();
    assert.equal(har.log.entries[0]!.response.content.text, body);
  });
});
