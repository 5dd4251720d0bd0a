// scenario/'s public face: its three products, each a folder with a face of its own.
// record/ wires a recording proxy (proxy + capture); replay/ re-drives a capture
// through one; compare/ boots servers hermetically, drives scenarios, runs bb compare.
export {
  bootServer, RunningServers, hermeticEnv, groupAlive, describeExit, PASSED_ENV, prepareWorktree,
  defineScenario, driveScenario, loadScenario, loadCompareConfig, parseCompareConfig, parseReplayValues,
  runCompare, planSlots, runFolderName,
} from './compare/index.js';
export type {
  BootedServer, BootOptions, ServerSpec, CommandServerSpec, GitServerSpec, ReadinessSpec, ExitInfo,
  PreparedTree, WorktreeRequest,
  Scenario, ScenarioFn, ScenarioContext, DriveOptions, DriveResult,
  HttpClient, HttpResponse, RequestOptions, SseEvent, WsClient, WsOptions, MessageMatch,
  CompareConfig, TreeName, CompareRunOptions, CompareRunResult, RecordedRun,
} from './compare/index.js';
export { startRecording, bindRecording, type RecordingOptions, type Recording, type BoundRecording } from './record/index.js';
export { replayCapture, prepareReplay, replayThrough, REPLAY_DEFAULTS } from './replay/index.js';
export type { ReplayOptions, ReplaySummary, ReplayPace, PreparedReplay, ReplayRunOptions, ReplayRunResult, Rewritten } from './replay/index.js';
