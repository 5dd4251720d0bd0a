// bb's command line: parses argv once, runs one command, owns process.exit.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { readFileSync } from 'node:fs';
import { commands } from './commands/index.js';
import { isUserError } from './errors.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const parser = yargs(argv)
    .scriptName('bb')
    .version(pkg.version)
    .strict()
    .demandCommand(1, 'bb needs a command: try bb --help')
    .exitProcess(false)
    .fail((msg, err) => {
      // yargs would otherwise run the handler anyway with missing arguments.
      throw err ?? Object.assign(new Error(`${msg} (see bb --help)`), { exitCode: 2, code: 'BB_USAGE' });
    })
    .wrap(Math.min(100, process.stdout.columns || 100));
  for (const cmd of commands) {
    parser.command({
      command: cmd.command,
      describe: cmd.describe,
      builder: cmd.builder,
      handler: async (args) => {
        exitCode = await cmd.run(args as Record<string, unknown>);
      },
    });
  }
  await parser.parseAsync();
  return exitCode;
}

main(hideBin(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (isUserError(err)) {
      process.stderr.write(`bb: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`bb: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(2);
  },
);
