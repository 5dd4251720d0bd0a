// scenario/'s public face: its products, each a folder with a face of its own.
// record/ wires a recording proxy (proxy + capture); replay/ re-drives a capture
// through one; compare/ boots servers hermetically, drives scenarios, runs bb compare.
export {
  RunningServers, claimRunFolder, defineScenario, loadCompareConfig, parseReplayValues, runCompare, runFolderName,
  type Scenario, type ScenarioFn, type ScenarioContext, type TreeName,
} from './compare/index.js';
export { startRecording, bindRecording, type RecordingOptions, type Recording, type BoundRecording } from './record/index.js';
export { startShadow, mergeReports, quantile, reportShapeError, type Shadow, type ShadowOptions, type MirrorPolicy, type SegmentFiles, type ShadowReport, type RouteCounts, type LiveFinding, type Histogram, type TargetName, type ThreadMemory } from './shadow/index.js';
export { replayCapture, REPLAY_DEFAULTS, type ReplayOptions, type ReplaySummary, type ReplayPace, type Rewritten } from './replay/index.js';
