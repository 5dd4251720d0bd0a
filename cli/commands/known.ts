// bb known add: ratify a finding (one known entry over its routes) or one difference (the narrowest entry) from a --json report, written into the config.
import { readFile, writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { validateDiffConfig, type Difference, type Finding } from '../../diff/index.js';
import { addKnownToConfigText, knownForFinding, narrowestKnown } from '../../diff/index.js';
import { BbError, isBbError } from '../../core/index.js';

async function readText(path: string, what: string, missingOk: boolean): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && missingOk) return undefined;
    throw new BbError('BB_FILE_UNREADABLE', `cannot read ${what} ${path} (${code === 'ENOENT' ? 'it does not exist' : code}): check the path.`);
  }
}

export const knownCommand: BbCommand = {
  command: 'known <action> <id>',
  describe: 'known add FINDING-ID|DIFF-ID --from report.json --reason "...": ratify a finding (or one difference) in the config',
  builder: (y: Argv) =>
    y
      .positional('action', { type: 'string', choices: ['add'], describe: 'add' })
      .positional('id', { type: 'string', describe: 'a finding id (F…) or difference id from a bb diff --json report' })
      .option('from', { type: 'string', nargs: 1, demandOption: true, describe: 'the bb diff --json report holding it' })
      .option('reason', { type: 'string', nargs: 1, demandOption: true, describe: 'why this difference is accepted' })
      .option('since', { type: 'string', nargs: 1, describe: 'milestone or version that introduced it' })
      .option('tracking', { type: 'string', nargs: 1, describe: 'issue or ticket URL' })
      .option('config', { type: 'string', nargs: 1, default: 'bb.config.json', describe: 'the config file to write (created when absent)' }),
  run: async (argv) => {
    const id = String(argv.id);
    const from = String(argv.from);
    const reason = String(argv.reason).trim();
    if (!reason) throw new BbError('BB_KNOWN_NO_REASON', '--reason must say why the difference is accepted.');
    let report: { differences?: Difference[]; findings?: Finding[] };
    try {
      report = JSON.parse((await readText(from, 'report', false))!);
    } catch (err) {
      if (isBbError(err)) throw err;
      throw new BbError('BB_REPORT_INVALID', `${from} is not a bb diff --json report (${oneLine((err as Error).message)}): pass the file bb diff --json wrote.`);
    }
    if (!Array.isArray(report.differences)) throw new BbError('BB_REPORT_INVALID', `${from} is not a bb diff --json report (no "differences" list).`);
    const extra = {
      ...(typeof argv.since === 'string' ? { since: argv.since } : {}),
      ...(typeof argv.tracking === 'string' ? { tracking: argv.tracking } : {}),
    };
    // A finding id ratifies the whole finding (its real occurrence first, when a part of it is already known).
    const findings = (report.findings ?? []).filter((f) => f.id === id).sort((x, y) => (x.class === 'real' ? 0 : 1) - (y.class === 'real' ? 0 : 1));
    const finding = findings[0];
    const d = finding ? undefined : report.differences.find((x) => x.id === id);
    if (!finding && !d) {
      throw new BbError('BB_DIFF_ID_UNKNOWN', `no finding or difference ${id} in ${from} (it lists ${report.findings?.length ?? 0} findings and ${report.differences.length} differences): copy an id shown in brackets by bb diff.`);
    }
    const what = finding ? `finding ${finding.id} (${finding.pattern || 'whole entry'} ${finding.kind}, ${finding.entries} entries)` : `${d!.entry} ${d!.path || '(whole entry)'} (${d!.kind})`;
    const configPath = String(argv.config);
    const text = await readText(configPath, 'config', true);
    const entry = finding ? knownForFinding(finding, reason, extra) : narrowestKnown(d!, reason, extra);
    let next: string | undefined;
    try {
      next = addKnownToConfigText(text, entry);
    } catch (err) {
      throw new BbError('BB_CONFIG_INVALID', `config ${configPath} is not valid JSON (${oneLine((err as Error).message)}): fix the file.`);
    }
    if (next === undefined) {
      process.stdout.write(`${configPath} already has a known entry for ${what}; nothing written.\n`);
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
