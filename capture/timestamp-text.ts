// A record's timestamp (epoch milliseconds with a fraction, from
// performance.timeOrigin + performance.now()) written as the bytes of
// String(ts), without String: printing a double the shortest way is V8's
// general algorithm, and in the recorder it cost ~0.35 µs of a WebSocket
// message's ~1.3 µs (bench/recorder-ws.ts, issue 39).
//
// Between 2^40 and 2^41 ms (November 2004 to September 2039) every double
// is a multiple of 2^-12 ms, so ts = i + k / 4096 with i its whole part and
// k a whole number under 4096, both exact. String(ts) is the decimal with
// the fewest fraction digits d that reads back as ts (ECMAScript
// Number::toString: the closest such one), and 4 digits always do (10^-4 <
// 2^-12). For each d from 0, m = round(k·10^d / 4096) is the closest
// candidate; it reads back as ts when it lies within half a step (2^-13) of
// it: |8192·m − 2·k·10^d| < 10^d, all in exact integers. (Exactly half a
// step cannot happen: 8192·m = 10^d·(2k ± 1) has 2^13 on the left and at
// most 2^4 on the right.) When two 4-digit candidates are equally close
// the spec's tie rule would decide: that case, and every ts outside the
// range, is left to String.

const LOW = 2 ** 40;
const HIGH = 2 ** 41;
const POW10 = [1, 10, 100, 1000, 10000];

/**
 * Writes String(ts)'s bytes into `buf` at `at` and returns the offset after
 * them, or -1 (nothing written) when ts is outside the range this handles.
 * `buf` must have 18 bytes of room at `at`.
 */
export function writeTimestamp(buf: Uint8Array, at: number, ts: number): number {
  if (!(ts >= LOW && ts < HIGH)) return -1;
  let whole = Math.floor(ts);
  const k = (ts - whole) * 4096;
  let d = 0;
  let m = 0;
  for (; d <= 4; d++) {
    const p = POW10[d]!;
    const scaled = (k * p) / 4096;
    m = Math.round(scaled);
    // Two closest candidates (a fraction of exactly .5): the tie rule decides; leave it to String.
    if (d === 4 && scaled - Math.floor(scaled) === 0.5) return -1;
    if (Math.abs(8192 * m - 2 * k * p) < p) break;
  }
  if (d > 4) return -1;
  if (m === POW10[d]) {
    // Rounded up to the next whole millisecond: with d = 0 only (a longer candidate equal to it would have been taken at d = 0).
    if (d > 0) return -1;
    whole += 1;
  }
  // The whole part: 13 digits in this range.
  let end = at + 13;
  for (let i = end - 1; i >= at; i--) {
    const q = Math.floor(whole / 10);
    buf[i] = 0x30 + whole - q * 10;
    whole = q;
  }
  if (d === 0) return end;
  buf[end++] = 0x2e;
  for (let i = end + d - 1; i >= end; i--) {
    const q = Math.floor(m / 10);
    buf[i] = 0x30 + m - q * 10;
    m = q;
  }
  return end + d;
}
