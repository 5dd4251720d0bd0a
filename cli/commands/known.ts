// bb known add: ratify findings (one known entry over each one's routes, with the values it ratified; a folded finding's consequences too) or single differences (the narrowest entry) from a --json report, written into the config; several ids, --all or --route at once, one reason.
import { readFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { addToConfigFile, type Difference, type Finding, type KnownConfig } from '../../diff/index.js';
import { findingOnRoutes, knownForFinding, narrowestKnown, ratifiedValuesText } from '../../diff/index.js';
import { BbError, globMatcher, isBbError, oneLine, unreadableWhy } from '../../core/index.js';

async function readText(path: string, what: string, missingOk: boolean): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && missingOk) return undefined;
    throw new BbError('BB_FILE_UNREADABLE', `cannot read ${what} ${path} (${unreadableWhy(err)}): check the path.`);
  }
}

/** What the report holds, as bb known add reads it. */
interface Report {
  differences: Difference[];
  findings?: Finding[];
}

/** One thing to ratify: the entry to write and how to name it. */
interface Ratification {
  entry: KnownConfig;
  what: string;
}

const findingName = (f: Finding) => `finding ${f.id} (${f.pattern || 'whole entry'} ${f.kind}, ${f.entries} entries)`;

/**
 * The entries to write: each id (a finding: its real occurrence first, when a
 * part of it is already known; else a difference), or with --all / --route
 * every real finding; --route keeps the part of each finding on its routes.
 */
function ratifications(report: Report, from: string, ids: string[], opts: { all: boolean; route?: string }, reason: string, extra: { since?: string; tracking?: string }): Ratification[] {
  const rowsById = new Map(report.differences.map((d) => [d.id, d]));
  const rowsOf = (f: Finding) => f.rows.flatMap((id) => rowsById.get(id) ?? []);
  const route = opts.route !== undefined ? globMatcher(opts.route) : undefined;
  const out: Ratification[] = [];
  // A folded finding is its cause and its consequences (diff/findings-fold.ts): ratifying it ratifies them all, one entry each.
  const finding = (f: Finding) => {
    for (const x of [f, ...(f.consequences ?? [])]) {
      const part = route ? findingOnRoutes(x, rowsOf(x), route) : { finding: x, rows: rowsOf(x) };
      if (part) out.push({ entry: knownForFinding(part.finding, part.rows, reason, extra), what: findingName(x) });
    }
  };
  // A consequence can be ratified on its own, by its id.
  const findings = (report.findings ?? []).flatMap((f) => [f, ...(f.consequences ?? [])]);
  if (!ids.length) {
    for (const f of report.findings ?? []) if (f.class === 'real') finding(f);
    if (!out.length) throw new BbError('BB_DIFF_ID_UNKNOWN', `no real finding${opts.route !== undefined ? ` on a route like ${JSON.stringify(opts.route)}` : ''} in ${from}: nothing to ratify.`);
    return out;
  }
  for (const id of ids) {
    const f = findings.filter((x) => x.id === id).sort((x, y) => (x.class === 'real' ? 0 : 1) - (y.class === 'real' ? 0 : 1))[0];
    const d = f ? undefined : rowsById.get(id);
    if (!f && !d) {
      throw new BbError('BB_DIFF_ID_UNKNOWN', `no finding or difference ${id} in ${from} (it lists ${report.findings?.length ?? 0} findings and ${report.differences.length} differences): copy an id shown in brackets by bb diff.`);
    }
    if (f) finding(f);
    else if (!route || route(d!.route)) out.push({ entry: narrowestKnown(d!, reason, extra), what: `${d!.entry} ${d!.path || '(whole entry)'} (${d!.kind})` });
  }
  if (!out.length) throw new BbError('BB_DIFF_ID_UNKNOWN', `none of ${ids.join(', ')} is on a route like ${JSON.stringify(opts.route)} in ${from}: nothing to ratify.`);
  return out;
}

/** One line per written entry: where, path, kind, and what it fixed ("as 201 → 200", an added field's "as \"1\""). */
function writtenLine(configPath: string, k: KnownConfig): string {
  const fixed = ratifiedValuesText(k.kind, k);
  const values = fixed === undefined ? '' : ` as ${fixed}`;
  return `added to ${configPath}: known where ${JSON.stringify(k.where)} path ${JSON.stringify(k.path)} kind ${k.kind}${values}: ${k.reason}\n`;
}

export const knownCommand: BbCommand = {
  command: 'known <action> [ids..]',
  describe: 'known add FINDING-ID... | --all | --route GLOB --from report.json --reason "...": ratify findings (or differences) in the config, with the values they had',
  builder: (y: Argv) =>
    y
      .positional('action', { type: 'string', choices: ['add'], describe: 'add' })
      .positional('ids', { type: 'string', array: true, describe: 'finding ids (F…) or difference ids from a bb diff --json report' })
      .option('from', { type: 'string', nargs: 1, demandOption: true, describe: 'the bb diff --json report holding them' })
      .option('reason', { type: 'string', nargs: 1, demandOption: true, describe: 'why these differences are accepted' })
      .option('all', { type: 'boolean', default: false, describe: 'every real finding of the report' })
      .option('route', { type: 'string', nargs: 1, describe: 'every real finding (or the ids given) on the routes this glob over "METHOD path" selects, that part only' })
      .option('since', { type: 'string', nargs: 1, describe: 'milestone or version that introduced it' })
      .option('tracking', { type: 'string', nargs: 1, describe: 'issue or ticket URL' })
      .option('config', { type: 'string', nargs: 1, default: 'bb.config.json', describe: 'the config file to write (created when absent)' }),
  run: async (argv) => {
    const ids = ((argv.ids as unknown[] | undefined) ?? []).map(String);
    const all = argv.all === true;
    const routeGlob = typeof argv.route === 'string' ? argv.route : undefined;
    if (ids.length && all) throw new BbError('BB_USAGE', 'bb known add takes finding ids or --all, not both: --all ratifies every real finding of the report.');
    if (!ids.length && !all && routeGlob === undefined) throw new BbError('BB_USAGE', 'bb known add needs finding ids, --all or --route GLOB: bb known add FINDING-ID --from report.json --reason "...".');
    const from = String(argv.from);
    const reason = String(argv.reason).trim();
    if (!reason) throw new BbError('BB_KNOWN_NO_REASON', '--reason must say why the difference is accepted.');
    let report: Partial<Report>;
    try {
      report = JSON.parse((await readText(from, 'report', false))!);
    } catch (err) {
      if (isBbError(err)) throw err;
      throw new BbError('BB_REPORT_INVALID', `${from} is not a bb diff --json report (${oneLine((err as Error).message)}): pass the file bb diff --json wrote.`);
    }
    if (!Array.isArray(report.differences)) throw new BbError('BB_REPORT_INVALID', `${from} is not a bb diff --json report (no "differences" list): pass the file bb diff --json wrote.`);
    const extra = {
      ...(typeof argv.since === 'string' ? { since: argv.since } : {}),
      ...(typeof argv.tracking === 'string' ? { tracking: argv.tracking } : {}),
    };
    const todo = ratifications(report as Report, from, ids, { all, ...(routeGlob !== undefined ? { route: routeGlob } : {}) }, reason, extra);
    const configPath = String(argv.config);
    // The page of `bb shadow --ui` writes through the same function.
    const added = await addToConfigFile(configPath, { known: todo.map((t) => t.entry) });
    const lines = todo.map(({ entry, what }, i) => (added.known[i] ? writtenLine(configPath, entry) : `${configPath} already has a known entry for ${what}; nothing written.\n`));
    process.stdout.write(lines.join(''));
    return 0;
  },
};

