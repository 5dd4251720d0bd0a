// Timestamps by value (docs/diff.md "Built-in rules"): a number that is
// epoch seconds or milliseconds, or an HTTP date, inside the capture's own
// time window is a timestamp whatever key or header holds it. The window is
// the side's own (when it was recorded) widened by a day each way, so a date
// or number far from it (a fixed expiry in 1970 or 9999, a count that happens
// to be large) stays a value and is compared as one.
import type { HarEntry, HarPage } from '../../capture/index.js';

/** When one side was recorded, widened by a day each way: epoch milliseconds. */
export interface CaptureWindow {
  /** The earliest time that counts as "during the capture". */
  readonly from: number;
  /** The latest. */
  readonly to: number;
}

/** One day in milliseconds: the window's slack on each side. */
export const DAY_MS = 86_400_000;

/**
 * The window of one side: its first and last entries in file order (the
 * last one's duration included) and its pages. Two entries rather than every
 * one: the bounded store reads two entries up front where reading all would
 * cost a whole pass over a big file, and with a day of slack either way no
 * capture's middle falls outside. Undefined when no time parses: the rules
 * that need a window then change nothing.
 */
export function captureWindow(first: HarEntry | undefined, last: HarEntry | undefined, pages: readonly HarPage[] = []): CaptureWindow | undefined {
  const times: number[] = [];
  const add = (t: number) => Number.isFinite(t) && times.push(t);
  for (const e of [first, last]) {
    if (!e) continue;
    const t = Date.parse(e.startedDateTime);
    add(t);
    if (e.time > 0) add(t + e.time);
  }
  for (const p of pages) add(Date.parse(p.startedDateTime));
  if (!times.length) return undefined;
  return { from: Math.min(...times) - DAY_MS, to: Math.max(...times) + DAY_MS };
}

/** The placeholder of a timestamp found by value. */
export const TIMESTAMP = '<TS>';

/** True when `n` is epoch seconds (a fraction allowed) or whole epoch milliseconds inside the window. */
export function isEpochInWindow(n: number, w: CaptureWindow): boolean {
  if (n >= w.from && n <= w.to) return Number.isInteger(n);
  const ms = n * 1000;
  return ms >= w.from && ms <= w.to;
}

// 10 digits (seconds, a fraction allowed), 13 (milliseconds), 16 (microseconds:
// Python's time.time_ns() // 1000) or 19 (nanoseconds: Go's UnixNano, written as
// a string since a JSON number loses its last digits), not part of a longer word
// or number: `_` may precede (`ts_1796416406`), a letter, digit or dot may not
// (hex ids, the fraction of another number).
const EPOCH_IN_TEXT = /(?<![0-9A-Za-z.])(?:\d{19}|\d{16}|\d{13}|\d{10}(?:\.\d{1,9})?)(?![0-9A-Za-z])/g;

/**
 * Epoch seconds, milliseconds, microseconds or nanoseconds inside a string (a header, a cookie, a text body) → <TS>
 * when inside the window (the finer ones by their first 13 digits, their milliseconds: a snowflake id of 19 digits
 * reads as a time years away).
 */
export function epochsInText(s: string, w: CaptureWindow | undefined): string {
  if (!w) return s;
  return s.replace(EPOCH_IN_TEXT, (m) => (isEpochInWindow(Number(m.length > 13 ? m.slice(0, 13) : m), w) ? TIMESTAMP : m));
}

const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*';
/** Month names as dates write them, January first (their index is the month's). */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(?:${MONTHS.join('|')})`;
// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7), the
// obsolete RFC 850 form and Netscape's cookie form with dashes
// (`Sunday, 06-Nov-94 …`, `Wed, 21-Oct-2015 …`), an RFC 5322 zone offset.
const HTTP_DATE = new RegExp(`\\b${DAY_NAME}, \\d{1,2}[ -]${MONTH}[ -]\\d{2,4} \\d{2}:\\d{2}:\\d{2} (?:GMT|UTC|[+-]\\d{4})\\b`, 'g');

/** The shortest HTTP date: `Sun, 6-Nov-94 08:49:37 GMT`. */
export const HTTP_DATE_SHORTEST = 26;

/** HTTP dates inside a string → <TS> when inside the window. */
export function httpDatesInText(s: string, w: CaptureWindow | undefined): string {
  if (!w) return s;
  return s.replace(HTTP_DATE, (m) => {
    const t = Date.parse(m);
    return t >= w.from && t <= w.to ? TIMESTAMP : m;
  });
}

// The date-time strings language runtimes write when a server prints its clock with no format in mind:
// JavaScript's Date#toString (`${new Date()}`: `Mon Dec 07 2026 21:33:01 GMT+0000 (Coordinated Universal Time)`),
// C's asctime (Python's time.ctime: `Mon Dec  7 21:33:01 2026`) and the same with a zone before the year (Java's
// Date#toString, Go's UnixDate: `Mon Dec 07 21:33:01 UTC 2026`), and Date#toLocaleString in the numeric orders of
// en-US and en-GB and their kin (`12/7/2026, 9:33:01 PM`, with ICU's narrow no-break space before the PM;
// `07/12/2026, 21:33:01`); and Go's Time#String's monotonic clock reading after a date-time and its zone
// (`2026-12-07 21:33:01.5 +0000 UTC m=+0.000123456`: seconds since the process started).
const JS_DATE_STRING = new RegExp(`\\b${DAY_NAME} ${MONTH} \\d{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT[+-]\\d{4}(?: \\([^()]{1,64}\\))?`, 'g');
const ASCTIME = new RegExp(`\\b${DAY_NAME} (${MONTH}) ([ \\d]\\d) (\\d{2}):(\\d{2}):(\\d{2})(?: [A-Z]{2,5})? (\\d{4})\\b`, 'g');
const LOCALE_DATE_TIME = /(?<![\d/])(\d{1,2})\/(\d{1,2})\/(\d{4}),? (\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s?([AaPp])\.?[Mm]\.?)?(?![\d:])/g;
const GO_MONOTONIC = /( [+-]\d{4} [A-Z]{2,5}) m=[+-]\d{1,12}\.\d{1,9}\b/g;

/** The shortest such string: `1/1/2026 1:00`. */
export const RUNTIME_DATE_SHORTEST = 13;

// Quick tests before each pattern: a locale date's digits and slashes, asctime's month and day.
const MAY_LOCALE = /\d\/\d{1,2}\/\d{4}/;
const MAY_ASCTIME = new RegExp(`${MONTH} [ \\d]\\d \\d{2}:`);

/** True when a string may hold one of those date-time strings (the patterns run only then). */
export function mayHoldRuntimeDate(s: string): boolean {
  if (s.length < RUNTIME_DATE_SHORTEST) return false;
  // Go's monotonic reading may follow a date-time the iso-time rule has made <TS> already.
  return s.includes(' m=') || (s.includes(':') && (s.includes(' GMT') || (s.includes('/') && MAY_LOCALE.test(s)) || MAY_ASCTIME.test(s)));
}

/**
 * Those date-time strings inside a string → <TS> when inside the window, Go's monotonic reading → <MONO>. A date-time
 * with no zone (asctime, a locale's) is read as UTC, a day of slack covering any zone; a locale date-time may put the
 * day or the month first, and is a time of the run when either reading falls inside the window.
 */
export function runtimeDatesInText(s: string, w: CaptureWindow | undefined): string {
  let out = s.includes(' m=') ? s.replace(GO_MONOTONIC, '$1 m=<MONO>') : s;
  if (!w) return out;
  const inWindow = (t: number) => t >= w.from && t <= w.to;
  if (out.includes(' GMT')) out = out.replace(JS_DATE_STRING, (m) => (inWindow(Date.parse(m)) ? TIMESTAMP : m));
  if (MAY_ASCTIME.test(out)) out = out.replace(ASCTIME, (m, month: string, day: string, h: string, min: string, sec: string, year: string) =>
    inWindow(Date.UTC(Number(year), MONTHS.indexOf(month), Number(day), Number(h), Number(min), Number(sec))) ? TIMESTAMP : m,
  );
  if (MAY_LOCALE.test(out)) {
    out = out.replace(LOCALE_DATE_TIME, (m, a: string, b: string, year: string, hour: string, minute: string, second: string | undefined, half: string | undefined) => {
      let h = Number(hour);
      if (half !== undefined) {
        if (h < 1 || h > 12) return m;
        h = (h % 12) + (/[Pp]/.test(half) ? 12 : 0);
      }
      const at = (month: number, day: number) => (month >= 1 && month <= 12 && day >= 1 && day <= 31 ? Date.UTC(Number(year), month - 1, day, h, Number(minute), Number(second ?? 0)) : NaN);
      return inWindow(at(Number(a), Number(b))) || inWindow(at(Number(b), Number(a))) ? TIMESTAMP : m;
    });
  }
  return out;
}

// ISO-8601 date-times (RFC 3339 and the space-separated form), minutes at least, a zone or none.
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g;

/** The shortest ISO date-time: `2020-01-01T00:00`. */
export const ISO_TIME_SHORTEST = 16;

/**
 * ISO-8601 date-times inside a string → <TS> when inside the window (one without a zone read as UTC: a day of slack
 * covers any zone); one that does not parse, or with no window, → <TS> as before windows.
 */
export function isoTimesInText(s: string, w: CaptureWindow | undefined): string {
  return s.replace(ISO_TIME, (m) => {
    if (!w) return TIMESTAMP;
    const t = isoTime(m);
    return Number.isNaN(t) || (t >= w.from && t <= w.to) ? TIMESTAMP : m;
  });
}

// A whole value that is one ISO-8601 date-time, as ISO_TIME reads one.
const WHOLE_ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

/** A whole ISO-8601 date-time's epoch ms (as isoTimesInText reads it), or undefined when `s` is not one: the cheap reading of the commonest time a key holds. */
export function wholeIsoTime(s: string): number | undefined {
  return s.length >= ISO_TIME_SHORTEST && WHOLE_ISO_TIME.test(s) ? isoTime(s) : undefined;
}

// A match (ISO_TIME's shape, so its digits sit at fixed places up to the minutes) as epoch ms, to the second: the
// fraction does not matter to a window a day wide. No zone reads as UTC; a zone is `Z` or ±hh[:]mm.
function isoTime(m: string): number {
  let at = 16;
  let seconds = 0;
  if (m.charCodeAt(at) === 58) {
    seconds = twoDigits(m, 17);
    at = 19;
  }
  if (m.charCodeAt(at) === 46 || m.charCodeAt(at) === 44) while (++at < m.length && m.charCodeAt(at) >= 48 && m.charCodeAt(at) <= 57);
  let offset = 0;
  const sign = m.charCodeAt(at);
  if (sign === 43 || sign === 45) offset = (sign === 43 ? 60_000 : -60_000) * (twoDigits(m, at + 1) * 60 + twoDigits(m, m.charCodeAt(at + 3) === 58 ? at + 4 : at + 3));
  return Date.UTC(twoDigits(m, 0) * 100 + twoDigits(m, 2), twoDigits(m, 5) - 1, twoDigits(m, 8), twoDigits(m, 11), twoDigits(m, 14), seconds) - offset;
}

function twoDigits(s: string, i: number): number {
  return (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;
}

/** True when a string may hold an ISO date-time (the regex runs only then). */
export function mayHoldIsoTime(s: string): boolean {
  return s.length >= ISO_TIME_SHORTEST && s.includes('-') && s.includes(':');
}

/** True when a string may hold an HTTP date (the regex runs only then). */
export function mayHoldHttpDate(s: string): boolean {
  return s.length >= HTTP_DATE_SHORTEST && s.includes(':') && s.includes(', ');
}

/** True when a string may hold epoch digits. */
export function mayHoldEpoch(s: string): boolean {
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++run >= 10) return true;
    } else run = 0;
  }
  return false;
}
