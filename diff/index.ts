// diff/'s public face: compare two capture files, render the result.
import { createContext, type DiffOptions } from './context.js';
import { diffPipe, runStages } from './stages.js';
import type { DiffResult } from './types.js';

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
export { defaultStages, diffPipe, runStages } from './stages.js';
export { createContext } from './context.js';
export { Pipe } from './pipe.js';
export { needsBounded, BOUNDED_THRESHOLD } from './store/bounded.js';
export type { DiffOptions, DiffStage, DiffContext, DiffProgress, StagePart, SideStore, EntrySummary, StoreKind } from './context.js';
export { bodyParsers, type BodyParser, BUILTIN_RULE_NAMES } from './normalize/index.js';
export type * from './types.js';

/** Compares two capture files; throws a BbError (CaptureReadError) when either cannot be read or compared. */
export async function diffCaptures(oldPath: string, newPath: string, options: DiffOptions = {}): Promise<DiffResult> {
  // One stage list for every size: the read stage keeps big files in the bounded store (store/bounded.ts).
  const pipe = diffPipe();
  options.stages?.(pipe);
  return runStages(createContext(oldPath, newPath, options), pipe.list());
}
export { narrowestKnown, knownForFinding, addKnownToConfigText, knownCovering, noiseRules, routeGlob, NOISE_REASON } from './triage-rules.js';
export { sortForComparison, type Orderable } from './order.js';
