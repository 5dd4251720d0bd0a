// The statistics behind bb diff --timing (docs/timing.md "The statistics"),
// pure and seeded: quantiles, the ratio of medians with a bootstrap 95 %
// interval, the Mann–Whitney U test and the geometric mean. The practice
// follows benchstat (Mann–Whitney U, `~` when not significant, n printed) and
// Criterion (a confidence interval on the change that must clear a threshold).
// Nothing here reads a clock or Math.random: the same samples always give the
// same numbers.
import { mulberry32 } from '../core/index.js';

/** The q-quantile (0..1) of ascending `sorted`, interpolating linearly between ranks (R's type 7, numpy's default); NaN when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** The median of ascending `sorted`. */
export function median(sorted: ArrayLike<number>): number {
  return quantile(sorted, 0.5);
}

/** A copy sorted ascending (numbers, not text). */
export function ascending(values: Iterable<number>): Float64Array {
  return Float64Array.from(values).sort();
}

/** A 32-bit seed from text (FNV-1a), so each route gets its own fixed stream. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}


/**
 * The median of one resample (with replacement) of ascending `sorted`.
 * The k-th smallest value of a resample of a sorted array is the value at
 * the k-th smallest drawn index, so counting the drawn indices finds it in
 * O(n) without sorting the resample.
 */
function resampledMedian(sorted: Float64Array, random: () => number, counts: Uint32Array): number {
  const n = sorted.length;
  counts.fill(0);
  for (let i = 0; i < n; i++) counts[Math.floor(random() * n)]!++;
  // Ranks (0-based) of the median: one for odd n, the two middle ones for even n.
  const lo = (n - 1) >> 1;
  const hi = n >> 1;
  let seen = 0;
  let atLo = NaN;
  for (let i = 0; i < n; i++) {
    seen += counts[i]!;
    if (Number.isNaN(atLo) && seen > lo) atLo = sorted[i]!;
    if (seen > hi) return (atLo + sorted[i]!) / 2;
  }
  return atLo;
}

/**
 * Resamples the bootstrap draws: 1000, the usual minimum for a percentile
 * interval (Efron and Tibshirani, An Introduction to the Bootstrap, 1993);
 * its 2.5 % and 97.5 % points rest on 25 draws each. The cost is resamples ×
 * samples, the largest part of a timing run.
 */
export const BOOTSTRAP_RESAMPLES = 1000;

/** Past this many samples a side is bootstrapped m-out-of-n, from this many of its quantiles (see ratioOfMedians). */
export const BOOTSTRAP_M = 500;

/**
 * A side as the bootstrap draws from it: all of its samples, or past
 * BOOTSTRAP_M, m evenly spaced quantiles and the factor √(m/n) that scales a
 * resample's deviation back to n samples.
 */
function bootstrapSide(sorted: Float64Array): { points: Float64Array; center: number; scale: number } {
  const n = sorted.length;
  if (n <= BOOTSTRAP_M) return { points: sorted, center: median(sorted), scale: 1 };
  const points = Float64Array.from({ length: BOOTSTRAP_M }, (_, i) => quantile(sorted, (i + 0.5) / BOOTSTRAP_M));
  return { points, center: median(points), scale: Math.sqrt(BOOTSTRAP_M / n) };
}

/**
 * The ratio of medians new/old with a percentile bootstrap 95 % interval:
 * both sides resampled independently `resamples` times from a generator
 * seeded with `seed`. The ratio is null when the old median is 0 (a ratio
 * of nothing); resamples whose old median is 0 are skipped.
 *
 * Cost is resamples × samples, so a side of more than BOOTSTRAP_M samples
 * is resampled m-out-of-n (Bickel, Götze and van Zwet, Statistica Sinica
 * 7, 1997): m draws from its m quantiles, the resample median's deviation
 * scaled by √(m/n), which the median's √n rate makes valid. The work per
 * route is then bounded whatever the capture's size.
 */
export function ratioOfMedians(oldSorted: Float64Array, newSorted: Float64Array, seed: number, resamples = BOOTSTRAP_RESAMPLES): { ratio: number | null; ci: [number, number] | null } {
  const mo = median(oldSorted);
  const mn = median(newSorted);
  if (!(mo > 0) || Number.isNaN(mn)) return { ratio: null, ci: null };
  const random = mulberry32(seed);
  const so = bootstrapSide(oldSorted);
  const sn = bootstrapSide(newSorted);
  const co = new Uint32Array(so.points.length);
  const cn = new Uint32Array(sn.points.length);
  const ratios: number[] = [];
  for (let b = 0; b < resamples; b++) {
    const o = mo + (resampledMedian(so.points, random, co) - so.center) * so.scale;
    const n = mn + (resampledMedian(sn.points, random, cn) - sn.center) * sn.scale;
    if (o > 0) ratios.push(n / o);
  }
  if (!ratios.length) return { ratio: mn / mo, ci: null };
  const r = ascending(ratios);
  return { ratio: mn / mo, ci: [quantile(r, 0.025), quantile(r, 0.975)] };
}

/**
 * The complementary error function, |relative error| < 1.2e-7 everywhere
 * (Numerical Recipes in C, 2nd ed., §6.2, erfcc: a Chebyshev fit).
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** P(Z > z) for a standard normal Z. */
function normalUpperTail(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

/** Largest n1·n2 for which the exact U distribution is used (no ties): 20 × 20 keeps the counts exact in doubles (C(40,20) ≈ 1.4e11). */
export const EXACT_U_MAX_CELLS = 400;

/**
 * How many of the C(m+n, m) arrangements give each U = 0..m·n: the
 * coefficients of the Gaussian binomial [m+n choose m] in q, built as
 * ∏_{i=1..n} (1 − q^(m+i)) / (1 − q^i).
 */
export function exactUCounts(m: number, n: number): Float64Array {
  const size = m * n + 1;
  const c = new Float64Array(size);
  c[0] = 1;
  for (let i = 1; i <= n; i++) {
    // Multiply by (1 − q^(m+i)): from the top down so each term is used once.
    const k = m + i;
    for (let u = size - 1; u >= k; u--) c[u]! -= c[u - k]!;
    // Divide by (1 − q^i): a running sum with stride i.
    for (let u = i; u < size; u++) c[u]! += c[u - i]!;
  }
  return c;
}

/** A Mann–Whitney U test's result. */
export interface MannWhitney {
  /** U of the first sample: pairs (x, y) with x > y, ties counting one half. */
  u: number;
  /** Two-sided p-value. */
  p: number;
  /** How p was found. */
  method: 'exact' | 'normal';
}

/**
 * The two-sided Mann–Whitney U test of samples a and b. Exact when there
 * are no ties and n1·n2 ≤ EXACT_U_MAX_CELLS (p = 2·P(U ≤ min(U, n1n2 − U)),
 * capped at 1); else the normal approximation with the tie-corrected
 * variance and a continuity correction of ½ (as scipy.stats.mannwhitneyu's
 * "asymptotic" method). p is 1 when every value is equal or a side is empty.
 */
export function mannWhitneyU(a: ArrayLike<number>, b: ArrayLike<number>): MannWhitney {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) return { u: 0, p: 1, method: 'normal' };
  const all: Array<{ v: number; first: boolean }> = [];
  for (let i = 0; i < n1; i++) all.push({ v: a[i]!, first: true });
  for (let i = 0; i < n2; i++) all.push({ v: b[i]!, first: false });
  all.sort((x, y) => x.v - y.v);
  const N = n1 + n2;
  // Mid-ranks for ties, and Σ(t³ − t) over tie groups for the variance.
  let rankSum = 0;
  let tieTerm = 0;
  for (let i = 0; i < N; ) {
    let j = i;
    while (j + 1 < N && all[j + 1]!.v === all[i]!.v) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) if (all[k]!.first) rankSum += rank;
    const t = j - i + 1;
    tieTerm += t * t * t - t;
    i = j + 1;
  }
  const u = rankSum - (n1 * (n1 + 1)) / 2;
  const cells = n1 * n2;
  if (tieTerm === 0 && cells <= EXACT_U_MAX_CELLS) {
    const counts = exactUCounts(n1, n2);
    let total = 0;
    for (const x of counts) total += x;
    const low = Math.min(u, cells - u);
    let tail = 0;
    for (let k = 0; k <= low; k++) tail += counts[k]!;
    return { u, p: Math.min(1, (2 * tail) / total), method: 'exact' };
  }
  const mu = cells / 2;
  const variance = (cells / 12) * (N + 1 - tieTerm / (N * (N - 1)));
  if (!(variance > 0)) return { u, p: 1, method: 'normal' };
  const z = (Math.abs(u - mu) - 0.5) / Math.sqrt(variance);
  if (z <= 0) return { u, p: 1, method: 'normal' };
  return { u, p: Math.min(1, 2 * normalUpperTail(z)), method: 'normal' };
}

/** The geometric mean of positive numbers (null when there are none). */
export function geometricMean(values: readonly number[]): number | null {
  const ok = values.filter((v) => v > 0 && Number.isFinite(v));
  if (!ok.length) return null;
  let s = 0;
  for (const v of ok) s += Math.log(v);
  return Math.exp(s / ok.length);
}
