// `bb compare` end to end: per server, boot it hermetically, put a recording
// proxy + capture in front of it, run the scenario against the proxy, close
// the capture, stop the server; then diff the captures with the config's
// rules and write the reports. The proxy records, not the driver.
//
// Servers run one after the other, never at once: the two runs cannot race
// each other for CPU, ports or files, and a failure stops before the next
// boot. Everything started is stopped in `finally` blocks, whatever happens;
// the servers of a run are kept in a RunningServers that runCompare owns, so
// an abort (Ctrl-C) stops them at once and the run's end leaves none behind.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startRecording } from '../record/index.js';
import { makeOutFolder, writeOutFile } from '../../capture/index.js';
import { diffCaptures, pairViewsFrom, plural, renderHtml, renderJson, renderText, type DiffResult, type TimingOptions } from '../../diff/index.js';
import { bootServer, type BootedServer } from './boot/server.js';
import { describeExit, RunningServers } from './boot/process-group.js';
import type { CompareConfig, TreeName } from './config.js';
import { driveScenario, loadScenario, type Scenario } from './drive.js';
import { logsNamed, logTail } from './log-tail.js';
import { prepareReplay, replayThrough, type PreparedReplay } from '../replay/index.js';
import { BbError } from '../../core/index.js';

/** Options of runCompare (resolved by the CLI). */
export interface CompareRunOptions {
  /** The validated config. */
  config: CompareConfig;
  /** Which trees fill the two slots: old,new (default), old,old or new,new. */
  trees?: [TreeName, TreeName];
  /** Run old twice and new once; the two old captures feed the diff as noise. */
  noise?: boolean;
  /** Runs of each side (default 1), interleaved old, new, old, new, …: the first pair is diffed, every run feeds the timing. */
  repeat?: number;
  /** Per-route timing (bb diff --timing); on by itself with repeat > 1. */
  timing?: TimingOptions;
  /** The run folder (captures, server logs, reports); created if missing. */
  outDir: string;
  /** bb's home (redaction key, worktree cache). */
  bbHome: string;
  /** bb's environment; only allow-listed names reach servers. */
  hostEnv: NodeJS.ProcessEnv;
  /** Colour in the text report. */
  color?: boolean;
  /** Aborts the run (Ctrl-C); servers are stopped and the run throws exit 130. */
  signal?: AbortSignal;
  /** Progress lines for people (the CLI writes them to stderr). */
  log?: (line: string) => void;
  /** A capture to replay as the scenario (bb compare --replay), instead of the config's scenario. */
  replay?: string;
  /** Where the run keeps its servers (the CLI passes one to kill them synchronously at process exit); default a new one. */
  servers?: RunningServers;
}

/** One recorded run of one server. */
export interface RecordedRun {
  /** Capture label, also the file stem ("old", "new", "old-2", "old-noise"). */
  label: string;
  /** The tree it ran. */
  tree: TreeName;
  /** The HAR written. */
  har: string;
  /** The server's temporary HOME (gone now; recorded in the HAR). */
  serverHome: string;
  /** Entries recorded. */
  entries: number;
}

/** What a finished comparison reports. */
export interface CompareRunResult {
  /** 0 match (known differences included), 1 real differences. Failures throw exit 2 instead. */
  exitCode: 0 | 1;
  /** The diff's result. */
  result: DiffResult;
  /** The terminal report. */
  text: string;
  /** The recorded runs: the two compared first, then the noise run if any. */
  runs: RecordedRun[];
  /** Report files written. */
  reports: { json: string; html?: string };
}

/** What drives each server: a scenario module, or a capture replayed. */
type Driver = { scenario: Scenario; replay?: undefined } | { replay: PreparedReplay; scenario?: undefined };

interface Slot {
  tree: TreeName;
  label: string;
}

/**
 * Which runs to make: the compared pair; with `repeat` N, N − 1 more pairs
 * right after it, interleaved (old, new, old, new, …, so drift over time
 * falls on both sides alike), labelled `<label>-run<k>`; then a second old
 * run with --noise.
 */
export function planSlots(trees: [TreeName, TreeName], noise: boolean, repeat = 1): Slot[] {
  const [a, b] = noise ? (['old', 'new'] as const) : trees;
  const first: Slot[] = [
    { tree: a, label: a },
    { tree: b, label: a === b ? `${b}-2` : b },
  ];
  const more: Slot[] = [];
  for (let k = 2; k <= repeat; k++) more.push(...first.map((s) => ({ tree: s.tree, label: `${s.label}-run${k}` })));
  return [...first, ...more, ...(noise ? [{ tree: 'old' as const, label: 'old-noise' }] : [])];
}

/** A run folder name: <prefix>-YYYYMMDD-HHMMSS (UTC). */
export function runFolderName(prefix: string, when = new Date()): string {
  return `${prefix}-${when.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}`;
}

/**
 * Makes a fresh run folder under `parent` and returns its path: <prefix>-<UTC
 * time>, or -2, -3, … after it when a run started in the same second took it
 * (mkdir is the claim: two runs side by side never share a folder).
 */
export function claimRunFolder(parent: string, prefix: string, when = new Date()): string {
  makeOutFolder(parent);
  const name = runFolderName(prefix, when);
  for (let n = 1; ; n++) {
    const folder = resolve(parent, n === 1 ? name : `${name}-${n}`);
    try {
      mkdirSync(folder, { mode: 0o700 });
      return folder;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      // Any other failure: makeOutFolder says it in bb's sentence (it throws).
      makeOutFolder(folder);
      return folder;
    }
  }
}

/** Runs the whole comparison; throws a BbError when it could not run. */
export async function runCompare(opts: CompareRunOptions): Promise<CompareRunResult> {
  const log = opts.log ?? (() => {});
  const repeat = opts.repeat ?? 1;
  const slots = planSlots(opts.trees ?? ['old', 'new'], opts.noise ?? false, repeat);
  makeOutFolder(opts.outDir, '--out', 0o700);
  const source = opts.replay ?? opts.config.scenario;
  // A capture as the scenario: each server gets the same replay (read, planned and checked once).
  const scenario: Driver = /\.har$/i.test(source)
    ? { replay: await prepareReplay(source, { bbHome: opts.bbHome, ...(opts.config.replayValues ? { values: opts.config.replayValues } : {}) }) }
    : { scenario: await loadScenario(source) };
  const runs: RecordedRun[] = [];
  const servers = opts.servers ?? new RunningServers();
  const stopServers = () => void servers.stopAll();
  opts.signal?.addEventListener('abort', stopServers, { once: true });
  try {
    for (const slot of slots) {
      interrupted(opts.signal);
      log(`bb: ${slot.label}: booting the ${slot.tree} server`);
      const run = await recordOne(slot, scenario, servers, opts).catch((err: unknown) => {
        interrupted(opts.signal);
        throw err;
      });
      log(`bb: ${slot.label}: ${run.entries} entries recorded in ${run.har}`);
      runs.push(run);
    }
  } finally {
    opts.signal?.removeEventListener('abort', stopServers);
    await servers.stopAll();
  }
  const [a, b] = runs as [RecordedRun, RecordedRun];
  const noiseRun = opts.noise ? runs.at(-1) : undefined;
  // The repeated pairs, after the first and before the noise run: timing only.
  const more = runs.slice(2, 2 * repeat);
  const timing = opts.timing ?? (repeat > 1 ? {} : undefined);
  const result = await diffCaptures(a.har, b.har, {
    config: opts.config.diff,
    ...(noiseRun ? { noisePath: noiseRun.har } : {}),
    ...(timing ? { timing: { ...timing, ...(more.length ? { runs: { old: more.filter((_, i) => i % 2 === 0).map((r) => r.har), new: more.filter((_, i) => i % 2 === 1).map((r) => r.har) } } : {}) } } : {}),
    serverHome: { old: a.serverHome, new: b.serverHome },
    // A self-check (--trees old,old): known entries that match nothing are expected, not stale.
    ...(a.tree === b.tree ? { sameBuild: true } : {}),
    // The HTML report gets the same side-by-side views as bb diff --html.
    views: true,
  });
  const reports: CompareRunResult['reports'] = { json: join(opts.outDir, 'report.json') };
  const text = renderText(result, { color: opts.color ?? false, report: reports.json });
  // The run folder is the command's own: its reports are replaced (never written through a symlink).
  await writeOutFile(reports.json, renderJson(result), { force: true, mode: 0o600, unwritable: 'BB_REPORT_UNWRITABLE' });
  reports.html = join(opts.outDir, 'report.html');
  await writeOutFile(reports.html, await renderHtml(result, { views: pairViewsFrom(result) }), { force: true, mode: 0o600, unwritable: 'BB_REPORT_UNWRITABLE' });
  return { exitCode: result.exitCode, result, text, runs, reports };
}

/** How long a scenario's last exchanges may take to finish once it is done, ms. */
const SCENARIO_GRACE_MS = 2_000;
/** How long a failed step waits for its server's exit to be seen before the step's own error is reported. */
const EXIT_WAIT_MS = 1_500;

function interrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BbError('BB_INTERRUPTED', 'bb compare was interrupted; every server it started has been stopped.');
}

/** Boots one server, records the scenario through a proxy, stops everything. */
async function recordOne(slot: Slot, driver: Driver, servers: RunningServers, opts: CompareRunOptions): Promise<RecordedRun> {
  const spec = opts.config.servers[slot.tree];
  const server = await bootServer(spec, { label: slot.label, runDir: opts.outDir, hostEnv: opts.hostEnv, bbHome: opts.bbHome, servers });
  try {
    const recording = await startRecording({
      target: server.url,
      listen: { host: '127.0.0.1', port: 0 },
      out: join(opts.outDir, `${slot.label}.har`),
      label: slot.label,
      bbHome: opts.bbHome,
      serverHome: server.home,
    });
    try {
      let step: string | undefined;
      // Where the scenario was when the server died: not begun, or begun (in a step when it names them).
      let began = false;
      let scenarioError: unknown;
      // Exchanges of a replay that got no answer: a replay goes on past them, but a server that died explains them.
      let replayFailed = false;
      const stop = new AbortController();
      const onAbort = () => stop.abort(opts.signal?.reason);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      // A server that dies mid-scenario stops the scenario at once, naming the step.
      void server.exited.then((exit) => {
        if (!stop.signal.aborted) stop.abort(diedDuring(server, describeExit(exit), where()));
      });
      const where = (): string => {
        if (step !== undefined) return `during scenario step "${step}"`;
        if (!began) return 'before the scenario began';
        // A replayed capture has steps only when it has pages.
        return driver.replay ? `during the replay of ${driver.replay.path}` : 'during the scenario';
      };
      try {
        // A server already gone when the scenario starts died before it.
        began = server.exitInfo() === undefined;
        if (driver.replay) {
          const run = await replayThrough(driver.replay, {
            proxyUrl: recording.url,
            target: server.url,
            step: (name) => {
              step = name;
              recording.step(name);
            },
            signal: stop.signal,
          });
          for (const note of run.notes) opts.log?.(`bb: ${slot.label}: ${note}`);
          replayFailed = run.failed.length > 0;
          if (run.failed.length) opts.log?.(`bb: ${slot.label}: ${plural(run.failed.length, 'replayed exchange')} got no response (first: ${run.failed[0]!.entry}, ${run.failed[0]!.reason})`);
        } else await driveScenario(driver.scenario, {
          baseUrl: recording.url,
          label: slot.label,
          ready: server.ready,
          step: (name) => {
            step = name;
            recording.step(name);
          },
          stepTimeoutMs: opts.config.stepTimeoutMs,
          signal: stop.signal,
        });
      } catch (err) {
        scenarioError = err;
      } finally {
        opts.signal?.removeEventListener('abort', onAbort);
        stop.abort();
      }
      const har = await recording.close(SCENARIO_GRACE_MS);
      // The server's death explains failed steps better than their own errors (a 502, a reset). A dying server's last
      // answer can be seen before its exit is (a loaded machine): a failed step (or replayed exchange) gives the exit a
      // moment to arrive.
      if ((scenarioError || replayFailed) && !opts.signal?.aborted && !server.exitInfo()) await Promise.race([server.exited, new Promise((r) => setTimeout(r, EXIT_WAIT_MS).unref())]);
      const exit = server.exitInfo();
      if (exit) throw diedDuring(server, describeExit(exit), where());
      if (scenarioError) throw scenarioError;
      const entries = recording.stats().entries;
      if (entries === 0) {
        throw new BbError('BB_CAPTURE_EMPTY', `the capture of server "${slot.label}" is empty: the scenario ${driver.replay?.path ?? opts.config.scenario} sent no request.`);
      }
      return { label: slot.label, tree: slot.tree, har, serverHome: server.home, entries };
    } finally {
      // Already closed on the way out, unless something above threw first.
      await recording.close(0).catch(() => {});
    }
  } finally {
    await server.stop();
  }
}

/** `where`: when it died, as the message says it ("during scenario step "export"", "during the replay of x.har"). */
function diedDuring(server: BootedServer, how: string, where: string): BbError {
  return new BbError('BB_SERVER_DIED', `server "${server.label}" exited with ${how} ${where} ${logsNamed(server.logsWithOutput())}${logTail(server.tail())}`);
}
