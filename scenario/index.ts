// scenario/'s public face: boot servers hermetically, drive scenarios, run bb compare.
export { bootServer, stopAllServers, killAllServersSync, hermeticEnv, groupAlive, describeExit, PASSED_ENV } from './boot.js';
export type { BootedServer, BootOptions, ServerSpec, CommandServerSpec, GitServerSpec, ReadinessSpec, ExitInfo } from './boot.js';
export { prepareWorktree } from './worktree.js';
export type { PreparedTree, WorktreeRequest } from './worktree.js';
export { defineScenario, driveScenario, loadScenario } from './drive.js';
export type {
  Scenario, ScenarioFn, ScenarioContext, DriveOptions, DriveResult,
  HttpClient, HttpResponse, RequestOptions, SseEvent, WsClient, WsOptions, MessageMatch,
} from './drive.js';
export { loadCompareConfig, parseCompareConfig, parseReplayValues } from './config.js';
export type { CompareConfig, TreeName } from './config.js';
export { runCompare, planSlots, runFolderName } from './run.js';
export type { CompareRunOptions, CompareRunResult, RecordedRun } from './run.js';
export { startRecording, bindRecording, type RecordingOptions, type Recording, type BoundRecording } from './record.js';
export { replayCapture, prepareReplay, replayThrough, REPLAY_DEFAULTS } from './replay.js';
export type { ReplayOptions, ReplaySummary, ReplayPace, PreparedReplay, ReplayRunOptions, ReplayRunResult } from './replay.js';
export type { Rewritten } from './replay-correlate.js';
