// Folded records (journal formats 3 and 4): an exchange's records of one loop turn
// in one line. A small exchange made five records (start, qe, rs, rb, done)
// and paid each one's framing (`"r"`, `"x"`, a line) and the recorder's work
// per record (issue 39); but the request head and its end come in one turn
// and the response head, its body and its end in another, so a start carries
// the request body chunks and the end that followed it in its turn, and a
// response start the body chunks and the `done` that followed it in its:
//
//   {"r":"start",...,"tag"?:{"ts","shadow"},"qb"?:[{"ts","o"?,"n","w"}...],"qe"?:ts,"tr"?:[...]}   tr = the request's trailers
//   {"r":"rs",...,"rb"?:[{"ts","o"?,"n","w"}...],"done"?:ts,"seq"?,"tr"?:[...]}   seq, tr = the done's
//
// A folded record stands for exactly the records it replaces, in the same
// place in the journal; unfoldRecord gives them back, so every reader sees
// version-2 records (a folded `bb shadow` tag, format 4, comes back right
// after its start, before chunks it may have followed: readers merge tags
// and order nothing by them). Folding is the recorder's (HeldLines below); a record
// is held only until its exchange's end, a record of another kind, a flush
// or the end of the turn, so the crash rule is unchanged: a `done` folded
// into its response start is written by the same synchronous write as
// before (the flush that precedes the forwarding of the bytes that end it).
import type {
  BodyRecord, BodySlice, DoneRecord, JournalAppender, JournalRecord, RequestEndRecord, ResponseStartRecord, ShadowTagRecord, StartRecord,
} from './journal.js';
import type { HarShadow } from './har.js';
import type { RawHeaders } from '../proxy/index.js';
import type { LineBuffer } from './line-buffer.js';
import {
  startRecord, writeChunkListEnd, writeClose, writeFoldedChunk, writeFoldedDone, writeFoldedRequestEnd, writeFoldedTag, writeResponseStartOpen, writeStartOpen,
} from './journal-lines.js';

/**
 * How far apart (ms) two chunks of a body may be and be one record: a chunk's time is the time of the events and gRPC
 * messages that end in it, so chunks farther apart stay apart. Within it a peer's one-byte chunks, read together, are
 * one record (they were a record each: 64 journal bytes a body byte).
 */
export const JOIN_MS = 1;

/**
 * Whether a body chunk (kept bytes `n` at `o`, at `ts`) extends the chunk before it (`lastTs`, `lastO`, `lastN`):
 * both past the cap (their time matters to nothing), or right after its bytes within JOIN_MS of its time.
 */
export function joinsChunk(lastTs: number, lastO: number, lastN: number, ts: number, o: number, n: number): boolean {
  return n === 0 ? lastN === 0 : lastN > 0 && lastO + lastN === o && ts - lastTs < JOIN_MS;
}

/** A body chunk folded into a start or response start: a BodyRecord without `r` and `x`. */
export interface FoldedChunk extends BodySlice {
  ts: number;
}

/** A start that may carry its `bb shadow` tag (format 4), its request's chunks and end (format 3). */
export interface FoldedStart extends StartRecord {
  /** The tag given while the start was held: a ShadowTagRecord without `r` and `x`. */
  tag?: { ts: number; shadow: HarShadow };
  qb?: FoldedChunk[];
  /** The request end's ts. */
  qe?: number;
  /** The request's trailers (with qe). */
  tr?: RawHeaders;
}

/** A response start that may carry its chunks and the exchange's done (format 3). */
export interface FoldedResponseStart extends ResponseStartRecord {
  rb?: FoldedChunk[];
  /** The done record's ts. */
  done?: number;
  /** The done record's seq. */
  seq?: number;
  /** The response's trailers (with done). */
  tr?: RawHeaders;
}

/** The records a journal record stands for, in journal order: itself, or a folded record's parts. */
export function unfoldRecord(rec: JournalRecord): JournalRecord[] {
  if (rec.r === 'start') {
    const f = rec as FoldedStart;
    if (f.qb === undefined && f.qe === undefined && f.tag === undefined) return [rec];
    const { tag, qb, qe, tr, ...start } = f;
    const out: JournalRecord[] = [start];
    if (tag !== undefined) out.push({ r: 'tag', x: rec.x, ts: tag.ts, shadow: tag.shadow } satisfies ShadowTagRecord);
    chunks(out, 'qb', rec.x, qb);
    if (qe !== undefined) out.push({ r: 'qe', x: rec.x, ts: qe, tr: tr ?? [] } satisfies RequestEndRecord);
    return out;
  }
  if (rec.r === 'rs') {
    const f = rec as FoldedResponseStart;
    if (f.rb === undefined && f.done === undefined) return [rec];
    const { rb, done, seq, tr, ...head } = f;
    const out: JournalRecord[] = [head];
    chunks(out, 'rb', rec.x, rb);
    if (done !== undefined) out.push({ r: 'done', x: rec.x, ts: done, seq: seq ?? 0, tr: tr ?? [] } satisfies DoneRecord);
    return out;
  }
  return [rec];
}

// Folded chunks as BodyRecords, in BodyRecord's key order.
function chunks(out: JournalRecord[], r: 'qb' | 'rb', x: number, list: FoldedChunk[] | undefined): void {
  if (!Array.isArray(list)) return;
  for (const c of list) {
    const body: BodyRecord = c.o === undefined ? { r, x, ts: c.ts, n: c.n, w: c.w } : { r, x, ts: c.ts, o: c.o, n: c.n, w: c.w };
    out.push(body);
  }
}

/** A start's members (a StartRecord without `r`), as the recorder writes them. */
export type StartFields = Omit<StartRecord, 'r'>;
/** A response start's members (a ResponseStartRecord without `r`). */
export type ResponseFields = Omit<ResponseStartRecord, 'r'>;

/** One exchange's start or response start, not written yet: its chunks of this turn kept as (ts, o, n, w) runs. */
export type HeldHead =
  | { kind: 'start'; rec: StartFields; chunks: number[] | undefined; tag?: { ts: number; shadow: HarShadow } }
  | { kind: 'rs'; rec: ResponseFields; chunks: number[] | undefined };

/** What holds a head: the recorder's open exchange (its `held` is cleared once the line is written). */
export interface HeadHolder {
  held?: HeldHead | undefined;
}

/**
 * The recorder's held lines: each exchange's start or response start waits,
 * with the body chunks that follow it, for the end of its request or
 * response in the same turn, then goes out as one line. Held per exchange,
 * not one line at a time: an h2 upstream answers a hundred streams with a
 * hundred HEADERS frames and then their DATA frames, so holding only the
 * latest line folded nothing of a response (four lines a stream instead of
 * two; issue 39, h2 round). Lines of different exchanges may so come in
 * another order than their facts did; an exchange's own records keep
 * theirs, and `done` lines keep the order of completion (the writer's entry
 * order), since a folded response start is written when its done comes.
 * Whatever is still held is written, unfinished, by release() (every
 * flush, and before any record of another kind). A live capture's tap is
 * told each line's records as the line is queued.
 */
export class HeldLines {
  /** Holders in the order their heads were held (a holder whose line went out is skipped). */
  private order: HeadHolder[] = [];

  constructor(private readonly journal: JournalAppender) {}

  /** Holds a head for `holder` until its end (end()) or a release; a flush is due by the end of the turn. */
  hold(holder: HeadHolder, held: HeldHead): void {
    holder.held = held;
    this.order.push(holder);
    this.journal.soon();
  }

  /** Folds a body chunk (its ts and slice) into the holder's head. */
  chunk(held: HeldHead, ts: number, o: number, n: number, w: number): void {
    const c = (held.chunks ??= []);
    // One that continues the last one's kept bytes soon after it (or, past the cap, keeps none as it did) extends it:
    // a peer's one-byte chunks are not one record each.
    const k = c.length - 4;
    if (k >= 0 && joinsChunk(c[k]!, c[k + 1]!, c[k + 2]!, ts, o, n)) {
      c[k + 2] = c[k + 2]! + n;
      c[k + 3] = c[k + 3]! + w;
      return;
    }
    c.push(ts, o, n, w);
  }

  /** Folds a `bb shadow` tag into a held start (tags given twice merge, as their records would). */
  tag(held: Extract<HeldHead, { kind: 'start' }>, ts: number, shadow: HarShadow): void {
    held.tag = held.tag === undefined ? { ts, shadow } : { ts: held.tag.ts, shadow: { ...held.tag.shadow, ...shadow } };
  }

  /** Writes the holder's line with its end folded in: a request end (seq undefined) or a done. */
  end(holder: HeadHolder, ts: number, seq: number | undefined, tr: RawHeaders): void {
    const held = holder.held!;
    holder.held = undefined;
    const j = this.journal;
    const b = this.open(held);
    if (held.kind === 'start') {
      writeFoldedRequestEnd(b, ts, tr);
      j.tapped?.record({ r: 'qe', x: held.rec.x, ts, tr: tr.slice() });
    } else {
      writeFoldedDone(b, ts, seq!, tr);
      j.tapped?.record({ r: 'done', x: held.rec.x, ts, seq: seq!, tr: tr.slice() });
    }
    writeClose(b);
    j.endLine();
  }

  /** Writes the holder's line as it is (no end), if one is held. */
  release(holder: HeadHolder): void {
    const held = holder.held;
    if (!held) return;
    holder.held = undefined;
    this.write(held);
  }

  /** Writes a head's line whole at once, never held (a gRPC call's: its gm records come between its chunks). */
  write(held: HeldHead): void {
    writeClose(this.open(held));
    this.journal.endLine();
  }

  /** Writes every held line as it is, in the order held. */
  releaseAll(): void {
    const order = this.order;
    if (order.length === 0) return;
    this.order = [];
    for (const holder of order) this.release(holder);
  }

  // Begins the held head's line and writes its members and chunks (the tap told their records); the caller ends it.
  private open(held: HeldHead): LineBuffer {
    const j = this.journal;
    const b = j.beginLine();
    const tap = j.tapped;
    const request = held.kind === 'start';
    if (held.kind === 'start') {
      writeStartOpen(b, held.rec);
      tap?.record(startRecord(held.rec));
      const tag = held.tag;
      if (tag !== undefined) {
        writeFoldedTag(b, tag.ts, tag.shadow);
        tap?.record({ r: 'tag', x: held.rec.x, ts: tag.ts, shadow: { ...tag.shadow } });
      }
    } else {
      writeResponseStartOpen(b, held.rec);
      tap?.record({ r: 'rs', ...held.rec, h: held.rec.h.slice() });
    }
    const c = held.chunks;
    if (c === undefined) return b;
    const x = held.rec.x;
    for (let i = 0; i < c.length; i += 4) {
      writeFoldedChunk(b, request, i === 0, c[i]!, c[i + 1]!, c[i + 2]!, c[i + 3]!);
      tap?.record(bodyRecord(request ? 'qb' : 'rb', x, c[i]!, c[i + 1]!, c[i + 2]!, c[i + 3]!));
    }
    writeChunkListEnd(b);
    return b;
  }
}

/** The BodyRecord of a chunk as a reader parses it back (`o` only when bytes were kept). */
export function bodyRecord(r: 'qb' | 'rb', x: number, ts: number, o: number, n: number, w: number): BodyRecord {
  return n === 0 ? { r, x, ts, n: 0, w } : { r, x, ts, o, n, w };
}
