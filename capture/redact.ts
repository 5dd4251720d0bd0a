// Redaction of secrets in recorded traffic (docs/capture.md "What the proxy
// guarantees": redacted by default).
//
// A secret becomes `<redacted:XXXXXXXX>`: the first 8 hex digits of
// HMAC-SHA256(key, value), with one key per user under bb's home. The same
// secret therefore maps to the same placeholder in the old and the new
// capture, so diffs keep working while values stay out of the files.
// Only string values are redacted: `token: 5` and `prompt_tokens: 11` stay.
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Extra names to redact on top of the built-in lists (all matched case-insensitively, whole names). */
export interface RedactConfig {
  /** Extra header names whose values are redacted. */
  headers?: string[];
  /** Extra query (and form) parameter names. */
  query?: string[];
  /** Extra JSON keys whose string values are redacted. */
  json?: string[];
}

/** Headers whose values are secrets. */
export const DEFAULT_REDACTED_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key'];

/** Query parameter names and JSON keys whose string values are secrets. */
export const DEFAULT_REDACTED_KEYS = [
  'password', 'passwd', 'secret', 'client_secret', 'api_key', 'apikey',
  'access_token', 'refresh_token', 'id_token', 'token',
];

/** The file under bb's home holding the redaction key. */
export const REDACT_KEY_FILE = 'redact.key';

/**
 * Reads the redaction key from `<bbHome>/redact.key`, creating it (32 random
 * bytes, hex, file 0600, folder 0700 when created) on first use.
 */
export function loadRedactKey(bbHome: string): Buffer {
  return loadRedactKeyFile(join(bbHome, REDACT_KEY_FILE), true);
}

/** Reads a redaction key file; creates it (and its folder) when `create` and it is missing. */
export function loadRedactKeyFile(path: string, create: boolean): Buffer {
  if (!existsSync(path)) {
    if (!create) throw new Error(`redaction key ${path} is missing`);
    createKeyFile(path);
  }
  const hex = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`redaction key ${path} is not 64 hex digits`);
  return Buffer.from(hex, 'hex');
}

// Written whole under a temporary name, then linked into place: link fails
// when the key exists, so of several captures starting at once on a fresh
// home one wins and the others read its key, never a half-written file.
function createKeyFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, randomBytes(32).toString('hex') + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch (err) {
      // Another capture made it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Parses CLI/config specs like `header:X-Token`, `query:sig`, `json:session_key` into a RedactConfig. */
export function parseRedactSpecs(specs: string[]): RedactConfig {
  const config: Required<RedactConfig> = { headers: [], query: [], json: [] };
  for (const spec of specs) {
    const m = /^(header|query|json):(.+)$/.exec(spec);
    if (!m) throw new Error(`--redact takes header:NAME, query:NAME or json:KEY, got '${spec}'`);
    const list = m[1] === 'header' ? config.headers : m[1] === 'query' ? config.query : config.json;
    list.push(m[2]!);
  }
  return config;
}

/** Replaces secret values; made once per HAR written. */
export class Redactor {
  private readonly headerNames: Set<string>;
  private readonly queryNames: Set<string>;
  private readonly jsonKeys: Set<string>;
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly key: Buffer,
    config: RedactConfig = {},
  ) {
    const lower = (xs: string[] | undefined) => (xs ?? []).map((x) => x.toLowerCase());
    this.headerNames = new Set([...DEFAULT_REDACTED_HEADERS, ...lower(config.headers)]);
    this.queryNames = new Set([...DEFAULT_REDACTED_KEYS, ...lower(config.query)]);
    this.jsonKeys = new Set([...DEFAULT_REDACTED_KEYS, ...lower(config.json)]);
  }

  /** The placeholder for one secret value. */
  placeholder(value: string): string {
    let p = this.cache.get(value);
    if (p === undefined) {
      p = `<redacted:${createHmac('sha256', this.key).update(value, 'utf8').digest('hex').slice(0, 8)}>`;
      // Bounded: secrets repeat (one session cookie), so a small cache is plenty.
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(value, p);
    }
    return p;
  }

  /** True when a header's value is a secret. */
  isSecretHeader(name: string): boolean {
    return this.headerNames.has(name.toLowerCase());
  }

  /** True when a query/form parameter's value is a secret. */
  isSecretParam(name: string): boolean {
    return this.queryNames.has(name.toLowerCase());
  }

  /** True when a JSON key's string value is a secret. */
  isSecretJsonKey(key: string): boolean {
    return this.jsonKeys.has(key.toLowerCase());
  }

  /**
   * Redacts one header value. Cookie keeps cookie names, Set-Cookie keeps its
   * attributes, Authorization keeps its scheme word ("Bearer <redacted:...>").
   */
  headerValue(name: string, value: string): string {
    const lower = name.toLowerCase();
    if (!this.headerNames.has(lower)) return value;
    if (lower === 'cookie') return value.split(';').map((part) => this.pairWithPlaceholder(part)).join(';');
    if (lower === 'set-cookie') {
      const semi = value.indexOf(';');
      return semi < 0 ? this.pairWithPlaceholder(value) : this.pairWithPlaceholder(value.slice(0, semi)) + value.slice(semi);
    }
    if (lower === 'authorization' || lower === 'proxy-authorization') {
      const m = /^([A-Za-z][A-Za-z0-9._~+-]*) +(\S.*)$/.exec(value);
      if (m) return `${m[1]} ${this.placeholder(m[2]!)}`;
    }
    return this.placeholder(value);
  }

  /**
   * "name=value" with the value (trimmed) a placeholder; a part without "="
   * stays as it is, and so does an empty value: `sid=` (a cookie cleared) is
   * no secret, and a placeholder would make it look set.
   */
  private pairWithPlaceholder(part: string): string {
    const eq = part.indexOf('=');
    const value = part.slice(eq + 1).trim();
    return eq < 0 || value === '' ? part : `${part.slice(0, eq)}=${this.placeholder(value)}`;
  }

  /** Redacts the values of secret parameters in a raw query string ("a=1&token=x"); keeps the rest byte for byte. */
  queryString(raw: string): string {
    return raw
      .split('&')
      .map((part) => {
        const eq = part.indexOf('=');
        if (eq < 0) return part;
        const name = safeDecode(part.slice(0, eq));
        if (!this.isSecretParam(name)) return part;
        return `${part.slice(0, eq)}=${this.placeholder(safeDecode(part.slice(eq + 1)))}`;
      })
      .join('&');
  }

  /**
   * Redacts a parsed JSON value in place: string values under secret keys.
   * Returns true when anything changed.
   */
  jsonValue(value: unknown): boolean {
    let changed = false;
    const walk = (v: unknown, depth: number): void => {
      // Bounded depth: captured content is hostile input.
      if (depth > 200 || v === null || typeof v !== 'object') return;
      if (Array.isArray(v)) {
        for (const item of v) walk(item, depth + 1);
        return;
      }
      const obj = v as Record<string, unknown>;
      for (const key of Object.keys(obj)) {
        const item = obj[key];
        if (typeof item === 'string' && this.jsonKeys.has(key.toLowerCase())) {
          obj[key] = this.placeholder(item);
          changed = true;
        } else {
          walk(item, depth + 1);
        }
      }
    };
    walk(value, 0);
    return changed;
  }

  /** Redacts a JSON text; returns the re-serialized text when something changed, else undefined. */
  jsonText(text: string): string | undefined {
    const first = text.trimStart()[0];
    if (first !== '{' && first !== '[') return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    return this.jsonValue(parsed) ? JSON.stringify(parsed) : undefined;
  }

  /** Redacts JSON Lines / NDJSON text line by line; undefined when nothing changed. */
  jsonLinesText(text: string): string | undefined {
    let changed = false;
    const lines = text.split('\n').map((line) => {
      const r = this.jsonText(line);
      if (r === undefined) return line;
      changed = true;
      return r;
    });
    return changed ? lines.join('\n') : undefined;
  }

  /** Redacts the JSON `data:` lines of an event stream's text; undefined when nothing changed. */
  eventStreamText(text: string): string | undefined {
    let changed = false;
    const out = text.replace(/^(data: ?)(.*)$/gm, (whole, prefix: string, data: string) => {
      const r = this.jsonText(data);
      if (r === undefined) return whole;
      changed = true;
      return prefix + r;
    });
    return changed ? out : undefined;
  }
}

/** decodeURIComponent with '+' as space, falling back to the raw text on malformed escapes. */
export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
