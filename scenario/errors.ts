// Errors of the scenario layer. Every failure that stops a run is "could not
// run" (exit 2) with a stable code and a sentence naming the server or step.

/** A scenario-layer failure: one actionable message, a stable code, exit code 2. */
export class ScenarioError extends Error {
  /** Stable code, e.g. BB_SERVER_NOT_READY. */
  readonly code: string;
  /** Process exit code the CLI should use (2 = could not run). */
  readonly exitCode: number;
  constructor(message: string, code: string, exitCode = 2) {
    super(message);
    this.name = 'ScenarioError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** Formats the last lines of a server log under a message, indented, or '' when there are none. */
export function logTail(lines: readonly string[]): string {
  if (lines.length === 0) return ' (its log is empty)';
  return '; its log ends:\n' + lines.map((l) => `    ${l}`).join('\n');
}
