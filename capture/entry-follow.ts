// Follows a running capture and hands over each entry as it completes, built
// exactly as the finished HAR will hold it (entry-assembly.ts groups the
// records, to-har.ts builds the entry, the journal's own redactor redacts):
// what `bb shadow` compares live is what `bb diff` later reads. (In the
// recording's own process, live.ts is fed by the appender instead of a file.) Runs wherever
// the journal is readable (bb shadow runs it in its comparison worker, off
// the proxy's thread). Body bytes are read back from `<out>.bodies`.
import { closeSync, openSync } from 'node:fs';
import type { HarEntry } from './har.js';
import { JOURNAL_VERSION, parseJournalLine, type HeaderRecord, type JournalRecord } from './journal.js';
import { entryContext } from './writer.js';
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
  const onLine = (line: string): void => {
    const rec = parseJournalLine(line);
    if (!rec) return;
    if (rec.r === 'bb-journal') {
      const header = rec as HeaderRecord;
      if (header.v > JOURNAL_VERSION) return;
      try {
        fd ??= openSync(opts.bodiesPath, 'r');
      } catch {
        // No bodies file: bodies read back as lost, and the entries say so (as the writer does).
      }
      ctx = entryContext(header, opts.redactorFor(header), fd);
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
