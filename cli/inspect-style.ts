// How `bb frames` and `bb show` render on this stdout: colours only on a TTY
// (NO_COLOR honoured, see tty.ts), lines fitted to the terminal's width.
import type { Style } from '../inspect/index.js';
import { useColor } from './tty.js';
import type { BbEnvironment } from './environment.js';

/** The Style for stdout: the terminal's width on a TTY, else COLUMNS or 120. */
export function stdoutStyle(environment: BbEnvironment): Style {
  const width = process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : (environment.columns ?? 120);
  return { color: useColor(process.stdout, environment.color), width };
}

/** Writes lines to stdout. */
export function printLines(lines: string[]): void {
  if (lines.length > 0) process.stdout.write(lines.join('\n') + '\n');
}
