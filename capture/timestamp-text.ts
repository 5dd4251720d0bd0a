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
//
// Neither test depends on i (the steps are the same width across the range),
// so each k's fraction text is worked out once, in a table of 4,096; and the
// records of one turn mostly share their whole millisecond, whose 13 digits
// are kept from the last timestamp written. Searched per timestamp, the h2
// bench's profile (perf) put ~10 % of a recording bb's CPU in the number
// writer (issue 39, h2 round); a micro-benchmark: ~65 ns a timestamp → ~26.

const LOW = 2 ** 40;
const HIGH = 2 ** 41;
const POW10 = [1, 10, 100, 1000, 10000];

/** A fraction left to String (a tie between two 4-digit candidates). */
const DECLINED = 255;
/** Bytes kept per fraction: its "." and up to 4 digits. */
const SLOT = 5;

/** Per k: how many bytes its fraction text has (0 for k = 0: no "."), or DECLINED. */
const FRACTION_LENGTH = new Uint8Array(4096);
/** Per k: its fraction text (".1", ".0625", ...) in SLOT bytes from k·SLOT. */
const FRACTION_BYTES = new Uint8Array(4096 * SLOT);

for (let k = 0; k < 4096; k++) {
  let d = 0;
  let m = 0;
  let tie = false;
  for (; d <= 4; d++) {
    const p = POW10[d]!;
    const scaled = (k * p) / 4096;
    m = Math.round(scaled);
    // Two closest candidates (a fraction of exactly .5): the tie rule decides; left to String.
    if (d === 4 && scaled - Math.floor(scaled) === 0.5) tie = true;
    if (tie || Math.abs(8192 * m - 2 * k * p) < p) break;
  }
  // No k takes m = 10^d (a round up into the next millisecond): only d = 0 could, which only k = 0 takes, with m = 0.
  if (tie || d > 4) {
    FRACTION_LENGTH[k] = DECLINED;
    continue;
  }
  FRACTION_LENGTH[k] = d === 0 ? 0 : d + 1;
  if (d === 0) continue;
  FRACTION_BYTES[k * SLOT] = 0x2e;
  for (let i = d; i >= 1; i--) {
    FRACTION_BYTES[k * SLOT + i] = 0x30 + (m % 10);
    m = Math.floor(m / 10);
  }
}

/** The whole part of the last timestamp written and its 13 digits. */
let lastWhole = -1;
const WHOLE_BYTES = new Uint8Array(13);

/**
 * Writes String(ts)'s bytes into `buf` at `at` and returns the offset after
 * them, or -1 (nothing written) when ts is outside the range this handles.
 * `buf` must have 18 bytes of room at `at`.
 */
export function writeTimestamp(buf: Uint8Array, at: number, ts: number): number {
  if (!(ts >= LOW && ts < HIGH)) return -1;
  const whole = Math.floor(ts);
  // Exact: ts − whole is a multiple of 2^-12 in this range.
  const k = (ts - whole) * 4096;
  const length = FRACTION_LENGTH[k]!;
  if (length === DECLINED) return -1;
  if (whole !== lastWhole) {
    // 13 digits in this range, as two int32 halves (6 and 7 digits).
    let hi = Math.floor(whole / 1e7);
    let lo = whole - hi * 1e7;
    for (let i = 12; i >= 6; i--) {
      const q = (lo / 10) | 0;
      WHOLE_BYTES[i] = 0x30 + lo - q * 10;
      lo = q;
    }
    for (let i = 5; i >= 0; i--) {
      const q = (hi / 10) | 0;
      WHOLE_BYTES[i] = 0x30 + hi - q * 10;
      hi = q;
    }
    lastWhole = whole;
  }
  for (let i = 0; i < 13; i++) buf[at + i] = WHOLE_BYTES[i]!;
  const end = at + 13;
  const from = k * SLOT;
  for (let i = 0; i < length; i++) buf[end + i] = FRACTION_BYTES[from + i]!;
  return end + length;
}
