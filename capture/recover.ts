// `bb recover`: turns a journal left by a crashed capture into `<out>` with
// `complete: false`. Keeps every record that reached the disk; a torn last
// line is dropped and counted.
import { closeSync, existsSync, fstatSync, lstatSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { redactorFor } from './capture.js';
import { journalPaths } from './options.js';
import { journalHeaderAt, liveJournalWriter } from './journal-owner.js';
import { writeHarFromJournal, type WriteProgress } from './writer.js';
import { BbError, isBbError } from '../core/index.js';

/** How recovery went. */
export interface RecoverResult {
  /** The HAR written. */
  out: string;
  /** Entries kept. */
  entries: number;
  /** Torn records dropped. */
  dropped: number;
  /** Exchanges that had not ended (kept, marked in flight). */
  open: number;
  /**
   * True when the capture had finished: `<out>` is its complete HAR and only the journal's removal was cut
   * short (a kill between the two). The journal and bodies are removed, the HAR left as it is.
   */
  finished?: boolean;
}

/** Options for recoverCapture. */
export interface RecoverOptions {
  /** Overwrite an existing `<out>`. */
  force?: boolean;
  /** bb home whose redaction key is used when the journal's own key file is gone. */
  bbHome?: string;
  /** Told how far the writing is (a long journal shows progress). */
  onProgress?: (progress: WriteProgress) => void;
}

/** Writes `<out>` from `<out>.journal` (either path may be given), complete: false. */
export async function recoverCapture(path: string, opts: RecoverOptions = {}): Promise<RecoverResult> {
  const paths = journalPaths(resolve(path));
  const out = paths.out;
  if (!existsSync(paths.journal)) {
    throw new BbError('BB_JOURNAL_MISSING', `no journal at ${paths.journal}: there is nothing to recover for ${out}.`);
  }
  const writer = liveJournalWriter(paths.journal);
  if (writer !== undefined) {
    throw new BbError('BB_JOURNAL_LIVE', `a capture that is still running (pid ${writer}) is writing ${paths.journal}: stop it (Ctrl-C) and it writes the HAR itself; bb recover is for a capture that was killed.`);
  }
  // lstat, not existsSync: a symlink is something at the path even when it dangles (the HAR writer's rule).
  const present = lstatSync(out, { throwIfNoEntry: false });
  if (present?.isFile() && !opts.force) {
    // A capture writes its HAR, renames it into place, then removes the journal: killed between the two, the
    // HAR is whole and the journal a leftover that would stop the next capture to this path.
    const entries = finishedFrom(out, paths.journal);
    if (entries !== undefined) {
      rmSync(paths.journal, { force: true });
      rmSync(paths.bodies, { force: true });
      return { out, entries, dropped: 0, open: 0, finished: true };
    }
  }
  if (present !== undefined && !opts.force) {
    throw new BbError('BB_OUT_EXISTS', `${out} already exists: move it away or pass --force to overwrite it with the recovered capture.`);
  }
  if (statSync(paths.journal).isDirectory()) {
    throw new BbError('BB_JOURNAL_MISSING', `${paths.journal} is a directory, not a journal: give the HAR path the capture was writing.`);
  }
  let result: Awaited<ReturnType<typeof writeHarFromJournal>>;
  try {
    result = await writeHarFromJournal({
      journalPath: paths.journal,
      bodiesPath: paths.bodies,
      out,
      complete: false,
      redactorFor: (header) => redactorFor(header, opts.bbHome),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    });
  } catch (err) {
    if (isBbError(err)) throw err;
    // An I/O failure (permissions, a full disk): one sentence, the journal left in place.
    const e = err as NodeJS.ErrnoException;
    throw new BbError('BB_RECOVER_FAILED', `could not recover ${out} from ${paths.journal} (${e.code ?? e.message}): fix the cause and run bb recover again; the journal is kept.`);
  }
  rmSync(paths.journal, { force: true });
  rmSync(paths.bodies, { force: true });
  return { out, entries: result.entries, dropped: result.dropped, open: result.open };
}

/** Bytes read from the end of a HAR for its log's `_bb`. */
const TAIL_BYTES = 1024 * 1024;

/**
 * The entry count of `har` when it is the complete HAR the capture of `journal` wrote (its log's `_bb` says
 * complete and names the journal header's label, target, listen address and start), else undefined.
 */
function finishedFrom(har: string, journal: string): number | undefined {
  const h = journalHeaderAt(journal);
  let tail: string;
  try {
    tail = readTail(har, TAIL_BYTES).trimEnd();
  } catch {
    return undefined; // unreadable: the refusals below say what to do
  }
  if (!h) return undefined;
  // The log's `_bb` is the file's last member (writer.ts): `..."_bb":{...}}}` and a newline. A key in an entry or
  // a page title would have its quotes escaped, so the last `"_bb":{` of the tail is the log's.
  const at = tail.lastIndexOf('"_bb":{');
  if (at < 0 || !tail.endsWith('}}}')) return undefined;
  let bb: { complete?: unknown; label?: unknown; target?: unknown; listen?: unknown; startedDateTime?: unknown; counts?: { entries?: unknown } };
  try {
    bb = JSON.parse(tail.slice(at + '"_bb":'.length, -2)) as typeof bb;
  } catch {
    return undefined;
  }
  const same = bb.complete === true && bb.label === h.label && bb.target === h.target && bb.listen === h.listen && bb.startedDateTime === h.startedDateTime;
  return same && typeof bb.counts?.entries === 'number' ? bb.counts.entries : undefined;
}

/** Up to `max` bytes of a file's end, as text. */
function readTail(path: string, max: number): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const n = Math.min(size, max);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}
