// Recorded body slices read back from `.bodies` (the writer at close, a live
// follower, `bb recover`). Slices come nearly in file order (the recorder
// appends each turn's bodies, then the turn's journal lines), so one read of
// a window serves the next many: a small exchange's bodies cost no system
// call of their own (one per slice was ~4 µs a slice in the shadow's
// comparison worker, bench/shadow-compare.ts). The file only grows, each write
// whole before the journal line naming it, so bytes once read never change:
// a window read at the file's end keeps what it got, and a slice past it is
// read again.
import { readSync } from 'node:fs';
import type { BodySlice } from './journal.js';

/** Bytes read ahead at a time, at most (a slice larger than this is read alone). */
const BODY_WINDOW = 64 * 1024;

/**
 * Reads recorded slices through one read-ahead window (one buffer, refilled
 * in place: the bytes read ahead cost no allocation); `unseal` turns bytes
 * read at a file offset into plain ones (a sealed capture's cipher), slice by
 * slice, so its cost follows the bytes asked for, not the bytes read ahead.
 */
export class SliceReader {
  private buffer: Buffer | undefined;
  /** What the buffer holds of the file: its first `size` bytes, from file offset `start`. */
  private start = 0;
  private size = 0;

  constructor(
    private readonly fd: number | undefined,
    private readonly unseal?: (bytes: Buffer, offset: number) => Buffer,
    private readonly windowBytes = BODY_WINDOW,
  ) {}

  /** One slice's bytes (a buffer of its own); fewer come back when they never reached the file. */
  read(slice: BodySlice): Buffer {
    const { o, n } = slice;
    if (this.fd === undefined || o === undefined || n === 0) return Buffer.alloc(0);
    if (n >= this.windowBytes) return this.plain(readAt(this.fd, Buffer.allocUnsafe(n), o, n), o);
    let from = o - this.start;
    if (from < 0 || from + n > this.size) {
      this.buffer ??= Buffer.allocUnsafeSlow(this.windowBytes);
      this.size = readAt(this.fd, this.buffer, o, n).length;
      this.start = o;
      from = 0;
    }
    const got = Math.min(n, this.size - from);
    if (this.unseal) return this.unseal(this.buffer!.subarray(from, from + got), o);
    return Buffer.from(this.buffer!.subarray(from, from + got));
  }

  private plain(bytes: Buffer, offset: number): Buffer {
    return this.unseal && bytes.length > 0 ? this.unseal(bytes, offset) : bytes;
  }
}

/**
 * Reads into `buf` from `offset` until `enough` bytes are in (it may read up
 * to the buffer's length) or the file ends; the bytes read.
 */
function readAt(fd: number, buf: Buffer, offset: number, enough: number): Buffer {
  let got = 0;
  // Bounded: each pass reads at least one byte or stops at end of file.
  while (got < enough) {
    const n = readSync(fd, buf, got, buf.length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return got === buf.length ? buf : buf.subarray(0, got);
}
