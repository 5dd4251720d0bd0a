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
// every exchange keeps its row and where its journal lines are (a few numbers),
// but its records only while it is open and among the last `keep` finished
// (and a WebSocket conversation only its first WS_HELD messages'). An older
// exchange's entry is read back from the journal by its lines' places
// (entry-assembly.ts readLines, as a follower of the file does) and
// assembled again. Bodies stay in `.bodies`, read back by offset. The journal
// and `.bodies` are opened once and kept: after the capture ends and removes
// them, the open descriptors still read them until the capture closes this
// (after its HAR is written).
import { closeSync, openSync } from 'node:fs';
import type { HarEntry, HarWebSocketMessage } from './har.js';
import { unfoldRecord } from './journal-fold.js';
import { END_RECORDS, parseJournalLine, type HeaderRecord, type JournalRecord, type JournalTap } from './journal.js';
import { IN_FLIGHT_NOTE, buildEntry, buildWsMessage, emptyRecords, entryUrl, type EntryContext, type ExchangeRecords } from './to-har.js';
import { EntryAssembler, LineRanges, WS_HELD, readLines } from './entry-assembly.js';
import { entryContext } from './writer.js';
import type { Redactor } from './redact.js';
import { grpcMedia } from './grpc.js';
import { headerValue } from '../core/index.js';

/** Where an exchange is: under way (sending, waiting, receiving, open for an upgraded connection) or how it ended. */
export type LiveState = 'sending' | 'waiting' | 'receiving' | 'open' | 'done' | 'failed' | 'aborted' | 'refused' | 'closed' | 'reset';

/** One exchange as a list shows it. */
export interface LiveRow {
  /** Its `_bb.seq`: the `#<seq>` of the live log, bb show and bb frames. */
  seq: number;
  /** Request method ('' for bytes that never became a request). */
  method: string;
  /** request.url as the HAR will hold it (query secrets redacted). */
  url: string;
  /** The response status, 0 while none (or none came). */
  status: number;
  /** Where it is. */
  state: LiveState;
  /** What kind of conversation it is. */
  kind: 'http' | 'websocket' | 'sse' | 'grpc';
  /** Response media type ('' when none). */
  mime: string;
  /** When its request head arrived, epoch ms. */
  startedAt: number;
  /** When it ended, epoch ms (absent while under way). */
  endedAt?: number;
  /** Request body bytes that crossed so far. */
  requestBytes: number;
  /** Response body bytes that crossed so far. */
  responseBytes: number;
  /** WebSocket messages (and error rows) and gRPC messages so far. */
  messages: number;
  /** The step (HAR page id) it began in. */
  page?: string;
}

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
  /** Steps begun so far. */
  pages(): LivePage[];
  /** The HAR entry of exchange `seq` as it stands (in flight: `_bb.inFlight`), or undefined when there is none. */
  entry(seq: number): HarEntry | undefined;
  /** Listeners that threw (each time counted; the others were still told). */
  readonly listenerErrors: number;
  /** Exchanges whose records are in memory now: the open ones and at most `keep` finished (the rest are read back). */
  readonly heldExchanges: number;
}

/** Finished exchanges whose records a live capture keeps by default (older entries are read back from the journal). */
export const LIVE_KEEP = 1_000;

/** One exchange followed: its row, its journal lines, and its records while held. */
interface Followed {
  row: LiveRow;
  /** Every journal line holding a record of it (a folded line once), as pairs: byte offset, length. */
  lines: number[];
  /** Its records in journal order (assembled only when its entry is asked for), while it is open or among the last `keep` finished (and not a conversation past WS_HELD messages). */
  records: JournalRecord[] | undefined;
  /** WebSocket records among them. */
  ws: number;
}

/** The live capture fed by the recorder through the journal's tap (capture.ts attaches it). */
export class LiveRecords implements LiveCapture, JournalTap {
  private readonly exchanges = new Map<number, Followed>();
  /** Proxy exchange id → seq, while open. */
  private readonly seqOfX = new Map<number, number>();
  private readonly listeners = new Set<(event: LiveEvent) => void>();
  private readonly pageList: LivePage[] = [];
  private readonly ctx: EntryContext;
  private bodiesFd: number | undefined;
  private journalFd: number | undefined;
  /** Seqs of finished exchanges still holding records, oldest first from `recentFrom`. */
  private recent: number[] = [];
  private recentFrom = 0;
  private held = 0;
  /** Records told by the tap and not yet written, with the index (in lineAt) of the line each belongs to. */
  private pending: JournalRecord[] = [];
  private pendingLine: number[] = [];
  /** Places of the lines queued and not yet written. */
  private lineAt: number[] = [];
  private lineBytes: number[] = [];
  listenerErrors = 0;

  constructor(
    private readonly header: HeaderRecord,
    private readonly redactor: Redactor | undefined,
    paths: { journal: string; bodies: string },
    /** Finished exchanges whose records stay in memory. */
    private readonly keep = LIVE_KEEP,
  ) {
    // Neither file: entries note their bodies as lost (as the writer does), and an entry no longer held is none.
    this.bodiesFd = openOrNot(paths.bodies);
    this.journalFd = openOrNot(paths.journal);
    this.ctx = entryContext(header, redactor, this.bodiesFd);
  }

  get heldExchanges(): number {
    return this.held;
  }

  on(listener: (event: LiveEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  rows(): LiveRow[] {
    return [...this.exchanges.values()].map((e) => e.row).sort((a, b) => a.seq - b.seq);
  }

  pages(): LivePage[] {
    return [...this.pageList];
  }

  entry(seq: number): HarEntry | undefined {
    const e = this.exchanges.get(seq);
    const records = e && (e.records ?? this.readBack(e.lines));
    if (!records || records.length === 0) return undefined;
    const entry = buildEntry(assemble(records), this.ctx);
    // The writer's note is about a capture that ended; this one is still going (`_bb.inFlight` says enough).
    if (entry._bb?.inFlight && entry.comment !== undefined) {
      const notes = entry.comment.split('; ').filter((n) => n !== IN_FLIGHT_NOTE);
      if (notes.length > 0) entry.comment = notes.join('; ');
      else delete entry.comment;
    }
    return entry;
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
    const changed = telling ? new Set<number>() : undefined;
    const messages: LiveEvent[] | undefined = telling ? [] : undefined;
    const { pending, pendingLine, lineAt, lineBytes } = this;
    this.pending = [];
    this.pendingLine = [];
    this.lineAt = [];
    this.lineBytes = [];
    for (let i = 0; i < pending.length; i++) {
      const k = pendingLine[i]!;
      const seq = this.add(pending[i]!, lineAt[k] ?? -1, lineBytes[k] ?? 0, messages);
      if (seq !== undefined) changed?.add(seq);
    }
    if (!changed || !messages) return;
    // Rows first: a message's exchange is listed before the message arrives.
    for (const seq of changed) this.tell({ type: 'row', row: { ...this.exchanges.get(seq)!.row } });
    for (const m of messages) this.tell(m);
  }

  /** Stops telling and closes the files. */
  close(): void {
    this.listeners.clear();
    for (const fd of [this.bodiesFd, this.journalFd]) if (fd !== undefined) closeSync(fd);
    this.bodiesFd = this.journalFd = undefined;
  }

  // One record, its line at `at` (`bytes` long): returns the seq of the exchange whose row it changed (events into `messages`, when told).
  private add(r: JournalRecord, at: number, bytes: number, messages: LiveEvent[] | undefined): number | undefined {
    if (r.r === 'page') {
      const page = { id: r.id, title: r.title, time: r.ts };
      this.pageList.push(page);
      messages?.push({ type: 'page', ...page });
      return undefined;
    }
    if (r.r === 'cerr' || r.r === 'rsts') {
      const entry = buildEntry(r.r === 'cerr' ? { ...emptyRecords(), end: r } : { ...emptyRecords(), burst: r }, this.ctx);
      const row: LiveRow = {
        seq: r.seq, method: entry.request.method, url: entry.request.url, status: entry.response.status,
        state: r.r === 'cerr' ? 'refused' : 'reset', kind: 'http', mime: '', startedAt: r.ts, endedAt: r.r === 'rsts' ? r.te : r.ts,
        requestBytes: 0, responseBytes: 0, messages: 0,
      };
      if (r.page) row.page = r.page;
      this.exchanges.set(r.seq, { row, lines: at >= 0 ? [at, bytes] : [], records: [r], ws: 0 });
      this.held++;
      this.finished(r.seq);
      return r.seq;
    }
    if (r.r === 'start') {
      // gRPC calls are POSTs: only those pay for the content-type look-up (as in the recorder).
      const media = r.method === 'POST' ? grpcMedia(headerValue(r.h, 'content-type')) : undefined;
      const row: LiveRow = {
        seq: r.seq, method: r.method, url: entryUrl(r, this.header.listen, this.redactor), status: 0, state: 'sending',
        kind: media ? 'grpc' : 'http', mime: '', startedAt: r.ts, endedAt: undefined, requestBytes: 0, responseBytes: 0, messages: 0,
      };
      if (r.page) row.page = r.page;
      this.exchanges.set(r.seq, { row, lines: at >= 0 ? [at, bytes] : [], records: [r], ws: 0 });
      this.held++;
      this.seqOfX.set(r.x, r.seq);
      return r.seq;
    }
    const seq = this.seqOfX.get(r.x);
    const e = seq === undefined ? undefined : this.exchanges.get(seq);
    // A record of an exchange whose start is unknown: nothing to attach it to (as the writer does).
    if (!e) return undefined;
    placed(e.lines, at, bytes);
    const row = e.row;
    if (e.records) {
      // A long conversation is read back when asked for, as a finished exchange is (its lines are known).
      if ((r.r === 'wsm' || r.r === 'wse') && e.ws++ >= WS_HELD && at >= 0) this.drop(e);
      else e.records.push(r);
    }
    switch (r.r) {
      case 'qb': row.requestBytes += r.w; break;
      case 'qe': if (row.state === 'sending') row.state = 'waiting'; break;
      case 'rs':
        row.status = r.st;
        row.mime = headerValue(r.h, 'content-type') ?? '';
        row.state = 'receiving';
        if (/^\s*text\/event-stream\s*(;|$)/i.test(row.mime)) row.kind = 'sse';
        break;
      case 'rb': row.responseBytes += r.w; break;
      case 'upg': row.status = r.st; row.kind = 'websocket'; row.state = 'open'; break;
      case 'gm': row.messages++; break;
      case 'wsm': case 'wse':
        row.messages++;
        messages?.push({ type: 'message', seq: row.seq, message: buildWsMessage(r, this.ctx) });
        break;
      case 'fail': if (r.resp) row.status = r.resp.st; break;
      default: break;
    }
    if (END_RECORDS.has(r.r)) {
      this.seqOfX.delete(r.x);
      row.endedAt = r.ts;
      row.state = r.r === 'done' ? 'done' : r.r === 'fail' ? 'failed' : r.r === 'abort' ? 'aborted' : 'closed';
      // Kept for the capture's life: an array of its own length, not one grown for more lines.
      e.lines = e.lines.slice();
      if (e.records) this.finished(row.seq);
    }
    return row.seq;
  }

  // A finished exchange joins the recent ones; the oldest past `keep` lets its records go.
  private finished(seq: number): void {
    this.recent.push(seq);
    while (this.recent.length - this.recentFrom > this.keep) {
      const old = this.exchanges.get(this.recent[this.recentFrom++]!);
      if (old) this.drop(old);
    }
    // The array is cut now and then, not shifted each time.
    if (this.recentFrom > 1024 && this.recentFrom * 2 > this.recent.length) {
      this.recent = this.recent.slice(this.recentFrom);
      this.recentFrom = 0;
    }
  }

  private drop(e: Followed): void {
    // Without the journal to read back from, nothing is let go.
    if (!e.records || this.journalFd === undefined) return;
    e.records = undefined;
    this.held--;
  }

  // An exchange's records read back from its journal lines.
  private readBack(lines: number[]): JournalRecord[] | undefined {
    if (this.journalFd === undefined) return undefined;
    const ranges = new LineRanges();
    for (let i = 0; i < lines.length; i += 2) {
      ranges.at.push(lines[i]!);
      ranges.bytes.push(lines[i + 1]!);
    }
    return readLines(this.journalFd, ranges);
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

// Notes a record's line among its exchange's (a folded line's records share one; -1: no place known).
function placed(lines: number[], at: number, bytes: number): number[] {
  if (at >= 0 && lines[lines.length - 2] !== at) lines.push(at, bytes);
  return lines;
}

// One exchange's records (in journal order) as the writer assembles them: whole when ended, as they stand when not.
function assemble(records: JournalRecord[]): ExchangeRecords {
  const assembler = new EntryAssembler();
  for (const r of records) {
    const done = assembler.feed(r);
    if (done?.kind === 'entry') return done.exchange;
  }
  return assembler.unfinished()[0] ?? emptyRecords();
}

function openOrNot(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch {
    return undefined;
  }
}
