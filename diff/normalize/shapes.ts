// Values that look generated (docs/diff.md "Generated values"): a random id
// nobody echoes (a create response's id, a session cookie) differs run to run
// and carries no meaning but its shape. The `generated-ids` rule marks such
// tokens as ordinals of their shape (<HEX12:n>, <NANOID:n>, <B64_22:n>,
// <JWT:n>), so the same place holding the same shape compares equal through
// the numbering along aligned places (correspond.ts), an id echoed elsewhere
// still has to be the same id, and a shape change (12 hex → uuid) is a change.
// `numeric-ids` does the same for integers of 4+ digits under id keys.
//
// A shape is length and alphabet. Alphabets that contain one another are one
// shape: a random base64 value need not show a `+` or `/`, nor a base64url
// one a `-` or `_`, nor a base62 one a digit, so base62, base64url and base64
// tokens of one length are one shape (B64_L) and only hex (a value made of
// hex digits alone is never chance for a 12+ character token of a larger
// alphabet) and the nanoid length stand apart. What is not generated is
// words: English, snake_case, camelCase, SCREAMING_CASE, kebab-case, numbers
// and dates (looksGenerated).
import { WRITTEN_NUMBER } from './json.js';

/** Hex tokens of these lengths are shapes (12 covers short object ids, 64 a sha-256). */
export const HEX_LENGTHS = { min: 12, max: 64 } as const;
/** Base62 / base64url / base64 tokens of these lengths are shapes; longer runs are data (blobs), compared as they are. */
export const TOKEN_LENGTHS = { min: 16, max: 128 } as const;
/** nanoid's default length: 21 characters of A-Za-z0-9_- (no base64 encoding has this length). */
const NANOID_LENGTH = 21;

/** A generated-looking token inside a string: where it is and its shape. */
export interface ShapeSpan {
  /** Offset of its first character. */
  start: number;
  /** Offset after its last character. */
  end: number;
  /** Its shape, the ordinal class it is marked as (HEX12, NANOID, B64_22, JWT). */
  cls: string;
}

/** Every class the `generated-ids` rule marks, in a fixed order (ordinal tables are seeded with them). */
export const SHAPE_CLASSES: readonly string[] = [
  ...range(HEX_LENGTHS.min, HEX_LENGTHS.max).map((n) => `HEX${n}`),
  'NANOID',
  ...range(TOKEN_LENGTHS.min, TOKEN_LENGTHS.max).filter((n) => n !== NANOID_LENGTH).map((n) => `B64_${n}`),
  'JWT',
];

/** The classes of `numeric-ids`: a JSON integer, a string of digits. */
export const NUMERIC_ID_CLASSES = ['INT', 'DIGITS'] as const;

/** Tokens under an id key this long at least are ids to `id-key-tokens` (shorter ones are names: `user01`, `sku42`). */
const ID_KEY_TOKEN_MIN = 8;

/** The classes of `id-key-tokens`: tokens shorter than generated-ids' by length (`B64_8`…`B64_15`), then the shapes it gives a longer token. */
export const ID_KEY_TOKEN_CLASSES: readonly string[] = [...range(ID_KEY_TOKEN_MIN, TOKEN_LENGTHS.min - 1).map((n) => `B64_${n}`), ...SHAPE_CLASSES];

/** The shortest string `generated-ids` changes (a 12-digit hex token). */
export const SHORTEST_SHAPE = HEX_LENGTHS.min;

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

// Letter runs as words are written: `Session`, `session`, `HTTP` before `Server`.
const LETTER_PARTS = /[A-Z]{2}[A-Z]*(?![a-z])|[A-Z]?[a-z]+|[A-Z]/g;

// The commonest letter pairs inside English words (about a fifth of all pairs):
// words are mostly made of them, random letters rarely. A dictionary would do
// no better on identifiers (`getUserName`, `sha256WithRSAEncryption`).
const COMMON_PAIRS = new Set(
  ('th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ' +
    'ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee ' +
    'wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op ' +
    'wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn sc gi da cr cl du ga qu ue ff ba ' +
    'ey ls va um pp ua up lu go ru ug ds lt pi rc rr eg au ck mu br bi pt ak pu ui rg ib ki rk ys ob mm fu ph og ms ud mb ip ub ' +
    'oi rl gu dr cc ft wn nu af hu nn eo vo rv nf xp gn fl iz ok gl aw ju oa eq sy sl ps jo nk kn gs xt ik dd cy sk xi oy ws ' +
    'lv dg wr xa eb tm xc ja ym sw bj ox').split(' '),
);

/** Letters a one-case token needs before lettersReadRandom reads them (shorter ones are words or names: `polling`, `active`). */
const RANDOM_LETTERS_MIN = 8;

/**
 * Whether a token of letters of one case (and separators) reads as random
 * letters rather than words: 8+ letters, and at least two of its letter pairs
 * (inside its letter runs), a fifth of them at least, are not common in
 * English words (COMMON_PAIRS). A random 8-letter id (`kqzvmxab`, a custom
 * lower-case alphabet's invite code, `abc-mnop-xyz`) passes 97 times in 100,
 * a 10-letter one 99 in 100; words pass about 6 times in 100 (`algorithm`,
 * `copyright`: pairs rarer than the common fifth), `websocket`, `keepalive`
 * and `transport` do not. A token with a digit or mixed case is not asked.
 */
export function lettersReadRandom(token: string): boolean {
  // Shorter tokens hold fewer letters (the binding asks of every token a client sends: most are short words).
  if (token.length < RANDOM_LETTERS_MIN) return false;
  let letters = 0;
  let pairs = 0;
  let rare = 0;
  let prev = -1;
  for (let i = 0; i < token.length; i++) {
    let c = token.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    if (c < 97 || c > 122) {
      prev = -1;
      continue;
    }
    c -= 97;
    letters++;
    if (prev >= 0) {
      pairs++;
      if (COMMON_PAIR_TABLE[prev * 26 + c] === 0) rare++;
    }
    prev = c;
  }
  return letters >= RANDOM_LETTERS_MIN && rare >= 2 && rare >= 0.2 * pairs;
}

/** COMMON_PAIRS as a table by letter pair (a = 0 … z = 25, first × 26 + second): no string made per pair. */
const COMMON_PAIR_TABLE = (() => {
  const t = new Uint8Array(26 * 26);
  for (const pair of COMMON_PAIRS) t[(pair.charCodeAt(0) - 97) * 26 + (pair.charCodeAt(1) - 97)] = 1;
  return t;
})();

/** Counts of a token's digits, upper- and lower-case letters. */
function classes(t: string): { digits: number; upper: number; lower: number } {
  let digits = 0;
  let upper = 0;
  let lower = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c >= 65 && c <= 90) upper++;
    else if (c >= 97 && c <= 122) lower++;
  }
  return { digits, upper, lower };
}

/** Whether the letters of a run read as words: common pairs inside words, and for mixed case, camelCase words of 3+ letters. */
function wordLike(t: string, mixedCase: boolean): boolean {
  let letters = 0;
  let pairs = 0;
  let inLongParts = 0;
  for (const part of t.match(LETTER_PARTS) ?? []) {
    letters += part.length;
    if (part.length >= 3) inLongParts += part.length;
    const l = part.toLowerCase();
    for (let i = 1; i < l.length; i++) if (COMMON_PAIRS.has(l.slice(i - 1, i + 1))) pairs++;
  }
  if (letters === 0) return true;
  const score = pairs / letters;
  // Mixed case: a random value's capitals break its letters into short parts; one case: only the pairs tell.
  return mixedCase ? score >= 0.6 || (inLongParts >= 0.9 * letters && score >= 0.4) : score >= 0.7;
}

/**
 * Whether a token of letters, digits and `_-+/=` looks generated rather than
 * written by a person: it has letters, it mixes classes (digits with letters,
 * or both cases) or is one run of one-case letters that read as random
 * (lettersReadRandom), its letters do not read as words, and it is not short
 * pieces joined by separators (`gpt-4o-mini-2024-07-18`, `user_2fa_enabled_v2`), nor
 * words with short pieces between them (`googlelogo_light_color_272x92dp`).
 * Tuned so a random hex, nanoid, base62, base36 or base64 value passes
 * practically always (the test draws many) and words, identifiers, dates and
 * versions do not.
 */
export function looksGenerated(token: string): boolean {
  const { digits, upper, lower } = classes(token);
  // Numbers, dates, versions: no letters.
  if (upper + lower === 0) return false;
  // Words, snake_case, IN_STOCK: one case, no digits. But one run of such letters that reads as random letters is an
  // id of a one-case alphabet (a lower-case nanoid's, a base32 one that drew no digit).
  if (digits === 0 && (upper === 0 || lower === 0)) return !/[-_+/=]/.test(token) && lettersReadRandom(token);
  const segments = token.split(/[-_+/=]+/).filter((x) => x);
  if (segments.length >= 3 && segments.every((x) => x.length <= 4 || wordLike(x, /[A-Z]/.test(x) && /[a-z]/.test(x)))) return false;
  if (namedByWords(segments)) return false;
  return !wordLike(token, upper > 0 && lower > 0);
}

/**
 * Whether the pieces of a token (split at its separators) are a name of words
 * with short pieces between them (googlelogo_light_color_272x92dp): two
 * lower-case words of 4+ letters, and no other piece long enough to be an id
 * of its own (usr_a1b2c3d4e5f6 and payment_intent_secret_<hex> stay
 * generated). bb noise's globs (diff/noise-shape.ts) ask the same.
 */
export function namedByWords(segments: readonly string[]): boolean {
  const word = (x: string) => /^[a-z]{4}[a-z]*$/.test(x) && wordLike(x, false);
  return segments.filter(word).length >= 2 && segments.every((x) => word(x) || x.length < HEX_LENGTHS.min);
}

/**
 * Whether the token is hex digits of one case with a digit and a letter. Not
 * `deadbeefcafe` (a word), nor digits alone (a number, a compact date): so a
 * random 12-hex id that drew no letter (one in 300; one in 2,500 at 16) keeps
 * its digits and reads as changed.
 */
function isHex(t: string): boolean {
  return (/^[0-9a-f]+$/.test(t) || /^[0-9A-F]+$/.test(t)) && /[0-9]/.test(t) && /[a-fA-F]/.test(t);
}

/**
 * Whether a whole value the generated-ids rule left as it is could be a value of shape `cls` (its class name)
 * all the same: the shape's length and alphabet, and, for a base62/64 shape, letters mixed with digits or both
 * cases, whatever its letters read as. A random id reads as words now and then (one 16-character base62 token in
 * ~400, one nanoid in ~1,000: looksGenerated), and then keeps its text on one side only; met at the place
 * where the other side holds a value of that shape (correspond.ts), it is compared as one.
 */
export function couldBeShape(value: string, cls: string): boolean {
  const hex = /^HEX(\d+)$/.exec(cls);
  if (hex) return value.length === Number(hex[1]) && (/^[0-9a-f]+$/.test(value) || /^[0-9A-F]+$/.test(value));
  const n = cls === 'NANOID' ? NANOID_LENGTH : Number(/^B64_(\d+)$/.exec(cls)?.[1]);
  if (value.length !== n || !/^[A-Za-z0-9_+/=-]+$/.test(value)) return false;
  const { digits, upper, lower } = classes(value);
  return upper + lower > 0 && (digits > 0 || (upper > 0 && lower > 0));
}

/** The shapes a whole token could have all the same (couldBeShape), whatever its letters read as: a hex one first. */
export function shapesItCouldBe(token: string): string[] {
  const n = token.length;
  const out: string[] = [];
  if (n >= HEX_LENGTHS.min && n <= HEX_LENGTHS.max && couldBeShape(token, `HEX${n}`)) out.push(`HEX${n}`);
  const cls = n === NANOID_LENGTH ? 'NANOID' : `B64_${n}`;
  if (n >= TOKEN_LENGTHS.min && n <= TOKEN_LENGTHS.max && couldBeShape(token, cls)) out.push(cls);
  return out;
}

/** The shape of a whole token of [A-Za-z0-9_-] (or a whole base64 value), or undefined when it does not look generated. */
export function shapeOf(token: string): string | undefined {
  const n = token.length;
  if (isHex(token)) return n >= HEX_LENGTHS.min && n <= HEX_LENGTHS.max ? `HEX${n}` : undefined;
  if (n < TOKEN_LENGTHS.min || n > TOKEN_LENGTHS.max || !looksGenerated(token)) return undefined;
  return n === NANOID_LENGTH ? 'NANOID' : `B64_${n}`;
}

// A JWT (RFC 7519 §3: base64url header `{"…` . payload . signature, the last may be empty), or a run of url-safe token characters.
const CANDIDATES = /(?<![A-Za-z0-9_-])(?:(eyJ[A-Za-z0-9_-]{5}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{5}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)|[A-Za-z0-9_-]{12}[A-Za-z0-9_-]*)(?![A-Za-z0-9_-])/g;
// A whole value in the standard base64 alphabet, padded or not (a header value, a JSON string).
const WHOLE_BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
// A digest names what it digests (bb's own `<binary 44 bytes sha256:…>` among them): content, not a generated value.
const DIGEST_LABEL = /(?:sha\d*|md5|digest|hash|checksum)[:=]$/i;

/** Whether a text starts as a path does (`/users/Xk9f…`: PATH_START), though it may be a value that starts with its `/`. */
export function readsAsPath(text: string): boolean {
  return PATH_START.test(text);
}

// A path's start: a `/`, a segment of a path's words (lower-case letters, `-`, `_`, `.`, digits after the first
// letter: `api`, `users`, `_next`, `user-files`), a version (`v2`) or a number, and another `/` (`/users/Xk9f…`).
const PATH_START = /^\/(?:_?[a-z]+(?:[-_.]?[a-z0-9]+)*|v\d+|\d+)\//;

/**
 * Whether the whole string is one base64 value: in the alphabet, and showing `+`, padding, or a `/` that is not a
 * path's (PATH_START). A random value may start with its `/` (one in 64) and show another; of 200,000 random
 * 18-byte values, 151 were not one token (test/diff/normalize/shapes.test.ts bounds the share).
 */
function wholeBase64(s: string): boolean {
  if (s.length < TOKEN_LENGTHS.min || s.length > TOKEN_LENGTHS.max || !WHOLE_BASE64.test(s)) return false;
  return (s.includes('+') || s.endsWith('=') || (s.includes('/') && !PATH_START.test(s))) && looksGenerated(s);
}

// A standard-base64 value inside a longer string (a CSP nonce `'nonce-OtQJ…/iD=='`, a Digest nonce): a run of the
// alphabet that shows `+` or ends in padding, not part of a longer run of the alphabet (a `-` or `_` may come before
// it: `nonce-`, `token_`, `sid=`).
const EMBEDDED_BASE64 = /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{15}[A-Za-z0-9+/]*={0,2}(?![A-Za-z0-9+/=_-])/g;

/** The standard-base64 values inside `s` (EMBEDDED_BASE64) that look generated, as spans of their shape (no class: a digest's, left as it is). */
function embeddedBase64(s: string): ShapeSpan[] {
  if (!s.includes('+') && !s.includes('=')) return [];
  const out: ShapeSpan[] = [];
  for (const m of s.matchAll(EMBEDDED_BASE64)) {
    const run = m[0];
    if (run.length > TOKEN_LENGTHS.max || !(run.includes('+') || run.endsWith('=')) || !looksGenerated(run)) continue;
    // After a digest label it is content (`sha256=47DEQpj8HBSa+/TI…=`): held with no class, so no part of it is marked either.
    const digest = DIGEST_LABEL.test(s.slice(Math.max(0, m.index - 9), m.index));
    out.push({ start: m.index, end: m.index + run.length, cls: digest ? '' : run.length === NANOID_LENGTH ? 'NANOID' : `B64_${run.length}` });
  }
  return out;
}

// A standard-base64 run as a value is written or as a URL carries it back (`+`, `/` and `=` percent-encoded:
// encodeURIComponent's form), not inside a longer run of the alphabet nor in the middle of a percent-escape.
const BASE64_RUN = /(?:(?<=%[0-9A-Fa-f]{2})|(?<![A-Za-z0-9+/%]))(?:[A-Za-z0-9+/]|%2[BbFf])+(?:=|%3[Dd]){0,2}(?![A-Za-z0-9+/=_-]|%(?:2[BbFf]|3[Dd]))/g;
// What a text needs to hold for BASE64_RUN to find a value in it: a `+`, padding (an `=` no letter or digit
// follows: a query's `x=1` is none), or an encoded `+`, `/` or `=`. A `/` alone never shows one inside a text.
const MAY_SHOW_BASE64 = /\+|=(?![A-Za-z0-9])|%(?:2[BbFf]|3[Dd])/;
// A JSON string in a text that is one such value (a cursor the client sends back in a JSON body).
const QUOTED_VALUE = /"([A-Za-z0-9+/_-]{16}[A-Za-z0-9+/_-]*={0,2})"/g;

/** A base64 value inside a text: where it is, as written there, and its value (percent-escapes undone). */
export interface Base64Run {
  start: number;
  end: number;
  value: string;
  /** Written with its `+`, `/` or `=` percent-encoded. */
  encoded: boolean;
}

// Made, not words (`application/ld+json`): a digit or both cases. A random value's parts between its `+` and `/`
// are short and read as nothing, so looksGenerated's test of separated pieces would refuse some.
function madeValue(value: string, max: number): boolean {
  return value.length >= TOKEN_LENGTHS.min && value.length <= max && (/\d/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value)));
}

/**
 * The values of a text that the issued-values binding takes whole (diff/bind/issued.ts), 16 to `max` characters,
 * made (a digit or both cases), in order, not overlapping: the whole text when it is one value of the base64 or
 * base64url alphabet, whatever it shows (a cursor `4witsO+F3O6FXo0Vt+i6+x/n`, one that drew no `+` or `/`, a
 * cursor that starts with its `/`, or a path: `/operations/tIdgwSBbNIDn`, which readsAsPath tells); else each JSON string in it that is one such value; and each standard-base64
 * value that shows itself by a `+`, padding or an encoded `/`, as written or percent-encoded as a URL carries it back
 * (`4witsO%2BF3O6FXo0Vt%2Bi6%2Bx%2Fn`). The separators `+` and `/` would cut such a value into parts whose number
 * and lengths vary from one random value to the next. In a request's target (`target`) only the last kind is read:
 * a `/` there is its path's, and a path's segments before such a value are cut off (`/cursor/xK9f…==`).
 */
export function base64Runs(text: string, max: number, target = false): Base64Run[] {
  if (text.length < TOKEN_LENGTHS.min) return [];
  // A text that is one value of a base64 or base64url alphabet, padded or not (WHOLE_BASE64, as the noise rule reads one).
  if (!target && WHOLE_BASE64.test(text)) return madeValue(text, max) ? [{ start: 0, end: text.length, value: text, encoded: false }] : [];
  const out: Base64Run[] = [];
  if (!target && text.includes('"')) {
    for (const m of text.matchAll(QUOTED_VALUE)) if (madeValue(m[1]!, max)) out.push({ start: m.index + 1, end: m.index + m[0].length - 1, value: m[1]!, encoded: false });
  }
  if (!MAY_SHOW_BASE64.test(text)) return out;
  const quoted = out.length;
  let q = 0;
  for (const m of text.matchAll(BASE64_RUN)) {
    let run = m[0];
    let start = m.index;
    // Inside a JSON string taken whole above.
    while (q < quoted && out[q]!.end <= start) q++;
    if (q < quoted && out[q]!.start < start + run.length) continue;
    // A run that starts with a `/` holds a path's segments before the value: cut off up to the last `/` before the
    // value shows itself.
    if (run.startsWith('/')) {
      const shows = run.search(/[+=]|%(?:2[BbFf]|3[Dd])/);
      const cut = shows < 0 ? -1 : run.lastIndexOf('/', shows);
      if (cut >= 0) {
        start += cut + 1;
        run = run.slice(cut + 1);
      }
    }
    const encoded = run.includes('%');
    const value = encoded ? run.replace(/%2[Bb]/g, '+').replace(/%2[Ff]/g, '/').replace(/%3[Dd]/g, '=') : run;
    if (!(value.includes('+') || value.endsWith('=') || /%2[Ff]/.test(run)) || !madeValue(value, max)) continue;
    out.push({ start, end: start + run.length, value, encoded });
  }
  return quoted === 0 || out.length === quoted ? out : out.sort((a, b) => a.start - b.start);
}

/**
 * The generated-looking tokens of a string, in order, not overlapping: the
 * whole string when it is one base64 value; else each standard-base64 value
 * inside it (shown by a `+` or padding: its `/` and `+` would cut it into
 * parts whose lengths vary from run to run), each JWT and each run of
 * [A-Za-z0-9_-] that has a shape as a whole, or, failing that, its parts
 * between `_` and `-` that have one (`internationalization_service_a1b2c3d4e5f6`).
 * A run right after a digest label (`sha256:`) is content, left as it is.
 */
export function shapeSpans(s: string): ShapeSpan[] {
  if (s.length < SHORTEST_SHAPE) return [];
  if (wholeBase64(s)) {
    return [{ start: 0, end: s.length, cls: s.length === NANOID_LENGTH ? 'NANOID' : `B64_${s.length}` }];
  }
  const b64 = embeddedBase64(s);
  const out: ShapeSpan[] = [];
  const keep = (span: ShapeSpan) => span.cls && out.push(span);
  let next = 0;
  for (const m of s.matchAll(CANDIDATES)) {
    const start = m.index;
    const run = m[0];
    // The base64 values before this run, and this run left out when it is part of one.
    while (next < b64.length && b64[next]!.end <= start) keep(b64[next++]!);
    if (next < b64.length && b64[next]!.start < start + run.length) continue;
    if (DIGEST_LABEL.test(s.slice(Math.max(0, start - 9), start))) continue;
    if (m[1] !== undefined) {
      out.push({ start, end: start + run.length, cls: 'JWT' });
      continue;
    }
    const whole = shapeOf(run);
    if (whole) {
      out.push({ start, end: start + run.length, cls: whole });
      continue;
    }
    // Past the longest shape a run is data (a blob), not ids to cut out of it.
    if (run.length > TOKEN_LENGTHS.max) continue;
    for (const p of run.matchAll(/[A-Za-z0-9]{12}[A-Za-z0-9]*/g)) {
      const cls = shapeOf(p[0]);
      if (cls) out.push({ start: start + p.index, end: start + p.index + p[0].length, cls });
    }
  }
  while (next < b64.length) keep(b64[next++]!);
  return out;
}

/** The string with each span (in order, not overlapping) replaced by `mark(cls, token)`. */
export function markSpans(s: string, spans: readonly ShapeSpan[], mark: (cls: string, value: string) => string): string {
  if (spans.length === 0) return s;
  let out = '';
  let from = 0;
  for (const { start, end, cls } of spans) {
    out += s.slice(from, start) + mark(cls, s.slice(start, end));
    from = end;
  }
  return out + s.slice(from);
}

// id, Id, ID alone or ending a key after a lower-case letter, a digit, `_` or `-`: userId, order_id, x-id. Not `paid`, not `PAID`.
/** A key that says it holds an id: `id`, `*Id`, `*ID`, `*_id`, `*-id` (numeric-ids, id-key-tokens; diff/bind's ids of fixed data). */
export const ID_KEY = /^(id|Id|ID)$|[a-z0-9](Id|ID)$|[_-](id|ID|Id)$/;

/**
 * The numeric-id class of a value under `key`, or undefined: a non-negative
 * JSON integer of 4+ digits (INT) or a string of 4+ digits (DIGITS), under a
 * key that says id. Only there: a count, a price or a port under any other
 * key is compared as it is, and ids under 1000 (fixtures, enums) too.
 */
/**
 * The `id-key-tokens` class of a string under `key` that every value rule left as it is, or undefined: under a
 * key that says id, a token of `A-Za-z0-9_-` is an id by its shape where generated-ids could not tell: 8 to 15
 * characters that look generated (too short for generated-ids anywhere else), or a longer one whose letters
 * happened to read as words (about one random 16-character base62 token in 400; shapesItCouldBe).
 */
export function idKeyTokenShape(key: string, value: string): string | undefined {
  if (value.length < ID_KEY_TOKEN_MIN || value.length > TOKEN_LENGTHS.max || !ID_KEY.test(key) || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined;
  if (value.length < TOKEN_LENGTHS.min) return looksGenerated(value) ? `B64_${value.length}` : undefined;
  return shapesItCouldBe(value)[0];
}

export function numericIdShape(key: string, value: unknown): (typeof NUMERIC_ID_CLASSES)[number] | undefined {
  if (!ID_KEY.test(key)) return undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 1000 ? 'INT' : undefined;
  if (typeof value !== 'string') return undefined;
  // An integer past 2^53, kept as written (json.ts WRITTEN_NUMBER): an int64 id.
  if (WRITTEN_NUMBER.exec(value)?.[1]?.match(/^\d+$/)) return 'INT';
  return /^[0-9]{4}[0-9]*$/.test(value) ? 'DIGITS' : undefined;
}
