// `bb recover`: turns a journal left by a crashed capture into `<out>` with
// `complete: false`. Keeps every record that reached the disk; a torn last
// line is dropped and counted.
import { existsSync, lstatSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { redactorFor } from './capture.js';
import { journalPaths } from './options.js';
import { liveJournalWriter } from './journal-owner.js';
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
  if (lstatSync(out, { throwIfNoEntry: false }) !== undefined && !opts.force) {
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
