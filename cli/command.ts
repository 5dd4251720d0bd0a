import type { Argv } from 'yargs';

/**
 * One CLI command. `run` returns the exit code; it throws an Error with
 * `exitCode` (see errors.ts) for user mistakes. Only main.ts calls process.exit.
 */
export interface BbCommand {
  /** yargs command spec, e.g. 'diff <old> <new>'. */
  command: string | string[];
  /** One line for --help. */
  describe: string;
  /** Declares options and positionals. */
  builder: (yargs: Argv) => Argv;
  /** Does the work; resolves to the process exit code. */
  run: (argv: Record<string, unknown>) => Promise<number>;
}
