// Cookies as fields (docs/diff.md "Cookies"): `Cookie` parses into name →
// value (`request.cookies.sid`), each `Set-Cookie` into its value and its
// attributes (`response.cookies.sid.max-age`), so a lost attribute is its
// own row instead of one changed header line, and a varying Expires cannot
// hide it. Names and values go through the side's value walk like any
// string (a redaction placeholder, a uuid, a timestamp); Expires compares
// as the lifetime it gives (`<TS+1h>`), since two runs set it a few seconds
// apart. Parsing follows RFC 6265 §5.2 (Set-Cookie) and §5.4 (Cookie).
import type { HarEntry, HarNameValue } from '../../capture/index.js';
import type { MultiValue, NormalizedSetCookie } from '../types.js';
import type { NormalizeContext } from './context.js';
import { normalizeString } from './walk.js';
import { DAY_MS, TIMESTAMP } from './timestamps.js';
import { getOwn, setOwn } from '../../core/index.js';

/** The headers the cookies rule takes out of `headers` (unless the config masks them). */
export const COOKIE_HEADERS = ['cookie', 'set-cookie'];

/** True when header `name` (lower case) is compared as cookies rather than as a header. */
export function comparedAsCookies(name: string, ctx: NormalizeContext): boolean {
  return ctx.rules.cookies && COOKIE_HEADERS.includes(name) && !ctx.rules.maskedHeaders.has(name);
}

// Names come from the peer: a cookie or attribute called __proto__ is a field like any other (core/own-keys.ts).
function add<T>(out: Record<string, T | T[]>, name: string, value: T): void {
  const prev = getOwn(out, name) as T | T[] | undefined;
  setOwn(out, name, prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]);
}

/** "name=value" split at its first "=" (RFC 6265 §5.2 steps 2–5): both trimmed; no "=": the whole part is the name, the value "". */
function nameValue(part: string): [string, string] {
  const eq = part.indexOf('=');
  return eq < 0 ? [part.trim(), ''] : [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
}

/** The request's Cookie headers (HTTP/2 may split one into several, RFC 9113 §8.2.3) as name → value; undefined when it sent none. */
export function requestCookies(headers: readonly HarNameValue[], ctx: NormalizeContext): Record<string, MultiValue> | undefined {
  let out: Record<string, MultiValue> | undefined;
  for (const h of headers) {
    if (h.name.toLowerCase() !== 'cookie') continue;
    out ??= {};
    for (const part of h.value.split(';')) {
      if (!part.trim()) continue;
      const [name, value] = nameValue(part);
      add(out, normalizeString(name, ctx.walk), normalizeString(value, ctx.walk));
    }
  }
  return out;
}

/** The response's Set-Cookie headers by cookie name; undefined when it set none. */
export function responseCookies(e: HarEntry, ctx: NormalizeContext): Record<string, NormalizedSetCookie | NormalizedSetCookie[]> | undefined {
  let out: Record<string, NormalizedSetCookie | NormalizedSetCookie[]> | undefined;
  for (const h of e.response.headers) {
    if (h.name.toLowerCase() !== 'set-cookie') continue;
    out ??= {};
    const [pair, ...attributes] = h.value.split(';');
    const [name, value] = nameValue(pair!);
    const cookie: NormalizedSetCookie = { value: normalizeString(value, ctx.walk) };
    for (const a of attributes) {
      if (!a.trim()) continue;
      const [key, raw] = nameValue(a);
      const attr = key.toLowerCase();
      // A flag (Secure, HttpOnly, Partitioned) has no "="; the last of a repeated attribute wins (§5.3).
      if (!a.includes('=')) setOwn(cookie, attr, true);
      else if (attr === 'expires' && ctx.rules.cookieLifetimes) setOwn(cookie, attr, lifetime(raw, responseTime(e)) ?? normalizeString(raw, ctx.walk));
      else setOwn(cookie, attr, normalizeString(raw, ctx.walk));
    }
    add(out, normalizeString(name, ctx.walk), cookie);
  }
  return out;
}

/** When the server answered: its Date header (the clock Expires was computed on), else when the request started; NaN when neither parses. */
/** When a response was given: its Date header, else when its exchange started (epoch ms). */
export function responseTime(e: HarEntry): number {
  const date = e.response.headers.find((h) => h.name.toLowerCase() === 'date');
  const t = date ? Date.parse(date.value) : NaN;
  return Number.isFinite(t) ? t : Date.parse(e.startedDateTime);
}

// Browsers cap a cookie's lifetime at 400 days (RFC 6265bis §5.5): a date
// further out (9999-12-31), or more than a day in the past (1970-01-01, a
// deletion), was written as a date, not computed from now.
const LONGEST_LIFETIME_MS = 400 * DAY_MS + DAY_MS;

/**
 * An Expires date as the lifetime it gives from `from` (`<TS+30d>`,
 * `<TS+1h30m>`, `<TS>` under half a minute), rounded to the minute: the server
 * computed it from its clock, a second or two apart from its Date header.
 * Undefined for a date that does not parse or lies outside a lifetime's range.
 */
export function lifetime(expires: string, from: number): string | undefined {
  const t = Date.parse(expires);
  if (!Number.isFinite(t) || !Number.isFinite(from)) return undefined;
  const delta = t - from;
  if (delta < -DAY_MS || delta > LONGEST_LIFETIME_MS) return undefined;
  const minutes = Math.round(delta / 60_000);
  if (minutes === 0) return TIMESTAMP;
  const m = Math.abs(minutes);
  const parts = [[Math.floor(m / 1440), 'd'], [Math.floor((m % 1440) / 60), 'h'], [m % 60, 'm']] as const;
  const span = parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`).join('');
  return `<TS${minutes < 0 ? '-' : '+'}${span}>`;
}
