// JSON as bb diff compares it: parsed, except that a value nested deeper than
// MAX_COMPARED_DEPTH levels is kept as its JSON text.
//
// V8 parses JSON of any depth (its parser keeps its own stack), but every
// later step is a recursive walk — normalizing, comparing, JSON.stringify for
// the reports, structured clone to a worker — and 5,000 levels overflowed the
// call stack: a valid capture made bb diff die with a RangeError (issue 34).
// Past the stated depth a value is one string, found by scanning the text
// (no recursion), with the whitespace outside strings taken out: two such
// values are equal when their JSON is, key order included; value patterns
// still run over that text, key rules do not reach inside it.

/** How many levels of arrays and objects are compared field by field; deeper values are compared as their JSON text. */
export const MAX_COMPARED_DEPTH = 500;

/** What a value nested past `maxDepth` levels starts with, before its JSON text. */
export function deepJsonMark(maxDepth = MAX_COMPARED_DEPTH): string {
  return `(nested deeper than ${maxDepth} levels, compared as text) `;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x7b, 0x5b]); // { [
const CLOSERS = new Set([0x7d, 0x5d]); // } ]

/** JSON.parse, with each value nested deeper than `maxDepth` replaced by deepJsonMark + its compact JSON text; throws as JSON.parse does. */
export function parseComparedJson(text: string, maxDepth = MAX_COMPARED_DEPTH): unknown {
  let value: unknown = JSON.parse(text);
  // A number a double does not hold (an int64 id or amount past 2^53) is compared as written: JSON.parse made
  // 9007199254740993 and 9007199254740992 one value. Only texts with a run of 16 digits are looked at.
  if (LONG_DIGITS.test(text)) {
    const written = inexactNumbers(text);
    if (written.length > 0) {
      text = replaceSpans(text, written, (literal) => JSON.stringify(`<NUMBER ${literal}>`));
      value = JSON.parse(text);
    }
  }
  // Nesting n levels takes 2n characters, and n opening brackets: texts short of either need no scan.
  if (text.length < 2 * (maxDepth + 1) || !hasOpeners(text, maxDepth + 1)) return value;
  const spans = deepSpans(text, maxDepth);
  if (spans.length === 0) return value;
  const mark = deepJsonMark(maxDepth);
  return JSON.parse(replaceSpans(text, spans, (piece) => JSON.stringify(mark + compact(piece))));
}

/**
 * Whether a text may be JSON: its first character past whitespace can begin a JSON value. A text that cannot is
 * not handed to JSON.parse, whose throw costs ~8 µs (an event stream of 2.26M `data:` lines of no JSON spent 18 s
 * in throws alone).
 */
export function mayBeJson(text: string): boolean {
  const m = FIRST_NON_SPACE.exec(text);
  return m !== null && JSON_STARTS.has(m[0].charCodeAt(0));
}

const FIRST_NON_SPACE = /[^ \t\n\r]/;
// { [ " - 0-9 t f n
const JSON_STARTS = new Set([0x7b, 0x5b, 0x22, 0x2d, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x74, 0x66, 0x6e]);

const LONG_DIGITS = /\d{16}/;

/** What a number literal a double does not hold becomes (compared as written; numeric-ids reads it as an integer). */
export const WRITTEN_NUMBER = /^<NUMBER (-?\d[\d.eE+-]*)>$/;

/**
 * [start, end) of each number literal (outside strings) with 16 or more significant digits that a double does not
 * hold exactly: an integer whose double is another integer, a fraction whose double prints otherwise.
 */
function inexactNumbers(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let start = -1;
  const end = (e: number) => {
    const literal = text.slice(start, e);
    if (significantDigits(literal) >= 16 && !heldExactly(literal)) spans.push([start, e]);
    start = -1;
  };
  outsideStrings(text, (c, i) => {
    const numeric = (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
    if (numeric) {
      if (start < 0) start = i;
    } else if (start >= 0) end(i);
  });
  if (start >= 0) end(text.length);
  return spans;
}

function significantDigits(literal: string): number {
  const mantissa = literal.split(/[eE]/)[0]!.replace(/[-+.]/g, '').replace(/^0+/, '');
  return mantissa.length;
}

function heldExactly(literal: string): boolean {
  const n = Number(literal);
  if (!Number.isFinite(n)) return false;
  if (/^-?\d+$/.test(literal)) return BigInt(literal) === BigInt(n);
  return String(n) === literal;
}

function replaceSpans(text: string, spans: ReadonlyArray<[number, number]>, replace: (piece: string) => string): string {
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    out += text.slice(at, start) + replace(text.slice(start, end));
    at = end;
  }
  return out + text.slice(at);
}

/**
 * True when `text` holds at least `n` of `{` and `[` (strings included): a
 * native search per bracket, where the scan below runs a callback per
 * character (it was ~4 % of a bounded diff worker's time on 1 KiB bodies).
 */
function hasOpeners(text: string, n: number): boolean {
  let count = 0;
  for (const c of ['{', '[']) {
    for (let i = text.indexOf(c); i >= 0; i = text.indexOf(c, i + 1)) if (++count >= n) return true;
  }
  return false;
}

/** Calls `visit` with each character of valid JSON text outside its strings, and its index. */
function outsideStrings(text: string, visit: (c: number, i: number) => void): void {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else visit(c, i);
  }
}

/** [start, end) of each outermost array or object opened below `maxDepth` levels, in valid JSON text. */
function deepSpans(text: string, maxDepth: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let depth = 0;
  let start = 0;
  outsideStrings(text, (c, i) => {
    if (OPENERS.has(c)) {
      if (++depth === maxDepth + 1) start = i;
    } else if (CLOSERS.has(c)) {
      if (depth-- === maxDepth + 1) spans.push([start, i + 1]);
    }
  });
  return spans;
}

/** Valid JSON text without the whitespace between tokens. */
function compact(text: string): string {
  let out = '';
  let from = 0;
  outsideStrings(text, (c, i) => {
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      out += text.slice(from, i);
      from = i + 1;
    }
  });
  return out + text.slice(from);
}
