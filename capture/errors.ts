// Errors capture/ raises for people to act on. capture/ cannot import cli/,
// so it carries its own small error class with the same duck-typed shape
// (`exitCode`, `code`) that cli/errors.ts's isUserError recognises.

/** A capture failure a user can act on: one sentence, a stable code, an exit code (2 = could not run). */
export class CaptureError extends Error {
  /** Stable code, e.g. BB_OUT_EXISTS. */
  readonly code: string;
  /** Exit code the CLI should use. */
  readonly exitCode: number;
  constructor(message: string, code: string, exitCode = 2) {
    super(message);
    this.name = 'CaptureError';
    this.code = code;
    this.exitCode = exitCode;
  }
}
