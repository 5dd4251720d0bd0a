// How a server's log reaches an error message: its last lines, indented.

/** Formats the last lines of a server log under a message, indented, or '' when there are none. */
export function logTail(lines: readonly string[]): string {
  if (lines.length === 0) return ' (its log is empty)';
  return '; its log ends:\n' + lines.map((l) => `    ${l}`).join('\n');
}
