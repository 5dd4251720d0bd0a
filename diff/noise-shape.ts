// What varies between two runs of one build, as something that will match
// again (docs/diff.md "Triage: known differences, noise, `bb known add`, `bb
// noise`"): the shape two varying values share (a value pattern: the parts
// they share literal, each part that varies as its alphabet and length, so
// "sess-a3f9c2e1b4d7" and "sess-09be77c1d2aa" are `^sess-[0-9a-f]{12}$`,
// written `sess-<HEX12>`), and entry ids and field paths with the segments
// that look generated (a random id in a URL path, a random key) as globs.
// `--noise` hides a changed value only when the new value has that shape;
// `bb noise` writes it as a path rule's pattern. Never a literal random value.
// Pure.
import { joinPath, splitPath } from './selector.js';
import { unnumbered } from './ratified.js';
import { namedByWords } from './normalize/index.js';
import { escapeRegExp } from '../core/index.js';

/** The shape two varying values share: a regex over the whole value's text, and what a matching value becomes. */
export interface VaryingShape {
  /** JavaScript regex source, anchored (`^…$`), over a string as it is or a number's or boolean's JSON text. */
  regex: string;
  /** The value written instead: the shared parts with each varying part as its placeholder (`sess-<HEX12>`). */
  replace: string;
}

// A cookie's lifetime as normalized (normalize/cookies.ts: `<TS+337d23h8m>`, `<TS>`) is one part; then runs
// of letters and digits, and runs of anything else (kept literal).
const LIFETIME = /^<TS(?:[+-](?:[0-9]+[dhm])+)?>$/;
const TOKENS = /<TS(?:[+-](?:[0-9]+[dhm])+)?>|[A-Za-z0-9]+|[^A-Za-z0-9<]+|</g;
const ALNUM = /^[A-Za-z0-9]+$/;
const URL_SAFE = /^[A-Za-z0-9_-]+$/;


// The alphabet of two differing runs of letters and digits: a regex class and a placeholder name.
function alphabetOf(a: string, b: string): { cls: string; name: string; counted: boolean } {
  const s = a + b;
  const digit = /[0-9]/.test(s);
  const lower = /[a-z]/.test(s);
  const upper = /[A-Z]/.test(s);
  if (!lower && !upper) return { cls: '[0-9]', name: 'NUM', counted: false };
  if (digit && !upper && /^[0-9a-f]+$/.test(s)) return { cls: '[0-9a-f]', name: 'HEX', counted: true };
  if (digit && !lower && /^[0-9A-F]+$/.test(s)) return { cls: '[0-9A-F]', name: 'HEX', counted: true };
  const letters = `${lower ? 'a-z' : ''}${upper ? 'A-Z' : ''}`;
  return digit ? { cls: `[0-9${letters}]`, name: 'ALNUM', counted: true } : { cls: `[${letters}]`, name: 'WORD', counted: true };
}

// One varying part: its class with a length (exact when both are as long; a number's digits any length).
// Runs of letters that are the same on both sides, between digits that vary, stay (`337d23h21m`: numbers then d, h, m).
// Two hex values of one length are hex however their letters fell (`519879a8` and `006087a0` are not numbers around an `a`).
function varyingPart(a: string, b: string): { regex: string; replace: string } {
  const fa = a.match(/[0-9]+|[A-Za-z]+/g)!;
  const fb = b.match(/[0-9]+|[A-Za-z]+/g)!;
  const digits = (t: string) => /^[0-9]/.test(t);
  const hex = a.length === b.length && (/^[0-9a-f]+$/.test(a + b) || /^[0-9A-F]+$/.test(a + b));
  if (!hex && fa.length > 1 && fa.length === fb.length && fa.every((t, i) => (digits(t) ? digits(fb[i]!) : t === fb[i]))) {
    return { regex: fa.map((t) => (digits(t) ? '[0-9]+' : t)).join(''), replace: fa.map((t) => (digits(t) ? '<NUM>' : t)).join('') };
  }
  const { cls, name, counted } = alphabetOf(a, b);
  const exact = counted && a.length === b.length;
  return { regex: `${cls}${exact ? `{${a.length}}` : '+'}`, replace: `<${name}${exact ? a.length : ''}>` };
}

/** A scalar value's text as a pattern sees it (ordinal numbers dropped); undefined for objects, arrays and no value. */
export function valueText(v: unknown): string | undefined {
  if (typeof v === 'string') return unnumbered(v) as string;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return JSON.stringify(v);
  return undefined;
}

/**
 * The shape two values that differ between two runs share, or undefined when
 * they have none worth a pattern (objects, arrays, different types, no shared
 * structure): both split into runs of letters and digits and the rest; the
 * rest and equal runs stay literal, each differing run becomes its alphabet
 * (digits, hex, letters, letters and digits, with the cases seen) and length.
 * Values whose structure differs but that are both url-safe tokens
 * (`[A-Za-z0-9_-]`), and single runs of both cases (base62, a
 * nanoid), are one `<TOKEN21>` part of that alphabet.
 */
export function varyingShape(a: unknown, b: unknown): VaryingShape | undefined {
  if (typeof a !== typeof b || (a === null) !== (b === null)) return undefined;
  const ta = valueText(a);
  const tb = valueText(b);
  if (ta === undefined || tb === undefined || ta === tb) return undefined;
  const pa = ta.match(TOKENS) ?? [];
  const pb = tb.match(TOKENS) ?? [];
  const lifetimes = (x: string, y: string) => LIFETIME.test(x) && LIFETIME.test(y);
  const aligned = pa.length === pb.length && pa.every((x, i) => x === pb[i] || (ALNUM.test(x) && ALNUM.test(pb[i]!)) || lifetimes(x, pb[i]!));
  // A url-safe token (a nanoid, base62) whose parts do not line up, or share nothing but - and _, or are one run of both cases:
  // where its - and _ fall is chance too.
  const shared = pa.some((x, i) => ALNUM.test(x) && x === pb[i]);
  const urlSafe = URL_SAFE.test(ta) && URL_SAFE.test(tb);
  const token = !aligned || (urlSafe && !shared && (pa.length > 1 || (/[a-z]/.test(ta + tb) && /[A-Z]/.test(ta + tb))));
  if (token) {
    if (!urlSafe) return undefined;
    const exact = ta.length === tb.length;
    return { regex: `^[A-Za-z0-9_-]${exact ? `{${ta.length}}` : '+'}$`, replace: `<TOKEN${exact ? ta.length : ''}>` };
  }
  let regex = '';
  let replace = '';
  for (let i = 0; i < pa.length; i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) {
      regex += escapeRegExp(x);
      replace += x.replace(/\$/g, '$$$$');
    } else if (lifetimes(x, y)) {
      regex += '<TS(?:[+-](?:[0-9]+[dhm])+)?>';
      replace += '<LIFETIME>';
    } else {
      const part = varyingPart(x, y);
      regex += part.regex;
      replace += part.replace;
    }
  }
  return { regex: `^${regex}$`, replace };
}

/** True when a value has the shape (its text matches the pattern). */
export function hasShape(shape: Pick<VaryingShape, 'regex'>, v: unknown): boolean {
  const t = valueText(v);
  return t !== undefined && new RegExp(shape.regex).test(t);
}

/**
 * True for a piece of an id or a key that looks generated rather than named:
 * an ordinal placeholder (`<UUID:3>`), 4+ digits, or a token of 8+ letters,
 * digits, `-` and `_` that holds a digit (12 hex digits, a nanoid, base62),
 * unless it is words with short pieces between them: a file's or a resource's
 * name (`googlelogo_light_color_272x92dp`), kept as it is (namedByWords, the
 * rule the diff's shapes use, so `payment_intent_secret_<hex>` stays an id).
 */
export function looksGenerated(s: string): boolean {
  if (/^<[A-Z][A-Z0-9_]*(?::\d+)?>$/.test(s)) return true;
  if (/^\d{4}\d*$/.test(s)) return true;
  if (namedByWords(s.split(/[-_]/))) return false;
  return s.length >= 8 && /^[A-Za-z0-9_-]+$/.test(s) && /[0-9]/.test(s);
}

/**
 * An entry id as a `where` glob that will match the same entry in another
 * run: URL path segments that look generated become `*` (the page, the
 * method, the other segments and the occurrence stay). `*` and `?` in the
 * id itself cannot be written literally in a glob and become `?`.
 */
export function entryGlob(id: string): string {
  const safe = id.replace(/[*?]/g, '?');
  // The path starts after the method (`<page>/GET /…`); a page title may hold " /" itself.
  const method = /(?:^|\/)[A-Z][A-Z-]* \//.exec(safe);
  if (!method) return safe;
  const at = method.index + method[0].length - 2;
  const hash = safe.lastIndexOf('#');
  const end = hash > at ? hash : safe.length;
  const path = safe.slice(at + 1, end).split('/').map((seg) => {
    const m = /^([^[]*)(\[.*\])?$/.exec(seg)!;
    return looksGenerated(m[1]!) ? `*${m[2] ?? ''}` : seg;
  });
  return `${safe.slice(0, at + 1)}${path.join('/')}${safe.slice(end)}`;
}

/** A field pattern as a path selector that will match again: keys that look generated become `*` (one segment). */
export function pathGlob(pattern: string): string {
  const segs = splitPath(pattern);
  if (!segs.some((s) => !s.startsWith('[') && looksGenerated(s))) return pattern;
  // `*` written bare (`a.*.b`): joinPath would quote it as a key.
  return segs.reduce<string>((p, s) => (s.startsWith('[') ? `${p}${s}` : looksGenerated(s) ? (p ? `${p}.*` : '*') : joinPath(p, s)), '');
}
