// bb's public entry point: what a test suite or script imports.
//
//   import { startCapture } from 'bb';
//   const cap = await startCapture({ target: 'http://127.0.0.1:3000', out: 'captures/run.har' });
//   ... drive traffic at cap.url ...
//   const harPath = await cap.close();
export { startProxy, FactBus, type ProxyOptions, type RunningProxy, type Fact, type FactListener } from './proxy/index.js';
export { openCapture, recoverCapture, type Capture, type CaptureOptions, type RedactConfig } from './capture/index.js';
export type * from './capture/index.js';
export { defineScenario, type Scenario, type ScenarioContext } from './scenario/index.js';
export { diffCaptures, loadDiffConfig, renderText, renderJson, type DiffResult, type DiffOptions, type TimingOptions, type TimingReport } from './diff/index.js';
export { readCapture, streamCapture } from './capture/index.js';
export { BbError, isBbError, ERROR_CODES, FAILURE_CODES, type BbCode, type FailureCode } from './core/index.js';

// The package is a composition root like the CLI: the one place outside cli/
// that reads process.env, to give library callers the CLI's defaults.
import { homedir } from 'node:os';
import { bbHomeFrom } from './core/index.js';
import { readExtraCaFile } from './proxy/index.js';
import { join } from 'node:path';
import { replayCapture as replayWith, runFolderName, startRecording, type Recording, type RecordingOptions, type ReplayOptions, type ReplaySummary } from './scenario/index.js';

export type { ReplaySummary, ReplayPace, Rewritten } from './scenario/index.js';

/** Options of startCapture: a recording proxy's settings, the CLI's flags as data. */
export type StartCaptureOptions = Omit<RecordingOptions, 'bbHome'> & {
  /** bb's home (redaction key, CA); default BB_HOME, else ~/.bb. */
  bbHome?: string;
};

/** A running recording proxy: point clients at `url`, `close()` writes the HAR. */
export type CaptureHandle = Recording;

/** bb's home: BB_HOME, else ~/.bb. */
export function defaultBbHome(): string {
  return bbHomeFrom(process.env, homedir()).path;
}

/** Starts a recording proxy in front of `options.target` (the same machinery as `bb capture`). */
export function startCapture(options: StartCaptureOptions): Promise<CaptureHandle> {
  const upstreamTls = options.upstreamTls?.extraCa?.length && !options.upstreamTls.nodeExtraCa ? { ...options.upstreamTls, nodeExtraCa: readExtraCaFile(process.env['NODE_EXTRA_CA_CERTS']) } : options.upstreamTls;
  return startRecording({ ...options, bbHome: options.bbHome ?? defaultBbHome(), ...(upstreamTls ? { upstreamTls } : {}) });
}

/** Options of replayCapture: bb replay's flags as data. */
export type ReplayCaptureOptions = Omit<ReplayOptions, 'bbHome' | 'out'> & {
  /** Where the new capture goes; default captures/replay-<time>.har under the working directory. */
  out?: string;
  /** bb's home (the redaction key, so the same secret gets the same placeholder); default BB_HOME, else ~/.bb. */
  bbHome?: string;
};

/**
 * Replays the client side of the capture at `path` against `options.target`
 * through a recording proxy, following server-issued ids (the same machinery
 * as `bb replay`); resolves to the summary, whose `out` is the new capture.
 */
export function replayCapture(path: string, options: ReplayCaptureOptions): Promise<ReplaySummary> {
  return replayWith(path, { ...options, out: options.out ?? join('captures', `${runFolderName('replay')}.har`), bbHome: options.bbHome ?? defaultBbHome() });
}
