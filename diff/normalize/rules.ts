// The normalizing rules: built-in defaults (each named, so a config can
// switch it off) plus what the config adds, compiled once into a RuleSet.
//
// Key rules replace the value under a matching key at any depth; value
// patterns rewrite inside strings and object keys; ordinal patterns leave
// markers (see ordinals.ts) that become <CLASS:n>. The `keep` list wins over
// everything: values under those keys are compared verbatim.
import type { NormalizeConfig } from '../config-types.js';
import type { OrdinalTable } from './ordinals.js';


/** The ordinal class of Engine.IO session ids (the `sid` of the open packet and of every later URL). */
export const EIO_SID = 'EIO_SID';

/** Names of the built-in rules, for `normalize.disable`. */
export const BUILTIN_RULE_NAMES = [
  'timestamp-keys',
  'epoch-ms-keys',
  'request-id-keys',
  'iso-time',
  'multipart-boundary',
  'server-home',
  'ipv4-mapped-loopback',
  'loopback-port',
  'session-id',
  'ulid',
  'uuid',
  'volatile-headers',
  'ws-ping-pong',
];

/** Keys compared verbatim by default (sequence numbers, cursors, counts, codes, event names). */
export const DEFAULT_KEEP = [
  'seq', 'cursor', 'protocol_version', 'protocolVersion', 'code', 'status', 'type', 'event', 'kind',
  'prompt_tokens', 'completion_tokens', 'total_tokens', 'input_tokens', 'output_tokens', 'version',
];

/** Headers that vary per connection or per response whatever the server does. */
export const VOLATILE_HEADERS = [
  'date', 'age', 'etag', 'last-modified', 'expires',
  // hop-by-hop: the proxy (or the client library) may add or change them.
  'connection', 'keep-alive',
  // random per WebSocket handshake (RFC 6455 §4.1, §4.2.2).
  'sec-websocket-key', 'sec-websocket-accept',
];

/** Headers that carry request ids (masked as <ID> under request-id-keys). */
export const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-correlation-id', 'x-trace-id', 'traceparent', 'x-amzn-trace-id', 'cf-ray'];

// timestamp-like: createdAt, created_at, startTime, expiry_date, timestamp, ts...
const TIMESTAMP_KEY = /^(timestamp|ts|date|datetime|time_?stamp|last_?modified)$|(At|_at|Time|_time|Date|_date|Timestamp|_timestamp)$/;
// epoch ms: time, since, until, and anything ending in Ms / _ms (durationMs, ttft_ms).
const EPOCH_MS_KEY = /^(time|since|until|now|epoch)$|(Ms|_ms|MS)$/;
const REQUEST_ID_KEY = /^(x[-_])?(request|req|trace|correlation|span)[-_]?id$/i;

/** A multipart boundary parameter (random per request): `boundary=X` or `boundary="X"`. */
const MULTIPART_BOUNDARY = /(boundary=)("?)[^";,\s]+"?/gi;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g;
const IPV4_MAPPED = /::ffff:127\.0\.0\.1/gi;
const LOOPBACK_PORT = /(?<![\w.])(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}\b/g;
const SESSION_ID = /\bsession_[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b/gi;
// Not \b: ids often come prefixed (msg_<ULID>, conn_<uuid>) and '_' is a word character.
const ULID = /(?<![0-9A-Za-z])[0-7][0-9A-HJKMNP-TV-Z]{25}(?![0-9A-Za-z])/g;
const UUID = /(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])/gi;

/** One key rule, compiled. */
export interface KeyRule {
  /** Rule name. */
  name: string;
  /** Whether the value under `key` is replaced; looks at the value's JSON type only (answers are memoized per key and type). */
  test: (key: string, value: unknown) => boolean;
  /** The placeholder. */
  replace: string;
}

/** One value rule, compiled: rewrites a string. */
export interface ValueRule {
  /** Rule name. */
  name: string;
  /** Rewrites one string; `homes` are this side's server home directories. Pure given its arguments (results are memoized). */
  apply: (s: string, homes: readonly string[], table: OrdinalTable) => string;
  /** No string shorter than this is changed (given the homes); absent: any string may be. */
  shortest?: (homes: readonly string[]) => number;
}

/** Everything normalize needs, compiled once per run. */
export interface RuleSet {
  /** Key rules in order. */
  keyRules: KeyRule[];
  /** Value rules in order. */
  valueRules: ValueRule[];
  /** Keys compared verbatim (exact names). */
  keep: Set<string>;
  /** Lower-case header name → placeholder. */
  maskedHeaders: Map<string, string>;
  /** Mask content-length of bodies that are compared parsed (text, JSON, events). */
  maskBodyLength: boolean;
  /** Drop WebSocket ping/pong (timer-driven) from comparison. */
  dropPingPong: boolean;
  /** Server home directories from the config (both sides). */
  configHomes: string[];
  /** The ordinal classes the value rules mark, in rule order: an OrdinalTable seeded with them numbers classes alike in every thread. */
  ordinalClasses: string[];
  /**
   * Which key rule answers a key, by key and the value's JSON type slot (see
   * typeSlot): the answer depends on the rules alone, so every side and every
   * walk over these rules shares it. Bounded like the walks' string memos.
   */
  keyMemo: Map<string, Array<KeyRule | null | undefined>>;
}

function isScalar(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

// A cheap test that must pass before a regex runs (most strings hold no id at all).
type Hint = (s: string) => boolean;
const always: Hint = () => true;

// `shortest`: the length of the shortest string the built-in pattern matches (config patterns have none).
function regexRule(name: string, re: RegExp, replace: string, hint: Hint = always, shortest?: number): ValueRule {
  // String#replace with a global regex always starts at 0 and resets lastIndex.
  return { name, apply: (s) => (hint(s) ? s.replace(re, replace) : s), ...(shortest !== undefined ? { shortest: () => shortest } : {}) };
}

function ordinalRule(name: string, re: RegExp, cls: string, hint: Hint = always, shortest?: number): ValueRule & { cls: string } {
  return {
    name,
    cls,
    apply: (s, _homes, table) => (hint(s) ? s.replace(re, (m) => table.mark(cls, m)) : s),
    ...(shortest !== undefined ? { shortest: () => shortest } : {}),
  };
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Compiles the built-ins minus `disable`, plus the config's rules. Config is already validated. */
export function compileRules(cfg: NormalizeConfig = {}): RuleSet {
  const off = new Set(cfg.disable ?? []);
  const on = (name: string) => !off.has(name);
  const keyRules: KeyRule[] = [];
  for (const k of cfg.keys ?? []) {
    const re = k.pattern ? new RegExp(k.pattern) : undefined;
    const exact = k.key?.toLowerCase();
    keyRules.push({
      name: `key:${k.key ?? k.pattern}`,
      test: (key, v) => v !== null && (exact !== undefined ? key.toLowerCase() === exact : re!.test(key)),
      replace: k.replace,
    });
  }
  if (on('timestamp-keys')) keyRules.push({ name: 'timestamp-keys', test: (k, v) => isScalar(v) && TIMESTAMP_KEY.test(k), replace: '<TS>' });
  if (on('epoch-ms-keys')) keyRules.push({ name: 'epoch-ms-keys', test: (k, v) => typeof v === 'number' && EPOCH_MS_KEY.test(k), replace: '<MS>' });
  if (on('request-id-keys')) keyRules.push({ name: 'request-id-keys', test: (k, v) => isScalar(v) && REQUEST_ID_KEY.test(k), replace: '<ID>' });

  const valueRules: ValueRule[] = [];
  if (on('server-home')) {
    valueRules.push({
      name: 'server-home',
      apply: (s, homes) => {
        for (const h of homes) if (h && s.includes(h)) s = s.split(h).join('<HOME>');
        return s;
      },
      shortest: (homes) => Math.min(...homes.filter((h) => h).map((h) => h.length)),
    });
  }
  // Shortest matches: '::ffff:127.0.0.1', '[::1]:0', 'boundary=x', '2020-01-01T00:00'.
  if (on('ipv4-mapped-loopback')) valueRules.push(regexRule('ipv4-mapped-loopback', IPV4_MAPPED, '127.0.0.1', (s) => s.includes('::'), 16));
  if (on('loopback-port')) valueRules.push(regexRule('loopback-port', LOOPBACK_PORT, '$1:<PORT>', (s) => s.includes(':') && (s.includes('127.0.0.1') || s.includes('localhost') || s.includes('[::1]')), 7));
  if (on('multipart-boundary')) valueRules.push(regexRule('multipart-boundary', MULTIPART_BOUNDARY, '$1$2<BOUNDARY>$2', (s) => s.includes('oundary='), 10));
  if (on('iso-time')) valueRules.push(regexRule('iso-time', ISO_TIME, '<TS>', (s) => s.length >= 16 && s.includes('-') && s.includes(':'), 16));
  (cfg.patterns ?? []).forEach((p, i) => {
    const re = new RegExp(p.regex, `g${p.flags ?? ''}`);
    const name = p.name ?? `pattern[${i}]`;
    valueRules.push(p.ordinal ? ordinalRule(name, re, p.ordinal) : regexRule(name, re, p.replace ?? '<MASKED>'));
  });
  // Shortest matches: 'session_' and 32 hex digits, 26 ULID characters, 36 of a UUID.
  if (on('session-id')) valueRules.push(ordinalRule('session-id', SESSION_ID, 'SID', (s) => s.length >= 40 && /session_/i.test(s), 40));
  if (on('ulid')) valueRules.push(ordinalRule('ulid', ULID, 'ULID', (s) => s.length >= 26, 26));
  if (on('uuid')) valueRules.push(ordinalRule('uuid', UUID, 'UUID', (s) => s.length >= 36 && s.includes('-'), 36));

  const maskedHeaders = new Map<string, string>();
  if (on('volatile-headers')) for (const h of VOLATILE_HEADERS) maskedHeaders.set(h, '<VOLATILE>');
  if (on('request-id-keys')) for (const h of REQUEST_ID_HEADERS) maskedHeaders.set(h, '<ID>');
  for (const h of cfg.headers ?? []) maskedHeaders.set(h.toLowerCase(), '<MASKED>');

  const homes = cfg.serverHome === undefined ? [] : Array.isArray(cfg.serverHome) ? cfg.serverHome : [cfg.serverHome];
  return {
    keyRules,
    valueRules,
    keep: new Set([...DEFAULT_KEEP, ...(cfg.keep ?? [])]),
    maskedHeaders,
    maskBodyLength: on('volatile-headers'),
    dropPingPong: on('ws-ping-pong'),
    configHomes: homes,
    // EIO_SID: Engine.IO session ids (entry.ts), numbered like any ordinal.
    ordinalClasses: [...new Set([...valueRules.flatMap((r) => ('cls' in r && typeof r.cls === 'string' ? [r.cls] : [])), EIO_SID])],
    keyMemo: new Map(),
  };
}

// Normalizing is pure given the rules, the ordinal table and the homes (a
// marker names its value, never a number), so a string seen again (object
// keys, ids from a pool, enum values) is answered from a memo instead of
// running every pattern over it again. Bounded: short strings only, and the
// memo starts over when full.
const MEMO_MAX_LENGTH = 512;
const MEMO_MAX_SIZE = 100_000;

/**
 * What normalizing values on one side needs: the rules, this side's homes,
 * the run's ordinal table, and the memo of strings already normalized with
 * that combination. A NormalizeContext holds one per side (valueWalk).
 */
export interface ValueWalk {
  readonly rules: RuleSet;
  readonly homes: readonly string[];
  readonly table: OrdinalTable;
  readonly strings: Map<string, string>;
  /** Strings shorter than this are left as they are by every value rule (most keys and many values: no memo lookup). */
  readonly shortest: number;
}

/** A walk with an empty string memo. */
export function valueWalk(rules: RuleSet, homes: readonly string[], table: OrdinalTable): ValueWalk {
  const shortest = Math.min(...rules.valueRules.map((r) => (r.shortest ? r.shortest(homes) : 0)));
  return { rules, homes, table, strings: new Map(), shortest };
}

function applyValueRules(s: string, w: ValueWalk): string {
  for (const r of w.rules.valueRules) s = r.apply(s, w.homes, w.table);
  return s;
}

/** Applies the value rules to one string. */
export function normalizeString(s: string, w: ValueWalk): string {
  if (s.length < w.shortest) return s;
  if (s.length > MEMO_MAX_LENGTH) return applyValueRules(s, w);
  let out = w.strings.get(s);
  if (out === undefined) {
    out = applyValueRules(s, w);
    if (w.strings.size >= MEMO_MAX_SIZE) w.strings.clear();
    w.strings.set(s, out);
  }
  return out;
}

// A key rule's test looks at the key and the value's JSON type only, so its
// answer is kept per key and type (slot: string, number, boolean, null, array, object, other).
function typeSlot(v: unknown): number {
  switch (typeof v) {
    case 'string': return 0;
    case 'number': return 1;
    case 'boolean': return 2;
    case 'object': return v === null ? 3 : Array.isArray(v) ? 4 : 5;
    default: return 6;
  }
}

function keyRuleFor(k: string, x: unknown, w: ValueWalk): KeyRule | null {
  const memo = w.rules.keyMemo;
  let slots = memo.get(k);
  if (!slots) {
    if (memo.size >= MEMO_MAX_SIZE) memo.clear();
    memo.set(k, (slots = []));
  }
  const t = typeSlot(x);
  let rule = slots[t];
  if (rule === undefined) rule = slots[t] = w.rules.keyRules.find((r) => r.test(k, x)) ?? null;
  return rule;
}

/** Applies key rules and value patterns to a parsed JSON value, at any depth. */
export function normalizeValue(v: unknown, w: ValueWalk): unknown {
  if (typeof v === 'string') return normalizeString(v, w);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = normalizeValue(v[i], w);
    return out;
  }
  const src = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(src)) {
    const x = src[k];
    const nk = normalizeString(k, w);
    // `keep` protects values (sequence numbers, cursors, type names); objects and
    // arrays under a kept key are still normalized inside.
    if ((x === null || typeof x !== 'object') && w.rules.keep.has(k)) {
      out[nk] = x;
      continue;
    }
    const rule = keyRuleFor(k, x, w);
    out[nk] = rule ? rule.replace : normalizeValue(x, w);
  }
  return out;
}

/** Home directories for one side: the capture's own, then the config's, longest first. */
export function homesFor(captureHome: string | undefined, extra: readonly string[] = [], rules: RuleSet): string[] {
  const all = [captureHome, ...extra, ...rules.configHomes].filter((h): h is string => !!h && h !== '/');
  return [...new Set(all)].sort((a, b) => b.length - a.length);
}

export { escapeRegex };
