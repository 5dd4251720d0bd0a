// The line blocks of HTTP/1.1: a head or a trailer section, collected as
// CRLF-terminated lines up to an empty line, capped, so the parser can judge
// it whole (http1-parser.ts walks everything else byte by byte).
import type { Http1Fault } from './head.js';

/** Collects a block of CRLF-terminated lines up to and including an empty line (a head or trailers). */
export class LineBlock {
  constructor(private readonly max: number) {}
  private parts: Buffer[] = [];
  /** Bytes collected so far. */
  length = 0;
  private lineStart = 0;
  private lastWasCr = false;

  /** Starts a new block. */
  reset(): void {
    this.parts = [];
    this.length = 0;
    this.lineStart = 0;
    this.lastWasCr = false;
  }

  /**
   * Reads chunk[from..]: returns the offset just past the block's empty line,
   * -1 when the block needs more bytes, or a fault (bare LF, over the cap).
   */
  scan(chunk: Buffer, from: number): number | Http1Fault {
    let p = from;
    for (;;) {
      const lf = chunk.indexOf(10, p);
      if (lf < 0) {
        const n = chunk.length - from;
        if (this.length + n > this.max) return { code: 'HPE_HEADER_OVERFLOW', reason: `the head is larger than ${this.max} bytes` };
        if (n > 0) {
          this.parts.push(chunk.subarray(from));
          this.length += n;
          this.lastWasCr = chunk[chunk.length - 1] === 13;
        }
        return -1;
      }
      const abs = this.length + (lf - from);
      if (abs + 1 > this.max) return { code: 'HPE_HEADER_OVERFLOW', reason: `the head is larger than ${this.max} bytes` };
      const prevCr = lf > from ? chunk[lf - 1] === 13 : this.lastWasCr;
      if (!prevCr) return { code: 'HPE_LF_EXPECTED', reason: 'a line ends with a bare LF; HTTP/1.1 lines end with CRLF' };
      if (abs - this.lineStart === 1) {
        this.parts.push(chunk.subarray(from, lf + 1));
        this.length += lf + 1 - from;
        return lf + 1;
      }
      this.lineStart = abs + 1;
      p = lf + 1;
    }
  }

  /** True while the block's first bytes (and `chunk[from..]`) could still start with `prefix`. */
  couldStartWith(prefix: Buffer, chunk: Buffer, from: number): boolean {
    let i = 0;
    for (const part of this.parts) {
      for (let j = 0; j < part.length && i < prefix.length; j++, i++) if (part[j] !== prefix[i]) return false;
      if (i >= prefix.length) return true;
    }
    for (let j = from; j < chunk.length && i < prefix.length; j++, i++) if (chunk[j] !== prefix[i]) return false;
    return true;
  }

  /** The collected bytes (a view when they came in one chunk). */
  bytes(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.length);
  }
}

/** Where `view` (a head's bytes) starts in `chunk` when it is the bytes of `chunk` just before offset `end`; -1 when it is not a view of them (it came in pieces, or was rebuilt). */
export function viewStart(view: Buffer, chunk: Buffer, end: number): number {
  const start = end - view.length;
  return start >= 0 && view.buffer === chunk.buffer && view.byteOffset === chunk.byteOffset + start ? start : -1;
}
