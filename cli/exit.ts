// Exit statuses, mapped from error codes here and nowhere else: library layers
// raise BbError with a code and know nothing of processes. 0 the run found no
// difference, 1 it found some (commands return those), 2 bb could not run,
// 130 interrupted (the shell's 128 + SIGINT).
import { isBbError, type BbCode } from '../core/index.js';

/** Could not run: bad input, a server that would not start, an unreadable file. */
export const EXIT_COULD_NOT_RUN = 2;

const BY_CODE: Partial<Record<BbCode, number>> = {
  BB_INTERRUPTED: 130,
};

/** The exit status for an error that ended a command: its code's, or 2. */
export function exitStatusFor(err: unknown): number {
  return isBbError(err) ? (BY_CODE[err.code] ?? EXIT_COULD_NOT_RUN) : EXIT_COULD_NOT_RUN;
}
