// Small statistics for benchmark figures: medians of rounds with their
// spread, and percentiles of latency samples. Pure functions.

/** A figure measured over several rounds. */
export interface Spread {
  /** Median of the rounds. */
  median: number;
  /** Smallest round. */
  min: number;
  /** Largest round. */
  max: number;
}

/** Median, min and max of some values (NaN everywhere when there are none). */
export function spread(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** The p-th percentile (0..100) of samples, nearest-rank; NaN when empty. Sorts `samples` in place. */
export function percentile(samples: Float64Array | number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (samples instanceof Float64Array) samples.sort();
  else samples.sort((a, b) => a - b);
  const rank = Math.min(samples.length - 1, Math.max(0, Math.ceil((p / 100) * samples.length) - 1));
  return samples[rank]!;
}

/** a / b per round, paired by index (rounds measured side by side). */
export function ratios(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) out.push(a[i]! / b[i]!);
  return out;
}

/**
 * How much a series (RSS samples) grew once warm: past its first quarter,
 * the median of the last quarter minus the median of the first; NaN when
 * too short to say.
 */
export function growthAfterWarmup(series: readonly number[]): number {
  const values = series.slice(Math.floor(series.length / 4));
  if (values.length < 4) return Number.NaN;
  const q = Math.max(1, Math.floor(values.length / 4));
  const med = (v: number[]): number => [...v].sort((a, b) => a - b)[v.length >> 1]!;
  return med(values.slice(-q)) - med(values.slice(0, q));
}
