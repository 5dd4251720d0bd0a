// A body whose chunks keep coming apart (a peer trickling bytes, each more
// than JOIN_MS after the last) made a journal record each, and every reader
// of the journal (the HAR's writer, bb recover, a live view, bb shadow's
// follower) an object each: hours of it took the writer past the heap and
// lost the capture. Past a body's first `piecesTimed` pieces the recorder
// gathers its bytes and writes them as one piece per window (GATHER_MS, or a
// hundredth of the exchange's age), per GATHER_BYTES, and before any other
// record of the exchange. The bytes, the cap, the rest hash and the crash
// rule (a completed exchange is whole in the journal) stay as they were.
import { describe, it, after } from 'node:test';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { FactBus, type Fact } from '../../proxy/events.js';
import { openCapture, type Capture } from '../../capture/index.js';
import type { JournalRecord } from '../../capture/journal.js';
import { unfoldRecord } from '../../capture/journal-fold.js';
import { GATHER_BYTES, GATHER_MS } from '../../capture/options.js';
import type { Har } from '../../capture/har.js';
import { now } from '../../core/index.js';
import { tempDir } from '../helpers/tmp.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';

const tmp = tempDir();
// Far ahead of the clock: the gathering timer (which writes a piece once real time passes its window) stays out of these.
const T = Math.floor(now()) + 3_600_000;

type BodyRec = Extract<JournalRecord, { r: 'rb' }>;

function journalRecords(out: string): JournalRecord[] {
  return readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord));
}

async function open(name: string, opts: { piecesTimed?: number; bodyCap?: number } = {}): Promise<{ out: string; capture: Capture; emit: (turn: Fact[]) => Promise<void> }> {
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

const started = (x: number, at = T): Fact[] => [
  { type: 'exchange-started', exchangeId: x, connectionId: `c${x}`, time: at, scheme: 'http', method: 'GET', target: '/', httpVersion: '1.1', rawHeaders: [], upstream: 'http://127.0.0.1:3001', upgrade: false },
  { type: 'request-ended', exchangeId: x, time: at, rawTrailers: [] },
  { type: 'response-started', exchangeId: x, time: at + 1, statusCode: 200, statusMessage: 'OK', httpVersion: '1.1', rawHeaders: ['content-type', 'text/plain'] },
];
const chunk = (x: number, at: number, bytes: Buffer | string): Fact => ({ type: 'response-body', exchangeId: x, time: at, chunk: Buffer.from(bytes) });
const completed = (x: number, at: number): Fact => ({ type: 'exchange-completed', exchangeId: x, time: at, rawTrailers: [] });
const letter = (i: number): string => String.fromCharCode(97 + (i % 26));

describe('a body trickled in pieces', () => {
  it('writes its first pieces each at its time, then one piece a window, and the whole body before its done', async () => {
    const { out, capture, emit } = await open('trickle', { piecesTimed: 5 });
    await emit(started(1));
    // 200 one-byte chunks 2 ms apart, a turn each: 200 records before.
    const chunks = Array.from({ length: 200 }, (_, i) => chunk(1, T + 2 + 2 * i, letter(i)));
    for (const c of chunks) await emit([c]);
    await emit([completed(1, T + 500)]);
    const records = journalRecords(out);
    const rb = records.filter((r): r is BodyRec => r.r === 'rb');
    // The first five as they came; then pieces of GATHER_MS (50 chunks 2 ms apart each), each at its first chunk's time.
    const times = (from: number, step: number, count: number): number[] => Array.from({ length: count }, (_, k) => T + 2 + 2 * (from + k * step));
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
    const { out, capture, emit } = await open('age', { piecesTimed: 1 });
    await emit(started(1));
    await emit([chunk(1, T + 2, 'a')]);
    // 60 s into the exchange a piece spans 600 ms: chunks 100 ms apart make one piece of six.
    for (let i = 0; i < 12; i++) await emit([chunk(1, T + 60_000 + 100 * i, letter(i))]);
    await emit([completed(1, T + 62_000)]);
    assert.deepEqual(journalRecords(out).filter((r): r is BodyRec => r.r === 'rb').map((r) => r.n), [1, 6, 6]);
    await capture.close();
  });

  it('writes a piece once it holds GATHER_BYTES, and a chunk larger than that on its own', async () => {
    const { out, capture, emit } = await open('size', { piecesTimed: 1 });
    await emit(started(1));
    const third = Buffer.alloc(Math.floor(GATHER_BYTES / 3) + 1, 'x');
    const big = Buffer.alloc(GATHER_BYTES + 1, 'y');
    const sent = [Buffer.from('a'), third, third, third, big, Buffer.from('z')];
    for (const [i, b] of sent.entries()) await emit([chunk(1, T + 2 + 2 * i, b)]);
    await emit([completed(1, T + 100)]);
    const rb = journalRecords(out).filter((r): r is BodyRec => r.r === 'rb');
    assert.deepEqual(rb.map((r) => r.n), [1, 2 * third.length, third.length, big.length, 1]);
    await capture.close();
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    assert.equal(har.log.entries[0]!.response.content.text, Buffer.concat(sent).toString());
  });

  it('cuts at the body cap as before: the same text, sizes and rest hash as a body written piece by piece', async () => {
    const facts = (x: number): Fact[] => Array.from({ length: 40 }, (_, i) => chunk(x, T + 2 + 2 * i, Buffer.alloc(100, letter(i))));
    const entries = [];
    for (const piecesTimed of [3, 1_000_000]) {
      const { out, capture, emit } = await open(`cap-${piecesTimed}`, { piecesTimed, bodyCap: 1024 });
      await emit(started(1));
      for (const f of facts(1)) await emit([f]);
      await emit([completed(1, T + 200)]);
      const rb = journalRecords(out).filter((r): r is BodyRec => r.r === 'rb');
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
    const { out, capture, emit } = await open('open', { piecesTimed: 2 });
    // Real times: the timer writes a quiet body's piece once its window has passed.
    const t0 = now();
    await emit(started(1, t0));
    await emit(started(2, t0));
    for (let i = 0; i < 5; i++) await emit([chunk(1, t0 + 2 + 2 * i, letter(i)), chunk(2, t0 + 2 + 2 * i, letter(i))]);
    const quietFor = async (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    await quietFor(3 * GATHER_MS + 50);
    const rb = journalRecords(out).filter((r): r is BodyRec => r.r === 'rb');
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
    const rb = journalRecords(join(rec.dir, 'cap.har')).filter((r): r is BodyRec => r.r === 'rb');
    // 20 pieces as they came, then one a GATHER_MS or so: ~800 ms of trickle (longer on a busy machine), not ~400 records.
    assert.ok(rb.length >= 20 && rb.length <= 20 + 100, `${rb.length} rb records`);
    const har = await rec.finish();
    assert.equal(har.log.entries[0]!.response.content.text, body);
  });
});
