// bb diff: compare two captures after normalizing; exit 0 match, 1 differences, 2 could not compare.
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { diffCaptures, loadDiffConfig, pairViewsFrom, renderHtml, renderJson, renderJunit, renderText, type DiffOptions, type DiffResult } from '../../diff/index.js';
import { diffProgressText, progressLine } from '../progress.js';
import { useColor } from '../tty.js';
import { BbError } from '../../core/index.js';
import { checkOutPathInFolder, writeOutFile } from '../../capture/index.js';

/**
 * Writes a report to stdout for "-", else to a file by the HAR's rule
 * (capture/out-file.ts): an existing file or symlink only with --force, and
 * then replaced by a rename, never written through. `flag` names it in errors.
 */
export async function writeReport(target: string, text: string, flag: string, force: boolean): Promise<void> {
  if (target === '-') {
    process.stdout.write(text);
    return;
  }
  await writeOutFile(target, text, { force, what: flag, mode: 0o644, unwritable: 'BB_REPORT_UNWRITABLE' });
}

/** Refuses a report path writeReport would refuse, before the work that fills it ("-", stdout, always passes). */
export function checkReport(target: string | undefined, flag: string, force: boolean): void {
  if (target === undefined || target === '-') return;
  checkOutPathInFolder(target, { force, what: flag, unwritable: 'BB_REPORT_UNWRITABLE' });
}

/**
 * --timing and its settings as DiffOptions.timing; a --timing-* flag without
 * --timing turns timing on (asking for a budget means asking for timing).
 */
export function timingFlags(argv: Record<string, unknown>): Pick<DiffOptions, 'timing'> {
  const num = (name: string) => (typeof argv[name] === 'number' ? (argv[name] as number) : undefined);
  const threshold = num('timing-threshold');
  const floor = num('timing-floor');
  const budget = num('timing-budget');
  const metric = argv['timing-metric'];
  const on = argv.timing === true || threshold !== undefined || floor !== undefined || budget !== undefined || metric !== undefined;
  if (!on) return {};
  if (threshold !== undefined && !(threshold >= 1)) throw new BbError('BB_BAD_NUMBER', `--timing-threshold needs a ratio of 1 or more like 1.2, got ${threshold}`);
  if (budget !== undefined && !(budget > 0)) throw new BbError('BB_BAD_NUMBER', `--timing-budget needs a ratio above 0 like 1.5, got ${budget}`);
  return {
    timing: {
      ...(threshold !== undefined ? { threshold } : {}),
      ...(floor !== undefined ? { floor } : {}),
      ...(budget !== undefined ? { budget } : {}),
      ...(metric === 'ttfb' || metric === 'total' ? { metric } : {}),
    },
  };
}

export const diffCommand: BbCommand = {
  command: 'diff <old> <new>',
  describe: 'compare two captures (HAR) after normalizing what always varies',
  builder: (y: Argv) =>
    y
      .positional('old', { type: 'string', describe: 'the old capture (HAR)' })
      .positional('new', { type: 'string', describe: 'the new capture (HAR)' })
      .option('config', { type: 'string', describe: 'bb.config.json with normalize / pairing / known rules' })
      .option('allow-incomplete', { type: 'boolean', default: false, describe: 'compare captures recovered after a crash' })
      .option('header-order', { type: 'boolean', default: false, describe: 'also compare header order and case' })
      .option('json', { type: 'string', nargs: 1, describe: 'write the full result as JSON to FILE ("-" = stdout)' })
      .option('html', { type: 'string', nargs: 1, describe: 'write a self-contained HTML report to FILE ("-" = stdout)' })
      .option('junit', { type: 'string', nargs: 1, describe: 'write a JUnit XML report (one test case per entry pair) to FILE ("-" = stdout)' })
      .option('noise', { type: 'string', describe: 'a second capture of the old build: what differs between the old runs is noise' })
      .option('strict-known', { type: 'boolean', default: false, describe: 'fail when a known difference matched nothing (stale)' })
      .option('rows', { type: 'boolean', default: false, describe: 'print every difference row under its finding' })
      .option('timing', { type: 'boolean', default: false, describe: 'add per-route timing, old → new (time to first byte at the proxy)' })
      .option('timing-threshold', { type: 'number', describe: 'a ratio of medians inside ×1/R..×R is ~ (default 1.2)' })
      .option('timing-floor', { type: 'number', describe: 'a median change under this many ms is ~ (default 1)' })
      .option('timing-budget', { type: 'number', describe: 'a route whose whole 95 % interval is above this ratio fails as a real finding' })
      .option('timing-metric', { type: 'string', choices: ['ttfb', 'total'], describe: 'the time the verdict is on (default ttfb)' })
      .option('quiet', { type: 'boolean', default: false, describe: 'no progress line while a long diff runs (there is none on a pipe either)' })
      .option('force', { type: 'boolean', default: false, describe: 'overwrite report files that exist' }),
  run: async (argv, environment) => {
    const config = typeof argv.config === 'string' ? await loadDiffConfig(argv.config) : undefined;
    const html = typeof argv.html === 'string' ? argv.html : undefined;
    const junit = typeof argv.junit === 'string' ? argv.junit : undefined;
    if ([argv.json, html, junit].filter((t) => t === '-').length > 1) {
      throw new BbError('BB_REPORT_STDOUT_TWICE', 'only one of --json, --html and --junit can write to stdout ("-"): give the others a file name.');
    }
    const json = typeof argv.json === 'string' ? argv.json : undefined;
    const force = Boolean(argv.force);
    // A path the report cannot go to is said before the diff runs, not after.
    for (const [target, flag] of [[json, '--json'], [html, '--html'], [junit, '--junit']] as const) checkReport(target, flag, force);
    const progress = progressLine({ stream: process.stderr, quiet: Boolean(argv.quiet), afterMs: environment.progressAfterMs });
    const options: DiffOptions = {
      // The HTML report's side-by-side views of differing pairs.
      views: html !== undefined,
      onProgress: (p) => progress.update(diffProgressText(p)),
      // BB_DIFF_BOUNDED_BYTES: the size past which the bounded path is taken (default 64 MiB).
      ...(environment.diffBoundedBytes !== undefined ? { boundedThreshold: environment.diffBoundedBytes } : {}),
      workers: environment.diffWorkers,
      ...(environment.diffStageTimes ? { onStageTime: (stage: string, ms: number) => process.stderr.write(`bb diff stage ${stage}: ${ms.toFixed(0)} ms (at ${performance.now().toFixed(0)} ms)\n`) } : {}),
      config,
      allowIncomplete: Boolean(argv.allowIncomplete ?? argv['allow-incomplete']),
      headerOrder: Boolean(argv.headerOrder ?? argv['header-order']),
      strictKnown: Boolean(argv.strictKnown ?? argv['strict-known']),
      ...(typeof argv.noise === 'string' ? { noisePath: argv.noise } : {}),
      ...timingFlags(argv),
    };
    let result: DiffResult;
    try {
      result = await diffCaptures(String(argv.old), String(argv.new), options);
    } finally {
      progress.done();
    }
    // With --json -, stdout carries the JSON only; the text report goes to stderr.
    const textStream = json === '-' || html === '-' || junit === '-' ? process.stderr : process.stdout;
    textStream.write(renderText(result, { color: useColor(textStream, environment.color), rows: Boolean(argv.rows), ...(json !== undefined ? { report: json } : {}) }));
    if (json !== undefined) await writeReport(json, renderJson(result), '--json', force);
    if (html !== undefined) await writeReport(html, await renderHtml(result, { views: pairViewsFrom(result) }), '--html', force);
    if (junit !== undefined) await writeReport(junit, renderJunit(result), '--junit', force);
    return result.exitCode;
  },
};
