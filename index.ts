// bb's public entry point: what a test suite or script imports.
//
//   import { startCapture } from 'bb';
//   const cap = await startCapture({ target: 'http://127.0.0.1:3000', out: 'captures/run.har' });
//   ... drive traffic at cap.url ...
//   const harPath = await cap.close();
export { startCapture, defaultBbHome, type StartCaptureOptions, type CaptureHandle } from './start-capture.js';
export { startProxy, FactBus, type ProxyOptions, type RunningProxy, type Fact, type FactListener } from './proxy/index.js';
export { openCapture, recoverCapture, type Capture, type CaptureOptions, type RedactConfig } from './capture/index.js';
export type * from './capture/har.js';
export { defineScenario, type Scenario, type ScenarioContext } from './scenario/index.js';
export { diffCaptures, loadDiffConfig, renderText, renderJson, type DiffResult, type DiffOptions } from './diff/index.js';
export { readCapture, streamCapture } from './capture/reader.js';
export { BbError, isBbError, ERROR_CODES, FAILURE_CODES, type BbCode, type FailureCode } from './core/index.js';
