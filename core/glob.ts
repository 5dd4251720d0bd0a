// The one glob of bb: `*` is any run of characters (slashes and newlines
// included), `?` exactly one (UTF-16 code unit), everything else literal; the
// whole string must match. Used for entry ids and routes (diff's `where`,
// pairing route keys), URLs (bb frames --url) and host names (forward mode's
// --hosts).
//
// Matched by two pointers with the classic star backtrack, not a regex: the
// regex (`^.*a.*a.*b$`) backtracked polynomially in the text for each star, so
// a 7-star `where` against a 3,000-character captured URL spun at 100 % CPU
// (issue 34). Only the last star matters when a later part fails — moving an
// earlier star's end can only leave less text for the rest — so the work is
// at most (glob length + 1) × (text length + 1) steps.

/** Options of a glob. */
export interface GlobOptions {
  /** Match regardless of case (host names); ids and URLs are case-sensitive. */
  ignoreCase?: boolean;
}

/** Counts the steps of a match (tests bound the work with it). */
export interface GlobMeter {
  /** Steps taken so far; matchGlob adds to it. */
  steps: number;
}

const STAR = 42; // '*'
const ANY = 63; // '?'

/**
 * A code unit as the case-insensitive regex the glob once was compared it
 * (ECMA-262 Canonicalize, non-Unicode mode): upper-cased when that gives one
 * code unit and does not turn a non-ASCII letter into ASCII (ſ stays ſ).
 */
function fold(c: number): number {
  if (c < 128) return c >= 97 && c <= 122 ? c - 32 : c;
  const u = String.fromCharCode(c).toUpperCase();
  if (u.length !== 1) return c;
  const uc = u.charCodeAt(0);
  return uc < 128 ? c : uc;
}

/** Whether the whole of `text` matches `glob` (`*` any run, `?` one); `meter` counts the steps. */
export function matchGlob(glob: string, text: string, options: GlobOptions = {}, meter?: GlobMeter): boolean {
  const at = options.ignoreCase ? (s: string, i: number) => fold(s.charCodeAt(i)) : (s: string, i: number) => s.charCodeAt(i);
  const m = glob.length;
  const n = text.length;
  let p = 0;
  let t = 0;
  // Where the last star seen is, and where the text it may swallow ends (exclusive).
  let star = -1;
  let resume = 0;
  let steps = 0;
  while (t < n) {
    steps++;
    const g = p < m ? glob.charCodeAt(p) : -1;
    if (g === STAR) {
      star = p++;
      resume = t;
    } else if (g !== -1 && (g === ANY || (options.ignoreCase ? at(glob, p) : g) === at(text, t))) {
      p++;
      t++;
    } else if (star >= 0) {
      // Let the last star swallow one more character and try the rest again.
      p = star + 1;
      t = ++resume;
    } else {
      if (meter) meter.steps += steps;
      return false;
    }
  }
  while (p < m && glob.charCodeAt(p) === STAR) p++;
  if (meter) meter.steps += steps;
  return p === m;
}

/** A predicate for one glob. */
export function globMatcher(glob: string, options: GlobOptions = {}): (s: string) => boolean {
  return (s) => matchGlob(glob, s, options);
}
