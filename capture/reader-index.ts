// Reads captures of any size (docs/diff.md "Captures of any size": one
// JSON string is capped at ~512 Mi characters in V8, and a 2 GB capture must
// work). One pass over the bytes finds where each element of `log.entries`
// starts and ends; the rest of the file (the log header) is parsed on its
// own; each entry is then read back by its offsets and parsed alone.
// Memory stays at one entry plus two numbers per entry, however big the
// file, and entries can be re-read in any order (the differ pairs first,
// then compares pair by pair).
//
// Reads are synchronous preads on one descriptor: entries are small and
// usually in the page cache, and a thread-pool round trip per entry cost
// more than the read itself (measured: ~40% of a bounded diff's time).
//
// The scan is a byte-level state machine that only understands what it must:
// strings (with escapes, across chunk boundaries), nesting depth, and the
// keys of the root and `log` objects. Malformed JSON inside an entry is
// caught when that entry is parsed.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { HarEntry } from './har.js';
import { HarShapeError, validateEntry, validateLogHeader, type HarLogHeader } from './reader-validate.js';

/** A capture indexed by entry offsets. */
export interface IndexedCapture {
  /** The file read. */
  readonly path: string;
  /** Everything in `log` but the entries. */
  readonly header: HarLogHeader;
  /** How many entries the file holds. */
  readonly entryCount: number;
  /** Reads, parses and checks entry `i` (file order). */
  readEntry(i: number): Promise<HarEntry>;
  /** Yields each checked entry in file order. */
  entries(): AsyncIterable<HarEntry>;
  /** Closes the file. */
  close(): Promise<void>;
}

const CHUNK = 8 * 1024 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Where the entries are: byte ranges of each element and of the array itself. */
interface Scan {
  starts: number[];
  ends: number[];
  arrayOpen: number;
  arrayClose: number;
}

/** True when the bytes just before `at` (from `from` on) are an odd run of backslashes. */
function oddBackslashesBefore(view: Buffer, at: number, from: number): boolean {
  let k = at - 1;
  while (k >= from && view[k] === BACKSLASH) k--;
  return ((at - 1 - k) & 1) === 1;
}

/** Bytes looked at one by one before nextQuote hands the search to Buffer#indexOf. */
const SHORT_SEARCH = 48;

/**
 * The index of the next quote from `from` on, or -1. Most strings of a HAR
 * are short (names, values, numbers as text): a loop finds their end sooner
 * than a call into Buffer#indexOf (measured: the calls were most of the scan).
 */
function nextQuote(view: Buffer, from: number): number {
  const end = Math.min(view.length, from + SHORT_SEARCH);
  for (let k = from; k < end; k++) if (view[k] === QUOTE) return k;
  return end < view.length ? view.indexOf(QUOTE, end) : -1;
}

/** Finds log.entries and each element's byte range in one pass. Throws HarShapeError when there is none. */
function scan(fd: number): Scan {
  const buf = Buffer.allocUnsafe(CHUNK);
  const starts: number[] = [];
  const ends: number[] = [];
  let depth = 0;
  let inString = false;
  let escape = false;
  let collecting = false;
  let keyBytes: number[] = [];
  let lastString = '';
  // Bookkeeping for depths 0..3 only: container type, key expected, current key.
  const isObj = [false, false, false, false];
  const expectKey = [false, false, false, false];
  const key = ['', '', '', ''];
  let logOpen = false; // depth 2 is log
  let inEntries = false; // depth 3 is log.entries
  let arrayOpen = -1;
  let arrayClose = -1;
  let entryStart = -1;
  let base = 0;
  for (;;) {
    const bytesRead = readSync(fd, buf, 0, CHUNK, base);
    if (bytesRead === 0) break;
    const view = buf.subarray(0, bytesRead);
    let i = 0;
    while (i < bytesRead) {
      if (inString) {
        if (escape) {
          // The chunk before ended on a backslash: this byte is escaped.
          escape = false;
          i++;
          continue;
        }
        // The closing quote: the next quote after an even run of backslashes
        // (bodies held as JSON strings escape every quote of their own).
        let q = nextQuote(view, i);
        while (q !== -1 && oddBackslashesBefore(view, q, i)) q = nextQuote(view, q + 1);
        if (q === -1) {
          if (collecting) for (let k = i; k < bytesRead; k++) keyBytes.push(view[k]!);
          escape = oddBackslashesBefore(view, bytesRead, i);
          i = bytesRead;
          continue;
        }
        if (collecting) {
          for (let k = i; k < q; k++) keyBytes.push(view[k]!);
          lastString = Buffer.from(keyBytes).toString('utf8');
          keyBytes = [];
        }
        inString = false;
        i = q + 1;
        continue;
      }
      const c = view[i]!;
      switch (c) {
        case QUOTE:
          inString = true;
          collecting = depth >= 1 && depth <= 2 && isObj[depth]! && expectKey[depth]!;
          break;
        case 0x7b: // {
        case 0x5b: // [
          if (inEntries && depth === 3 && entryStart < 0) entryStart = base + i;
          if (depth === 1 && isObj[1] && key[1] === 'log' && c === 0x7b) logOpen = true;
          if (depth === 2 && logOpen && isObj[2] && key[2] === 'entries' && c === 0x5b && arrayOpen < 0) {
            inEntries = true;
            arrayOpen = base + i;
          }
          depth++;
          if (depth <= 3) {
            isObj[depth] = c === 0x7b;
            expectKey[depth] = c === 0x7b;
          }
          break;
        case 0x7d: // }
        case 0x5d: // ]
          depth--;
          if (inEntries && depth === 3 && entryStart >= 0) {
            starts.push(entryStart);
            ends.push(base + i + 1);
            entryStart = -1;
          } else if (inEntries && depth === 2) {
            inEntries = false;
            arrayClose = base + i;
          } else if (depth === 1) logOpen = false;
          break;
        case 0x3a: // :
          if (depth <= 2) {
            key[depth] = lastString;
            expectKey[depth] = false;
          }
          break;
        case 0x2c: // ,
          if (depth <= 3 && isObj[depth]) expectKey[depth] = true;
          break;
        case 0x20: case 0x0a: case 0x0d: case 0x09:
          break;
        default:
          if (inEntries && depth === 3) throw new HarShapeError(`log.entries[${starts.length}]`, 'an object', 'a scalar');
      }
      i++;
    }
    base += bytesRead;
  }
  if (arrayOpen < 0 || arrayClose < 0) throw new HarShapeError('log.entries', 'an array', undefined);
  return { starts, ends, arrayOpen, arrayClose };
}

/** Bytes from..to (fewer at the end of the file), into `into` when given (it must be long enough). */
function readRange(fd: number, from: number, to: number, into?: Buffer): Buffer {
  const out = into ? into.subarray(0, to - from) : Buffer.allocUnsafe(to - from);
  let done = 0;
  while (done < out.length) {
    const bytesRead = readSync(fd, out, done, out.length - done, from + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return out.subarray(0, done);
}

/** Bytes read ahead when entries are read in file order. */
const WINDOW = 1024 * 1024;

/**
 * Entry texts by byte range. Entries read in file order (a pass over the
 * capture) come out of one read-ahead window, a pread per megabyte instead
 * of one per entry (measured: the reads were a tenth of a bounded diff's
 * worker time); so do entries read in reverse order (the diff's binding pass,
 * diff/bind), through a window that ends where the entry does; any other
 * read takes just its range.
 */
class ReadWindow {
  private buf: Buffer | undefined;
  private from = 0;
  private to = 0;
  private last = -2;

  constructor(private readonly fd: number) {}

  text(from: number, to: number, i: number): string {
    const inOrder = i === this.last + 1;
    const reverse = i === this.last - 1;
    this.last = i;
    if (this.buf && from >= this.from && to <= this.to) return this.buf.toString('utf8', from - this.from, to - this.from);
    if (!inOrder && !reverse) return readRange(this.fd, from, to).toString('utf8');
    if (!this.buf || this.buf.length < to - from) this.buf = Buffer.allocUnsafeSlow(Math.max(WINDOW, to - from));
    const at = reverse ? Math.max(0, to - this.buf.length) : from;
    const bytes = readRange(this.fd, at, at + this.buf.length, this.buf);
    this.from = at;
    this.to = at + bytes.length;
    return bytes.toString('utf8', from - at, Math.min(to - at, bytes.length));
  }
}

/**
 * The most bytes of JSON parsed as one piece (a whole file, or one entry of an indexed one): past it, one string
 * would near V8's limit of 0x1fffffe8 characters.
 */
export const ONE_PIECE_LIMIT = 480 * 1024 * 1024;

/** An entry longer than ONE_PIECE_LIMIT (a WebSocket conversation of that much message data). */
export class EntryTooLargeError extends Error {
  constructor(
    readonly index: number,
    readonly bytes: number,
  ) {
    super(`log.entries[${index}] is ${Math.round(bytes / 1048576)} MB`);
  }
}

/**
 * Indexes a capture file (throws HarShapeError for a file with no log.entries
 * array, SyntaxError when the header is not JSON; errors from reading pass through).
 */
export async function indexCaptureFile(path: string): Promise<IndexedCapture> {
  const fd = openSync(path, 'r');
  let closed = false;
  const close = () => {
    if (!closed) closeSync(fd);
    closed = true;
  };
  try {
    const s = scan(fd);
    const size = fstatSync(fd).size;
    let head = readRange(fd, 0, s.arrayOpen + 1).toString('utf8');
    if (head.charCodeAt(0) === 0xfeff) head = head.slice(1);
    const tail = readRange(fd, s.arrayClose, size).toString('utf8');
    const root = JSON.parse(head + tail) as { log?: Record<string, unknown> };
    if (typeof root !== 'object' || root === null || typeof root.log !== 'object' || root.log === null) throw new HarShapeError('log', 'an object', root?.log);
    const header = validateLogHeader(root.log);
    const starts = Float64Array.from(s.starts);
    const ends = Float64Array.from(s.ends);
    const window = new ReadWindow(fd);
    const readEntry = async (i: number): Promise<HarEntry> => {
      // Checked before reading: its bytes would be read whole and then fail as a string.
      if (ends[i]! - starts[i]! > ONE_PIECE_LIMIT) throw new EntryTooLargeError(i, ends[i]! - starts[i]!);
      let doc: unknown;
      try {
        doc = JSON.parse(window.text(starts[i]!, ends[i]!, i));
      } catch (err) {
        throw new HarShapeError(`log.entries[${i}]`, 'valid JSON', (err as Error).message);
      }
      return validateEntry(doc, `log.entries[${i}]`);
    };
    return {
      path,
      header,
      entryCount: starts.length,
      readEntry,
      async *entries() {
        for (let i = 0; i < starts.length; i++) yield await readEntry(i);
      },
      close: async () => close(),
    };
  } catch (err) {
    close();
    throw err;
  }
}
