// The assembler with a read-back (what `bb shadow`'s follower gives it): a
// long WebSocket conversation holds a bounded number of record objects while
// open, and the exchange it hands over at the close is the one it would have
// held whole.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EntryAssembler, WS_HELD, type LineRanges } from '../../capture/entry-assembly.js';
import { parseJournalLine, type BodySlice, type JournalRecord } from '../../capture/journal.js';
import { MESSAGES_LISTED } from '../../capture/options.js';
import { RestHashing } from '../../capture/rest-hash.js';

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

// A conversation past the list (MESSAGES_LISTED a direction): with a reader of `.bodies` the assembler folds those
// messages as they come, so an hours-long conversation costs neither their records nor their journal ranges (3M
// one-byte messages took the HAR's writer to 380 MB). The counts and digests are those of folding them at the end.
describe('EntryAssembler with a reader of the bodies', () => {
  it('folds the messages past the list as they come: the same counts and hashes, none of them read back', () => {
    const past = 300;
    const total = 2 * (MESSAGES_LISTED + past);
    const bodies = Buffer.alloc(total * 4);
    for (let i = 0; i < total; i++) bodies.writeUInt32BE((i * 2654435761) >>> 0, i * 4);
    const read = (slice: BodySlice): Buffer => bodies.subarray(slice.o!, slice.o! + slice.n);
    const recs: JournalRecord[] = [
      { r: 'start', x: 1, seq: 1, c: 'c1', ts: T, scheme: 'http', method: 'GET', target: '/ws', v: '1.1', h: [], up: 'http://u', upg: true },
      { r: 'upg', x: 1, ts: T + 1, st: 101, sm: 'Switching Protocols', v: '1.1', h: [] },
    ] as JournalRecord[];
    for (let i = 0; i < total; i++) {
      // Past the list: a ping now and then (neither counted nor hashed), a message kept as a hash alone (past the budget).
      const op = i > total - 200 && i % 7 === 0 ? 9 : i % 3 ? 1 : 2;
      const hashOnly = i > total - 100 && i % 5 === 0;
      recs.push({ r: 'wsm', x: 1, ts: T + 2 + i, seq: 10 + i, d: i % 2 ? 'receive' : 'send', op, f: 1, z: false, ...(hashOnly ? { n: 0, w: 4, h: `h${i}` } : { o: i * 4, n: 4, w: 4 }) } as JournalRecord);
    }
    recs.push({ r: 'wsc', x: 1, ts: T + total + 5, seq: 10 + total, code: 1000, reason: 'bye', by: 'client' } as JournalRecord);
    const lines = recs.map((r) => JSON.stringify(r));
    const journal = Buffer.from(lines.join('\n') + '\n');
    let readBack = 0;
    const folding = new EntryAssembler((l) => {
      readBack += l.at.length;
      return l.at.map((a, i) => parseJournalLine(journal.toString('utf8', a, a + l.bytes[i]!)) as JournalRecord);
    }, false, read);
    const holding = new EntryAssembler();
    let got;
    let want;
    for (let i = 0, pos = 0; i < lines.length; i++) {
      const bytes = Buffer.byteLength(lines[i]!);
      const a = folding.feed(parseJournalLine(lines[i]!) as JournalRecord, pos, bytes);
      const b = holding.feed(parseJournalLine(lines[i]!) as JournalRecord);
      pos += bytes + 1;
      if (a?.kind === 'entry') got = a.exchange;
      if (b?.kind === 'entry') want = b.exchange;
    }
    assert.ok(got && want);
    // Only the listed ones past the held were read back.
    assert.equal(readBack, 2 * MESSAGES_LISTED - WS_HELD);
    assert.equal(got.ws.length, 2 * MESSAGES_LISTED);
    assert.deepEqual(got.ws, want.ws);
    const hashing = new RestHashing(Buffer.alloc(32, 7));
    const summary = got.wsUnlisted!.summary(read, hashing);
    assert.deepEqual(summary, want.wsUnlisted!.summary(read, hashing));
    // Taken again (a follower builds an entry's head, then the whole): the same, not a finished hash's error.
    assert.deepEqual(got.wsUnlisted!.summary(read, hashing), summary);
    const pings = recs.filter((r) => r.r === 'wsm' && r.seq - 10 >= 2 * MESSAGES_LISTED && r.op === 9).length;
    assert.equal(summary.counts.request! + summary.counts.response!, 2 * past - pings);
  });
});

