// A capture followed live, in process: the journal lines the appender has just
// written (journal.ts `onWritten`) become one row per exchange (its state as
// it goes: sending, waiting, receiving, open, done...) and, on demand, the HAR
// entry the finished capture will hold, built by the writer's own functions
// (to-har.ts) from the same records and the same `.bodies` bytes. So a live
// view shows what the capture holds: redacted as the HAR will be, bodies cut
// at the body cap, notes and all.
//
// Only records are kept (bodies stay in `.bodies`, read back by offset when an
// entry is asked for): 100,000 exchanges cost their heads, not their bodies.
// `.bodies` is opened once and kept: after the capture ends and removes it, the
// open descriptor still reads it until the capture closes this (after its HAR is written).
import { closeSync, openSync } from 'node:fs';
import type { HarEntry, HarWebSocketMessage } from './har.js';
import { unfoldRecord } from './journal-fold.js';
import { parseJournalLine, type HeaderRecord, type JournalRecord } from './journal.js';
import { IN_FLIGHT_NOTE, addRecord, buildEntry, buildWsMessage, emptyRecords, entryUrl, type EntryContext, type ExchangeRecords } from './to-har.js';
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
}

/** The live capture fed by the journal's written lines (capture.ts wires it). */
export class LiveRecords implements LiveCapture {
  private readonly exchanges = new Map<number, { records: ExchangeRecords; row: LiveRow }>();
  /** Proxy exchange id → seq, while open. */
  private readonly seqOfX = new Map<number, number>();
  private readonly listeners = new Set<(event: LiveEvent) => void>();
  private readonly pageList: LivePage[] = [];
  private readonly ctx: EntryContext;
  private bodiesFd: number | undefined;
  listenerErrors = 0;

  constructor(
    private readonly header: HeaderRecord,
    private readonly redactor: Redactor | undefined,
    bodiesPath: string,
  ) {
    try {
      this.bodiesFd = openSync(bodiesPath, 'r');
    } catch {
      // No bodies file: entries note their bodies as lost, as the writer does.
    }
    this.ctx = entryContext(header, redactor, this.bodiesFd);
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
    if (!e) return undefined;
    const entry = buildEntry(e.records, this.ctx);
    // The writer's note is about a capture that ended; this one is still going (`_bb.inFlight` says enough).
    if (entry._bb?.inFlight && entry.comment !== undefined) {
      const notes = entry.comment.split('; ').filter((n) => n !== IN_FLIGHT_NOTE);
      if (notes.length > 0) entry.comment = notes.join('; ');
      else delete entry.comment;
    }
    return entry;
  }

  /** Takes whole journal lines as written (the header line is skipped); tells listeners one row per exchange changed. */
  feed(lines: string): void {
    const changed = new Set<number>();
    const messages: LiveEvent[] = [];
    for (const line of lines.split('\n')) {
      const rec = parseJournalLine(line);
      if (!rec || rec.r === 'bb-journal') continue;
      for (const r of unfoldRecord(rec as JournalRecord)) {
        const seq = this.add(r, messages);
        if (seq !== undefined) changed.add(seq);
      }
    }
    // Rows first: a message's exchange is listed before the message arrives.
    for (const seq of changed) this.tell({ type: 'row', row: { ...this.exchanges.get(seq)!.row } });
    for (const m of messages) this.tell(m);
  }

  /** Stops telling and closes `.bodies`. */
  close(): void {
    this.listeners.clear();
    if (this.bodiesFd !== undefined) closeSync(this.bodiesFd);
    this.bodiesFd = undefined;
  }

  // One record: returns the seq of the exchange whose row it changed.
  private add(r: JournalRecord, messages: LiveEvent[]): number | undefined {
    if (r.r === 'page') {
      const page = { id: r.id, title: r.title, time: r.ts };
      this.pageList.push(page);
      messages.push({ type: 'page', ...page });
      return undefined;
    }
    if (r.r === 'cerr' || r.r === 'rsts') {
      const records = r.r === 'cerr' ? { ...emptyRecords(), end: r } : { ...emptyRecords(), burst: r };
      const entry = buildEntry(records, this.ctx);
      const row: LiveRow = {
        seq: r.seq, method: entry.request.method, url: entry.request.url, status: entry.response.status,
        state: r.r === 'cerr' ? 'refused' : 'reset', kind: 'http', mime: '', startedAt: r.ts, endedAt: r.r === 'rsts' ? r.te : r.ts,
        requestBytes: 0, responseBytes: 0, messages: 0, ...(r.page ? { page: r.page } : {}),
      };
      this.exchanges.set(r.seq, { records, row });
      return r.seq;
    }
    if (r.r === 'start') {
      const media = grpcMedia(headerValue(r.h, 'content-type'));
      const row: LiveRow = {
        seq: r.seq, method: r.method, url: entryUrl(r, this.header.listen, this.redactor), status: 0, state: 'sending',
        kind: media ? 'grpc' : 'http', mime: '', startedAt: r.ts, requestBytes: 0, responseBytes: 0, messages: 0,
        ...(r.page ? { page: r.page } : {}),
      };
      this.exchanges.set(r.seq, { records: { ...emptyRecords(), start: r }, row });
      this.seqOfX.set(r.x, r.seq);
      return r.seq;
    }
    const seq = this.seqOfX.get(r.x);
    const e = seq === undefined ? undefined : this.exchanges.get(seq);
    // A record of an exchange whose start is unknown: nothing to attach it to (as the writer does).
    if (!e) return undefined;
    const row = e.row;
    const ended = addRecord(e.records, r);
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
        messages.push({ type: 'message', seq: row.seq, message: buildWsMessage(r, this.ctx) });
        break;
      case 'fail': if (r.resp) row.status = r.resp.st; break;
      default: break;
    }
    if (ended) {
      this.seqOfX.delete(r.x);
      row.endedAt = r.ts;
      row.state = r.r === 'done' ? 'done' : r.r === 'fail' ? 'failed' : r.r === 'abort' ? 'aborted' : 'closed';
    }
    return row.seq;
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
