// Folded records (journal format 3): an exchange's records of one loop turn
// in one line. A small exchange made five records (start, qe, rs, rb, done)
// and paid each one's framing (`"r"`, `"x"`, a line) and the recorder's work
// per record (issue 39); but the request head and its end come in one turn
// and the response head, its body and its end in another, so a start carries
// the request body chunks and the end that followed it in its turn, and a
// response start the body chunks and the `done` that followed it in its:
//
//   {"r":"start",...,"qb"?:[{"ts","o"?,"n","w"}...],"qe"?:ts,"tr"?:[...]}   tr = the request's trailers
//   {"r":"rs",...,"rb"?:[{"ts","o"?,"n","w"}...],"done"?:ts,"seq"?,"tr"?:[...]}   seq, tr = the done's
//
// A folded record stands for exactly the records it replaces, in the same
// place in the journal; unfoldRecord gives them back, so every reader sees
// version-2 records. Folding is the recorder's (FoldedLine below); a record
// is held only until a record of another kind or exchange, a flush or the
// end of the turn, so the crash rule is unchanged: a `done` folded into its
// response start is written by the same synchronous write as before.
import type {
  BodyRecord, BodySlice, DoneRecord, JournalRecord, RequestEndRecord, ResponseStartRecord, StartRecord,
} from './journal.js';
import type { RawHeaders } from '../proxy/index.js';
import type { LineBuffer } from './line-buffer.js';
import { writeChunkListEnd, writeClose, writeFoldedChunk } from './journal-lines.js';

/** A body chunk folded into a start or response start: a BodyRecord without `r` and `x`. */
export interface FoldedChunk extends BodySlice {
  ts: number;
}

/** A start that may carry its request's chunks and end (format 3). */
export interface FoldedStart extends StartRecord {
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
    if (f.qb === undefined && f.qe === undefined) return [rec];
    const { qb, qe, tr, ...start } = f;
    const out: JournalRecord[] = [start];
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

/**
 * The recorder's one held line: a start or response start whose closing
 * brace waits for the chunks and end of the same exchange that follow it
 * in the same turn. Its bytes are already in the turn's lines (the
 * journal's open line: beginLine), written as they come; nothing else is
 * queued until it is closed (the journal releases it first), and the caller
 * ends the line (endLine) after close.
 */
export class FoldedLine {
  /** The held exchange (-1: nothing held). */
  x = -1;
  /** Which record is held. */
  kind: 'start' | 'rs' = 'start';
  private chunks = 0;
  private b: LineBuffer | undefined;

  /** Holds the record whose open members the caller writes into `b` (the journal's open line) next; returns `b`. */
  hold(x: number, kind: 'start' | 'rs', b: LineBuffer): LineBuffer {
    this.x = x;
    this.kind = kind;
    this.chunks = 0;
    return (this.b = b);
  }

  /** Folds a body chunk (its ts and slice) into the held record. */
  chunk(ts: number, o: number, n: number, w: number): void {
    writeFoldedChunk(this.b!, this.kind === 'start', this.chunks++ === 0, ts, o, n, w);
  }

  /** Ends the chunk list, if any, and returns the held line's bytes for the caller to write the folded end's members into (then close). */
  end(): LineBuffer {
    const b = this.b!;
    if (this.chunks > 0) writeChunkListEnd(b);
    return b;
  }

  /** Writes the held record's closing brace; nothing is held after (the caller ends the line). */
  close(): void {
    writeClose(this.b!);
    this.x = -1;
    this.b = undefined;
  }
}
