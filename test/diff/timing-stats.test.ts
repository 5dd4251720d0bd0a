// The timing statistics against known values. Reference values: U counted by
// hand below each case; p-values from scipy.stats.mannwhitneyu 1.17.1
// (method="exact" and method="asymptotic", which uses the tie-corrected
// variance and a continuity correction of 1/2), and for the exact case also
// by hand from the distribution of U.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ascending, erfc, exactUCounts, geometricMean, mannWhitneyU, median, quantile, ratioOfMedians, seedOf } from '../../diff/timing-stats.js';
import { mulberry32 } from '../../core/index.js';

const close = (actual: number, expected: number, tol: number, what: string) => assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} is not within ${tol} of ${expected}`);

describe('timing statistics', () => {
  it('interpolates quantiles as numpy does (type 7)', () => {
    const s = ascending([10, 1, 4, 3, 2]);
    // numpy.quantile([1,2,3,4,10], [0.5, 0.9, 0.99]) = [3, 7.6, 9.76]
    assert.equal(median(s), 3);
    close(quantile(s, 0.9), 7.6, 1e-12, 'p90');
    close(quantile(s, 0.99), 9.76, 1e-12, 'p99');
    assert.equal(median(ascending([1, 2, 3, 4])), 2.5);
    assert.ok(Number.isNaN(median(ascending([]))));
  });

  it('computes erfc to the precision it promises', () => {
    // erfc(0) = 1, erfc(1) = 0.157299207050285, erfc(2) = 0.004677734981047266 (tables of erfc).
    close(erfc(0), 1, 1.2e-7, 'erfc(0)');
    close(erfc(1), 0.157299207050285, 0.157299207050285 * 1.2e-7, 'erfc(1)');
    close(erfc(2), 0.004677734981047266, 0.004677734981047266 * 1.2e-7, 'erfc(2)');
    close(erfc(-1), 2 - 0.157299207050285, 1e-7, 'erfc(-1)');
  });

  it('counts the exact distribution of U', () => {
    // m = 2, n = 2: the six arrangements give U = 0, 1, 2, 2, 3, 4.
    assert.deepEqual([...exactUCounts(2, 2)], [1, 1, 2, 1, 1]);
    // m = 5, n = 4: 126 arrangements; U ≤ 3 in 1 + 1 + 2 + 3 = 7 of them (partitions of u in a 5 × 4 box).
    const c = exactUCounts(5, 4);
    assert.equal(c.reduce((a, b) => a + b, 0), 126);
    assert.deepEqual([...c.slice(0, 4)], [1, 1, 2, 3]);
  });

  it('gives the exact p for small samples without ties', () => {
    // x > y in 3 + 4 + 2 + 4 + 4 = 17 pairs; p = 2·P(U ≤ 3) = 2·7/126 = 0.1111 (scipy exact: 0.1111111111111111).
    const r = mannWhitneyU([19, 22, 16, 29, 24], [20, 11, 17, 12]);
    assert.equal(r.u, 17);
    assert.equal(r.method, 'exact');
    close(r.p, 14 / 126, 1e-12, 'p');
    // Complete separation: U = 0, p = 2 / C(10, 5) = 2/252 = 0.007936507936507936.
    const s = mannWhitneyU([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]);
    assert.equal(s.u, 0);
    close(s.p, 2 / 252, 1e-12, 'p separated');
  });

  it('uses the normal approximation with tie correction and continuity correction', () => {
    // Ties: a's ranks sum to 43.5, U = 43.5 − 36 = 7.5; scipy asymptotic p = 0.010515245935858907.
    const t = mannWhitneyU([1, 2, 2, 3, 3, 3, 4, 5], [3, 4, 4, 5, 5, 6, 7, 7]);
    assert.equal(t.u, 7.5);
    assert.equal(t.method, 'normal');
    close(t.p, 0.010515245935858907, 2e-7, 'p with ties');
    // 25 × 25 (past the exact limit): U = 210, scipy asymptotic p = 0.0478057953309806.
    const big = mannWhitneyU(Array.from({ length: 25 }, (_, i) => i + 1), Array.from({ length: 25 }, (_, i) => i + 5.5));
    assert.equal(big.u, 210);
    assert.equal(big.method, 'normal');
    close(big.p, 0.0478057953309806, 2e-7, 'p 25 × 25');
    // Everything equal: nothing to tell apart.
    assert.equal(mannWhitneyU([1, 1, 1], [1, 1, 1]).p, 1);
  });

  it('is symmetric: swapping the samples keeps p and mirrors U', () => {
    const a = [3.1, 2.2, 5.4, 1.9, 7.7, 2.8];
    const b = [4.4, 6.1, 5.0, 8.3, 9.9, 5.5, 7.1];
    const x = mannWhitneyU(a, b);
    const y = mannWhitneyU(b, a);
    close(x.p, y.p, 1e-12, 'p');
    assert.equal(x.u + y.u, a.length * b.length);
  });

  it('bootstraps the ratio of medians reproducibly and around the truth', () => {
    const random = mulberry32(7);
    const old = ascending(Array.from({ length: 40 }, () => 10 + random()));
    const slow = ascending(Array.from({ length: 40 }, () => 30 + 3 * random()));
    const a = ratioOfMedians(old, slow, seedOf('GET /x'));
    const b = ratioOfMedians(old, slow, seedOf('GET /x'));
    assert.deepEqual(a, b, 'the same seed gives the same interval');
    close(a.ratio!, 3, 0.3, 'ratio');
    assert.ok(a.ci![0] <= a.ratio! && a.ratio! <= a.ci![1], `ratio ${a.ratio} inside ${a.ci}`);
    assert.ok(a.ci![0] > 2.5 && a.ci![1] < 3.5, `interval ${a.ci} is tight around 3`);
    // One build against itself: a narrow interval near 1 (it misses 1 itself one time in twenty).
    const again = ascending(Array.from({ length: 40 }, () => 10 + random()));
    const same = ratioOfMedians(old, again, seedOf('GET /x'));
    assert.ok(same.ci![0] > 0.95 && same.ci![1] < 1.06, `interval ${same.ci} is near 1`);
    assert.deepEqual(ratioOfMedians(ascending([0, 0, 0]), ascending([1, 2, 3]), 1), { ratio: null, ci: null });
  });

  it('takes the geometric mean of the positive ratios', () => {
    close(geometricMean([2, 8])!, 4, 1e-12, 'geomean');
    close(geometricMean([1.5, 1 / 1.5])!, 1, 1e-12, 'geomean of opposites');
    assert.equal(geometricMean([]), null);
  });
});

describe('the bootstrap of big samples (m out of n)', () => {
  it('gives about the interval the full bootstrap gives, at bounded cost', () => {
    // 4,000 samples a side from a long-tailed distribution (log-normal-ish).
    const random = mulberry32(11);
    const draw = (scale: number) => ascending(Array.from({ length: 4000 }, () => scale * Math.exp(0.5 * (random() + random() + random() - 1.5))));
    const old = draw(10);
    const slow = draw(12);
    const fast = ratioOfMedians(old, slow, 5);
    // The full bootstrap, the slow way: every sample drawn, 400 resamples.
    const full: number[] = [];
    const r2 = mulberry32(6);
    const med = (s: Float64Array) => median(ascending(Array.from({ length: s.length }, () => s[Math.floor(r2() * s.length)]!)));
    for (let b = 0; b < 400; b++) full.push(med(slow) / med(old));
    const f = ascending(full);
    const lo = quantile(f, 0.025);
    const hi = quantile(f, 0.975);
    const width = hi - lo;
    assert.ok(Math.abs(fast.ci![0] - lo) < 0.25 * width && Math.abs(fast.ci![1] - hi) < 0.25 * width, `m-out-of-n ${fast.ci} against full ${lo}, ${hi}`);
    close(fast.ratio!, 1.2, 0.05, 'ratio');
  });
});
