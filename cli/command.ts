import type { Argv } from 'yargs';
import type { BbEnvironment } from './environment.js';

/**
 * One CLI command. `run` returns the exit code (0 same, 1 different); it
 * throws a BbError for what the user must fix (exit.ts maps its code to a
 * status). Only main.ts calls process.exit.
 */
export interface BbCommand {
  /** yargs command spec, e.g. 'diff <old> <new>'. */
  command: string | string[];
  /** One line for --help. */
  describe: string;
  /** Declares options and positionals. */
  builder: (yargs: Argv) => Argv;
  /** Does the work with the flags and the environment read at start-up; resolves to the process exit code. */
  run: (argv: Record<string, unknown>, environment: BbEnvironment) => Promise<number>;
}
