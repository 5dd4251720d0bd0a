// Redaction by value (docs/capture.md "Redaction by value"): a value once
// redacted as a secret (by its name or its form) is hidden again wherever it
// is reused under a name that is not a secret's: a session cookie the client
// posts as a form field, an access token it sends as `?t=`. A capture
// remembers the values it redacted, at most SECRETS_KEPT of 8 to 1,024
// characters, and finds them again as whole values and as whole tokens in
// longer texts (`Bearer <sid>`, `https://x/cb?sid=<sid>`).
//
// No raw secret reaches a file. The recorder remembers the values it redacts
// (in heads; in a small JSON or form answer: redact-learn.ts) and hides them
// in the heads it journals; the first time it remembers one it journals a
// `sec` record holding only its placeholder and its length (and its
// percent-encoded form's length when that differs). A reader of the journal
// (the HAR's writer, `bb recover`, a live view, `bb shadow`'s follower) knows
// those by placeholder and finds a body's value by its length first, then by
// its keyed hash: only a token of a known value's length costs an HMAC, and
// never on the relay. A reader also remembers the values it redacts itself
// in bodies and messages, for those it writes after. The recorder and a
// reader drop the oldest of the recorder's values past SECRETS_KEPT in the
// one order the `sec` records set, so a reader knows what the recorder knew
// at each record; a value still in use is journaled again once SECRETS_KEPT
// / 2 newer ones came, so neither drops it.

import { maskedPlaceholder, PLACEHOLDER_LENGTH } from './placeholder.js';
import { percentDecoded } from '../core/index.js';

/** Values shorter than this are never remembered: `en-US`, `true` and their like stay wherever they stand. */
export const MIN_SECRET_VALUE = 8;
/** Nor longer ones (a PEM key is found by its form): a hostile peer's values cost at most SECRETS_KEPT times this. */
export const MAX_SECRET_VALUE = 1024;
/** Values remembered at most; the oldest goes first (a peer setting a million cookies costs no more). */
export const SECRETS_KEPT = 4096;
/** In bytes (a binary body, a gRPC message) a value is masked at its own length: only one as long as a placeholder can be. */
const SHORTEST_MASKED = PLACEHOLDER_LENGTH;

/** What a `sec` journal record says of a secret: its placeholder, its length, its percent-encoded form's length when that differs. */
export interface SecretFields {
  /** Its placeholder (`<redacted:XXXXXXXX>`). */
  p: string;
  /** Its length in UTF-16 code units (JavaScript's string length). */
  n: number;
  /** The length of encodeURIComponent of it, when that is another text (a base64 value's `+`, `/`, `=`). */
  e?: number;
}

/**
 * True when a value redacted as a secret is remembered to be found by value: MIN_SECRET_VALUE to MAX_SECRET_VALUE
 * characters holding two kinds at least of lower-case letters, upper-case letters, digits and others, so that a
 * plain word or number (`Bearer undefined`, a cookie `visits=12345678`) is not hidden wherever it stands.
 */
export function rememberable(value: string): boolean {
  const n = value.length;
  if (n < MIN_SECRET_VALUE || n > MAX_SECRET_VALUE) return false;
  let kinds = 0;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    kinds |= c >= 0x61 && c <= 0x7a ? 1 : c >= 0x41 && c <= 0x5a ? 2 : c >= 0x30 && c <= 0x39 ? 4 : 8;
    if (kinds !== 1 && kinds !== 2 && kinds !== 4 && kinds !== 8) return true;
  }
  return false;
}

/** A value remembered with its raw text (the recorder's, or one a reader redacted itself). */
interface RawSecret {
  p: string;
  /** Its percent-encoded form, when that is another text. */
  encoded: string | undefined;
  /** The count of values remembered when it was (re)journaled: its place in the one order both sides drop by. */
  at: number;
}

/** A value a reader knows by its placeholder only (a `sec` record). */
interface HashedSecret {
  n: number;
  e: number | undefined;
}

/**
 * Word characters for token boundaries: a remembered value is found in a text where it stands apart, neither
 * letters, digits, `_` nor `-` touching it (`sid=<v>&`, `/s/<v>/`, `Bearer <v>`), never inside a longer word.
 */
function isWord(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d;
}

/**
 * Characters no token holds, by which a text is cut into runs a token is looked for in: white space and the
 * delimiters around values (quotes, `,` `;` `&`, brackets, `\`). A cookie's value holds none (RFC 6265 §4.1.1),
 * nor does a bearer token (RFC 6750 §2.1) or an API key; a value that does is still found whole.
 */
function breaksToken(c: number): boolean {
  return c <= 0x20 || c === 0x22 || c === 0x27 || c === 0x2c || c === 0x3b || c === 0x26 || c === 0x3c || c === 0x3e
    || c === 0x28 || c === 0x29 || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x5c || c === 0x60 || c === 0x7c || c === 0x7f;
}

/** The secrets one capture's recorder or one reader of its journal knows by value, bounded. */
export class SecretValues {
  private readonly raw = new Map<string, RawSecret>();
  /** Percent-encoded form → raw value. */
  private readonly aliases = new Map<string, string>();
  private readonly hashed = new Map<string, HashedSecret>();
  /** How many remembered values (and encoded forms) have each length: a candidate of another is looked up no further. */
  private readonly rawLengths = new Map<number, number>();
  private readonly hashedLengths = new Map<number, number>();
  /** Both counts together, and their lengths longest first (a length goes in or out as its count leaves or reaches 0). */
  private readonly allLengths = new Map<number, number>();
  private readonly lengths: number[] = [];
  /** Values remembered so far (the order both sides drop by). */
  private count = 0;

  /**
   * `placeholderOf`: a candidate's placeholder (the keyed hash, without remembering it), for values known by
   * placeholder only. `journal`: told each value to write as a `sec` record (the recorder's; readers give none).
   */
  constructor(
    private readonly placeholderOf: (value: string) => string,
    private readonly journal?: (secret: SecretFields) => void,
    private readonly kept = SECRETS_KEPT,
  ) {}

  /** True once any value is known: until then nothing is searched. */
  get any(): boolean {
    return this.lengths.length > 0;
  }

  /** Values known now. */
  get size(): number {
    return this.raw.size + this.hashed.size;
  }

  /** A value redacted as a secret (`p` its placeholder): remembered when rememberable, journaled when new (or old). */
  learn(value: string, p: string): void {
    const known = this.raw.get(value);
    if (known !== undefined) {
      // Still in use: journaled again before half the memory has passed it, so no side drops it.
      if (this.count - known.at < this.kept / 2) return;
      this.raw.delete(value);
      known.at = this.count++;
      this.raw.set(value, known);
      this.tell(value, known);
      return;
    }
    if (!rememberable(value)) return;
    const encoded = encodeURIComponent(value);
    const secret: RawSecret = { p, encoded: encoded === value ? undefined : encoded, at: this.count++ };
    this.raw.set(value, secret);
    this.countLength(this.rawLengths, value.length, 1);
    if (secret.encoded !== undefined) {
      this.aliases.set(secret.encoded, value);
      this.countLength(this.rawLengths, secret.encoded.length, 1);
    }
    this.tell(value, secret);
    if (this.raw.size > this.kept) this.forgetRaw(this.raw.keys().next().value!);
  }

  /** A value a `sec` record names (readers): found by its length and keyed hash from now on. */
  know(secret: SecretFields): void {
    if (typeof secret.p !== 'string' || typeof secret.n !== 'number') return;
    const e = typeof secret.e === 'number' ? secret.e : undefined;
    const old = this.hashed.get(secret.p);
    if (old !== undefined) {
      this.hashed.delete(secret.p);
      this.countHashed(old, -1);
    }
    const fresh = { n: secret.n, e };
    this.hashed.set(secret.p, fresh);
    this.countHashed(fresh, 1);
    if (this.hashed.size > this.kept) {
      const [p, oldest] = this.hashed.entries().next().value!;
      this.hashed.delete(p);
      this.countHashed(oldest, -1);
    }
  }

  /** Learns each of another memory's values, oldest first (a new segment's recorder journals them in its own journal). */
  seed(from: SecretValues): void {
    for (const [value, secret] of from.raw) this.learn(value, secret.p);
  }

  /** The placeholder of a known value (whole, as raw text or percent-encoded), else undefined. */
  match(candidate: string): string | undefined {
    const n = candidate.length;
    if (this.rawLengths.has(n)) {
      const known = this.raw.get(candidate);
      if (known !== undefined) return known.p;
      const value = this.aliases.get(candidate);
      if (value !== undefined) return this.raw.get(value)?.p;
    }
    if (this.hashedLengths.has(n)) {
      const p = this.placeholderOf(candidate);
      if (this.hashed.has(p)) return p;
      if (candidate.includes('%')) {
        const decoded = percentDecoded(candidate);
        if (decoded !== candidate) {
          const q = this.placeholderOf(decoded);
          if (this.hashed.has(q)) return q;
        }
      }
    }
    return undefined;
  }

  /** A text with each known value in it, whole or as a token standing apart, replaced by its placeholder; the text itself when none. */
  replaceIn(text: string): string {
    // Most texts are shorter than any value known (a head's values against a session id): nothing to look at.
    if (this.lengths.length === 0 || text.length < this.lengths[this.lengths.length - 1]!) return text;
    const whole = this.match(text);
    if (whole !== undefined) return whole;
    let out: string[] | undefined;
    let copied = 0;
    this.eachToken(text, MIN_SECRET_VALUE, (from, to, p) => {
      (out ??= []).push(text.slice(copied, from), p);
      copied = to;
    });
    if (out === undefined) return text;
    out.push(text.slice(copied));
    return out.join('');
  }

  /**
   * Bytes (a binary body or message, a gRPC message) with each known value of SHORTEST_MASKED characters or more
   * standing apart in them (read as latin1) masked at its length (`<redacted:XXXXXXXX~~~>`), so framing and lengths
   * stay; the same buffer when none.
   */
  maskBytes(bytes: Buffer): Buffer {
    if (this.lengths.length === 0 || this.lengths[0]! < SHORTEST_MASKED || bytes.length < SHORTEST_MASKED) return bytes;
    const text = bytes.toString('latin1');
    let out: Buffer | undefined;
    this.eachToken(text, SHORTEST_MASKED, (from, to, p) => {
      (out ??= Buffer.from(bytes)).write(maskedPlaceholder(p, to - from), from, 'latin1');
    });
    return out ?? bytes;
  }

  // Calls `found` for each known value of `shortest` characters or more standing apart in `text`, left to right,
  // the longest first where several start at one place. Linear in the text times the known lengths: a value is
  // looked for only where a word starts and, at that length, a word ends within the same run (breaksToken).
  private eachToken(text: string, shortest: number, found: (from: number, to: number, p: string) => void): void {
    const n = text.length;
    const lengths = this.lengths;
    // No value known starts past this.
    const last = n - Math.max(shortest, lengths[lengths.length - 1]!);
    // Where the run holding `i` ends (one scan a run, however many words it holds).
    let runEnd = 0;
    let i = 0;
    while (i <= last) {
      // To the next word's start.
      while (i < n && !isWord(text.charCodeAt(i))) i++;
      if (i > last) return;
      if (runEnd <= i) for (runEnd = i + 1; runEnd < n && !breaksToken(text.charCodeAt(runEnd)); runEnd++);
      let matched = -1;
      for (const len of lengths) {
        if (len < shortest) break;
        const end = i + len;
        if (end > runEnd) continue;
        // It must end where a word does (or with a character that is no word's: `=` padding).
        if (end < n && isWord(text.charCodeAt(end)) && isWord(text.charCodeAt(end - 1))) continue;
        const p = this.match(text.slice(i, end));
        if (p === undefined) continue;
        found(i, end, p);
        matched = end;
        break;
      }
      if (matched >= 0) {
        i = matched;
        continue;
      }
      // Past this word.
      while (i < n && isWord(text.charCodeAt(i))) i++;
    }
  }

  private tell(value: string, secret: RawSecret): void {
    if (!this.journal) return;
    this.journal({ p: secret.p, n: value.length, ...(secret.encoded !== undefined ? { e: secret.encoded.length } : {}) });
  }

  private forgetRaw(value: string): void {
    const secret = this.raw.get(value)!;
    this.raw.delete(value);
    this.countLength(this.rawLengths, value.length, -1);
    if (secret.encoded !== undefined) {
      this.aliases.delete(secret.encoded);
      this.countLength(this.rawLengths, secret.encoded.length, -1);
    }
  }

  private countHashed(s: HashedSecret, by: 1 | -1): void {
    this.countLength(this.hashedLengths, s.n, by);
    if (s.e !== undefined) this.countLength(this.hashedLengths, s.e, by);
  }

  private countLength(counts: Map<number, number>, length: number, by: 1 | -1): void {
    add(counts, length, by);
    const all = add(this.allLengths, length, by);
    if (all === 1 && by === 1) this.lengths.splice(longestFirstAt(this.lengths, length), 0, length);
    else if (all === 0) this.lengths.splice(longestFirstAt(this.lengths, length), 1);
  }
}

/** Adds `by` to a count (gone at 0); the new count. */
function add(counts: Map<number, number>, key: number, by: number): number {
  const c = (counts.get(key) ?? 0) + by;
  if (c > 0) counts.set(key, c);
  else counts.delete(key);
  return c;
}

/** Where `length` is, or goes, in a list sorted longest first (binary search: a hostile peer's lengths are many). */
function longestFirstAt(lengths: number[], length: number): number {
  let lo = 0;
  let hi = lengths.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (lengths[mid]! > length) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

