// Follows a running capture and hands over each entry as it completes, built
// exactly as the finished HAR will hold it (entry-assembly.ts groups the
// records, to-har.ts builds the entry, the journal's own redactor redacts):
// what `bb shadow` compares live is what `bb diff` later reads. Runs wherever
// the journal is readable (bb shadow runs it in its comparison worker, off
// the proxy's thread). Body bytes are read back from `<out>.bodies`.
import { closeSync, openSync, readSync } from 'node:fs';
import type { HarEntry } from './har.js';
import { JOURNAL_VERSION, parseJournalLine, type BodySlice, type HeaderRecord, type JournalRecord } from './journal.js';
import { buildEntry, type EntryContext } from './to-har.js';
import { EntryAssembler } from './entry-assembly.js';
import { tailLines, type FollowEnd } from './journal-follow.js';
import type { Redactor } from './redact.js';

/** How to follow one capture's entries. */
export interface FollowEntriesOptions {
  journalPath: string;
  bodiesPath: string;
  /** Each entry, when its exchange ends, in completion order (the order the HAR is written in). */
  onEntry: (entry: HarEntry) => void;
  /** The redactor the journal's header asks for (capture's redactorFor). */
  redactorFor: (header: HeaderRecord) => Redactor | undefined;
  /** Poll interval, ms (default 100). */
  pollMs?: number;
  /** Stops following. */
  signal?: AbortSignal;
}

/** Follows until the journal goes away (the capture was finalized) or the signal aborts. */
export async function followEntries(opts: FollowEntriesOptions): Promise<FollowEnd> {
  const assembler = new EntryAssembler();
  let ctx: EntryContext | undefined;
  let fd: number | undefined;
  const readSlice = (slice: BodySlice): Buffer => {
    if (slice.o === undefined || slice.n === 0) return Buffer.alloc(0);
    try {
      fd ??= openSync(opts.bodiesPath, 'r');
    } catch {
      return Buffer.alloc(0);
    }
    const buf = Buffer.allocUnsafe(slice.n);
    let got = 0;
    // Bounded: each pass reads at least one byte or stops at end of file.
    while (got < slice.n) {
      const n = readSync(fd, buf, got, slice.n - got, slice.o + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  };
  const onLine = (line: string): void => {
    const rec = parseJournalLine(line);
    if (!rec) return;
    if (rec.r === 'bb-journal') {
      const header = rec as HeaderRecord;
      if (header.v > JOURNAL_VERSION) return;
      const redactor = opts.redactorFor(header);
      const seal = header.seal !== undefined ? redactor?.bodySeal(header.seal) : undefined;
      ctx = {
        readBody: seal ? (slice) => seal.apply(readSlice(slice), slice.o ?? 0) : readSlice,
        fallbackOrigin: header.listen,
        ...(redactor ? { redactor } : {}),
      };
      return;
    }
    if (!ctx) return;
    const done = assembler.feed(rec as JournalRecord);
    if (done?.kind === 'entry') opts.onEntry(buildEntry(done.exchange, ctx));
  };
  try {
    return await tailLines(opts.journalPath, onLine, opts.pollMs ?? 100, opts.signal);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
