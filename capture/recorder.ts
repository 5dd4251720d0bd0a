// The hot path: proxy facts → journal records. Keeps only tiny per-exchange
// state (bytes recorded so far, for the body cap) and forgets an exchange as
// soon as its end record is written.
import type { Fact, SyntheticResponse } from '../proxy/index.js';
import type { BodySlice, JournalAppender, SyntheticRef, WsMessageRecord } from './journal.js';
import { GrpcMessageCounter, grpcMedia } from './grpc.js';
import { headerValue } from '../core/index.js';
import type { Redactor } from './redact.js';
import type { HarShadow } from './har.js';
import {
  writeBodyLine, writeDoneLine, writeRequestEndLine, writeWsmLine, type WsmPlace,
} from './journal-lines.js';
import { bodyRecord, HeldLines, joinsChunk, type HeadHolder, type HeldHead, type ResponseFields, type StartFields } from './journal-fold.js';
import { RestHashing } from './rest-hash.js';
import { DEFAULT_WS_BUDGET, GATHER_BYTES, GATHER_MS, MESSAGES_LISTED, PIECES_TIMED } from './options.js';
import { LEARN_BYTES, learnSecrets, learnsFrom } from './redact-learn.js';
import type { Hash } from 'node:crypto';
import { now } from '../core/index.js';

/** Per open exchange: recorded byte counts (for the cap), and its start or response start while held (journal-fold.ts). */
interface OpenExchange extends HeadHolder {
  reqRecorded: number;
  resRecorded: number;
  /** The exchange's `_bb.seq` (taken when its request arrived). */
  seq: number;
  /** gRPC calls: whole messages counted per direction as they cross, each taking a seq. */
  grpc?: { send: GrpcMessageCounter; receive: GrpcMessageCounter };
  /** Running hashes of the request's and the response's bytes past the cap (rest-hash.ts), made at the first such byte. */
  reqRest?: Hash;
  resRest?: Hash;
  /** A WebSocket conversation: message bytes recorded per direction so far, -1 once past the budget. */
  wsKept?: { send: number; receive: number };
  /** Informational (1xx) heads seen so far. */
  informational?: number;
  /** When the exchange began (a gathered piece spans at least a hundredth of its age). */
  started: number;
  /** Pieces (body records) written per body, counted until the body's bytes are gathered (PIECES_TIMED). */
  reqPieces: number;
  resPieces: number;
  /** A body's bytes past its first PIECES_TIMED pieces, gathered to be written as one piece. */
  reqGather: Gather | undefined;
  resGather: Gather | undefined;
  /** A small JSON or form response read for the secrets it issues once it ends (redact-learn.ts); dropped past LEARN_BYTES. */
  learn?: LearnBody;
}

/** A response body held (its chunks, no copy) to learn its secrets from when it ends. */
interface LearnBody {
  chunks: Buffer[];
  n: number;
  type: string;
  encoding: string | undefined;
}

/**
 * A body's kept bytes held in memory past its first PIECES_TIMED pieces, written as one piece (one record, one run of
 * `.bodies`) when they span their window or fill GATHER_BYTES, and before any other record of their exchange.
 */
interface Gather {
  ex: OpenExchange;
  x: number;
  request: boolean;
  /** The bytes gathered (a copy: a chunk may be a view of a far larger read); under the cap, as many as crossed. */
  buf: Buffer;
  n: number;
  /** The first one's time: the piece's. */
  ts: number;
}

const NO_BYTES = Buffer.alloc(0);

/** How long a piece gathered from `ts` on may span: GATHER_MS, or a hundredth of the exchange's age when longer. */
function gatherWindow(started: number, ts: number): number {
  return Math.max(GATHER_MS, (ts - started) / 100);
}

/** The informational (1xx) heads of one exchange that are recorded; past them, one record says more came. */
export const INFORMATIONAL_KEPT = 16;

/** True for the facts whose records hold a start or response start or fold into one (journal-fold.ts). */
function exchangeFlow(type: Fact['type']): boolean {
  switch (type) {
    case 'exchange-started': case 'request-body': case 'request-ended': case 'response-started': case 'response-body': case 'exchange-completed':
      return true;
    default:
      return false;
  }
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
  // The last seq given; shared by the segments of a rotating capture (segments.ts), so `_bb.seq` runs on across files.
  private get seq(): number {
    return this.seqs.n;
  }
  private set seq(n: number) {
    this.seqs.n = n;
  }
  private readonly open = new Map<number, OpenExchange>();
  private page: string | undefined;
  /** The last one-record exchange (a refused packet, a reset burst) and its seq, for startSeq. */
  private lastOneRecord = { x: -1, seq: 0 };
  /** Live counts. */
  readonly counts: RecorderCounts = { entries: 0, webSocketMessages: 0, pages: 0 };
  /** Set once the capture closes: later facts are ignored. */
  stopped = false;
  /** What a digest of bytes past the cap is recorded as (keyed with redaction on). */
  private readonly rest: RestHashing;
  /** Running rest hashes of open exchanges: while none runs, an exchange's end looks nothing up for them. */
  private hashing = 0;
  /** How many bytes the last appendCappedJson kept (its slice's `n`). */
  private keptN = 0;
  /** Where the last appendCappedJson kept them in `.bodies` (its slice's `o`, when it kept any). */
  private keptO = 0;
  /** Starts and response starts held to fold their exchange's chunks and end of this turn into (journal-fold.ts). */
  private readonly held: HeldLines;
  /** Bodies whose bytes are being gathered (PIECES_TIMED), and the timer that writes those that spanned their window. */
  private readonly gathers = new Set<Gather>();
  private gatherTimer: NodeJS.Timeout | undefined;
  /** The place members of the WebSocket message being written (one object reused: a message's line allocates nothing of its own). */
  private readonly wsmPlace: WsmPlace = { seq: 0, o: 0, n: 0, w: 0, h: undefined, page: undefined };

  constructor(
    private readonly journal: JournalAppender,
    private readonly bodyCap: number,
    private readonly onError: (err: Error) => void,
    /** With redaction on: heads, targets and trailers reach the journal already redacted (bodies are sealed by the appender). */
    private readonly redactor?: Redactor,
    /** The seq counter (one per recording; a rotating capture's segments share it). */
    private readonly seqs: { n: number } = { n: 0 },
    /** Message bytes recorded per WebSocket connection and direction (wsRoom). */
    private readonly wsBudget = DEFAULT_WS_BUDGET,
    /** A body's pieces written each at its own time before its bytes are gathered (PIECES_TIMED; tests lower it). */
    private readonly piecesTimed = PIECES_TIMED,
  ) {
    this.rest = redactor ? redactor.restHashing() : new RestHashing();
    this.held = new HeldLines(journal);
    // Every flush (the turn's, a completion's, the close) writes the held lines first.
    journal.release = () => {
      this.writeOpenBody();
      this.held.releaseAll();
    };
    // Any other line goes after the body line held open.
    journal.beforeLine = () => this.writeOpenBody();
  }

  // Raw headers as the journal may hold them.
  private head(h: string[]): string[] {
    return this.redactor ? this.redactor.head(h) : h;
  }

  // A WebSocket close reason as the journal may hold it: free text a peer chose (`bye <token>`), redacted as a text message is.
  private closeReason(reason: string | undefined): string | undefined {
    return reason === undefined || !this.redactor ? reason : (this.redactor.textValue(reason) ?? reason);
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
    this.held.releaseAll();
    this.journal.appendRecord({ r: 'page', id, title, ts: time });
    return id;
  }

  /** Tags an open exchange for `bb shadow` (its shared id, why it was not mirrored); false when it has ended already. */
  tag(exchangeId: number, shadow: HarShadow, time: number): boolean {
    const ex = this.open.get(exchangeId);
    if (this.stopped || !ex) return false;
    try {
      // Its start still held (the tee tags as the exchange starts): the tag folds into the start's line.
      if (ex.held?.kind === 'start') {
        this.held.tag(ex.held, time, shadow);
        return true;
      }
      this.held.releaseAll();
      this.journal.appendRecord({ r: 'tag', x: exchangeId, ts: time, shadow });
    } catch (err) {
      this.onError(err as Error);
    }
    return true;
  }

  /** Ends the recording: bytes still gathered are written (the journal's close flushes them), later facts are ignored. */
  stop(): void {
    if (this.stopped) return;
    try {
      for (const g of [...this.gathers]) this.endGather(g);
    } catch (err) {
      this.onError(err as Error);
    }
    this.stopped = true;
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

  /**
   * The body line held open: a body's chunks of one turn are one record (a peer's one-byte chunks made a record
   * each, 64 journal bytes a body byte, and at the HAR write an object each: 2M chunks took 1.1 GB).
   */
  private openBody: { x: number; request: boolean; ts: number; o: number; n: number; w: number } | undefined;

  // Writes the body line held open, if one is (hand-written JSON for the hottest records: the same bytes JSON.stringify
  // writes, in BodyRecord's order).
  private writeOpenBody(): void {
    const b = this.openBody;
    if (!b) return;
    this.openBody = undefined;
    this.writeBody(b.request, b.x, b.ts, b.o, b.n, b.w);
  }

  private writeBody(request: boolean, x: number, ts: number, o: number, n: number, w: number): void {
    const j = this.journal;
    j.tapped?.record(bodyRecord(request ? 'qb' : 'rb', x, ts, o, n, w));
    writeBodyLine(j.beginLine(), request, x, ts, o, n, w);
    j.endLine();
  }

  // Takes a chunk wholly under the cap into its body's gathered bytes; false when it is not for them (it reaches the
  // cap, or is larger than a gathered piece): then the bytes gathered so far are written first, and it goes as before.
  private gather(g: Gather, chunk: Buffer, time: number, already: number): boolean {
    const len = chunk.length;
    if (len > GATHER_BYTES || this.room(already, len) < len) {
      if (len > GATHER_BYTES) this.writeGather(g);
      else this.endGather(g);
      return false;
    }
    if (g.n > 0 && (g.n + len > GATHER_BYTES || time - g.ts >= gatherWindow(g.ex.started, g.ts))) this.writeGather(g);
    if (g.n === 0) g.ts = time;
    if (g.n + len > g.buf.length) {
      const next = Buffer.allocUnsafe(Math.min(GATHER_BYTES, Math.max(2 * g.buf.length, g.n + len, 1024)));
      g.buf.copy(next, 0, 0, g.n);
      g.buf = next;
    }
    chunk.copy(g.buf, g.n);
    g.n += len;
    return true;
  }

  // Writes a body's gathered bytes as one piece; the buffer goes to `.bodies` as it is and the next piece gets its own.
  private writeGather(g: Gather): void {
    if (g.n === 0) return;
    if (g.ex.held) this.held.release(g.ex);
    const o = this.journal.appendBody(g.buf.subarray(0, g.n));
    this.writeBody(g.request, g.x, g.ts, o, g.n, g.n);
    g.buf = NO_BYTES;
    g.n = 0;
    this.journal.soon();
  }

  // Writes what a body gathered and stops gathering it.
  private endGather(g: Gather): void {
    this.writeGather(g);
    this.gathers.delete(g);
    if (g.request) g.ex.reqGather = undefined;
    else g.ex.resGather = undefined;
    if (this.gathers.size === 0 && this.gatherTimer) {
      clearInterval(this.gatherTimer);
      this.gatherTimer = undefined;
    }
  }

  private startGather(ex: OpenExchange, x: number, request: boolean): void {
    const g: Gather = { ex, x, request, buf: NO_BYTES, n: 0, ts: 0 };
    if (request) ex.reqGather = g;
    else ex.resGather = g;
    this.gathers.add(g);
    // A body that goes quiet is still written within its window, not only at its next chunk or its end.
    this.gatherTimer ??= setInterval(() => {
      try {
        const t = now();
        for (const each of this.gathers) if (each.n > 0 && t - each.ts >= gatherWindow(each.ex.started, each.ts)) this.writeGather(each);
      } catch (err) {
        this.onError(err as Error);
      }
    }, GATHER_MS).unref();
  }

  // Another record of an exchange is coming: its bodies' gathered bytes go first (its end: and gathering stops).
  private beforeExchangeRecord(fact: Fact): void {
    if (!('exchangeId' in fact)) return;
    const ex = this.open.get(fact.exchangeId);
    if (!ex) return;
    const ends = fact.type === 'exchange-completed' || fact.type === 'exchange-failed' || fact.type === 'exchange-aborted' || fact.type === 'upgrade-closed';
    for (const g of [ex.reqGather, ex.resGather]) {
      if (!g) continue;
      if (ends || (g.request && fact.type === 'request-ended')) this.endGather(g);
      else this.writeGather(g);
    }
  }

  private recordFact(fact: Fact): void {
    const j = this.journal;
    if (fact.type !== 'request-body' && fact.type !== 'response-body') {
      // Any other fact's records go after the body line held open (the live tap is told records in journal order too).
      if (this.openBody) this.writeOpenBody();
      // Bodies gathered past PIECES_TIMED are written before any other record of their exchange.
      if (this.gathers.size > 0) this.beforeExchangeRecord(fact);
    }
    // A record of another kind is written after the held lines, in the order the facts came.
    if (!exchangeFlow(fact.type)) this.held.releaseAll();
    switch (fact.type) {
      case 'exchange-started': {
        const seq = ++this.seq;
        const ex: OpenExchange = {
          reqRecorded: 0, resRecorded: 0, seq, held: undefined,
          started: fact.time, reqPieces: 0, resPieces: 0, reqGather: undefined, resGather: undefined,
        };
        // gRPC calls are POSTs: only those pay for the content-type look-up.
        if (fact.method === 'POST') {
          const media = grpcMedia(headerValue(fact.rawHeaders, 'content-type'));
          if (media && !media.text) ex.grpc = { send: new GrpcMessageCounter(media.web), receive: new GrpcMessageCounter(media.web) };
        }
        this.open.set(fact.exchangeId, ex);
        this.counts.entries++;
        const start: StartFields = {
          x: fact.exchangeId, seq, c: fact.connectionId, ts: fact.time,
          scheme: fact.scheme, method: fact.method, target: this.redactor ? this.redactor.url(fact.target) : fact.target, v: fact.httpVersion,
          h: this.head(fact.rawHeaders), up: fact.upstream, upg: fact.upgrade,
          page: this.page || undefined, sid: fact.stream, push: fact.pushedBy,
        };
        // Held (not a gRPC call): its request's chunks and end in this turn fold into it.
        const held: HeldHead = { kind: 'start', rec: start, chunks: undefined };
        if (ex.grpc) this.held.write(held);
        else this.held.hold(ex, held);
        return;
      }
      case 'request-body':
      case 'response-body': {
        const ex = this.open.get(fact.exchangeId);
        const request = fact.type === 'request-body';
        if (!request && ex?.learn) this.keepToLearn(ex, ex.learn, fact.chunk);
        // The exchange's other head, held, goes first (its records keep their order).
        if (ex?.held && ex.held.kind !== (request ? 'start' : 'rs')) this.held.release(ex);
        const already = ex ? (request ? ex.reqRecorded : ex.resRecorded) : 0;
        const g = ex === undefined ? undefined : request ? ex.reqGather : ex.resGather;
        let n: number;
        if (g !== undefined && this.gather(g, fact.chunk, fact.time, already)) {
          n = fact.chunk.length;
          if (request) ex!.reqRecorded += n;
          else ex!.resRecorded += n;
        } else {
          this.appendCappedJson(fact.chunk, already);
          n = this.keptN;
          const keptAt = this.keptO;
          if (ex) {
            if (request) ex.reqRecorded += n;
            else ex.resRecorded += n;
            // Past the cap: hashed, not kept (only then: a body under the cap costs no hashing).
            if (n < fact.chunk.length) this.hashRest(ex, request, fact.chunk.subarray(n));
          }
          if (ex?.held) this.held.chunk(ex.held, fact.time, keptAt, n, fact.chunk.length);
          else {
            // Held open until another line, a flush or the turn's end: the chunks that follow it in the turn extend it.
            const open = this.openBody;
            if (open && open.x === fact.exchangeId && open.request === request && joinsChunk(open.ts, open.o, open.n, fact.time, keptAt, n)) {
              open.n += n;
              open.w += fact.chunk.length;
            } else {
              this.writeOpenBody();
              this.openBody = { x: fact.exchangeId, request, ts: fact.time, o: keptAt, n, w: fact.chunk.length };
              j.soon();
              // Past its first pieces a body whose chunks keep coming apart (a peer trickling bytes) is gathered.
              if (ex && n > 0 && n === fact.chunk.length && g === undefined) {
                const pieces = request ? ++ex.reqPieces : ++ex.resPieces;
                if (pieces >= this.piecesTimed) this.startGather(ex, fact.exchangeId, request);
              }
            }
          }
        }
        // A seq for each message the HAR will list: whole in the kept bytes, among a direction's first MESSAGES_LISTED
        // (past them, or past the cap, a long stream of small messages would grow the journal without end).
        const counter = ex?.grpc?.[request ? 'send' : 'receive'];
        if (counter && n > 0 && counter.completed < MESSAGES_LISTED) {
          const d = request ? 'send' : 'receive';
          const room = MESSAGES_LISTED - counter.completed;
          for (let k = Math.min(counter.feed(n < fact.chunk.length ? fact.chunk.subarray(0, n) : fact.chunk), room); k > 0; k--) {
            j.appendRecord({ r: 'gm', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, d });
          }
        }
        return;
      }
      case 'request-ended': {
        const ex = this.open.get(fact.exchangeId);
        if (this.hashing > 0 && ex?.reqRest) {
          // A rest record follows the start it belongs to: no folding for a body cut at the cap.
          this.held.release(ex);
          this.endRest(fact.exchangeId, fact.time, 'q');
        }
        const tr = this.head(fact.rawTrailers);
        if (ex?.held?.kind === 'start') {
          this.held.end(ex, fact.time, undefined, tr);
          return;
        }
        if (ex?.held) this.held.release(ex);
        j.tapped?.record({ r: 'qe', x: fact.exchangeId, ts: fact.time, tr: tr.slice() });
        writeRequestEndLine(j.beginLine(), { x: fact.exchangeId, ts: fact.time, tr });
        j.endLine();
        return;
      }
      case 'response-started': {
        const ex = this.open.get(fact.exchangeId);
        // A request still held (a response before the request ended) goes first.
        if (ex?.held) this.held.release(ex);
        const head: ResponseFields = {
          x: fact.exchangeId, ts: fact.time, st: fact.statusCode, sm: fact.statusMessage,
          v: fact.httpVersion, h: this.head(fact.rawHeaders),
        };
        // Held (not a gRPC call): its chunks and done in this turn fold into it.
        // Written whole for a gRPC call, or an exchange the recorder does not know.
        const held: HeldHead = { kind: 'rs', rec: head, chunks: undefined };
        if (!ex || ex.grpc) this.held.write(held);
        else this.held.hold(ex, held);
        // Its body is read for secrets when it ends (a login answering an access token the client reuses as `?t=`).
        if (this.redactor && ex && !ex.grpc) {
          const type = headerValue(fact.rawHeaders, 'content-type');
          if (learnsFrom(type)) ex.learn = { chunks: [], n: 0, type: type!, encoding: headerValue(fact.rawHeaders, 'content-encoding') };
        }
        return;
      }
      case 'exchange-completed': {
        const ex = this.open.get(fact.exchangeId);
        // Learnt before its done is written, and so before the client has the last byte and can reuse what it issued.
        if (ex?.learn) this.learnFrom(ex.learn);
        if (this.hashing > 0 && ex?.resRest) {
          this.held.release(ex);
          this.endRest(fact.exchangeId, fact.time, 'r');
        }
        this.forget(fact.exchangeId, ex);
        const seq = ++this.seq;
        const tr = this.head(fact.rawTrailers);
        if (ex?.held?.kind === 'rs') this.held.end(ex, fact.time, seq, tr);
        else {
          if (ex?.held) this.held.release(ex);
          j.tapped?.record({ r: 'done', x: fact.exchangeId, ts: fact.time, seq, tr: tr.slice() });
          writeDoneLine(j.beginLine(), { x: fact.exchangeId, ts: fact.time, seq, tr });
          j.endLine();
        }
        // A batched completion is made durable by the flush fact that precedes its chunk's forwarding.
        if (!fact.batched) j.flushNow();
        return;
      }
      case 'flush':
        j.flushNow();
        return;
      case 'exchange-failed':
        this.forget(fact.exchangeId);
        j.appendRecord({
          r: 'fail', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, err: fact.error,
          ...(fact.response ? { resp: this.synthetic(fact.response) } : {}),
        });
        j.flushNow();
        return;
      case 'exchange-aborted':
        this.forget(fact.exchangeId);
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
      case 'response-informational': {
        // The first INFORMATIONAL_KEPT of an exchange, then one record saying more came: a server may send 1xx heads
        // without end before its response (the relay passes them all), and each record is held until the entry ends.
        const ex = this.open.get(fact.exchangeId);
        const k = ex ? (ex.informational = (ex.informational ?? 0) + 1) : 1;
        if (k > INFORMATIONAL_KEPT + 1) return;
        j.appendRecord({
          r: 'inf', x: fact.exchangeId, ts: fact.time, st: fact.statusCode, sm: fact.statusMessage, v: fact.httpVersion, h: this.head(fact.rawHeaders),
          ...(k > INFORMATIONAL_KEPT ? { more: true as const } : {}),
        });
        return;
      }
      case 'upgrade-opened':
        j.appendRecord({
          r: 'upg', x: fact.exchangeId, ts: fact.time, st: fact.statusCode, sm: fact.statusMessage,
          v: fact.httpVersion, h: this.head(fact.rawHeaders),
        });
        return;
      case 'ws-message': {
        this.counts.webSocketMessages++;
        // Close frames are few: a copy with the reason redacted costs nothing on the hot path of data messages.
        if (fact.closeReason !== undefined && this.redactor) fact = { ...fact, closeReason: this.closeReason(fact.closeReason) };
        const place = this.wsmPlace;
        place.seq = ++this.seq;
        const n = (place.n = this.room(0, this.wsRoom(fact)));
        place.o = n === 0 ? 0 : this.keep(fact.data, n);
        place.w = fact.size ?? fact.data.length;
        place.h = this.wsRest(fact, n);
        place.page = this.page || undefined;
        if (j.tapped) j.tapped.record(wsRecord(fact, place.seq, keptSlice(place.o, n, place.w), place.h, this.page));
        // One per message: written straight into the turn's bytes (journal-lines.ts writeWsmLine), JSON.stringify's text of a WsMessageRecord.
        writeWsmLine(j.beginLine(), fact, place);
        j.endLine();
        return;
      }
      case 'ws-error':
        this.counts.webSocketMessages++;
        j.appendRecord({
          r: 'wse', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, d: fact.direction, code: fact.code,
          msg: fact.message, ...(this.page ? { page: this.page } : {}),
        });
        return;
      case 'upgrade-closed':
        this.forget(fact.exchangeId);
        j.appendRecord({
          r: 'wsc', x: fact.exchangeId, ts: fact.time, seq: ++this.seq, by: fact.by,
          ...(fact.code !== undefined ? { code: fact.code } : {}),
          ...(fact.reason !== undefined ? { reason: this.closeReason(fact.reason) } : {}),
        });
        j.flushNow();
        return;
      default:
        // connection-opened / connection-closed: the entries' `connection` says enough.
        return;
    }
  }

  // Holds a response chunk to learn from: a view (the proxy never changes a chunk it emitted), copied when it is a
  // view of a larger read, which a response left open for long would otherwise keep whole in memory.
  private keepToLearn(ex: OpenExchange, learn: LearnBody, chunk: Buffer): void {
    learn.n += chunk.length;
    if (learn.n > LEARN_BYTES) ex.learn = undefined;
    else learn.chunks.push(chunk.buffer.byteLength > LEARN_BYTES ? Buffer.from(chunk) : chunk);
  }

  // Remembers the secrets a response that ended names (redact-learn.ts); a body that cannot be read is skipped.
  private learnFrom(learn: LearnBody): void {
    if (learn.n === 0) return;
    learnSecrets(this.redactor!, learn.chunks.length === 1 ? learn.chunks[0]! : Buffer.concat(learn.chunks, learn.n), learn.type, learn.encoding);
  }

  // Records at most what is left under the cap; the rest only counts. `whole`: the bytes
  // are the first of a longer payload (a WebSocket message the tap cut), whose size it is.
  private appendCapped(bytes: Buffer, already: number, whole = bytes.length): BodySlice {
    const n = this.room(already, bytes.length);
    return keptSlice(n === 0 ? 0 : this.keep(bytes, n), n, whole);
  }

  // appendCapped for the hottest records (body chunks): no BodySlice object per chunk;
  // the count kept is left in keptN, their offset (when any) in keptO.
  private appendCappedJson(bytes: Buffer, already: number): void {
    const n = (this.keptN = this.room(already, bytes.length));
    if (n > 0) this.keptO = this.keep(bytes, n);
  }

  // How many of `length` more bytes fit under the cap after `already`.
  private room(already: number, length: number): number {
    return Math.min(Math.max(0, this.bodyCap - already), length);
  }

  // Queues the first n bytes for `.bodies`; returns their offset there.
  private keep(bytes: Buffer, n: number): number {
    // No copy: the proxy never changes a chunk after emitting it (Node's sockets and
    // parsers hand out fresh buffers, and the WebSocket tap unmasks its own copy), and
    // the bytes reach the file at the end of this turn. Copying every body byte cost
    // more than writing it (bench/proxy: 1 MiB responses, GC of the copies).
    return this.journal.appendBody(n === bytes.length ? bytes : bytes.subarray(0, n));
  }

  // How many bytes of a WebSocket message its conversation's budget lets the record keep: all of
  // them while the direction's messages so far and this one fit in wsBudget, none from the first
  // data message that does not (in wire order, so two captures of the same conversation cut at
  // the same message). Control frames are always kept (125 bytes at most).
  private wsRoom(fact: Extract<Fact, { type: 'ws-message' }>): number {
    const length = fact.data.length;
    if (fact.opcode !== 1 && fact.opcode !== 2) return length;
    const ex = this.open.get(fact.exchangeId);
    if (!ex) return length;
    const kept = (ex.wsKept ??= { send: 0, receive: 0 });
    const so = kept[fact.direction];
    if (so >= 0 && so + length <= this.wsBudget) {
      kept[fact.direction] = so + length;
      return length;
    }
    kept[fact.direction] = -1;
    return 0;
  }

  // The rest hash of a WebSocket message kept `n` bytes of: the tap's, when the tap cut it and
  // the cap kept all it handed over; the recorder's own, when the cap cut a message the tap
  // kept whole; none when both cut (bytes between the two cuts were never hashed), except a
  // message past its conversation's budget (none kept): the hash of the kept bytes' hash and
  // the tap's rest hash, the same for the same payload cut at the same byte.
  private wsRest(fact: Extract<Fact, { type: 'ws-message' }>, n: number): string | undefined {
    if (n === fact.data.length) return fact.restSha256 && this.rest.value(fact.restSha256);
    if (fact.size !== undefined) {
      if (n > 0 || !fact.restSha256) return undefined;
      return this.rest.value(RestHashing.start().update(RestHashing.start().update(fact.data).digest()).update(fact.restSha256).digest());
    }
    return this.rest.value(RestHashing.start().update(fact.data.subarray(n)).digest());
  }

  // An exchange has ended: its state goes, with any rest hash its body never finished (`ex`: its state, when looked up already).
  private forget(x: number, ex = this.hashing > 0 ? this.open.get(x) : undefined): void {
    if (this.hashing > 0 && ex) this.hashing -= (ex.reqRest ? 1 : 0) + (ex.resRest ? 1 : 0);
    this.open.delete(x);
  }

  // Hashes bytes of a body past the cap (only those: a body under it costs no hashing).
  private hashRest(ex: OpenExchange, request: boolean, bytes: Buffer): void {
    let hash = request ? ex.reqRest : ex.resRest;
    if (!hash) {
      hash = RestHashing.start();
      if (request) ex.reqRest = hash;
      else ex.resRest = hash;
      this.hashing++;
    }
    hash.update(bytes);
  }

  // The hash of a body's bytes past the cap, once it has ended (d: q request, r response).
  // An exchange that fails or is aborted drops its hash: its body did not end.
  private endRest(x: number, ts: number, d: 'q' | 'r'): void {
    const ex = this.open.get(x);
    const hash = d === 'q' ? ex?.reqRest : ex?.resRest;
    if (!ex || !hash) return;
    if (d === 'q') ex.reqRest = undefined;
    else ex.resRest = undefined;
    this.hashing--;
    this.journal.appendRecord({ r: 'rest', x, ts, d, h: this.rest.value(hash.digest()) });
  }

  private synthetic(resp: SyntheticResponse): SyntheticRef {
    return { st: resp.statusCode, sm: resp.statusMessage, h: this.head(resp.rawHeaders), ...this.appendCapped(resp.body, 0) };
  }
}

// The WsMessageRecord of a message's line, as a reader parses it back (optional members left out when absent).
function wsRecord(fact: Extract<Fact, { type: 'ws-message' }>, seq: number, slice: BodySlice, rest: string | undefined, page: string | undefined): WsMessageRecord {
  const r: WsMessageRecord = { r: 'wsm', x: fact.exchangeId, ts: fact.time, seq, d: fact.direction, op: fact.opcode, ...slice, f: fact.frames, z: fact.compressed };
  if (fact.closeCode !== undefined) r.cc = fact.closeCode;
  if (fact.closeReason !== undefined) r.cr = fact.closeReason;
  if (rest !== undefined) r.h = rest;
  if (page) r.page = page;
  return r;
}

// The BodySlice appendCappedJson wrote as text (o absent when nothing was kept), for a journal tap.
function keptSlice(o: number, n: number, w: number): BodySlice {
  return n === 0 ? { n: 0, w } : { o, n, w };
}
