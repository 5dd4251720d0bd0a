// A capture followed live, in process: the records the recorder has just had
// written (journal.ts JournalTap: the recorder's own objects, not its lines
// parsed again) become one row per exchange (its state as it goes: sending,
// waiting, receiving, open, done...) and, on demand, the HAR entry the
// finished capture will hold, built by the writer's own functions (to-har.ts)
// from the same records and the same `.bodies` bytes. So a live view shows
// what the capture holds: redacted as the HAR will be, bodies cut at the body
// cap, notes and all.
//
// Memory stays bounded by what is under way, not by the capture's length:
// every exchange keeps its row and where its journal lines are (columns of
// numbers: live-rows.ts, ~150 bytes an exchange and no object of its own),
// but its records only while it is open and among the last `keep` finished
// (and a WebSocket conversation only its first WS_HELD messages'). A
// conversation's messages past the list (MESSAGES_LISTED a direction) are
// folded as they come (ws-unlisted.ts, as the HAR's writer folds them): their
// count and hash, not a line place each. An older
// exchange's entry is read back from the journal by its lines' places
// (journal-bytes.ts readLineRanges, as a follower of the file does) and
// assembled again. Bodies stay in `.bodies`, read back by offset. The journal
// and `.bodies` are opened once and kept: after the capture ends and removes
// them, the open descriptors still read them until the capture closes this
// (after its HAR is written).
import { closeSync, openSync } from 'node:fs';
import type { HarEntry, HarEventSourceMessage, HarWebSocketMessage } from './har.js';
import { EventLister } from './to-har-bodies.js';
import { unfoldRecord } from './journal-fold.js';
import { END_RECORDS, parseJournalLine, type HeaderRecord, type JournalRecord, type JournalTap, type ResponseStartRecord, type WsErrorRecord, type WsMessageRecord } from './journal.js';
import { IN_FLIGHT_NOTE, buildEntry, buildWsMessage, emptyRecords, entryUrl, type EntryContext, type ExchangeRecords } from './to-har.js';
import { EntryAssembler, LineRanges, WS_HELD } from './entry-assembly.js';
import { WsUnlisted } from './ws-unlisted.js';
import { readLineRanges } from './journal-bytes.js';
import { LiveRowTable, type LiveRow } from './live-rows.js';
import { entryContext } from './writer.js';
import type { Redactor } from './redact.js';
import { grpcMedia } from './grpc.js';
import { headerValue, isEventStreamMedia } from '../core/index.js';

export type { LiveRow, LiveState } from './live-rows.js';

/** What a live capture tells its listeners, in journal order. */
export type LiveEvent =
  | { type: 'row'; row: LiveRow }
  | ({ type: 'page' } & LivePage)
  | { type: 'message'; seq: number; message: HarWebSocketMessage };

/** A step as the live capture tells it. */
export interface LivePage {
  /** The HAR page id ("page_1"). */
  id: string;
  /** The step's name. */
  title: string;
  /** When it began, epoch ms. */
  time: number;
}

/** The rows, pages and entries of a capture under way (Capture.live()). */
export interface LiveCapture {
  on(listener: (event: LiveEvent) => void): () => void;
  /** Every row so far, in seq order. */
  rows(): LiveRow[];
  /**
   * The seqs of the rows a list shows, in order: the latest `limit` and the open ones before them; `cut` when rows
   * were left out (older finished ones, or ones the live capture let go). Their rows are made when asked (row()).
   */
  listedRows(limit: number): { seqs: number[]; cut: boolean };
  /** Steps begun so far. */
  pages(): LivePage[];
  /** Exchange `seq`'s row, or undefined. */
  row(seq: number): LiveRow | undefined;
  /** The HAR entry of exchange `seq` as it stands (in flight: `_bb.inFlight`), or undefined when there is none. */
  entry(seq: number): HarEntry | undefined;
  /**
   * entry(seq), a WebSocket conversation with its latest `messages` listed messages only (and error rows), and how
   * many it lists before them: its first and last journal lines read back, never its middle (a page opening a
   * conversation of 200,000 messages built them all: 1 s of the relay's thread). Other exchanges whole, earlier 0.
   */
  latestOf(seq: number, messages: number): { entry: HarEntry; earlier: number } | undefined;
  /** latestOf a few thousand lines read, or a few hundred messages built, a step (each `yield` may end a turn). */
  latestOfSteps(seq: number, messages: number): Generator<void, { entry: HarEntry; earlier: number } | undefined>;
  /** Listeners that threw (each time counted; the others were still told). */
  readonly listenerErrors: number;
  /**
   * The last `limit` WebSocket messages (and error rows) the conversations list, all conversations together, in the
   * order they were recorded, each with its exchange's seq: read back by their lines' places, about `limit` lines
   * however long the capture (a frames view opened late shows these). Each message is built when asked (`build`:
   * reading and unsealing its payload, most of the cost), so a caller can spread that over turns of the loop.
   */
  recentMessages(limit: number): RecentMessage[];
  /** recentMessages read a few thousand lines a step (each `yield` may end a turn of the loop); what it returns is theirs. */
  recentMessageSteps(limit: number): Generator<void, RecentMessage[]>;
  /**
   * Follows an event stream's events from its start, each chunk read once: next() gives the events its entry lists
   * that came since the last call, and whether the stream ended. Undefined when `seq` is no event stream whose
   * records are held, or its body is content-encoded (parsed whole when its entry is built): ask the entry then.
   */
  followEvents(seq: number): EventFollower | undefined;
  /** Exchanges whose records are in memory now: the open ones and at most `keep` finished (the rest are read back). */
  readonly heldExchanges: number;
  /** Journal lines whose places are kept (16 bytes each): one or a few an exchange, and a conversation's listed messages only. */
  readonly placedLines: number;
  /** Rows let go so far (the oldest, past LIVE_ROWS): their exchanges are in the HAR, no longer in the live view. */
  readonly forgottenRows: number;
}

/** Finished exchanges whose records a live capture keeps by default (older entries are read back from the journal). */
export const LIVE_KEEP = 100;

/** A message of recentMessages built after its live capture closed (its files with it). */
export class LiveCaptureClosed extends Error {
  constructor() {
    super('the live capture is closed');
  }
}

/** Journal lines latestOf reads of a conversation besides its messages, at each end (its start and upgrade; its close). */
const EDGE_LINES = 8;

/** Messages latestOfSteps builds between steps. */
const LATEST_BUILD_STEP = 500;

/** Journal lines recentMessageSteps and latestOfSteps read between steps. */
const RECENT_READ_STEP = 2000;

/**
 * Rows a live capture keeps at least, the latest (and every open one); at twice as many the older ones go: a load
 * test through `--ui` makes millions of exchanges, ~150 bytes of row and lines each, and no page lists them all.
 */
export const LIVE_ROWS = 100_000;

/** Characters of a row's URL (a page lists it; the entry holds it whole): a peer's 16 KB request lines, row after row. */
export const ROW_URL_CHARS = 2048;

/** One of a capture's latest WebSocket messages (LiveCapture.recentMessages). */
export interface RecentMessage {
  /** Its exchange's seq. */
  seq: number;
  /** Its own `_bb.seq` and time (epoch seconds), known before it is built. */
  messageSeq: number;
  time: number;
  /** The message as the HAR holds it. */
  build(): HarWebSocketMessage;
}

/** An event stream followed as it grows (LiveCapture.followEvents). */
export interface EventFollower {
  /** The events listed since the last call, and whether the stream ended (nothing comes after). */
  next(): { events: HarEventSourceMessage[]; ended: boolean };
}

/** How much a live capture keeps (Capture.live()). */
export interface LiveLimits {
  /** Finished exchanges whose records stay in memory (LIVE_KEEP). */
  keep?: number;
  /** Rows kept at least, the latest (LIVE_ROWS). */
  rows?: number;
}

/** An exchange's records while held: in journal order (assembled only when its entry is asked for). */
interface Held {
  records: JournalRecord[];
  /** WebSocket records among them. */
  ws: number;
}

/** The live capture fed by the recorder through the journal's tap (capture.ts attaches it). */
export class LiveRecords implements LiveCapture, JournalTap {
  /** Every exchange's row and journal lines. */
  private readonly table = new LiveRowTable();
  /** By row: the records of exchanges open or among the last `keep` finished (not a conversation past WS_HELD messages). */
  private held = new Map<number, Held>();
  /** Proxy exchange id → row, while open. */
  private readonly rowOfX = new Map<number, number>();
  /**
   * By row: a conversation's count of messages per direction while it is open, and those past the list, folded as
   * they came (kept once it ends when there are any: their lines are not).
   */
  private unlisted = new Map<number, WsUnlisted>();
  private readonly listeners = new Set<(event: LiveEvent) => void>();
  private readonly pageList: LivePage[] = [];
  private readonly ctx: EntryContext;
  private bodiesFd: number | undefined;
  private journalFd: number | undefined;
  /** Rows of finished exchanges still holding records, oldest first from `recentFrom`. */
  private recent: number[] = [];
  private recentFrom = 0;
  /** Records told by the tap and not yet written, with the index (in lineAt) of the line each belongs to. */
  private pending: JournalRecord[] = [];
  private pendingLine: number[] = [];
  /** Places of the lines queued and not yet written. */
  private lineAt: number[] = [];
  private lineBytes: number[] = [];
  listenerErrors = 0;
  forgottenRows = 0;
  /** Closed (its files with it): what was handed out to build later builds nothing. */
  private closed = false;
  /** Finished exchanges whose records stay in memory. */
  private readonly keep: number;
  /** Rows kept at least, and the number of rows at which the older ones go next. */
  private readonly rowsKept: number;
  private compactAtRows: number;

  constructor(
    private readonly header: HeaderRecord,
    private readonly redactor: Redactor | undefined,
    paths: { journal: string; bodies: string },
    limits: LiveLimits = {},
  ) {
    this.keep = limits.keep ?? LIVE_KEEP;
    this.rowsKept = limits.rows ?? LIVE_ROWS;
    this.compactAtRows = 2 * this.rowsKept;
    // Neither file: entries note their bodies as lost (as the writer does), and an entry no longer held is none.
    this.bodiesFd = openOrNot(paths.bodies);
    this.journalFd = openOrNot(paths.journal);
    this.ctx = entryContext(header, redactor, this.bodiesFd);
  }

  get heldExchanges(): number {
    return this.held.size;
  }

  get placedLines(): number {
    return this.table.lineCount;
  }

  on(listener: (event: LiveEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  rows(): LiveRow[] {
    return Array.from({ length: this.table.length }, (_, i) => this.table.row(i));
  }

  listedRows(limit: number): { seqs: number[]; cut: boolean } {
    return { seqs: this.table.listed(limit), cut: this.table.length > limit || this.forgottenRows > 0 };
  }

  row(seq: number): LiveRow | undefined {
    const i = this.table.find(seq);
    return i < 0 ? undefined : this.table.row(i);
  }

  pages(): LivePage[] {
    return [...this.pageList];
  }

  entry(seq: number): HarEntry | undefined {
    const i = this.table.find(seq);
    const records = i < 0 ? undefined : this.held.get(i)?.records ?? this.readBack(i);
    return records && records.length > 0 ? this.built(i, assemble(records)) : undefined;
  }

  latestOf(seq: number, messages: number): { entry: HarEntry; earlier: number } | undefined {
    return finished(this.latestOfSteps(seq, messages));
  }

  *latestOfSteps(seq: number, messages: number): Generator<void, { entry: HarEntry; earlier: number } | undefined> {
    const at = this.table.find(seq);
    if (at < 0) return undefined;
    if (this.table.kind(at) !== 'websocket') {
      const entry = this.entry(seq);
      return entry && { entry, earlier: 0 };
    }
    // Listed now: the lines read below are the ones placed now (later messages are told to listeners as they come).
    const listed = this.table.get(at, 'listed');
    const held = this.held.get(at)?.records;
    let records: JournalRecord[] | undefined;
    if (held) records = latestMessages(held, messages);
    else if (this.journalFd !== undefined) {
      // The conversation's first lines (its start and upgrade) and its last (its latest messages, its close): never its middle.
      const { head, tail, apart } = this.table.edgeLines(at, EDGE_LINES, messages + EDGE_LINES);
      const first = readLineRanges(this.journalFd, head);
      const last: JournalRecord[] = [];
      if (!(yield* this.readBackSteps(tail, (r) => void last.push(r)))) throw new LiveCaptureClosed();
      // Lines left out between: the head's messages are older than some not read, so none of them is shown.
      records = apart ? latestMessages([...first.filter((r) => !isMessage(r)), ...last], messages) : latestMessages([...first, ...last], messages);
    }
    if (!records || records.length === 0) return undefined;
    // The row may have moved meanwhile (a compaction between steps): found again by its seq.
    const i = this.table.find(seq);
    if (i < 0) return undefined;
    const exchange = assemble(records);
    const ws = exchange.ws;
    exchange.ws = [];
    const entry = this.built(i, exchange);
    const earlier = Math.max(0, listed - ws.length);
    // The messages last, a few hundred a step: building one reads and unseals its payload (most of the cost).
    const list = entry._webSocketMessages;
    // No upgrade among the lines read (none has come that far): no messages to list.
    if (!list) return { entry, earlier };
    for (let k = 0; k < ws.length; k++) {
      if (k > 0 && k % LATEST_BUILD_STEP === 0) {
        yield;
        if (this.closed) throw new LiveCaptureClosed();
      }
      list.push(buildWsMessage(ws[k]!, this.ctx));
    }
    return { entry, earlier };
  }

  // Row `i`'s entry from its records (assembled).
  private built(i: number, exchange: ExchangeRecords): HarEntry {
    // The messages past the list are in no line read back: their fold stands for them (its digest is taken from copies).
    const past = this.unlisted.get(i);
    if (past) exchange.wsUnlisted = past;
    const entry = buildEntry(exchange, this.ctx);
    // The writer's note is about a capture that ended; this one is still going (`_bb.inFlight` says enough).
    if (entry._bb?.inFlight && entry.comment !== undefined) {
      const notes = entry.comment.split('; ').filter((n) => n !== IN_FLIGHT_NOTE);
      if (notes.length > 0) entry.comment = notes.join('; ');
      else delete entry.comment;
    }
    return entry;
  }

  recentMessages(limit: number): RecentMessage[] {
    return finished(this.recentMessageSteps(limit));
  }

  *recentMessageSteps(limit: number): Generator<void, RecentMessage[]> {
    const t = this.table;
    const rows: number[] = [];
    for (let i = 0; i < t.length; i++) if (t.kind(i) === 'websocket') rows.push(i);
    // By seq, not row: a compaction between steps moves rows.
    const found: Array<{ at: number; seq: number; r: WsMessageRecord | WsErrorRecord }> = [];
    if (this.journalFd === undefined) {
      // No journal to read back from: the records are all held (drop keeps them).
      for (const i of rows) for (const r of this.held.get(i)?.records ?? []) if (isMessage(r)) found.push({ at: found.length, seq: t.seq(i), r });
    } else {
      // A conversation's lines besides its messages' are few (its start, its upgrade, its close): asked for on top.
      for (const [i, lines] of t.latestLines(rows, limit + 3 * rows.length)) {
        const seq = t.seq(i);
        const read = yield* this.readBackSteps(lines, (r, at) => {
          if (isMessage(r)) found.push({ at, seq, r });
        });
        if (!read) return [];
      }
      found.sort((a, b) => a.at - b.at);
    }
    if (this.closed) return [];
    return found.slice(-limit).map(({ seq, r }) => ({
      seq,
      messageSeq: r.seq,
      time: r.ts / 1000,
      build: () => {
        if (this.closed) throw new LiveCaptureClosed();
        return buildWsMessage(r, this.ctx);
      },
    }));
  }

  /**
   * Reads `lines` back from the journal RECENT_READ_STEP lines at a time, a `yield` after each part; `take` gets each
   * record and the place of its line. False when the capture closed meanwhile (its file number may be another file's
   * now): nothing more is read.
   */
  private *readBackSteps(lines: LineRanges, take: (r: JournalRecord, at: number) => void): Generator<void, boolean> {
    for (let from = 0; from < lines.at.length; from += RECENT_READ_STEP) {
      if (this.closed || this.journalFd === undefined) return false;
      const part = new LineRanges();
      part.at.push(...lines.at.slice(from, from + RECENT_READ_STEP));
      part.bytes.push(...lines.bytes.slice(from, from + RECENT_READ_STEP));
      const lineOf: number[] = [];
      readLineRanges(this.journalFd, part, lineOf).forEach((r, k) => take(r, part.at[lineOf[k]!]!));
      yield;
    }
    return true;
  }

  followEvents(seq: number): EventFollower | undefined {
    const i = this.table.find(seq);
    const held = i < 0 ? undefined : this.held.get(i);
    const head = held?.records.find((r): r is ResponseStartRecord => r.r === 'rs');
    if (!held || !head || !isEventStreamMedia(headerValue(head.h, 'content-type') ?? '') || headerValue(head.h, 'content-encoding') !== undefined) return undefined;
    // The held records only grow while the exchange is open (and stay whole once it ended): read from where the last call stopped.
    let at = 0;
    let ended = false;
    let fresh: HarEventSourceMessage[] = [];
    const lister = new EventLister(this.ctx, (e) => fresh.push(e));
    return {
      next: () => {
        const records = held.records;
        for (; at < records.length && !ended; at++) {
          const r = records[at]!;
          if (r.r === 'rb') lister.push(r);
          else if (END_RECORDS.has(r.r)) {
            lister.end();
            ended = true;
          }
        }
        const events = fresh;
        fresh = [];
        return { events, ended };
      },
    };
  }

  /** Takes what was written before the tap was attached: the journal's bytes from its start (the header line is skipped). */
  catchUp(journal: Buffer): void {
    let from = 0;
    for (let nl = journal.indexOf(10); nl >= 0; from = nl + 1, nl = journal.indexOf(10, from)) {
      const rec = parseJournalLine(journal.toString('utf8', from, nl));
      if (!rec || rec.r === 'bb-journal') continue;
      for (const r of unfoldRecord(rec as JournalRecord)) this.record(r);
      this.line(from, nl - from);
    }
    this.written();
  }

  record(r: JournalRecord): void {
    this.pending.push(r);
    this.pendingLine.push(this.lineAt.length);
  }

  line(at: number, bytes: number): void {
    this.lineAt.push(at);
    this.lineBytes.push(bytes);
  }

  /** The records told since the last call are written: rows change, listeners are told one row per exchange changed. */
  written(): void {
    // No page open: rows change, and no event is made for nobody (a WebSocket message's would read its payload).
    const telling = this.listeners.size > 0;
    // By seq: a compaction within the batch moves rows to other indices.
    const changed = telling ? new Set<number>() : undefined;
    const messages: LiveEvent[] | undefined = telling ? [] : undefined;
    const { pending, pendingLine, lineAt, lineBytes } = this;
    this.pending = [];
    this.pendingLine = [];
    this.lineAt = [];
    this.lineBytes = [];
    for (let i = 0; i < pending.length; i++) {
      const k = pendingLine[i]!;
      const row = this.add(pending[i]!, lineAt[k] ?? -1, lineBytes[k] ?? 0, messages);
      if (row !== undefined) changed?.add(this.table.seq(row));
    }
    if (!changed || !messages) return;
    // Rows first: a message's exchange is listed before the message arrives.
    for (const seq of changed) {
      const i = this.table.find(seq);
      if (i >= 0) this.tell({ type: 'row', row: this.table.row(i) });
    }
    for (const m of messages) this.tell(m);
  }

  /** Stops telling and closes the files. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
    for (const fd of [this.bodiesFd, this.journalFd]) if (fd !== undefined) closeSync(fd);
    this.bodiesFd = this.journalFd = undefined;
  }

  // One record, its line at `at` (`bytes` long): returns the row it changed (events into `messages`, when told).
  private add(r: JournalRecord, at: number, bytes: number, messages: LiveEvent[] | undefined): number | undefined {
    const t = this.table;
    if (r.r === 'page') {
      const page = { id: r.id, title: r.title, time: r.ts };
      this.pageList.push(page);
      messages?.push({ type: 'page', ...page });
      return undefined;
    }
    // A secret found by value from now on, in the entries this view builds as in the HAR.
    if (r.r === 'sec') {
      this.redactor?.knowSecret(r);
      return undefined;
    }
    if (r.r === 'cerr' || r.r === 'rsts') {
      const entry = buildEntry(r.r === 'cerr' ? { ...emptyRecords(), end: r } : { ...emptyRecords(), burst: r }, this.ctx);
      const i = t.add({
        seq: r.seq, method: entry.request.method, url: entry.request.url, status: entry.response.status,
        state: r.r === 'cerr' ? 'refused' : 'reset', kind: 'http', mime: '', startedAt: r.ts, endedAt: r.r === 'rsts' ? r.te : r.ts,
        requestBytes: 0, responseBytes: 0, messages: 0, ...(r.page ? { page: r.page } : {}),
      });
      t.addLine(i, at, bytes);
      this.held.set(i, { records: [r], ws: 0 });
      this.finished(i);
      return this.compactAt(i);
    }
    if (r.r === 'start') {
      // gRPC calls are POSTs: only those pay for the content-type look-up (as in the recorder).
      const media = r.method === 'POST' ? grpcMedia(headerValue(r.h, 'content-type')) : undefined;
      const i = t.add({
        seq: r.seq, method: r.method, url: rowUrl(entryUrl(r, this.header.listen, this.redactor)), status: 0, state: 'sending',
        kind: media ? 'grpc' : 'http', mime: '', startedAt: r.ts, requestBytes: 0, responseBytes: 0, messages: 0,
        ...(r.page ? { page: r.page } : {}),
      });
      t.addLine(i, at, bytes);
      this.held.set(i, { records: [r], ws: 0 });
      this.rowOfX.set(r.x, i);
      return this.compactAt(i);
    }
    const i = this.rowOfX.get(r.x);
    // A record of an exchange whose start is unknown: nothing to attach it to (as the writer does).
    if (i === undefined) return undefined;
    if (r.r === 'wsm' && this.pastList(i, r)) {
      t.set(i, 'messages', t.get(i, 'messages') + 1);
      messages?.push({ type: 'message', seq: t.seq(i), message: buildWsMessage(r, this.ctx) });
      return i;
    }
    t.addLine(i, at, bytes);
    const held = this.held.get(i);
    if (held) {
      // A long conversation is read back when asked for, as a finished exchange is (its lines are known).
      if ((r.r === 'wsm' || r.r === 'wse') && held.ws++ >= WS_HELD && at >= 0) this.drop(i);
      else held.records.push(r);
    }
    switch (r.r) {
      case 'qb': t.set(i, 'requestBytes', t.get(i, 'requestBytes') + r.w); break;
      case 'qe': if (t.state(i) === 'sending') t.setState(i, 'waiting'); break;
      case 'rs': {
        const mime = headerValue(r.h, 'content-type') ?? '';
        t.set(i, 'status', r.st);
        t.setMime(i, mime);
        t.setState(i, 'receiving');
        if (/^\s*text\/event-stream\s*(;|$)/i.test(mime)) t.setKind(i, 'sse');
        break;
      }
      case 'rb': t.set(i, 'responseBytes', t.get(i, 'responseBytes') + r.w); break;
      case 'upg': t.set(i, 'status', r.st); t.setKind(i, 'websocket'); t.setState(i, 'open'); break;
      case 'gm': t.set(i, 'messages', t.get(i, 'messages') + 1); break;
      case 'wsm': case 'wse':
        t.set(i, 'messages', t.get(i, 'messages') + 1);
        t.set(i, 'listed', t.get(i, 'listed') + 1);
        messages?.push({ type: 'message', seq: t.seq(i), message: buildWsMessage(r, this.ctx) });
        break;
      case 'fail': if (r.resp) t.set(i, 'status', r.resp.st); break;
      default: break;
    }
    if (END_RECORDS.has(r.r)) {
      this.rowOfX.delete(r.x);
      if (this.unlisted.get(i)?.any() === false) this.unlisted.delete(i);
      t.set(i, 'endedAt', r.ts);
      t.setState(i, r.r === 'done' ? 'done' : r.r === 'fail' ? 'failed' : r.r === 'abort' ? 'aborted' : 'closed');
      if (this.held.has(i)) this.finished(i);
    }
    return i;
  }

  // Row `i` just added: at twice rowsKept rows the older ones go, but the open and the held; returns `i`'s new index.
  // Open rows may be many (long-lived connections): the next compaction waits for twice what this one kept.
  private compactAt(i: number): number {
    const t = this.table;
    if (t.length < this.compactAtRows) return i;
    const from = t.length - this.rowsKept;
    // Open rows are not all held (a long conversation's records are read back): they are the ones records still come to.
    const open = new Set(this.rowOfX.values());
    const remap = t.compact((k) => k >= from || open.has(k) || this.held.has(k));
    const moved = <V>(map: Map<number, V>): Map<number, V> => {
      const out = new Map<number, V>();
      for (const [k, v] of map) if (remap[k]! >= 0) out.set(remap[k]!, v);
      return out;
    };
    this.forgottenRows += remap.length - t.length;
    this.held = moved(this.held);
    this.unlisted = moved(this.unlisted);
    for (const [x, k] of this.rowOfX) this.rowOfX.set(x, remap[k]!);
    this.recent = this.recent.slice(this.recentFrom).map((k) => remap[k]!);
    this.recentFrom = 0;
    this.compactAtRows = Math.max(2 * this.rowsKept, 2 * t.length);
    return remap[i]!;
  }

  // Whether a WebSocket message is past its direction's list: then folded now, with its bytes, and neither held nor placed.
  private pastList(i: number, r: WsMessageRecord): boolean {
    let past = this.unlisted.get(i);
    if (!past) this.unlisted.set(i, (past = new WsUnlisted()));
    return past.foldPast(r, this.ctx.readBody);
  }

  // A finished exchange joins the recent ones; the oldest past `keep` lets its records go.
  private finished(i: number): void {
    this.recent.push(i);
    while (this.recent.length - this.recentFrom > this.keep) this.drop(this.recent[this.recentFrom++]!);
    // The array is cut now and then, not shifted each time.
    if (this.recentFrom > 1024 && this.recentFrom * 2 > this.recent.length) {
      this.recent = this.recent.slice(this.recentFrom);
      this.recentFrom = 0;
    }
  }

  private drop(i: number): void {
    // Without the journal to read back from, nothing is let go.
    if (this.journalFd !== undefined) this.held.delete(i);
  }

  // An exchange's records read back from its journal lines.
  private readBack(i: number): JournalRecord[] | undefined {
    return this.journalFd === undefined ? undefined : readLineRanges(this.journalFd, this.table.linesOf(i));
  }

  // A listener that throws must not reach the recording (this runs inside the journal's flush): counted, skipped.
  private tell(event: LiveEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        this.listenerErrors++;
      }
    }
  }
}

// One exchange's records (in journal order) as the writer assembles them: whole when ended, as they stand when not.
function assemble(records: JournalRecord[]): ExchangeRecords {
  const assembler = new EntryAssembler();
  for (const r of records) {
    const done = assembler.feed(r);
    if (done?.kind === 'entry') return done.exchange;
  }
  return assembler.unfinished().next().value ?? emptyRecords();
}

/** Runs steps to their end at once; what they return. */
function finished<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

const isMessage = (r: JournalRecord): r is WsMessageRecord | WsErrorRecord => r.r === 'wsm' || r.r === 'wse';

// The records with only the last `n` messages (and error rows) among them; the others all kept, in order.
function latestMessages(records: JournalRecord[], n: number): JournalRecord[] {
  let messages = 0;
  for (const r of records) if (isMessage(r)) messages++;
  let skip = messages - n;
  return skip <= 0 ? records : records.filter((r) => !isMessage(r) || skip-- <= 0);
}

// A row's URL, cut to ROW_URL_CHARS (its entry holds it whole).
const rowUrl = (url: string): string => (url.length > ROW_URL_CHARS ? `${url.slice(0, ROW_URL_CHARS - 1)}…` : url);

function openOrNot(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch {
    return undefined;
  }
}
