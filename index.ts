// bb's public entry point: what a test suite or script imports.
//
//   import { startCapture } from 'bb';
//   const cap = await startCapture({ target: 'http://127.0.0.1:3000', out: 'captures/run.har' });
//   ... drive traffic at cap.url ...
//   const harPath = await cap.close();
//
// Every name here is meant for users; test/structure/entry-point.test.ts keeps
// the list and checks that each type a function takes or gives is here too.
// The journal (capture's crash-safe on-disk records) and the helpers the CLI
// shares with the library stay private. startCapture and replayCapture are below.

// The proxy on its own, and the facts it emits.
export {
  startProxy, FactBus,
  type ProxyOptions, type RunningProxy, type AdoptOptions, type Fact, type FactListener, type ListenerErrorReport,
  type Upstream, type UpstreamQuery, type UpstreamTlsOptions, type UpgradeTap, type LeafFactory,
} from './proxy/index.js';
// Capture files: write, recover, read; the HAR format with bb's extensions.
export {
  openCapture, recoverCapture, readCapture, streamCapture,
  type Capture, type CaptureOptions, type CaptureStats, type WriteProgress, type RedactConfig, type RotateSpec,
  type RecoverOptions, type RecoverResult, type ReadCaptureOptions, type CaptureStream, type HarLogHeader,
  type Har, type HarLog, type HarPage, type HarEntry, type HarRequest, type HarResponse, type HarTimings,
  type HarNameValue, type HarCookie, type HarPostData, type HarContent,
  type HarWebSocketMessage, type HarEventSourceMessage, type HarGrpcMessage, type BbLogExt, type BbEntryExt, type HarShadow, type HarReplayOf, type HarReplaySkip,
  type LiveCapture, type LiveLimits, type LiveRow, type LiveEvent, type LivePage, type LiveState, type EventFollower, type RecentMessage,
} from './capture/index.js';
// Scenarios for bb compare.
export { defineScenario, type Scenario, type ScenarioFn, type ScenarioContext } from './scenario/index.js';
// Comparing two captures, its options (the stage pipe, the body parsers) and result, and the four reports.
export {
  diffCaptures, loadDiffConfig, renderText, renderJson, renderHtml, renderJunit, pairViewsFrom,
  type DiffOptions, type DiffConfig, type NormalizeConfig, type PairingConfig, type KnownConfig,
  type Pipe, type DiffStage, type DiffContext, type StagePart, type DiffProgress, type BodyParser, type RawBody, type ParsedBody,
  type TimingOptions, type TimingReport,
  type DiffResult, type Finding, type Difference, type Pair, type StaleKnown, type PairView, type EntryView, type NoiseHidden, type RuleHidden, type NotReplayed,
  type TextOptions, type HtmlOptions, type ViewLimits, type JunitOptions,
} from './diff/index.js';
// Errors: one class, a stable code on each.
export { BbError, isBbError, ERROR_CODES, FAILURE_CODES, type BbCode, type FailureCode, type BbErrorOptions } from './core/index.js';

// The package is a composition root like the CLI: the one place outside cli/
// that reads process.env, to give library callers the CLI's defaults.
import { homedir } from 'node:os';
import { bbHomeFrom } from './core/index.js';
import { readExtraCaFile, type UpstreamTlsOptions } from './proxy/index.js';
import { join } from 'node:path';
import { replayCapture as replayWith, runFolderName, startRecording, startShadow as startShadowWith, type Recording, type RecordingOptions, type ReplayOptions, type ReplaySummary, type Shadow, type ShadowOptions } from './scenario/index.js';

export type { ReplaySummary, ReplayPace, Rewritten } from './scenario/index.js';
export { mergeReports, type Shadow, type MirrorPolicy, type SegmentFiles, type ShadowReport, type RouteCounts, type LiveFinding, type Histogram, type TargetName, type ThreadMemory } from './scenario/index.js';

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

/** CAs given for https upstreams add to NODE_EXTRA_CA_CERTS's, as Node would trust without them (the CLI reads it through its environment). */
function withNodeExtraCa(tls: UpstreamTlsOptions | undefined): UpstreamTlsOptions | undefined {
  return tls?.extraCa?.length && !tls.nodeExtraCa ? { ...tls, nodeExtraCa: readExtraCaFile(process.env['NODE_EXTRA_CA_CERTS']) } : tls;
}

/** Starts a recording proxy in front of `options.target` (the same machinery as `bb capture`). */
export function startCapture(options: StartCaptureOptions): Promise<CaptureHandle> {
  const upstreamTls = withNodeExtraCa(options.upstreamTls);
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

/** Options of startShadow: bb shadow's flags as data. */
export type StartShadowOptions = Omit<ShadowOptions, 'bbHome'> & {
  /** bb's home (the redaction key); default BB_HOME, else ~/.bb. */
  bbHome?: string;
};

/**
 * Starts a shadow run (the same machinery as `bb shadow`): clients connect to
 * `url` and are answered by `primary`; mirrored requests go to `candidate`
 * (and `secondary`); `close()` ends the run, writes the captures and resolves
 * to the report.
 */
export function startShadow(options: StartShadowOptions): Promise<Shadow> {
  const upstreamTls = withNodeExtraCa(options.upstreamTls);
  return startShadowWith({ ...options, bbHome: options.bbHome ?? defaultBbHome(), ...(upstreamTls ? { upstreamTls } : {}) });
}
