// Journal records → whole exchanges, for everything that turns a journal into
// HAR entries: the writer at finalize (writer.ts) and a live follower of a
// running capture (entry-follow.ts, what `bb shadow` compares as it flows).
// One place decides which record belongs to which exchange (to-har.ts's
// addRecord says which part of it a record is, and whether it ends it), so
// an entry built live is the entry the finished HAR holds.
// The writer and a follower of a running capture hand the assembler a way to
// read records back from the journal (journal-bytes.ts): then a long
// WebSocket conversation holds its first messages' records and only the byte
// ranges of the rest (16 bytes a message, not a parsed record), read back
// when it closes or is written unfinished, so memory stays flat under a
// steady WebSocket load and a HAR is written one conversation at a time
// (docs/performance.md "shadow"). With
// `deferReadBack` it does not even read them back at the end: the exchange is
// handed over with its ranges (`later`) and its reader calls readLater when it
// needs the whole conversation, so conversations that end together are not
// all in memory at once (bb shadow compares them a batch at a time).
// journal-bytes.ts readLineRanges reads such ranges back; the in-process
// live capture (live.ts) uses it too, for the entry of an exchange whose
// records it let go.
import type { BodySlice, JournalRecord } from './journal.js';
import { addRecord, addWsRecord, emptyRecords, type ExchangeRecords } from './to-har.js';
import { WsUnlisted } from './ws-unlisted.js';

/** What one record did: finished an exchange (its records, ready for buildEntry), began a page, or nothing yet. */
export type Assembled =
  | { kind: 'entry'; exchange: ExchangeRecords; later?: LineRanges }
  | { kind: 'page'; id: string; title: string; ts: number }
  | undefined;

/** WebSocket records an open exchange holds as objects before the rest are kept as journal byte ranges. */
export const WS_HELD = 64;

/** Records read back from the journal at once. */
const READ_BACK_BATCH = 8192;

/** Byte ranges of journal lines (where each starts, its length), packed: what an exchange keeps of records it does not hold. */
export class LineRanges {
  /** Byte offset of each line in the journal. */
  readonly at: number[] = [];
  /** Each line's length in bytes (without its newline). */
  readonly bytes: number[] = [];
}

/** Reads the records of these journal lines back, in order. */
export type ReadBack = (lines: LineRanges) => JournalRecord[];

/** Collects the records of open exchanges and hands each one over when its end record comes. */
export class EntryAssembler {
  private readonly open = new Map<number, ExchangeRecords>();
  /** Per open exchange: its WebSocket records past the first WS_HELD, as journal lines to read back. */
  private readonly later = new Map<number, LineRanges>();
  /** WebSocket records held as objects across open exchanges (kept as records come and go: heldWsRecords is read once a record). */
  private held = 0;

  /**
   * With `readBack`, WebSocket records past the first WS_HELD of an exchange
   * are read back from the journal at its end, not held; with `deferReadBack`
   * too, not even then: the entry comes with `later` for readLater. With
   * `readBody` (a reader of `.bodies`), messages past a direction's first
   * MESSAGES_LISTED are folded as they come (ws-unlisted.ts): a conversation
   * of hours costs neither their records nor their ranges.
   */
  constructor(
    private readonly readBack?: ReadBack,
    private readonly deferReadBack = false,
    private readonly readBody?: (slice: BodySlice) => Buffer,
  ) {}

  /**
   * Feeds one record (after the header); `at` and `bytes` say where its line
   * is in the journal (needed for a record to be read back instead of held).
   */
  feed(r: JournalRecord, at = -1, bytes = 0): Assembled {
    if (r.r === 'page') return { kind: 'page', id: r.id, title: r.title, ts: r.ts };
    // A secret by value belongs to no exchange: its reader's redactor takes it (knowSecret) before building entries.
    if (r.r === 'sec') return undefined;
    if (r.r === 'cerr') return { kind: 'entry', exchange: { ...emptyRecords(), end: r } };
    if (r.r === 'rsts') return { kind: 'entry', exchange: { ...emptyRecords(), burst: r } };
    if (r.r === 'start') {
      this.open.set(r.x, { ...emptyRecords(), start: r });
      return undefined;
    }
    const ex = this.open.get(r.x);
    // A record for an exchange whose start is unknown (lost to a write error): nothing to attach it to.
    if (!ex) return undefined;
    if (r.r === 'wsm' && this.readBody && (ex.wsUnlisted ??= new WsUnlisted()).foldPast(r, this.readBody)) return undefined;
    if ((r.r === 'wsm' || r.r === 'wse') && this.readBack && at >= 0 && ex.ws.length >= WS_HELD) {
      let lines = this.later.get(r.x);
      if (!lines) this.later.set(r.x, (lines = new LineRanges()));
      lines.at.push(at);
      lines.bytes.push(bytes);
      return undefined;
    }
    const before = ex.ws.length;
    const ended = addRecord(ex, r);
    this.held += ex.ws.length - before;
    if (!ended) return undefined;
    this.open.delete(r.x);
    this.held -= ex.ws.length;
    const later = this.deferReadBack ? this.later.get(r.x) : undefined;
    if (!later) return { kind: 'entry', exchange: this.whole(r.x, ex) };
    this.later.delete(r.x);
    return { kind: 'entry', exchange: ex, later };
  }

  /** Reads an exchange's deferred records back into it (after the held ones, in journal order): the exchange whole. */
  readLater(ex: ExchangeRecords, later: LineRanges): ExchangeRecords {
    // A batch at a time: the records past the list are folded as they come, and 3M read at once were 400 MB.
    for (let from = 0; from < later.at.length; from += READ_BACK_BATCH) {
      const batch = new LineRanges();
      batch.at.push(...later.at.slice(from, from + READ_BACK_BATCH));
      batch.bytes.push(...later.bytes.slice(from, from + READ_BACK_BATCH));
      for (const r of this.readBack!(batch)) if (r.r === 'wsm' || r.r === 'wse') addWsRecord(ex, r);
    }
    return ex;
  }

  /**
   * Hands over the exchanges that never ended, oldest first (a recovered
   * capture keeps everything it saw), and forgets them: one at a time, each
   * read back whole only when its turn comes, so the writer holds one
   * conversation's records at a time, not every open one's.
   */
  *unfinished(): Generator<ExchangeRecords> {
    const order = [...this.open].sort(([, a], [, b]) => a.start!.seq - b.start!.seq).map(([x]) => x);
    for (const x of order) {
      const ex = this.open.get(x)!;
      this.open.delete(x);
      this.held -= ex.ws.length;
      yield this.whole(x, ex);
    }
  }

  /** WebSocket records held as objects now, across open exchanges (the rest are byte ranges). */
  heldWsRecords(): number {
    return this.held;
  }

  // The exchange with the records it did not hold read back, in journal order after the held ones.
  private whole(x: number, ex: ExchangeRecords): ExchangeRecords {
    const lines = this.later.get(x);
    if (!lines) return ex;
    this.later.delete(x);
    return this.readLater(ex, lines);
  }
}

