// scenario/compare/'s face: boot servers hermetically, drive scenarios, run bb compare.
export { bootServer } from './boot/server.js';
export type { BootedServer, BootOptions } from './boot/server.js';
export type { ServerSpec, CommandServerSpec, GitServerSpec, ReadinessSpec } from './boot/spec.js';
export { hermeticEnv, PASSED_ENV } from './boot/env.js';
export { RunningServers, groupAlive, describeExit, type ExitInfo } from './boot/process-group.js';
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
