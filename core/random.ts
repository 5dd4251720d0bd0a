// The one seeded generator: the timing bootstrap (diff/timing-stats.ts), the
// benchmarks' generated captures and the tests' fuzz all need the same
// sequence for the same seed, on every machine and Node version.

/** mulberry32: floats in [0, 1) from a 32-bit seed; small, fast, and plenty for resampling and fuzz. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
