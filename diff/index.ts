// diff/'s public face: compare two capture files, render the result.
import { createContext, defaultStages, runStages, type DiffOptions } from './pipeline.js';
import type { DiffResult } from './types.js';
import { boundedStages, needsBounded } from './bounded.js';

export { loadDiffConfig, validateDiffConfig, emptyDiffConfig } from './config.js';
export type { DiffConfig, NormalizeConfig, PairingConfig, KnownConfig } from './config.js';
export { renderText } from './report/text.js';
export { buildFindings, findingPattern } from './findings.js';
export { renderJson } from './report/json.js';
export { renderHtml } from './report/html-lazy.js';
export type { HtmlOptions, PairView, EntryView } from './report/html.js';
export { pairViewsFrom } from './report/html-views.js';
export { renderJunit } from './report/junit.js';
export { timingReport, timesOf, timingRoute, TIMING_DEFAULTS, MIN_SAMPLES } from './timing.js';
export type { TimingOptions, TimingReport, TimingRouteReport, TimingSample, TimingVerdict, TimingMetric, TimingSkip } from './timing.js';
export type { JunitOptions } from './report/junit.js';
export { defaultStages, createContext, runStages } from './pipeline.js';
export { boundedStages, needsBounded, BOUNDED_THRESHOLD } from './bounded.js';
export type { DiffOptions, DiffStage, DiffContext, DiffProgress } from './pipeline.js';
export { bodyParsers, BUILTIN_RULE_NAMES } from './normalize/index.js';
export type { BodyParser } from './normalize/index.js';
export type * from './types.js';

/** Compares two capture files; throws a BbError (CaptureReadError) when either cannot be read or compared. */
export async function diffCaptures(oldPath: string, newPath: string, options: DiffOptions = {}): Promise<DiffResult> {
  // Big files: the same stages by name, bounded in memory (bounded.ts).
  const base = (await needsBounded(oldPath, newPath, options.boundedThreshold)) ? boundedStages(defaultStages) : defaultStages;
  const stages = options.stages ? options.stages([...base]) : base;
  return runStages(createContext(oldPath, newPath, options), stages);
}
export { narrowestKnown, knownForFinding, addKnownToConfigText, knownCovering, noiseRules, routeGlob, NOISE_REASON } from './triage-rules.js';
export { sortForComparison, type Orderable } from './engine.js';
