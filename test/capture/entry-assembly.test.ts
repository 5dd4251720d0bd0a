// The assembler with a read-back (what `bb shadow`'s follower gives it): a
// long WebSocket conversation holds a bounded number of record objects while
// open, and the exchange it hands over at the close is the one it would have
// held whole.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EntryAssembler, WS_HELD, type LineRanges } from '../../capture/entry-assembly.js';
import { parseJournalLine, type JournalRecord } from '../../capture/journal.js';

const T = 1_700_000_000_000;

/** A journal's records after its header: one conversation of `messages` messages, a small GET between every few, then its close. */
function records(messages: number): JournalRecord[] {
  const out: JournalRecord[] = [
    { r: 'start', x: 1, seq: 1, c: 'c1', ts: T, scheme: 'http', method: 'GET', target: '/ws', v: '1.1', h: ['Upgrade', 'websocket'], up: 'http://u', upg: true },
    { r: 'upg', x: 1, ts: T + 1, st: 101, sm: 'Switching Protocols', v: '1.1', h: ['Upgrade', 'websocket'] },
  ] as JournalRecord[];
  let x = 2;
  for (let i = 0; i < messages; i++) {
    out.push({ r: 'wsm', x: 1, ts: T + 2 + i, seq: 10 + i, d: i % 2 ? 'receive' : 'send', op: 1, f: 1, z: false, o: i * 8, n: 8, w: 8 } as JournalRecord);
    // Multi-byte text: byte ranges are not character counts.
    if (i % 97 === 0) out.push({ r: 'wse', x: 1, ts: T + 2 + i, seq: 10 + i, d: 'receive', code: 'WS_ERR_X', msg: `café ✓ ${i}` } as JournalRecord);
    if (i % 5 === 0) {
      out.push({ r: 'start', x, seq: 100_000 + x, c: 'c2', ts: T + i, scheme: 'http', method: 'GET', target: `/s?é=${i}`, v: '1.1', h: [], up: 'http://u', upg: false } as JournalRecord);
      out.push({ r: 'done', x, ts: T + i, seq: 200_000 + x, tr: [] } as JournalRecord);
      x++;
    }
  }
  out.push({ r: 'wsc', x: 1, ts: T + messages + 5, seq: 999_999, code: 1000, reason: 'bye', by: 'client' } as JournalRecord);
  return out;
}

describe('EntryAssembler with a read-back', () => {
  it('holds at most WS_HELD WebSocket records of an open conversation and hands over the same exchange at its close', () => {
    const recs = records(5_000);
    // The journal as bytes (its lines), and where each line is.
    const lines = recs.map((r) => JSON.stringify(r));
    const journal = Buffer.from(lines.join('\n') + '\n');
    const at: number[] = [];
    for (let i = 0, pos = 0; i < lines.length; i++) {
      at.push(pos);
      pos += Buffer.byteLength(lines[i]!) + 1;
    }
    let readBacks = 0;
    const readBack = (l: LineRanges): JournalRecord[] => {
      readBacks++;
      return l.at.map((a, i) => parseJournalLine(journal.toString('utf8', a, a + l.bytes[i]!)) as JournalRecord);
    };
    const bounded = new EntryAssembler(readBack);
    const whole = new EntryAssembler();
    let maxHeld = 0;
    let got;
    let want;
    for (let i = 0; i < recs.length; i++) {
      const a = bounded.feed(parseJournalLine(lines[i]!) as JournalRecord, at[i], Buffer.byteLength(lines[i]!));
      const b = whole.feed(parseJournalLine(lines[i]!) as JournalRecord);
      maxHeld = Math.max(maxHeld, bounded.heldWsRecords());
      if (a?.kind === 'entry' && a.exchange.start?.x === 1) got = a.exchange;
      if (b?.kind === 'entry' && b.exchange.start?.x === 1) want = b.exchange;
    }
    assert.equal(maxHeld, WS_HELD);
    assert.equal(readBacks, 1);
    assert.ok(want && got);
    assert.equal(got.ws.length, 5_000 + 52);
    assert.deepEqual(got, want);
  });

  it('holds every record when a line has no known place (no journal to read back from)', () => {
    const bounded = new EntryAssembler(() => assert.fail('nothing to read back'));
    const recs = records(200);
    let done;
    for (const r of recs) {
      const a = bounded.feed(r);
      if (a?.kind === 'entry' && a.exchange.start?.x === 1) done = a.exchange;
      else if (r.r === 'wsm' && r.seq === 209) assert.equal(bounded.heldWsRecords(), 200 + 3);
    }
    assert.equal(done?.ws.length, 200 + 3);
  });

  it('hands over a conversation still open at the end whole (unfinished)', () => {
    const recs = records(300).slice(0, -1);
    const lines = recs.map((r) => JSON.stringify(r));
    const journal = Buffer.from(lines.join('\n') + '\n');
    const bounded = new EntryAssembler((l) => l.at.map((a, i) => parseJournalLine(journal.toString('utf8', a, a + l.bytes[i]!)) as JournalRecord));
    for (let i = 0, pos = 0; i < lines.length; i++) {
      const bytes = Buffer.byteLength(lines[i]!);
      bounded.feed(recs[i]!, pos, bytes);
      pos += bytes + 1;
    }
    const [open] = bounded.unfinished();
    assert.deepEqual(open?.ws.map((r) => r.seq), recs.filter((r) => r.r === 'wsm' || r.r === 'wse').map((r) => (r as { seq: number }).seq));
  });
});
