// scenario/compare/'s face: boot servers hermetically, drive scenarios, run bb compare.
export { RunningServers } from './boot/process-group.js';
export { defineScenario, type Scenario, type ScenarioFn, type ScenarioContext } from './drive.js';
export { loadCompareConfig, parseReplayValues, type TreeName } from './config.js';
export { claimRunFolder, runCompare, runFolderName } from './run.js';
