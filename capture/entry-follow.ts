// Follows a running capture and hands over each entry as it completes, built
// exactly as the finished HAR will hold it (entry-assembly.ts groups the
// records, to-har.ts builds the entry, the journal's own redactor redacts):
// what `bb shadow` compares live is what `bb diff` later reads. (In the
// recording's own process, live.ts is handed the recorder's records instead.) Runs wherever
// the journal is readable (bb shadow runs it in its comparison worker, off
// the proxy's thread). Body bytes are read back from `<out>.bodies`, and a
// long WebSocket conversation's later records from the journal when it ends
// (entry-assembly.ts: held as byte ranges meanwhile, so memory stays flat),
// or, with `holdFilesUntil`, only when the reader asks for it (onEntry's
// `whole`): conversations that end together are then built one at a time.
import { closeSync, openSync } from 'node:fs';
import type { HarEntry } from './har.js';
import { unfoldRecord } from './journal-fold.js';
import { JOURNAL_VERSION, parseJournalLine, type HeaderRecord, type JournalRecord } from './journal.js';
import { entryContext } from './writer.js';
import { buildEntry, type EntryContext } from './to-har.js';
import { EntryAssembler } from './entry-assembly.js';
import { readLineRanges } from './journal-bytes.js';
import { tailLines, type FollowEnd } from './journal-follow.js';
import type { Redactor } from './redact.js';

/** How to follow one capture's entries. */
export interface FollowEntriesOptions {
  journalPath: string;
  bodiesPath: string;
  /**
   * Each entry, when its exchange ends, in completion order (the order the
   * HAR is written in). With `holdFilesUntil`, a long WebSocket conversation
   * comes with `whole`: the entry has its first messages only, whole.build()
   * makes it whole (call it once).
   */
  onEntry: (entry: HarEntry, whole?: WholeEntry) => void;
  /** The redactor the journal's header asks for (capture's redactorFor). */
  redactorFor: (header: HeaderRecord) => Redactor | undefined;
  /** Poll interval, ms (default 100). */
  pollMs?: number;
  /** Stops following. */
  signal?: AbortSignal;
  /** Reads the journal to its end, then stops: its capture is done with it (no poll's wait). */
  finish?: AbortSignal;
  /**
   * Hand long conversations over with `whole` (see onEntry). The files stay
   * open after following ends until every `whole` handed over was built, or
   * this settles (for those never built), whichever comes first.
   */
  holdFilesUntil?: Promise<unknown>;
  /**
   * Asked before each journal line; when it returns a promise, the line waits
   * for it (bb shadow's end-of-run comparison compares what is ready before
   * it reads on, so a journal read whole is not held whole).
   */
  pace?: () => Promise<unknown> | undefined;
}

/** The rest of an entry handed over without its later WebSocket messages. */
export interface WholeEntry {
  /** Its WebSocket messages in all (what batches count). */
  messages: number;
  /** The entry with every message, read back from the journal now. */
  build(): HarEntry;
}

/** Follows until the journal goes away (the capture was finalized) or the signal aborts. */
export async function followEntries(opts: FollowEntriesOptions): Promise<FollowEnd> {
  let ctx: EntryContext | undefined;
  let fd: number | undefined;
  // The journal, for records read back (opened with the header: still readable once the capture renames or removes it).
  let journalFd: number | undefined;
  const assembler = new EntryAssembler((lines) => readLineRanges(journalFd!, lines), opts.holdFilesUntil !== undefined, (slice) => ctx!.readBody(slice));
  // Entries handed over with `whole` and not built yet: they still read from both files.
  let unbuilt = 0;
  let ended = false;
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    if (fd !== undefined) closeSync(fd);
    if (journalFd !== undefined) closeSync(journalFd);
  };
  const onLine = (line: string, at: number, bytes: number): Promise<void> | void => {
    const wait = opts.pace?.();
    if (wait) return wait.then(() => readLine(line, at, bytes));
    readLine(line, at, bytes);
  };
  const readLine = (line: string, at: number, bytes: number): void => {
    const rec = parseJournalLine(line);
    if (!rec) return;
    if (rec.r === 'bb-journal') {
      const header = rec as HeaderRecord;
      if (header.v > JOURNAL_VERSION) return;
      try {
        journalFd ??= openSync(opts.journalPath, 'r');
      } catch {
        // Gone since its header was read: nothing to read back from, every record is held.
      }
      try {
        fd ??= openSync(opts.bodiesPath, 'r');
      } catch {
        // No bodies file: bodies read back as lost, and the entries say so (as the writer does).
      }
      ctx = entryContext(header, opts.redactorFor(header), fd);
      return;
    }
    if (!ctx) return;
    // A folded line's records (journal-fold.ts) are HTTP ones, never read back: only a line of one record gives its place.
    const records = unfoldRecord(rec as JournalRecord);
    for (const r of records) {
      if (r.r === 'sec') ctx.redactor?.knowSecret(r);
      const done = assembler.feed(r, journalFd === undefined || records.length > 1 ? -1 : at, bytes);
      if (done?.kind !== 'entry') continue;
      const { exchange, later } = done;
      if (!later) {
        opts.onEntry(buildEntry(exchange, ctx));
        continue;
      }
      const context = ctx;
      // With the held messages only: what the reader needs of the head (route, id, times) until it builds it whole.
      const head = buildEntry(exchange, context);
      unbuilt++;
      opts.onEntry(head, {
        messages: exchange.ws.length + later.at.length,
        build: () => {
          try {
            return buildEntry(assembler.readLater(exchange, later), context);
          } finally {
            if (--unbuilt === 0 && ended) close();
          }
        },
      });
    }
  };
  try {
    return await tailLines(opts.journalPath, onLine, opts.pollMs ?? 100, opts.signal, opts.finish);
  } finally {
    ended = true;
    if (unbuilt === 0) close();
    else void opts.holdFilesUntil!.then(close, close);
  }
}
