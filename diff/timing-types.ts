// The shapes of bb diff --timing (docs/timing.md "Reading the report"): what
// the read stage keeps per exchange, the options, and the report. Types only, a
// leaf that diff/types.ts and diff/timing.ts both import.

/** Why an exchange's time is left out: bb's own 502 (`_bb.error`), a side hung up, a body cut at the cap, or no time recorded. */
export type TimingSkip = 'error' | 'aborted' | 'truncated' | 'untimed';

/** One exchange's times, as the read stage keeps them. */
export interface TimingSample {
  /** The entry id (`<page>/<route>#<n>`). */
  id: string;
  /** "METHOD path" of the entry (NormalizedEntry.route). */
  route: string;
  /** Time to first byte, ms (timings.wait). */
  ttfb: number;
  /** Total time, ms (HAR `time`: the sum of the known phases). */
  total: number;
  /** Set when the exchange did not complete normally: its times are not used. */
  skip?: TimingSkip;
}

/** Which time the verdict is on. */
export type TimingMetric = 'ttfb' | 'total';

/** bb diff --timing's settings (flags parsed by the CLI). */
export interface TimingOptions {
  /** A change inside [1/threshold, threshold] is `~` (default 1.2). */
  threshold?: number;
  /** A median change under this many ms is `~` (default 1). */
  floor?: number;
  /** A route whose whole interval is above this ratio is a real finding of kind `slower`. */
  budget?: number;
  /** The time the verdict is on (default ttfb). */
  metric?: TimingMetric;
  /** More runs of each side (bb compare --repeat): their samples join the compared pair's. */
  runs?: { old: string[]; new: string[] };
  /** Bootstrap resamples (default 2000). */
  resamples?: number;
}

/** Verdicts (docs/timing.md "Verdicts"): slower / faster / ~ / n too small, and noisy with --noise. */
export type TimingVerdict = 'slower' | 'faster' | '~' | 'n too small' | 'noisy';

/** p50 / p90 / p99 of one time. */
export interface Quantiles {
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

/** One side of one route. */
export interface TimingSide extends Quantiles {
  /** Samples used. */
  n: number;
  /** Total time quantiles (the top level is the verdict's metric). */
  total: Quantiles;
  /** Time to first byte quantiles. */
  ttfb: Quantiles;
  /** Exchanges of the route left out (error, aborted, truncated, untimed). */
  skipped: number;
}

/** One route's line of the report. */
export interface TimingRouteReport {
  /** The entry id without `#n`. */
  route: string;
  old: TimingSide;
  new: TimingSide;
  /** Ratio of medians new/old of the metric (null when the old median is 0 or a side is empty). */
  ratio: number | null;
  /** Its bootstrap 95 % interval. */
  ci: [number, number] | null;
  /** Mann–Whitney U two-sided p-value. */
  p: number | null;
  /** New median − old median, ms. */
  delta: number | null;
  verdict: TimingVerdict;
  /** With --noise: the old/old2 ratio of medians. */
  noise?: { ratio: number | null; n: number };
  /** True when --timing-budget made it a real `slower` finding. */
  overBudget?: boolean;
  /** The metric's samples for the HTML strip chart, ascending (at most STRIP_POINTS, evenly spaced quantiles past that); not in --json. */
  strip: { old: number[]; new: number[] };
}

/** The Timing section of a result (JSON `timing`). */
export interface TimingReport {
  metric: TimingMetric;
  threshold: number;
  floor: number;
  budget?: number;
  /** Captures whose samples were pooled per side (1 unless bb compare --repeat). */
  runs: { old: number; new: number };
  /** Slowest change first. */
  routes: TimingRouteReport[];
  /** Geometric mean of the routes' ratios (routes with enough samples). */
  geomean: number | null;
  /** Exchanges left out per side, by reason. */
  skipped: { old: Record<TimingSkip, number>; new: Record<TimingSkip, number> };
  /** The second old capture, with --noise. */
  noisePath?: string;
}
