// bb replay: re-drive a capture's client side against --target through a
// recording proxy. Exit 0 every exchange got a response, 1 some did not,
// 2 could not run (nothing sent), 130 interrupted (the capture is written).
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { BbError, unreadableWhy } from '../../core/index.js';
import { parseConfigJson, validateDiffConfig } from '../../diff/index.js';
import { parseReplayValues, replayCapture, REPLAY_DEFAULTS, type ReplayPace } from '../../scenario/index.js';
import { progressLine } from '../progress.js';
import { parseHeaderFlags, redactOptionsFrom, withRedactOptions } from '../options.js';
import { upstreamTlsFrom, withUpstreamTlsOptions } from '../forward-options.js';
import { runFolderName } from './compare.js';
import { checkReport, writeReport } from './diff.js';

/** Parses --pace asap | original | <N>x. */
function parsePace(value: unknown): ReplayPace {
  const text = String(value ?? 'asap').trim();
  if (text === 'asap' || text === 'original') return text;
  const m = /^(\d+(?:\.\d+)?)x$/.exec(text);
  if (m && Number(m[1]) > 0) return Number(m[1]);
  throw new BbError('BB_BAD_PACE', `--pace needs asap, original or a speed like 2x, got '${text}'`);
}

/** replay.values from a config file (bb.config.json or the compare config), the whole file checked as bb diff checks it. */
function replayValuesFrom(file: string | undefined): Record<string, string> {
  if (file === undefined) return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BbError('BB_CONFIG_MISSING', `config file ${file} does not exist: give the path of a JSON file, or leave --config out.`);
    throw new BbError('BB_CONFIG_INVALID', `config file ${file} cannot be read (${unreadableWhy(err)}): give the path of a JSON file, or leave --config out.`);
  }
  const doc = parseConfigJson(text, file);
  // The file's other keys are read by bb diff and bb compare: checked here too, so a misspelt "replays" is not ignored.
  validateDiffConfig(doc, file);
  return { ...parseReplayValues((doc as { replay?: unknown }).replay, file) };
}

export const replayCommand: BbCommand = {
  command: 'replay <capture>',
  describe: "re-drive a capture's client side against --target through a recording proxy, following the server's ids",
  // nargs 1: a value that starts with '-' (--pace -2x) is the flag's, refused by its own check, not read as flags.
  builder: (y: Argv) =>
    withUpstreamTlsOptions(withRedactOptions(y, ' in the new capture'), 'targets')
      .positional('capture', { type: 'string', describe: 'the capture to replay (any HAR with requests)' })
      .option('target', { type: 'string', nargs: 1, describe: 'the server to replay against, e.g. http://127.0.0.1:3001' })
      .option('out', { type: 'string', nargs: 1, describe: 'the new capture (default captures/replay-<time>.har)' })
      .option('force', { type: 'boolean', default: false, describe: 'overwrite --out if it exists' })
      .option('pace', { type: 'string', nargs: 1, default: REPLAY_DEFAULTS.pace, describe: 'asap (order only) | original (keep the gaps) | <N>x (gaps / N)' })
      .option('ws', { type: 'string', nargs: 1, default: REPLAY_DEFAULTS.ws, describe: "WebSocket pacing: wait (for the server's messages) | timing (original gaps)" })
      .option('header', { type: 'string', array: true, describe: "'Name: value' set on every request, replacing that header (repeatable)" })
      .option('correlate', { type: 'boolean', default: true, describe: 'follow server-issued ids and cookies (--no-correlate sends the old values)' })
      .option('config', { type: 'string', nargs: 1, describe: 'a JSON config whose "replay": { "values": {...} } supplies redacted fields' })
      .option('json', { type: 'string', nargs: 1, describe: 'write the replay report as JSON to FILE ("-" = stdout)' })
      .option('wait-ms', { type: 'number', default: REPLAY_DEFAULTS.waitMs, describe: "bound on each wait for the target's WebSocket messages (and for what an aborting client had read), ms" })
      .option('timeout', { type: 'number', default: REPLAY_DEFAULTS.timeoutMs, describe: 'bound on each exchange, ms: past it the request is cut and counted' })
      .option('server-home', { type: 'string', nargs: 1, describe: "the server's HOME, for the <HOME> placeholder in diffs" })
      .option('quiet', { type: 'boolean', default: false, describe: 'no progress line' }),
  run: async (argv, environment) => {
    if (typeof argv.target !== 'string') throw new BbError('BB_NO_TARGET', 'bb replay needs --target http://127.0.0.1:PORT (the server to replay against)');
    const capture = String(argv.capture);
    const pace = parsePace(argv.pace);
    const ws = String(argv.ws);
    if (ws !== 'wait' && ws !== 'timing') throw new BbError('BB_BAD_WS_MODE', `--ws needs wait or timing, got '${ws}'`);
    const headers = parseHeaderFlags(argv.header);
    const timeoutMs = Number(argv.timeout ?? REPLAY_DEFAULTS.timeoutMs);
    if (!(timeoutMs > 0)) throw new BbError('BB_BAD_NUMBER', `--timeout needs a number of milliseconds above 0 like 10000, got ${timeoutMs}`);
    const values = replayValuesFrom(typeof argv.config === 'string' ? argv.config : undefined);
    const out = resolve(typeof argv.out === 'string' ? argv.out : join('captures', `${runFolderName('replay')}.har`));
    const force = Boolean(argv.force);
    // Refused before anything is read or sent: a recording is never overwritten by accident.
    if (existsSync(out) && !force) throw new BbError('BB_OUT_EXISTS', `${out} exists: choose another --out, or add --force to overwrite it.`);
    const json = typeof argv.json === 'string' ? argv.json : undefined;
    checkReport(json, '--json', force);
    const progress = progressLine({ stream: process.stderr, quiet: Boolean(argv.quiet), afterMs: environment.progressAfterMs });
    const controller = new AbortController();
    const onSignal = () => controller.abort();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let summary;
    try {
      summary = await replayCapture(capture, {
        target: argv.target,
        out,
        force,
        pace,
        ws,
        headers,
        values,
        correlate: argv.correlate !== false,
        bbHome: environment.home.path,
        upstreamTls: upstreamTlsFrom(argv, environment),
        redact: redactOptionsFrom(argv),
        waitMs: Number(argv.waitMs ?? argv['wait-ms'] ?? REPLAY_DEFAULTS.waitMs),
        timeoutMs,
        ...(typeof argv['server-home'] === 'string' ? { serverHome: argv['server-home'] } : {}),
        onProgress: (done, total) => progress.update(`bb replay: ${done} / ${total} exchanges`),
        signal: controller.signal,
      });
    } finally {
      progress.done();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    const shown = relative(process.cwd(), summary.out);
    const line = summary.line.replace(summary.out, shown.startsWith('..') ? summary.out : shown);
    const textStream = json === '-' ? process.stderr : process.stdout;
    for (const f of summary.failed.slice(0, 5)) process.stderr.write(`bb replay: ${f.entry}: ${f.reason}\n`);
    if (summary.failed.length > 5) process.stderr.write(`bb replay: … and ${summary.failed.length - 5} more without a response\n`);
    for (const n of summary.notes) process.stderr.write(`bb replay: ${n}\n`);
    for (const t of summary.timeouts.slice(0, 5)) process.stderr.write(`bb replay: ${t.what} (gave up after ${t.waitedMs} ms)\n`);
    textStream.write(`${line}\n`);
    if (json !== undefined) {
      const report = { replayed: summary.replayed, failed: summary.failed, rewritten: summary.rewritten, skipped: summary.skipped, timeouts: summary.timeouts, cut: summary.cut, webSocketMessages: summary.webSocketMessages, out: summary.out, target: summary.target };
      await writeReport(json, `${JSON.stringify(report, null, 2)}\n`, '--json', force);
    }
    if (controller.signal.aborted) throw new BbError('BB_INTERRUPTED', `bb replay was interrupted; what it replayed is in ${shown}.`);
    return summary.exitCode;
  },
};
