// The journal's lines of one turn as UTF-8 bytes, written into one reused
// buffer as they are appended. Queued as strings and joined at the flush,
// each line lived until the end of its turn, and the GC's young generation
// copied (and often promoted) them with everything else alive then: an h2
// connection's hundred streams per turn made recording cost three times
// bb-off's GC (bench/profiles/README.md). Encoded at once, a line dies
// young, and neither the joined text nor its Buffer copy exists.
const START_BYTES = 64 * 1024;
/** A buffer grown past this (one huge turn) is let go after its flush. */
const KEEP_BYTES = 1024 * 1024;

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
