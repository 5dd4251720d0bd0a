// bb's command line: parses argv once, runs one command, owns process.exit.
import yargs, { type MiddlewareFunction } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { readFileSync } from 'node:fs';
import { commands } from './commands/index.js';

import { bbUsageMessage, unknownCommand } from './usage.js';
import { BbError, isBbError } from '../core/index.js';
import { exitStatusFor } from './exit.js';
import { readEnvironment } from './environment.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The options yargs declared for the command being run (names by type). */
interface DeclaredOptions {
  array: string[];
  boolean: string[];
  number: string[];
  string: string[];
}

/** The text the user typed after `--name` or in `--name=...` (for messages about it). */
function typedValue(argv: string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith(`--${name}=`)) return argv[i].slice(name.length + 3);
    if (argv[i] === `--${name}`) return argv[i + 1];
  }
  return undefined;
}

/**
 * Refuses what yargs lets through: a one-value flag given twice (yargs makes
 * it an array, which commands would take for a string) and a number flag
 * given a word (NaN) or a negative (every number flag of bb is a count or ms).
 */
function checkFlagValues(args: Record<string, unknown>, declared: DeclaredOptions, argv: string[]): void {
  const repeatable = new Set(declared.array);
  for (const name of [...declared.string, ...declared.number, ...declared.boolean]) {
    const value = args[name];
    if (!repeatable.has(name) && Array.isArray(value)) {
      throw new BbError('BB_FLAG_REPEATED', `--${name} is given ${value.length} times: give it once`);
    }
  }
  for (const name of declared.number) {
    const value = args[name];
    if (typeof value === 'number' && !(value >= 0)) {
      throw new BbError('BB_BAD_NUMBER', `--${name} needs a number of 0 or more, got '${typedValue(argv, name) ?? value}'`);
    }
  }
}

/** The flags of the command yargs was parsing (the third argument of .fail() is its usage object, whatever its types say). */
function declaredFlags(instance: unknown): string[] {
  const usage = instance as { getDescriptions?: () => Record<string, unknown> } | undefined;
  return Object.keys(usage?.getDescriptions?.() ?? {});
}

/**
 * yargs renders the running command's whole help text right after starting
 * its handler, in case it is shown later: ~40 ms of a small `bb diff`
 * (measured), blocking the handler's first reads. Help is rendered anyway
 * when it is shown (--help, a usage error), so the eager copy is skipped.
 * The hook is yargs's internal one: when it is not there, nothing changes.
 */
function skipEagerHelp(parser: unknown): void {
  const usage = (parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } }).getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}

async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const wanted = argv.find((a) => !a.startsWith('-'));
  const parser = yargs(argv)
    .scriptName('bb')
    .version(pkg.version)
    .strict()
    .demandCommand(1, 'bb needs a command: try bb --help')
    .exitProcess(false)
    .fail((msg, err, instance) => {
      // yargs would otherwise run the handler anyway with missing arguments.
      const line = String(msg).replace(/\s*\n\s*/g, ' ');
      // Missing arguments and misspelt flags, in bb's words (the flags known are the running command's).
      // yargs throws its own YError for some usage mistakes (a flag's missing value): those are the user's too.
      const usage = !err || err.name === 'YError';
      const said = usage ? bbUsageMessage(line, wanted, argv, declaredFlags(instance)) : undefined;
      if (said === undefined && usage && err) throw new BbError('BB_USAGE', `${line} (see bb --help)`);
      if (said !== undefined) throw new BbError('BB_USAGE', said);
      throw err ?? new BbError('BB_USAGE', line.includes('bb --help') ? line : `${line} (see bb --help)`);
    })
    .wrap(Math.min(100, process.stdout.columns || 100))
    // yargs hands middleware the instance as a second argument (its types omit it).
    .middleware(((args: Record<string, unknown>, y: { getOptions(): DeclaredOptions }) => checkFlagValues(args, y.getOptions(), argv)) as unknown as MiddlewareFunction);
  skipEagerHelp(parser);
  // Only the command being run is loaded (its module graph is what costs at start-up);
  // the others are listed by name and description for --help.
  if (wanted !== undefined && argv[0] === wanted && !commands.some((c) => c.name === wanted)) {
    throw new BbError('BB_UNKNOWN_COMMAND', unknownCommand(wanted, commands.map((c) => c.name)));
  }
  for (const lazy of commands) {
    if (lazy.name === wanted) {
      const cmd = await lazy.load();
      parser.command({
        command: cmd.command,
        describe: cmd.describe,
        builder: cmd.builder,
        handler: async (args) => {
          exitCode = await cmd.run(args as Record<string, unknown>, readEnvironment());
        },
      });
    } else {
      parser.command(lazy.name, lazy.describe, (y) => y, () => {
        throw new Error(`bb ${lazy.name} could not be loaded`);
      });
    }
  }
  await parser.parseAsync();
  return exitCode;
}

main(hideBin(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A BbError is meant for the user: its sentence, no stack. Anything else is bb's bug.
    if (isBbError(err)) process.stderr.write(`bb: ${err.message}\n`);
    else process.stderr.write(`bb: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(exitStatusFor(err));
  },
);
