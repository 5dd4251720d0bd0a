// Who is writing a journal. A capture records its pid and host in the
// journal's header, so a journal left by a killed capture (bb recover's) is
// told from one a running capture is still appending to: recovering that one
// would take its journal away, and a second capture must not write beside it.
// A copy of a running capture's journal (at another path) is anyone's.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseJournalLine, type HeaderRecord } from './journal.js';

/** What a journal's header says about its writer (absent in journals of older bbs). */
export interface JournalOwner {
  /** The writing process. */
  pid: number;
  /** The machine it runs on (a pid means nothing elsewhere). */
  host: string;
  /** The journal's own path: a copy elsewhere is not the one being written. */
  journal: string;
}

/** This process writing `journalPath`, as a capture records it in the header. */
export function currentOwner(journalPath: string): JournalOwner {
  return { pid: process.pid, host: hostname(), journal: resolve(journalPath) };
}

/**
 * The pid of the process on this machine still running that wrote the
 * journal's header at this path, or undefined: a journal without one, a copy,
 * of another machine, of a process that is gone, or not readable (the caller
 * says why elsewhere).
 */
export function liveJournalWriter(journalPath: string): number | undefined {
  const header = journalHeaderAt(journalPath) as (Partial<JournalOwner> & { r?: string }) | undefined;
  if (header === undefined || typeof header.pid !== 'number' || header.host !== hostname() || header.journal !== resolve(journalPath) || header.pid === process.pid) return undefined;
  try {
    process.kill(header.pid, 0);
    // A process killed but not yet reaped (a zombie, state Z) answers too: it writes nothing more.
    const stat = readProcStat(header.pid);
    return stat !== undefined && /^\d+ \(.*\) Z/s.test(stat) ? undefined : header.pid;
  } catch (err) {
    // EPERM: alive, another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? header.pid : undefined;
  }
}

/** The header record of the journal at this path (its first line), or undefined: none, not a bb journal, not readable. */
export function journalHeaderAt(journalPath: string): HeaderRecord | undefined {
  let first: string;
  try {
    const fd = openSync(journalPath, 'r');
    try {
      // The header is the first line, well under 64 KiB.
      const buf = Buffer.alloc(65536);
      const n = readSync(fd, buf, 0, buf.length, 0);
      first = buf.subarray(0, n).toString('utf8').split('\n', 1)[0]!;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const header = parseJournalLine(first);
  return header?.r === 'bb-journal' ? (header as HeaderRecord) : undefined;
}

/** /proc/<pid>/stat, where there is one (Linux). */
function readProcStat(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
}
