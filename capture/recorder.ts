// The hot path: proxy facts → journal records. Keeps only tiny per-exchange
// state (bytes recorded so far, for the body cap) and forgets an exchange as
// soon as its end record is written.
import type { Fact, SyntheticResponse } from '../proxy/index.js';
import type { BodySlice, JournalAppender, SyntheticRef } from './journal.js';
import { GrpcMessageCounter, grpcMedia } from './grpc.js';
import { headerValue } from '../core/index.js';
import type { Redactor } from './redact.js';
import type { HarShadow } from './har.js';
import { doneLine, foldedDone, foldedRequestEnd, requestEndLine, responseStartOpen, startOpen } from './journal-lines.js';
import { FoldedLine } from './journal-fold.js';

/** Per open exchange: recorded byte counts (for the cap). */
interface OpenExchange {
  reqRecorded: number;
  resRecorded: number;
  /** The exchange's `_bb.seq` (taken when its request arrived). */
  seq: number;
  /** gRPC calls: whole messages counted per direction as they cross, each taking a seq. */
  grpc?: { send: GrpcMessageCounter; receive: GrpcMessageCounter };
}

/** Live counts for Capture.stats(). */
export interface RecorderCounts {
  /** Exchanges (and refused packets) seen: each becomes an entry. */
  entries: number;
  /** WebSocket messages and error rows recorded. */
  webSocketMessages: number;
  /** Pages (steps) begun. */
  pages: number;
}

/** Turns facts into journal records. */
export class Recorder {
  private seq = 0;
  private readonly open = new Map<number, OpenExchange>();
  private page: string | undefined;
  /** The last one-record exchange (a refused packet, a reset burst) and its seq, for startSeq. */
  private lastOneRecord = { x: -1, seq: 0 };
  /** Live counts. */
  readonly counts: RecorderCounts = { entries: 0, webSocketMessages: 0, pages: 0 };
  /** Set once the capture closes: later facts are ignored. */
  stopped = false;
  /** A start or response start held to fold its exchange's next chunks and end into (journal-fold.ts). */
  private readonly held = new FoldedLine();

  constructor(
    private readonly journal: JournalAppender,
    private readonly bodyCap: number,
    private readonly onError: (err: Error) => void,
    /** With redaction on: heads, targets and trailers reach the journal already redacted (bodies are sealed by the appender). */
    private readonly redactor?: Redactor,
  ) {
    // Every flush (the turn's, a completion's, the close) writes a held line first.
    journal.release = () => (this.held.x < 0 ? undefined : this.held.take(''));
  }

  // Writes the held line, if any, before a record that does not fold into it.
  private releaseHeld(): void {
    if (this.held.x >= 0) this.journal.appendLine(this.held.take(''));
  }

  // True when the fact is the held record's exchange's next chunk or end (gRPC calls are never
  // held: their gm records come between their chunks).
  private foldsIntoHeld(fact: Fact): boolean {
    const held = this.held;
    switch (fact.type) {
      case 'request-body': case 'request-ended':
        return held.kind === 'start' && fact.exchangeId === held.x;
      case 'response-body': case 'exchange-completed':
        return held.kind === 'rs' && fact.exchangeId === held.x;
      default:
        return false;
    }
  }

  // Raw headers as the journal may hold them.
  private head(h: string[]): string[] {
    return this.redactor ? this.redactor.head(h) : h;
  }

  /** Exchanges begun and not yet ended. */
  get inFlight(): number {
    return this.open.size;
  }

  /**
   * The seq an open exchange (or the refused packet just recorded) got: the
   * `#<seq>` people read everywhere (live log, bb show, bb frames).
   */
  startSeq(exchangeId: number): number | undefined {
    return this.open.get(exchangeId)?.seq ?? (this.lastOneRecord.x === exchangeId ? this.lastOneRecord.seq : undefined);
  }

  /** Begins a new page; later entries and WS messages carry its id. */
  step(title: string, time: number): string {
    this.counts.pages++;
    const id = `page_${this.counts.pages}`;
    this.page = id;
    this.releaseHeld();
    this.journal.appendRecord({ r: 'page', id, title, ts: time });
    return id;
  }

  /** Tags an open exchange for `bb shadow` (its shared id, why it was not mirrored); false when it has ended already. */
  tag(exchangeId: number, shadow: HarShadow, time: number): boolean {
    if (this.stopped || !this.open.has(exchangeId)) return false;
    try {
      this.releaseHeld();
      this.journal.appendRecord({ r: 'tag', x: exchangeId, ts: time, shadow });
    } catch (err) {
      this.onError(err as Error);
    }
    return true;
  }

  /** The FactListener body. Never throws. */
  record(fact: Fact): void {
    if (this.stopped) return;
    try {
      this.recordFact(fact);
    } catch (err) {
      this.onError(err as Error);
    }
  }

  private recordFact(fact: Fact): void {
    const j = this.journal;
    if (this.held.x >= 0 && !this.foldsIntoHeld(fact)) this.releaseHeld();
    switch (fact.type) {
      case 'exchange-started': {
        const seq = ++this.seq;
        const ex: OpenExchange = { reqRecorded: 0, resRecorded: 0, seq };
        // gRPC calls are POSTs: only those pay for the content-type look-up.
        if (fact.method === 'POST') {
          const media = grpcMedia(headerValue(fact.rawHeaders, 'content-type'));
          if (media && !media.text) ex.grpc = { send: new GrpcMessageCounter(media.web), receive: new GrpcMessageCounter(media.web) };
        }
        this.open.set(fact.exchangeId, ex);
        this.counts.entries++;
        const open = startOpen({
          x: fact.exchangeId, seq, c: fact.connectionId, ts: fact.time,
          scheme: fact.scheme, method: fact.method, target: this.redactor ? this.redactor.url(fact.target) : fact.target, v: fact.httpVersion,
          h: this.head(fact.rawHeaders), up: fact.upstream, upg: fact.upgrade,
          page: this.page || undefined, sid: fact.stream, push: fact.pushedBy,
        });
        if (ex.grpc) {
          j.appendLine(open + '}');
          return;
        }
        // Held, not written: its request's chunks and end in this turn fold into it.
        this.held.hold(fact.exchangeId, 'start', open);
        j.soon();
        return;
      }
      case 'request-body':
      case 'response-body': {
        const ex = this.open.get(fact.exchangeId);
        const request = fact.type === 'request-body';
        const already = ex ? (request ? ex.reqRecorded : ex.resRecorded) : 0;
        const slice = this.appendCapped(fact.chunk, already);
        if (ex) {
          if (request) ex.reqRecorded += slice.n;
          else ex.resRecorded += slice.n;
        }
        // Hand-written JSON for the hottest records (the same text JSON.stringify writes, in BodyRecord's order).
        if (this.held.x === fact.exchangeId) this.held.chunk(fact.time, sliceJson(slice));
        else j.appendLine(`{"r":"${request ? 'qb' : 'rb'}","x":${fact.exchangeId},"ts":${fact.time}${sliceJson(slice)}}`);
        if (ex?.grpc) {
          const d = request ? 'send' : 'receive';
          for (let n = ex.grpc[d].feed(fact.chunk); n > 0; n--) j.appendRecord({ r: 'gm', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, d });
        }
        return;
      }
      case 'request-ended':
        if (this.held.x === fact.exchangeId) j.appendLine(this.held.take(foldedRequestEnd(fact.time, this.head(fact.rawTrailers))));
        else j.appendLine(requestEndLine({ x: fact.exchangeId, ts: fact.time, tr: this.head(fact.rawTrailers) }));
        return;
      case 'response-started': {
        const open = responseStartOpen({
          x: fact.exchangeId, ts: fact.time, st: fact.statusCode, sm: fact.statusMessage,
          v: fact.httpVersion, h: this.head(fact.rawHeaders),
        });
        if (this.open.get(fact.exchangeId)?.grpc) {
          j.appendLine(open + '}');
          return;
        }
        // Held: its chunks and done in this turn fold into it.
        this.held.hold(fact.exchangeId, 'rs', open);
        j.soon();
        return;
      }
      case 'exchange-completed':
        this.open.delete(fact.exchangeId);
        if (this.held.x === fact.exchangeId) j.appendLine(this.held.take(foldedDone(fact.time, ++this.seq, this.head(fact.rawTrailers))));
        else j.appendLine(doneLine({ x: fact.exchangeId, ts: fact.time, seq: ++this.seq, tr: this.head(fact.rawTrailers) }));
        // A batched completion is made durable by the flush fact that precedes its chunk's forwarding.
        if (!fact.batched) j.flushNow();
        return;
      case 'flush':
        j.flushNow();
        return;
      case 'exchange-failed':
        this.open.delete(fact.exchangeId);
        j.appendRecord({
          r: 'fail', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, err: fact.error,
          ...(fact.response ? { resp: this.synthetic(fact.response) } : {}),
        });
        j.flushNow();
        return;
      case 'exchange-aborted':
        this.open.delete(fact.exchangeId);
        j.appendRecord({
          r: 'abort', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, by: fact.by, phase: fact.phase,
          ...(fact.error ? { err: fact.error } : {}),
          ...(fact.reset ? { rst: fact.reset } : {}),
        });
        j.flushNow();
        return;
      case 'client-error':
        this.counts.entries++;
        this.lastOneRecord = { x: fact.exchangeId, seq: ++this.seq };
        j.appendRecord({
          r: 'cerr', x: fact.exchangeId, c: fact.connectionId, ts: fact.time, seq: this.lastOneRecord.seq, err: fact.error,
          ...(fact.rawPacket ? { raw: this.appendCapped(fact.rawPacket, 0) } : {}),
          ...(fact.response ? { resp: this.synthetic(fact.response) } : {}),
          ...(this.page ? { page: this.page } : {}),
          ...(fact.authority ? { host: fact.authority } : {}),
          ...(fact.by === 'upstream' ? { by: 'upstream' as const } : {}),
        });
        j.flushNow();
        return;
      case 'streams-reset':
        // One record for a whole burst, so a rapid-reset flood costs a line a burst, not a line a stream.
        this.counts.entries++;
        this.lastOneRecord = { x: fact.exchangeId, seq: ++this.seq };
        j.appendRecord({
          r: 'rsts', x: fact.exchangeId, c: fact.connectionId, ts: fact.time, te: fact.endTime, seq: this.lastOneRecord.seq,
          scheme: fact.scheme, method: fact.method, target: fact.target, v: '2.0', h: fact.rawHeaders, up: fact.upstream,
          sid: fact.streams[0]?.[0] ?? 0, n: fact.count, ids: fact.streams,
          rst: fact.resets.map((r) => ({ by: r.by, code: r.code, n: r.count })),
          ...(this.page ? { page: this.page } : {}),
        });
        return;
      case 'upgrade-opened':
        j.appendRecord({
          r: 'upg', x: fact.exchangeId, ts: fact.time, st: fact.statusCode, sm: fact.statusMessage,
          v: fact.httpVersion, h: this.head(fact.rawHeaders),
        });
        return;
      case 'ws-message':
        this.counts.webSocketMessages++;
        // One per message: hand-written JSON, the same text JSON.stringify writes for a WsMessageRecord.
        let line = `{"r":"wsm","x":${fact.exchangeId},"ts":${fact.time},"seq":${++this.seq},"d":"${fact.direction}","op":${fact.opcode}`;
        line += `${sliceJson(this.appendCapped(fact.data, 0, fact.size))},"f":${fact.frames},"z":${fact.compressed}`;
        if (fact.closeCode !== undefined) line += `,"cc":${fact.closeCode}`;
        if (fact.closeReason !== undefined) line += `,"cr":${JSON.stringify(fact.closeReason)}`;
        if (this.page) line += `,"page":${JSON.stringify(this.page)}`;
        j.appendLine(line + '}');
        return;
      case 'ws-error':
        this.counts.webSocketMessages++;
        j.appendRecord({
          r: 'wse', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, d: fact.direction, code: fact.code,
          msg: fact.message, ...(this.page ? { page: this.page } : {}),
        });
        return;
      case 'upgrade-closed':
        this.open.delete(fact.exchangeId);
        j.appendRecord({
          r: 'wsc', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, by: fact.by,
          ...(fact.code !== undefined ? { code: fact.code } : {}),
          ...(fact.reason !== undefined ? { reason: fact.reason } : {}),
        });
        j.flushNow();
        return;
      default:
        // connection-opened / connection-closed: the entries' `connection` says enough.
        return;
    }
  }

  // Records at most what is left under the cap; the rest only counts. `whole`: the bytes
  // are the first of a longer payload (a WebSocket message the tap cut), whose size it is.
  private appendCapped(bytes: Buffer, already: number, whole = bytes.length): BodySlice {
    const room = Math.max(0, this.bodyCap - already);
    const n = Math.min(room, bytes.length);
    if (n === 0) return { n: 0, w: whole };
    // No copy: the proxy never changes a chunk after emitting it (Node's sockets and
    // parsers hand out fresh buffers, and the WebSocket tap unmasks its own copy), and
    // the bytes reach the file at the end of this turn. Copying every body byte cost
    // more than writing it (bench/proxy: 1 MiB responses, GC of the copies).
    const kept = n === bytes.length ? bytes : bytes.subarray(0, n);
    return { o: this.journal.appendBody(kept), n, w: whole };
  }

  private synthetic(resp: SyntheticResponse): SyntheticRef {
    return { st: resp.statusCode, sm: resp.statusMessage, h: this.head(resp.rawHeaders), ...this.appendCapped(resp.body, 0) };
  }
}

// A BodySlice as the JSON members `,"o":..,"n":..,"w":..` (o absent when nothing was recorded).
// Its numbers are whole and finite, so template literals print them as JSON does.
function sliceJson(slice: BodySlice): string {
  return slice.o === undefined ? `,"n":${slice.n},"w":${slice.w}` : `,"o":${slice.o},"n":${slice.n},"w":${slice.w}`;
}
