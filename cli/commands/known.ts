// bb known add: ratify one difference from a --json report by writing the narrowest known entry into the config.
import { readFile, writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { validateDiffConfig, type Difference } from '../../diff/index.js';
import { addKnownToConfigText, narrowestKnown } from '../../diff/triage-rules.js';
import { UsageError } from '../errors.js';

async function readText(path: string, what: string, missingOk: boolean): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && missingOk) return undefined;
    throw new UsageError(`cannot read ${what} ${path} (${code === 'ENOENT' ? 'it does not exist' : code}): check the path.`, 'BB_FILE_UNREADABLE');
  }
}

export const knownCommand: BbCommand = {
  command: 'known <action> <id>',
  describe: 'known add DIFF-ID --from report.json --reason "...": ratify a difference in the config',
  builder: (y: Argv) =>
    y
      .positional('action', { type: 'string', choices: ['add'], describe: 'add' })
      .positional('id', { type: 'string', describe: 'the difference id from a bb diff --json report' })
      .option('from', { type: 'string', nargs: 1, demandOption: true, describe: 'the bb diff --json report holding the difference' })
      .option('reason', { type: 'string', nargs: 1, demandOption: true, describe: 'why this difference is accepted' })
      .option('since', { type: 'string', nargs: 1, describe: 'milestone or version that introduced it' })
      .option('tracking', { type: 'string', nargs: 1, describe: 'issue or ticket URL' })
      .option('config', { type: 'string', nargs: 1, default: 'bb.config.json', describe: 'the config file to write (created when absent)' }),
  run: async (argv) => {
    const id = String(argv.id);
    const from = String(argv.from);
    const reason = String(argv.reason).trim();
    if (!reason) throw new UsageError('--reason must say why the difference is accepted.', 'BB_KNOWN_NO_REASON');
    let report: { differences?: Difference[] };
    try {
      report = JSON.parse((await readText(from, 'report', false))!);
    } catch (err) {
      if ((err as { exitCode?: number }).exitCode) throw err;
      throw new UsageError(`${from} is not a bb diff --json report (${oneLine((err as Error).message)}): pass the file bb diff --json wrote.`, 'BB_REPORT_INVALID');
    }
    if (!Array.isArray(report.differences)) throw new UsageError(`${from} is not a bb diff --json report (no "differences" list).`, 'BB_REPORT_INVALID');
    const d = report.differences.find((x) => x.id === id);
    if (!d) {
      throw new UsageError(`no difference ${id} in ${from} (it lists ${report.differences.length}): copy an id shown in brackets by bb diff.`, 'BB_DIFF_ID_UNKNOWN');
    }
    const configPath = String(argv.config);
    const text = await readText(configPath, 'config', true);
    const entry = narrowestKnown(d, reason, {
      ...(typeof argv.since === 'string' ? { since: argv.since } : {}),
      ...(typeof argv.tracking === 'string' ? { tracking: argv.tracking } : {}),
    });
    let next: string | undefined;
    try {
      next = addKnownToConfigText(text, entry);
    } catch (err) {
      throw new UsageError(`config ${configPath} is not valid JSON (${oneLine((err as Error).message)}): fix the file.`, 'BB_CONFIG_INVALID');
    }
    if (next === undefined) {
      process.stdout.write(`${configPath} already has a known entry for ${d.entry} ${d.path || '(whole entry)'} (${d.kind}); nothing written.\n`);
      return 0;
    }
    validateDiffConfig(JSON.parse(next), configPath);
    await writeFile(configPath, next);
    process.stdout.write(`added to ${configPath}: known where ${JSON.stringify(entry.where)} path ${JSON.stringify(entry.path)} kind ${entry.kind}: ${reason}\n`);
    return 0;
  },
};

/** A JSON.parse message on one line (V8 quotes the source text, newlines included). */
function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ');
}
