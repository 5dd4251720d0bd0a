// How a server's log reaches an error message: where it is, and its last lines, indented.

/** Names the logs a message points at: `(log: a)`, or `(logs: a and b)` when the output is in both. */
export function logsNamed(paths: readonly string[]): string {
  return paths.length === 1 ? `(log: ${paths[0]})` : `(logs: ${paths.join(' and ')})`;
}

/** Formats the last lines of a server log under a message, indented, or '' when there are none. */
export function logTail(lines: readonly string[]): string {
  if (lines.length === 0) return ' (its log is empty)';
  return '; its log ends:\n' + lines.map((l) => `    ${l}`).join('\n');
}
