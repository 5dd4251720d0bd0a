// scenario/shadow/'s face: a live shadow run (the primary answers through a
// recording tap, the candidate and the secondary get mirrored copies, the
// answers are compared as they flow), its report, and merging reports.
export { startShadow, type Shadow, type ShadowOptions } from './run.js';
export type { MirrorPolicy } from './tee.js';
export type { SegmentFiles } from './rotation.js';
export type { ThreadMemory } from './thread-memory.js';
export { mergeReports, quantile, reportShapeError, type ShadowReport, type RouteCounts, type LiveFinding, type Histogram, type TargetName } from './live.js';
