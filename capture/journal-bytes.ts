// A finished journal's lines by where they are in the file: the writer reads
// a journal line by line with each line's byte range (so a long WebSocket
// conversation's later records can be kept as ranges, entry-assembly.ts) and
// reads records back by their ranges when it writes the entry. Following a
// running capture reads them back the same way (entry-follow.ts). This file
// touches the disk.
import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { parseJournalLine, type JournalRecord } from './journal.js';
import { unfoldRecord } from './journal-fold.js';
import type { LineRanges } from './entry-assembly.js';

/** Bytes read from the journal at a time (many lines a read: they lie close together). */
const READ_WINDOW = 256 * 1024;

/** Journal bytes read at a time when scanning a whole journal. */
const SCAN_CHUNK = 1 << 20;

/**
 * Reads these journal lines' records back, in order (a line that no longer parses is left out); `lineOf`, when
 * given, gets each record's line (its index in `lines`).
 */
export function readLineRanges(fd: number, lines: LineRanges, lineOf?: number[]): JournalRecord[] {
  const out: JournalRecord[] = [];
  // One buffer read into again and again (lines are decoded to strings at once): a conversation spread over a
  // long journal takes many windows, and a fresh buffer each would pile up until the next GC.
  let buf = Buffer.allocUnsafe(0);
  let window = buf;
  let windowAt = 0;
  for (let i = 0; i < lines.at.length; i++) {
    const at = lines.at[i]!;
    const bytes = lines.bytes[i]!;
    if (at < windowAt || at + bytes > windowAt + window.length) {
      if (buf.length < Math.max(bytes, READ_WINDOW)) buf = Buffer.allocUnsafe(Math.max(bytes, READ_WINDOW));
      window = buf.subarray(0, readSync(fd, buf, 0, buf.length, at));
      windowAt = at;
    }
    const rec = parseJournalLine(window.toString('utf8', at - windowAt, at - windowAt + bytes));
    if (!rec || rec.r === 'bb-journal') continue;
    const records = unfoldRecord(rec as JournalRecord);
    out.push(...records);
    if (lineOf) for (let k = 0; k < records.length; k++) lineOf.push(i);
  }
  return out;
}

/** What a line splitter hands over: a line, the byte offset it starts at and its length in bytes. */
export type OnLine = (line: string, at: number, bytes: number) => Promise<void> | void;

/**
 * A journal's bytes, fed as they are read, split into lines with their byte
 * offsets and lengths; a line cut by a read waits for the rest. Whole lines
 * only are decoded: a multi-byte character never contains 0x0a, and one cut
 * by the read stays whole. With `crEndsLines` a lone CR ends a line too, as
 * readline has it (a finished journal is read as readline read it).
 */
export class LineSplitter {
  // The bytes of a line without its end yet, and the bytes fed so far.
  private partial = Buffer.alloc(0);
  private offset = 0;

  constructor(private readonly crEndsLines: boolean) {}

  /** The lines `chunk` ends (the caller may read into `chunk` again once this resolves). */
  async feed(chunk: Buffer, onLine: OnLine): Promise<void> {
    const bytes = this.partial.length > 0 ? Buffer.concat([this.partial, chunk]) : chunk;
    const base = this.offset - this.partial.length;
    this.offset += chunk.length;
    // The next CR at or after `from` (Infinity: none in this chunk), found once, not once a line.
    let cr = this.crEndsLines ? -1 : Infinity;
    let from = 0;
    for (let nl = bytes.indexOf(10, from); nl >= 0; nl = bytes.indexOf(10, from)) {
      if (cr >= 0 && cr < from) cr = -1;
      if (cr < 0) cr = nextCr(bytes, from);
      const done = cr < nl ? splitAtCr(bytes, from, nl, base, onLine) : onLine(bytes.toString('utf8', from, nl), base + from, nl - from);
      if (done) await done;
      from = nl + 1;
    }
    // A copy: the caller's chunk may be read into again.
    this.partial = Buffer.from(bytes.subarray(from));
  }

  /** The last line, which has no newline (a torn write of a finished journal). */
  async end(onLine: OnLine): Promise<void> {
    if (this.partial.length > 0) await splitAtCr(this.partial, 0, this.partial.length, this.offset - this.partial.length, onLine);
    this.partial = Buffer.alloc(0);
  }
}

/**
 * Calls onLine with every line of a finished journal, its byte offset and
 * length, in order (awaiting it when it returns a promise), and onRead with
 * the bytes read so far after each read. Lines end where readline ends them
 * (`\n`, `\r\n` or a lone `\r`), and a last line without its newline (a torn
 * write) comes too, so the lines are exactly those readline gives.
 */
export async function scanJournal(file: FileHandle, onLine: OnLine, onRead?: (bytesRead: number) => void): Promise<void> {
  const lines = new LineSplitter(true);
  const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
  for (let offset = 0; ; ) {
    const { bytesRead } = await file.read(chunk, 0, chunk.length, offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
    onRead?.(offset);
    await lines.feed(chunk.subarray(0, bytesRead), onLine);
  }
  await lines.end(onLine);
}

// Where the next CR is from `from` on, Infinity when none.
function nextCr(bytes: Buffer, from: number): number {
  const at = bytes.indexOf(13, from);
  return at < 0 ? Infinity : at;
}

// The lines of bytes[from, to) (no `\n` in it): one, or several where a CR ends one as readline does (bb never
// writes a raw CR: only a damaged line has one). A CR right before the newline ends nothing more.
async function splitAtCr(
  bytes: Buffer,
  from: number,
  to: number,
  base: number,
  onLine: OnLine,
): Promise<void> {
  let start = from;
  while (start < to) {
    const cr = bytes.indexOf(13, start);
    const end = cr >= 0 && cr < to ? cr : to;
    const done = onLine(bytes.toString('utf8', start, end), base + start, end - start);
    if (done) await done;
    start = end + 1;
  }
}
