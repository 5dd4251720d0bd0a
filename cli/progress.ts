// Progress of long work on a TTY: one line on stderr, rewritten in place,
// shown only once the work has run past a moment (~2 s), and never on a pipe
// or with --quiet, so scripts and logs see only the result.
import type { WriteProgress } from '../capture/index.js';
import type { DiffProgress } from '../diff/index.js';

/** A progress line. `update` is cheap to call often; `done` clears the line. */
export interface Progress {
  update(text: string): void;
  done(): void;
}

/** Options of a progress line. */
export interface ProgressOptions {
  /** Where it goes (stderr). */
  stream: NodeJS.WriteStream;
  /** --quiet: nothing at all. */
  quiet: boolean;
  /** Nothing before this many ms (default 2000). */
  afterMs?: number;
  /** At most one redraw per this many ms (default 200). */
  everyMs?: number;
}

/** A progress line on a TTY, or one that does nothing. */
export function progressLine(options: ProgressOptions): Progress {
  if (options.quiet || !options.stream.isTTY) return { update: () => {}, done: () => {} };
  const started = Date.now();
  const afterMs = options.afterMs ?? 2_000;
  const everyMs = options.everyMs ?? 200;
  let drawnAt = 0;
  let shown = false;
  return {
    update(text) {
      const now = Date.now();
      if (now - started < afterMs || now - drawnAt < everyMs) return;
      drawnAt = now;
      shown = true;
      options.stream.write(`\r\x1b[K${text}`);
    },
    done() {
      if (shown) options.stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

/** "bb: writing old.har: 1,200 of 5,000 entries (24%)", or with the journal's share when the total is unknown. */
export function writingText(what: string, p: WriteProgress, totalEntries?: number): string {
  const n = p.entries.toLocaleString('en-US');
  if (totalEntries !== undefined && totalEntries > 0) {
    const pct = Math.min(100, Math.floor((p.entries / totalEntries) * 100));
    return `bb: ${what}: ${n} of ${totalEntries.toLocaleString('en-US')} entries (${pct}%)`;
  }
  const pct = p.journalBytes > 0 ? Math.min(100, Math.floor((p.journalBytesRead / p.journalBytes) * 100)) : 0;
  return `bb: ${what}: ${n} entries, ${pct}% of the journal read`;
}

/** "bb diff: normalize 12,000 of 100,000 entries (12%)", or the stage alone. */
export function diffProgressText(p: DiffProgress): string {
  if (p.done === undefined || !p.total) return `bb diff: ${p.stage}…`;
  const what = p.stage.endsWith('compare') ? 'pairs' : 'entries';
  return `bb diff: ${p.stage} ${p.done.toLocaleString('en-US')} of ${p.total.toLocaleString('en-US')} ${what} (${Math.floor((p.done / p.total) * 100)}%)`;
}
