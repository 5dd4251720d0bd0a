// bb compare: boot the old and new servers hermetically, drive the scenario
// through a recording proxy in front of each, diff the captures.
// Exit 0 match (known differences included), 1 real differences, 2 could not run, 130 interrupted.
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, relative, resolve, sep } from 'node:path';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { useColor } from '../tty.js';
import { claimRunFolder, loadCompareConfig, runCompare, runFolderName, RunningServers, type TreeName } from '../../scenario/index.js';
import { BbError } from '../../core/index.js';
import type { BbEnvironment } from '../environment.js';
import type { TimingOptions } from '../../diff/index.js';
import { timingFlags } from './diff.js';

/** Parses --trees old,new | old,old | new,new. */
export function parseTrees(value: unknown): [TreeName, TreeName] {
  const parts = String(value ?? 'old,new').split(',').map((s) => s.trim());
  if (parts.length !== 2 || parts.some((p) => p !== 'old' && p !== 'new')) {
    throw new BbError('BB_BAD_TREES', `--trees needs two of old/new like old,new or old,old, got '${String(value)}'`);
  }
  return parts as [TreeName, TreeName];
}

// Kept here too for the commands that import it from compare (demo, replay).
export { runFolderName };

/** Runs a comparison with the CLI's I/O: progress on stderr, report on stdout, Ctrl-C stops the servers. */
export async function compareWithCli(opts: { config: string; trees: [TreeName, TreeName]; noise: boolean; out: string | { prefix: string }; repeat?: number; timing?: TimingOptions; replay?: string }, environment: BbEnvironment): Promise<number> {
  const config = await loadCompareConfig(opts.config);
  // No --out: a fresh captures/<prefix>-<time>/ of this run's own, once the config is read.
  const outDir = typeof opts.out === 'string' ? resolve(opts.out) : claimRunFolder('captures', opts.out.prefix);
  if (existsSync(outDir)) {
    const taken = readdirSync(outDir).filter((f) => /\.har(\.journal)?$/.test(f));
    if (taken.length) throw new BbError('BB_OUT_EXISTS', `run folder ${outDir} already holds ${taken[0]}: choose another --out or remove it.`);
  }
  const controller = new AbortController();
  // runCompare owns its servers: it stops them when aborted and when it ends.
  const servers = new RunningServers();
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`bb: ${signal}: stopping the servers\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Last resort if something exits the process under us: no server survives bb.
  process.on('exit', () => servers.killAllSync());
  try {
    const run = await runCompare({
      config,
      trees: opts.trees,
      noise: opts.noise,
      ...(opts.repeat !== undefined ? { repeat: opts.repeat } : {}),
      ...(opts.timing ? { timing: opts.timing } : {}),
      outDir,
      bbHome: environment.home.path,
      hostEnv: environment.host,
      color: useColor(process.stdout, environment.color),
      signal: controller.signal,
      servers,
      log: (line) => process.stderr.write(`${line}\n`),
      ...(opts.replay !== undefined ? { replay: resolve(opts.replay) } : {}),
    });
    // Short under the working directory; a folder elsewhere as it is, not ../../tmp/...
    const shown = (p: string) => {
      const rel = relative(process.cwd(), p) || '.';
      return rel.startsWith('..') ? p : rel;
    };
    process.stdout.write(run.text.endsWith('\n') ? run.text : `${run.text}\n`);
    const [first, second] = opts.trees;
    if (first === second && run.result.counts.real > 0) {
      // A self-check that differs says the comparison is not ready yet, not that the build changed.
      process.stdout.write(
        `\nThe same build (${first},${second}) differs from itself: these fields vary run to run. ` +
          `bb noise ${shown(run.runs[0]!.har)} ${shown(run.runs[1]!.har)} -o noise.json writes rules for them (review, then merge into your config), ` +
          `or compare with --noise to set them apart.\n`,
      );
    }
    const reports = [run.reports.json, run.reports.html].filter((p): p is string => !!p);
    process.stderr.write(`${whereWritten(run.runs.map((r) => r.har), reports, shown)}\n`);
    return run.exitCode;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * The run's last line: "bb: wrote old.har, new.har and report.json, report.html
 * in captures/demo-…/" when they share a folder (they do unless --out says
 * otherwise), else each path in full.
 */
export function whereWritten(captures: string[], reports: string[], shown: (path: string) => string): string {
  const all = [...captures, ...reports];
  const folder = dirname(all[0] ?? '.');
  const list = (paths: string[], what: string): string => (paths.length === 0 ? '' : `${what} ${paths.map((p) => basename(p)).join(', ')}`);
  if (all.every((p) => dirname(p) === folder)) {
    const parts = [list(captures, 'the captures'), list(reports, 'the reports')].filter(Boolean);
    return `bb: wrote ${parts.join(' and ')} in ${shown(folder)}${sep}`;
  }
  return `bb: wrote the captures ${captures.map(shown).join(', ')}${reports.length ? ` and the reports ${reports.map(shown).join(', ')}` : ''}`;
}

/** Most runs per side --repeat takes (each boots the server once). */
const MAX_REPEAT = 100;

export const compareCommand: BbCommand = {
  command: 'compare',
  describe: 'boot the old and new servers, drive the scenario through recording proxies, diff the captures',
  builder: (y: Argv) =>
    y
      .option('config', { type: 'string', default: 'bb.config.json', describe: 'the compare config (servers, scenario, diff rules)' })
      .option('trees', { type: 'string', default: 'old,new', describe: 'which trees fill the two slots: old,new | old,old | new,new' })
      .option('noise', { type: 'boolean', default: false, describe: 'run old twice and new once; what differs between the old runs is noise' })
      .option('out', { type: 'string', describe: 'run folder for captures, server logs and reports (default captures/compare-<time>/)' })
      .option('repeat', { type: 'number', describe: 'run each side N times, interleaved: the first pair is diffed, every run feeds the timing (implies --timing)' })
      .option('timing', { type: 'boolean', default: false, describe: 'add per-route timing, old → new (as bb diff --timing)' })
      .option('timing-threshold', { type: 'number', describe: 'a ratio of medians inside ×1/R..×R is ~ (default 1.2)' })
      .option('timing-floor', { type: 'number', describe: 'a median change under this many ms is ~ (default 1)' })
      .option('timing-budget', { type: 'number', describe: 'a route whose whole 95 % interval is above this ratio fails as a real finding' })
      .option('timing-metric', { type: 'string', choices: ['ttfb', 'total'], describe: 'the time the verdict is on (default ttfb)' })
      .option('replay', { type: 'string', describe: "a capture (HAR) to replay against each server instead of the config's scenario" }),
  run: async (argv, environment) => {
    const repeat = typeof argv.repeat === 'number' ? argv.repeat : undefined;
    if (repeat !== undefined && !(Number.isInteger(repeat) && repeat >= 1 && repeat <= MAX_REPEAT)) {
      throw new BbError('BB_BAD_NUMBER', `--repeat needs a whole number of runs from 1 to ${MAX_REPEAT}, got ${repeat}`);
    }
    const { timing } = timingFlags(argv);
    return compareWithCli({
      config: String(argv.config),
      trees: parseTrees(argv.trees),
      noise: Boolean(argv.noise),
      out: typeof argv.out === 'string' ? argv.out : { prefix: 'compare' },
      ...(repeat !== undefined ? { repeat } : {}),
      ...(timing ? { timing } : {}),
      ...(typeof argv.replay === 'string' ? { replay: argv.replay } : {}),
    }, environment);
  },
};
