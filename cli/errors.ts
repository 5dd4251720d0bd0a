// How commands report failure. Any module may throw an Error carrying
// `exitCode` (and a `code`); the CLI prints its message on one line, no stack,
// and exits with that code. 2 means "could not run".

/** An error meant for the user: one actionable sentence, a stable code, an exit code. */
export class UsageError extends Error {
  readonly code: string;
  readonly exitCode: number;
  constructor(message: string, code = 'BB_USAGE', exitCode = 2) {
    super(message);
    this.name = 'UsageError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** True for errors that carry their own exit code (from any module, duck-typed). */
export function isUserError(err: unknown): err is Error & { exitCode: number; code?: string } {
  return err instanceof Error && typeof (err as { exitCode?: unknown }).exitCode === 'number';
}
