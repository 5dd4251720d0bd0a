// Small pure helpers that turn wire-level pieces (raw headers, request
// targets, cookies, a refused packet) into HAR's structures.
import type { HarCookie, HarNameValue } from './har.js';
import { safeDecode } from './redact.js';

import { headerPairs, headerValue, headerValues } from '../core/index.js';

export { headerPairs, headerValue, headerValues };

/** Byte size of a head as HTTP/1.x serializes it: start line, "name: value" lines, blank line. */
export function headSize(startLine: string, raw: readonly string[]): number {
  let size = Buffer.byteLength(startLine, 'latin1') + 2 + 2;
  for (let i = 0; i + 1 < raw.length; i += 2) size += Buffer.byteLength(raw[i]!, 'latin1') + 2 + Buffer.byteLength(raw[i + 1]!, 'latin1') + 2;
  return size;
}

/** The URL as the client addressed it, and whether the raw target must be kept beside it. */
export function requestUrl(
  scheme: string,
  target: string,
  rawHeaders: readonly string[],
  fallbackOrigin: string,
): { url: string; keepTarget: boolean } {
  // Absolute-form (forward proxy): the client addressed exactly this.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return { url: target, keepTarget: false };
  // h2 names the host in :authority (RFC 9113 section 8.3.1), Host only as a fallback.
  const host = headerValue(rawHeaders, ':authority') ?? headerValue(rawHeaders, 'host');
  const origin = host ? `${scheme}://${host}` : fallbackOrigin.replace(/\/+$/, '');
  if (target.startsWith('/')) return { url: origin + target, keepTarget: false };
  // asterisk-form (OPTIONS *) and authority-form (CONNECT host:port) are not paths.
  return { url: origin + '/', keepTarget: true };
}

/** Splits a URL into everything before the query, the raw query (without '?'), and the fragment. */
export function splitQuery(url: string): { base: string; query: string | undefined; hash: string } {
  const hashAt = url.indexOf('#');
  const hash = hashAt < 0 ? '' : url.slice(hashAt);
  const noHash = hashAt < 0 ? url : url.slice(0, hashAt);
  const q = noHash.indexOf('?');
  if (q < 0) return { base: noHash, query: undefined, hash };
  return { base: noHash.slice(0, q), query: noHash.slice(q + 1), hash };
}

/** A raw query or form body ("a=1&b=x%20y") → decoded pairs, in order. */
export function parseParams(raw: string | undefined): HarNameValue[] {
  if (!raw) return [];
  const out: HarNameValue[] = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    out.push(
      eq < 0
        ? { name: safeDecode(part), value: '' }
        : { name: safeDecode(part.slice(0, eq)), value: safeDecode(part.slice(eq + 1)) },
    );
  }
  return out;
}

/** The cookies of Cookie headers ("a=1; b=2"). */
export function parseCookieHeader(values: readonly string[]): HarCookie[] {
  const out: HarCookie[] = [];
  for (const value of values) {
    for (const part of value.split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      out.push({ name: part.slice(0, eq).trim(), value: part.slice(eq + 1).trim() });
    }
  }
  return out;
}

/** One Set-Cookie header → a HAR cookie with its attributes. */
export function parseSetCookie(value: string): HarCookie | undefined {
  const [pair, ...attrs] = value.split(';');
  const eq = pair!.indexOf('=');
  if (eq < 0) return undefined;
  const cookie: HarCookie = { name: pair!.slice(0, eq).trim(), value: pair!.slice(eq + 1).trim() };
  for (const attr of attrs) {
    const at = attr.indexOf('=');
    const key = (at < 0 ? attr : attr.slice(0, at)).trim().toLowerCase();
    const val = at < 0 ? '' : attr.slice(at + 1).trim();
    if (key === 'path') cookie.path = val;
    else if (key === 'domain') cookie.domain = val;
    else if (key === 'expires') {
      const d = new Date(val);
      cookie.expires = Number.isNaN(d.getTime()) ? val : d.toISOString();
    } else if (key === 'httponly') cookie.httpOnly = true;
    else if (key === 'secure') cookie.secure = true;
    else if (key === 'samesite') cookie.sameSite = val;
  }
  return cookie;
}

/** What a refused packet says about itself, when its head parses at all. */
export interface ParsedPacket {
  /** Request method from the request line. */
  method: string;
  /** Request-target from the request line. */
  target: string;
  /** "1.1" or "1.0" (or whatever the line said). */
  httpVersion: string;
  /** Header lines that look like "name: value", in order. */
  rawHeaders: string[];
}

/** Reads the request line and header lines out of bytes Node's parser refused. */
export function parseRefusedPacket(packet: Buffer | undefined): ParsedPacket | undefined {
  if (!packet || packet.length === 0) return undefined;
  const head = packet.toString('latin1', 0, Math.min(packet.length, 64 * 1024));
  const end = head.search(/\r?\n\r?\n/);
  const lines = (end < 0 ? head : head.slice(0, end)).split(/\r?\n/);
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/(\d\.\d)$/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const rawHeaders: string[] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    rawHeaders.push(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return { method: m[1]!, target: m[2]!, httpVersion: m[3]!, rawHeaders };
}

/**
 * Sec-WebSocket-Extensions ("permessage-deflate; client_max_window_bits=15")
 * → { "permessage-deflate": { client_max_window_bits: 15 } } (RFC 6455 §9.1).
 */
export function parseExtensions(header: string | undefined): Record<string, Record<string, string | number | true>> {
  const out: Record<string, Record<string, string | number | true>> = {};
  if (!header) return out;
  for (const ext of header.split(',')) {
    const [name, ...params] = ext.split(';').map((s) => s.trim());
    if (!name) continue;
    const parsed: Record<string, string | number | true> = {};
    for (const param of params) {
      if (param === '') continue;
      const eq = param.indexOf('=');
      if (eq < 0) {
        parsed[param] = true;
        continue;
      }
      const value = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      parsed[param.slice(0, eq).trim()] = /^\d+$/.test(value) ? Number(value) : value;
    }
    out[name] = parsed;
  }
  return out;
}
