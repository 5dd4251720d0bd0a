// The journal's lines of one turn as UTF-8 bytes, written into one reused
// buffer as they are appended. Queued as strings and joined at the flush,
// each line lived until the end of its turn, and the GC's young generation
// copied (and often promoted) them with everything else alive then: an h2
// connection's hundred streams per turn made recording cost three times
// bb-off's GC (bench/profiles/README.md). Encoded at once, a line dies
// young, and neither the joined text nor its Buffer copy exists.
//
// The hottest lines (a WebSocket message's, an exchange's start, response
// start, body chunks and end: journal-lines.ts) are written piece by piece
// instead (ascii, num, utf8, newline): a template literal of a dozen pieces
// is a rope that the UTF-8 write must flatten first, and building,
// flattening and writing it cost ~3× writing the same bytes straight
// (bench/profiles/README.md "WebSocket").
import { writeTimestamp } from './timestamp-text.js';

const START_BYTES = 64 * 1024;
/** A buffer grown past this (one huge turn) is let go after its flush. */
const KEEP_BYTES = 1024 * 1024;

/** The longest text of a number (`${n}`): -1.7976931348623157e+308 is 24 characters. */
const MAX_NUMBER = 24;

/** Decimal digits of a whole number under 2^32. */
function digits(n: number): number {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10000) return 4;
  if (n < 100000) return 5;
  if (n < 1000000) return 6;
  if (n < 10000000) return 7;
  if (n < 100000000) return 8;
  if (n < 1000000000) return 9;
  return 10;
}

/** Lines (each with its newline) as bytes, until taken. */
export class LineBuffer {
  private buf = Buffer.allocUnsafe(START_BYTES);
  private used = 0;

  /** True when nothing is held. */
  get empty(): boolean {
    return this.used === 0;
  }

  /** Appends one line (no newline in it) and its newline, UTF-8 encoded (lone surrogates as U+FFFD, as Buffer.from writes them). */
  append(line: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 unit.
    const need = this.used + line.length * 3 + 1;
    if (need > this.buf.length) this.grow(need);
    this.used += this.buf.write(line, this.used, 'utf8');
    this.buf[this.used++] = 0x0a;
  }

  /** Appends pre-encoded ASCII bytes (a record's constant piece): part of a line written piece by piece, ended by newline(). */
  ascii(piece: Uint8Array): void {
    const n = piece.length;
    if (this.used + n > this.buf.length) this.grow(this.used + n);
    const buf = this.buf;
    const at = this.used;
    // Pieces are a few bytes: a loop beats a native copy's call.
    for (let i = 0; i < n; i++) buf[at + i] = piece[i]!;
    this.used = at + n;
  }

  /** Appends pre-encoded UTF-8 bytes (a remembered JSON text: journal-lines.ts). */
  encoded(piece: Uint8Array): void {
    // A few bytes: ascii's loop; more: one native copy.
    if (piece.length <= 16) return this.ascii(piece);
    const n = piece.length;
    if (this.used + n > this.buf.length) this.grow(this.used + n);
    this.buf.set(piece, this.used);
    this.used += n;
  }

  /** Appends a number's text as a template literal writes it (`${n}`: JSON's text for a finite number). */
  num(n: number): void {
    if (this.used + MAX_NUMBER > this.buf.length) this.grow(this.used + MAX_NUMBER);
    if ((n >>> 0) === n) {
      // A whole number under 2^32 (counts, offsets, ids): its digits by hand, no string.
      const buf = this.buf;
      let end = this.used + digits(n);
      this.used = end;
      do {
        const q = Math.floor(n / 10);
        buf[--end] = 0x30 + n - q * 10;
        n = q;
      } while (n > 0);
      return;
    }
    // A timestamp: its text by hand (timestamp-text.ts), else String's (ASCII, at most MAX_NUMBER characters).
    const end = writeTimestamp(this.buf, this.used, n);
    if (end >= 0) {
      this.used = end;
      return;
    }
    const text = String(n);
    const buf = this.buf;
    const at = this.used;
    for (let i = 0; i < text.length; i++) buf[at + i] = text.charCodeAt(i);
    this.used = at + text.length;
  }

  /** Appends a number member: its pre-encoded `,"name":` (ascii) and the number (num). */
  member(name: Uint8Array, n: number): void {
    this.ascii(name);
    this.num(n);
  }

  /** Appends a member whose value is JSON text already: its pre-encoded `,"name":` (ascii) and the text (utf8). */
  jsonMember(name: Uint8Array, json: string): void {
    this.ascii(name);
    this.utf8(json);
  }

  /** Appends a string's UTF-8 bytes as they are (text already JSON, or ASCII that needs no escape). */
  utf8(text: string): void {
    const need = this.used + text.length * 3;
    if (need > this.buf.length) this.grow(need);
    this.used += this.buf.write(text, this.used, 'utf8');
  }

  /** Ends a line written piece by piece. */
  newline(): void {
    if (this.used + 1 > this.buf.length) this.grow(this.used + 1);
    this.buf[this.used++] = 0x0a;
  }

  /** Bytes held. */
  get size(): number {
    return this.used;
  }

  /** The bytes held, valid until the next append or clear. */
  bytes(): Buffer {
    return this.buf.subarray(0, this.used);
  }

  /** The text held (what was appended, newlines included). */
  text(): string {
    return this.buf.toString('utf8', 0, this.used);
  }

  /** Forgets what is held (a grown buffer goes back to its first size). */
  clear(): void {
    this.used = 0;
    if (this.buf.length > KEEP_BYTES) this.buf = Buffer.allocUnsafe(START_BYTES);
  }

  private grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }
}
