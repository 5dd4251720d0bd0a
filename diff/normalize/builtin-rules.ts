// The built-in normalizing rules, one table: each rule's name (what
// `normalize.disable` takes and docs/diff.md "Built-in rules" lists, in this
// order), and what it does: a key rule, a value rule, headers it masks, or a
// switch. rules.ts compiles the rules left on into a RuleSet; nothing else
// names a built-in rule.
//
// Value rules run over every string in `step` order, the config's patterns at
// CONFIG_PATTERNS_STEP: the rewrites that make a value comparable (homes,
// loopback addresses, boundaries, times) before them, the built-ins that
// recognise whole tokens (ordinal ids, generated shapes) after, so a config
// pattern claims its ids (`conn_<uuid>` as its own class) first. A config
// match that would cut one of those tokens in two is left out
// (config-patterns.ts): a pattern may take a whole uuid, never its tail.
import { ID_KEY_TOKEN_CLASSES, NUMERIC_ID_CLASSES, SHAPE_CLASSES, SHORTEST_SHAPE, shapeSpans, type ShapeSpan } from './shapes.js';
import { placeholderIdentity } from './keyed.js';
import { WRITTEN_NUMBER } from './json.js';
import { PLACEHOLDER_SOURCE } from '../../capture/index.js';
import { epochsInText, httpDatesInText, HTTP_DATE_SHORTEST, ISO_TIME_SHORTEST, isoTimesInText, RUNTIME_DATE_SHORTEST, runtimeDatesInText, mayHoldEpoch, mayHoldHttpDate, mayHoldIsoTime, mayHoldRuntimeDate, wholeIsoTime, type CaptureWindow } from './timestamps.js';

/** A cheap test that must pass before a value rule's regex runs (most strings hold no id at all). */
export type Hint = (s: string) => boolean;

/** A built-in key rule: the value under a matching key is replaced. */
export interface BuiltinKeyRule {
  /** Whether the value under `key` is replaced; looks at the value's JSON type only (rules.ts memoizes by key and type). */
  test: (key: string, value: unknown) => boolean;
  /**
   * Whether this value is what the key says it holds (a time, an id), asked of each value `test` took: one that is
   * not (an empty string, `false`, `0`, "Invalid Date", a fixed date years away) is compared as a value, so a
   * field that varies and then breaks is a finding, not `<TS>` on both sides.
   */
  accepts: (value: unknown, window: CaptureWindow | undefined) => boolean;
  /** The placeholder. */
  replace: string;
  /** Instead of the placeholder: the value with its varying parts replaced, normalized as any value then (graphql-tracing). */
  transform?: (value: unknown) => unknown;
}

/** A built-in value rule: a regex rewrite, an ordinal marking, or a rewrite of its own (server-home). */
export type BuiltinValueRule =
  | {
      /** Position among the value rules. */
      step: number;
      /** The pattern (global). */
      pattern: RegExp;
      /** The replacement (`$1` and the like allowed). */
      replace: string;
      /** Must pass before the pattern runs. */
      hint: Hint;
      /** The length of the shortest string the pattern matches. */
      shortest: number;
    }
  | {
      /** Position among the value rules. */
      step: number;
      /** The pattern (global). */
      pattern: RegExp;
      /** The ordinal class each match is marked as (ordinals.ts). */
      ordinal: string;
      /** A match's own identity, the same in every recording made under one key (keyed.ts): marked by it, not by the run's table. */
      keyed?: (match: string) => number;
      /** Must pass before the pattern runs. */
      hint: Hint;
      /** The length of the shortest string the pattern matches. */
      shortest: number;
    }
  | {
      /** Position among the value rules. */
      step: number;
      /** The tokens of a string to mark, each as an ordinal of its own class (shapes.ts). */
      spans: (s: string) => ShapeSpan[];
      /** Every class `spans` gives, in a fixed order (ordinal tables are seeded with them). */
      classes: readonly string[];
      /** Must pass before the spans are looked for. */
      hint: Hint;
      /** The length of the shortest string that holds a span. */
      shortest: number;
    }
  | {
      /** Position among the value rules. */
      step: number;
      /** Rewrites one string given this side's server homes and time window (timestamps.ts). */
      apply: (s: string, homes: readonly string[], window: CaptureWindow | undefined) => string;
      /** No string shorter than this (given the homes) is changed. */
      shortest: (homes: readonly string[]) => number;
    };

/** One built-in rule: its name and what it contributes when on. */
export interface BuiltinRule {
  /** The name `normalize.disable` takes. */
  name: string;
  /** A key rule. */
  key?: BuiltinKeyRule;
  /** A value rule. */
  value?: BuiltinValueRule;
  /** Lower-case header names whose values are replaced by `replace` (those `accepts` takes, when it is given). */
  headers?: { names: readonly string[]; replace: string; accepts?: (value: string) => boolean };
  /** Also mask content-length of bodies that are compared parsed (text, JSON, events). */
  maskBodyLength?: true;
  /** Drop WebSocket ping/pong (timer-driven) from comparison. */
  dropPingPong?: true;
  /** Numbers that are epoch seconds or milliseconds inside the side's time window → <TS>, under any key. */
  epochNumbers?: true;
  /** Cookie and Set-Cookie headers compared as fields (cookies.ts). */
  cookies?: true;
  /** A Set-Cookie's Expires compared as the lifetime it gives from the response's date (cookies.ts). */
  cookieLifetimes?: true;
  /**
   * Values a server issued and its client sent back compare through their binding, whatever their shape
   * (diff/bind); they are marked before the value rules from step `before` on (the generated-value shapes).
   */
  issued?: { before: number };
  /** Integers of 4+ digits (and digit strings) under id keys marked as ordinals of their type (shapes.ts numericIdShape). */
  numericIds?: { classes: readonly string[] };
  /** Tokens under id keys that no value rule marked, marked by their shape (shapes.ts idKeyTokenShape). */
  idKeyTokens?: { classes: readonly string[] };
}

/** The step of the generated-value shapes: the last value rule, after every rule that names what a value is. */
const GENERATED_STEP = 15;

/** Where the config's `normalize.patterns` run among the built-in value rules (no built-in has this step). */
export const CONFIG_PATTERNS_STEP = 10;

function isScalar(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** Headers that vary per connection or per response whatever the server does. */
const VOLATILE_HEADERS = [
  // (Expires is compared as the lifetime it gives from Date, as a cookie's: entry.ts.)
  'date', 'age', 'etag', 'last-modified',
  // the client's copies of those validators, sent back: whether the server honours one shows in its status (304 or 200).
  'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'if-range',
  // hop-by-hop: the proxy (or the client library) may add or change them.
  'connection', 'keep-alive',
  // random per WebSocket handshake (RFC 6455 §4.1, §4.2.2).
  'sec-websocket-key', 'sec-websocket-accept',
  // the deadline a gRPC call has left when it goes out (PROTOCOL-HTTP2.md "Timeout"): a clock reading, new on every run.
  'grpc-timeout',
  // how long the server took (W3C Server Timing's durations, Express's, Rails's, Envoy's): a stopwatch reading.
  'server-timing', 'x-response-time', 'x-runtime', 'x-envoy-upstream-service-time', 'x-kong-upstream-latency', 'x-kong-proxy-latency',
  // Fastly's: when the request reached the edge (epoch seconds) and how long it took there (`S1733612345.123,VS0,VE1`).
  'x-timer',
];

/**
 * Headers that carry request and trace ids (masked as <ID> under request-id-keys): the common names, W3C Trace
 * Context's (traceresponse is what an instrumented server answers with), Zipkin's B3, Jaeger's, Sentry's, Datadog's,
 * and the ids clouds and gateways stamp on an answer (AWS, Azure, Google Cloud, GitHub, Kong).
 */
const REQUEST_ID_HEADERS = [
  'x-request-id', 'request-id', 'x-correlation-id', 'x-trace-id', 'traceparent', 'tracestate', 'traceresponse', 'x-amzn-trace-id', 'cf-ray',
  'b3', 'x-b3-traceid', 'x-b3-spanid', 'x-b3-parentspanid', 'uber-trace-id', 'sentry-trace', 'x-datadog-trace-id', 'x-datadog-parent-id',
  'x-amz-request-id', 'x-amzn-requestid', 'x-amz-id-2', 'x-amz-cf-id', 'x-ms-request-id', 'x-ms-client-request-id', 'x-cloud-trace-context',
  'x-github-request-id', 'x-kong-request-id',
];

// timestamp-like: createdAt, created_at, startTime, expiry_date, timestamp, ts, .NET's ticks (createdTicks)...
const TIMESTAMP_KEY = /^(at|timestamp|ts|date|datetime|time_?stamp|last_?modified|ticks)$|(At|_at|Time|_time|Date|_date|Timestamp|_timestamp|Ticks|_ticks)$/;
// epoch ms: time, since, until, and anything ending in Ms / _ms (durationMs, ttft_ms), or in nanoseconds or
// microseconds (durationNs, render_nanos); a stopwatch reading: how long a search took (Elasticsearch's `took`), a
// step lasted (`elapsed`), a call waited (`latency`), the process has run (`uptime`), in any unit (`elapsedSeconds`,
// `latency_s`, `uptimeSec`).
const EPOCH_MS_KEY = /^(time|since|until|now|epoch)$|^(took|elapsed|latency|uptime)(_?(s|sec|secs|seconds|Sec|Secs|Seconds|S))?$|(Ms|_ms|MS|Ns|_ns|Nanos|_nanos|Micros|_micros)$/;
const REQUEST_ID_KEY = /^(x[-_])?(request|req|trace|correlation|span)[-_]?id$/i;
/** A duration as Go's time.Duration writes it (and Prometheus, and many logs): `54.141ms`, `1.5s`, `3h12m5.5s`, `850µs`. */
const DURATION_TEXT = /^(?:\d{1,15}(?:\.\d{1,15})?(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h)){1,6}$/;

/**
 * What an epoch-ms key holds when it is a time: a number as isTimeValue reads it, a duration written with its unit
 * (not zero), or a clock time of day (`"time": "21:33:01"`, `"now": "9:33:01 PM"`).
 */
function isStopwatchValue(v: unknown, w: CaptureWindow | undefined): boolean {
  if (typeof v === 'number') return isTimeValue(v, w);
  if (typeof v !== 'string') return false;
  return (DURATION_TEXT.test(v) && /[1-9]/.test(v)) || CLOCK_TIME.test(v.trim());
}

/** A clock time of day: `18:34`, `18:34:27`, `18:34:27.123`, `6:34:27 PM` (toLocaleTimeString's, its space a narrow no-break one in ICU's en-US). */
const CLOCK_TIME = /^\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:[ \u00a0\u202f]?[AaPp]\.?[Mm]\.?)?$/;
/** A number as text (epoch seconds or milliseconds written as a string). */
const NUMBER_TEXT = /^\d{1,19}(?:\.\d{1,9})?$/;

/**
 * A number a time-like key holds when it is a time: positive, and under 10^9 a duration or a relative time (what a
 * `*Time` or `*Ms` key holds that moves from run to run), above it an epoch in seconds, milliseconds, microseconds
 * or nanoseconds inside the side's window. `0`, `-1` and a fixed epoch years away are values.
 */
function isTimeNumber(n: number, w: CaptureWindow | undefined): boolean {
  if (!Number.isFinite(n) || n <= 0) return false;
  if (n < 1e9 || !w) return true;
  for (const t of [n * 1000, n, n / 1000, n / 1e6]) if (t >= w.from && t <= w.to) return true;
  // .NET's DateTime.Ticks: 100 ns steps since 0001-01-01 (18 digits today).
  const ticks = (n - TICKS_AT_UNIX_EPOCH) / 10_000;
  return n > TICKS_AT_UNIX_EPOCH && ticks >= w.from && ticks <= w.to;
}

/** DateTime.Ticks of 1970-01-01T00:00:00Z. */
const TICKS_AT_UNIX_EPOCH = 621_355_968_000_000_000;

/**
 * A value a timestamp-like key holds when it is a time: a number as isTimeNumber says, a clock time, or a string
 * that reads as a date or date-time (ISO 8601, HTTP dates, JavaScript's own forms) inside the side's window, which
 * has a day of slack either way (timestamps.ts). Not a time: booleans, empty or wordy strings ("never", "Invalid
 * Date"), a date years away (a birth date, an expiry in 2099: the `iso-time` rule reads those as values too).
 */
export function isTimeValue(v: unknown, w: CaptureWindow | undefined): boolean {
  if (typeof v === 'number') return isTimeNumber(v, w);
  if (typeof v !== 'string') return false;
  // The commonest form first, read as the iso-time rule reads it (no regex tests, no Date.parse).
  const iso = wholeIsoTime(v);
  if (iso !== undefined) return !w || (iso >= w.from && iso <= w.to);
  const s = v.trim();
  if (s.length === 0 || s.length > 64) return false;
  if (NUMBER_TEXT.test(s)) return isTimeNumber(Number(s), w);
  // A number a double does not hold, kept as written (json.ts): ticks and nanoseconds are that long.
  const written = WRITTEN_NUMBER.exec(s)?.[1];
  if (written !== undefined) return NUMBER_TEXT.test(written) && isTimeNumber(Number(written), w);
  if (CLOCK_TIME.test(s)) return true;
  if (s.length < 6 || !/\d/.test(s)) return false;
  const t = Date.parse(s);
  return Number.isFinite(t) && (!w || (t >= w.from && t <= w.to));
}

/**
 * What a health or debug endpoint reports of the process that answered: Node's `process.memoryUsage()` (bytes:
 * rss, heapTotal, heapUsed, arrayBuffers) and the process's id (pid, ppid). New in every run.
 */
const PROCESS_STAT_KEY = /^(rss|heapTotal|heapUsed|heap_total|heap_used|arrayBuffers|array_buffers|pid|ppid)$/;

/** Kubernetes' `metadata.resourceVersion`: the store's revision when the object last changed (etcd's), a decimal string. */
const RESOURCE_VERSION = /^\d{1,20}$/;

/** A number of the process or a count it reports: a positive integer. */
function isProcessStat(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Apollo's GraphQL tracing extension (`extensions.tracing`, apollo-tracing's format 1): when the request started and
 * ended, and how long each step and each resolver took (`duration`, `startOffset`: nanoseconds on a stopwatch).
 */
function isApolloTracing(v: unknown): boolean {
  return isObject(v) && v.version === 1 && typeof v.startTime === 'string' && typeof v.duration === 'number' && isObject(v.execution);
}

/** An Apollo trace with its stopwatch readings replaced by `<NS>` (a positive number only: anything else is compared). */
function withoutStopwatch(v: unknown): unknown {
  const t = v as Record<string, unknown>;
  const timed = (o: unknown): unknown => {
    if (!isObject(o)) return o;
    const out: Record<string, unknown> = { ...o };
    for (const k of ['duration', 'startOffset']) if (typeof out[k] === 'number' && (out[k] as number) >= 0) out[k] = '<NS>';
    return out;
  };
  const execution = t.execution as Record<string, unknown>;
  return {
    ...(timed(t) as Record<string, unknown>),
    ...(isObject(t.parsing) ? { parsing: timed(t.parsing) } : {}),
    ...(isObject(t.validation) ? { validation: timed(t.validation) } : {}),
    execution: { ...execution, ...(Array.isArray(execution.resolvers) ? { resolvers: execution.resolvers.map(timed) } : {}) },
  };
}

/** A number with a unit of time after it: what stopwatchesInText looks for at all. */
const STOPWATCH_HINT = /\d ?(?:[nu\u00b5\u03bcm]?s|sec|milli)/i;
/**
 * A stopwatch reading in a sentence: after a word that says so (`took`, `elapsed`, `generated in`, `rendered in`,
 * `response time`…) any number, after a bare `in` one with a fraction (`in 0.092s`: `retry in 5s` is a value), then
 * a unit of time up to seconds.
 */
const STOPWATCH_TEXT = /\b(took|elapsed:?|time taken:?|response time:?|render(?:ing)? time:?|(?:generated|rendered|served|completed|finished|executed|processed|loaded|answered) in|in)(\s{1,3})(\d{1,9}(?:[.,]\d{1,9})?)(\s?)(ns|\u00b5s|\u03bcs|us|ms|milliseconds?|s|secs?|seconds?)(?![A-Za-z\u00b5\u03bc])/gi;

/**
 * How long ago something happened, said as people read it (Rails' time_ago_in_words, Django's naturaltime, moment's
 * fromNow, a page's `3 days ago`): a count or `a`/`an`/`one`/`a few`, a unit from seconds to years, written out or
 * short (`5m ago`, `3 hrs ago`), then `ago`. It moves with the clock of the run that rendered it (seeded data is a
 * day older on the next day's run). `long ago`, `ago` alone and `Chicago` stay.
 */
const RELATIVE_TIME = /\b(?:(?:\d{1,4}|an?|one|a few)\s{1,2}(?:second|sec|minute|min|hour|hr|day|week|month|year)s?|\d{1,4}\s?(?:s|m|h|d|w|mo|y|mins?|hrs?|secs?))\s{1,2}ago\b/gi;

/** A sentence with its stopwatch readings (STOPWATCH_TEXT) as `<ELAPSED>`. */
export function stopwatchesInText(s: string): string {
  return s.replace(STOPWATCH_TEXT, (whole, word: string, gap: string, n: string) => (word.toLowerCase() === 'in' && !/[.,]/.test(n) ? whole : `${word}${gap}<ELAPSED>`));
}

/** Strings that say there is no id: a request id holding one is compared, not masked. */
const NOT_AN_ID = new Set(['undefined', 'null', 'nil', 'none', 'nan', 'false', 'true', '0', '-']);

/** A value a request-id key or header holds when it is an id: a positive integer, or a non-empty token without spaces that is not a word for nothing. */
export function isIdValue(v: unknown): boolean {
  if (typeof v === 'number') return Number.isInteger(v) && v > 0;
  return typeof v === 'string' && v.length > 0 && !/\s/.test(v) && !NOT_AN_ID.has(v.toLowerCase());
}

/** The built-in rules, on by default, in the order their names are listed. */
export const BUILTIN_RULES: readonly BuiltinRule[] = [
  { name: 'timestamp-keys', key: { test: (k, v) => isScalar(v) && TIMESTAMP_KEY.test(k), accepts: isTimeValue, replace: '<TS>' } },
  { name: 'epoch-ms-keys', key: { test: (k, v) => (typeof v === 'number' || typeof v === 'string') && EPOCH_MS_KEY.test(k), accepts: isStopwatchValue, replace: '<MS>' } },
  { name: 'process-stats', key: { test: (k, v) => typeof v === 'number' && PROCESS_STAT_KEY.test(k), accepts: isProcessStat, replace: '<STAT>' } },
  { name: 'resource-versions', key: { test: (k, v) => typeof v === 'string' && k === 'resourceVersion', accepts: (v) => RESOURCE_VERSION.test(v as string), replace: '<VERSION>' } },
  { name: 'graphql-tracing', key: { test: (k, v) => k === 'tracing' && isObject(v), accepts: isApolloTracing, replace: '<TRACING>', transform: withoutStopwatch } },
  {
    name: 'request-id-keys',
    key: { test: (k, v) => isScalar(v) && REQUEST_ID_KEY.test(k), accepts: isIdValue, replace: '<ID>' },
    headers: { names: REQUEST_ID_HEADERS, replace: '<ID>', accepts: isIdValue },
  },
  {
    name: 'iso-time',
    // Inside the side's time window, as an HTTP date or an epoch: a fixed date-time (an expiry in 2099, a birth
    // time) is a value. Shortest match: '2020-01-01T00:00'.
    value: { step: 5, apply: (s, _homes, w) => (mayHoldIsoTime(s) ? isoTimesInText(s, w) : s), shortest: () => ISO_TIME_SHORTEST },
  },
  {
    name: 'http-dates',
    // Inside the side's time window only: a fixed date (an expiry in 1970) is a value.
    value: { step: 6, apply: (s, _homes, w) => (mayHoldHttpDate(s) ? httpDatesInText(s, w) : s), shortest: () => HTTP_DATE_SHORTEST },
    // A cookie's Expires and the Expires header are the response's date plus a lifetime, often beyond the window:
    // compared as that lifetime.
    cookieLifetimes: true,
  },
  {
    name: 'runtime-dates',
    // JavaScript's Date#toString and numeric Date#toLocaleString forms, inside the side's time window only.
    value: { step: 7, apply: (s, _homes, w) => (mayHoldRuntimeDate(s) ? runtimeDatesInText(s, w) : s), shortest: () => RUNTIME_DATE_SHORTEST },
  },
  {
    name: 'epoch-timestamps',
    // Strings (headers, cookies, text bodies) here; JSON numbers in walk.ts. 10 digits at least.
    value: { step: 8, apply: (s, _homes, w) => (mayHoldEpoch(s) ? epochsInText(s, w) : s), shortest: () => 10 },
    epochNumbers: true,
  },
  {
    name: 'stopwatch-text',
    // How long the server took, said in a sentence: "Page generated in 0.0123 seconds", "query took 12ms". Shortest match: 'took 1s'.
    value: { step: 9, apply: (s) => (STOPWATCH_HINT.test(s) ? stopwatchesInText(s) : s), shortest: () => 7 },
  },
  {
    name: 'relative-times',
    // Between the stopwatch's step and the config's patterns (10). Shortest match: '1s ago'.
    value: { step: 9.5, pattern: RELATIVE_TIME, replace: '<AGO>', hint: (s) => s.includes('ago') || s.includes('AGO'), shortest: 6 },
  },
  {
    name: 'multipart-boundary',
    // A multipart boundary parameter (random per request): `boundary=X` or `boundary="X"`. Shortest match: 'boundary=x'.
    value: { step: 4, pattern: /(boundary=)("?)[^";,\s]+"?/gi, replace: '$1$2<BOUNDARY>$2', hint: (s) => s.includes('oundary='), shortest: 10 },
  },
  {
    name: 'server-home',
    value: {
      step: 1,
      apply: (s, homes) => {
        for (const h of homes) if (h && s.includes(h)) s = s.split(h).join('<HOME>');
        return s;
      },
      shortest: (homes) => Math.min(...homes.filter((h) => h).map((h) => h.length)),
    },
  },
  {
    name: 'ipv4-mapped-loopback',
    // Shortest match: '::ffff:127.0.0.1'.
    value: { step: 2, pattern: /::ffff:127\.0\.0\.1/gi, replace: '127.0.0.1', hint: (s) => s.includes('::'), shortest: 16 },
  },
  {
    name: 'loopback-port',
    // Shortest match: '[::1]:0'.
    value: {
      step: 3,
      pattern: /(?<![\w.])(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}\b/g,
      replace: '$1:<PORT>',
      hint: (s) => s.includes(':') && (s.includes('127.0.0.1') || s.includes('localhost') || s.includes('[::1]')),
      shortest: 7,
    },
  },
  {
    name: 'session-id',
    // Shortest match: 'session_' and 32 hex digits.
    value: {
      step: 11,
      pattern: /\bsession_[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b/gi,
      ordinal: 'SID',
      hint: (s) => s.length >= 40 && /session_/i.test(s),
      shortest: 40,
    },
  },
  {
    name: 'ulid',
    // Not \b: ids often come prefixed (msg_<ULID>, conn_<uuid>) and '_' is a word character. 26 characters.
    value: { step: 12, pattern: /(?<![0-9A-Za-z])[0-7][0-9A-HJKMNP-TV-Z]{25}(?![0-9A-Za-z])/g, ordinal: 'ULID', hint: (s) => s.length >= 26, shortest: 26 },
  },
  {
    name: 'uuid',
    // 36 characters.
    value: {
      step: 13,
      pattern: /(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])/gi,
      ordinal: 'UUID',
      hint: (s) => s.length >= 36 && s.includes('-'),
      shortest: 36,
    },
  },
  {
    name: 'redacted',
    // bb's redaction placeholder (capture/redact.ts): an HMAC of the secret
    // under the bb home's key. The same placeholder on both sides is the same
    // secret wherever it sits; different ones at one aligned place are equal
    // when they correspond one to one (another key, a secret made up per run):
    // keyed.ts. 19 characters; in a binary payload padded with ~ to the secret's length (Redactor.secretBytes).
    value: { step: 14, pattern: new RegExp(PLACEHOLDER_SOURCE, 'g'), ordinal: 'REDACTED', keyed: placeholderIdentity, hint: (s) => s.includes('<redacted:'), shortest: 19 },
  },
  {
    name: 'generated-ids',
    // Last: uuids, ULIDs and the config's ids are claimed first. 12 characters (a 12-digit hex id).
    value: { step: GENERATED_STEP, spans: shapeSpans, classes: SHAPE_CLASSES, hint: (s) => s.length >= SHORTEST_SHAPE, shortest: SHORTEST_SHAPE },
  },
  { name: 'numeric-ids', numericIds: { classes: NUMERIC_ID_CLASSES } },
  { name: 'id-key-tokens', idKeyTokens: { classes: ID_KEY_TOKEN_CLASSES } },
  { name: 'volatile-headers', headers: { names: VOLATILE_HEADERS, replace: '<VOLATILE>' }, maskBodyLength: true },
  { name: 'ws-ping-pong', dropPingPong: true },
  { name: 'cookies', cookies: true },
  // Before the shapes: paths holding a bound value pair, and a broken binding is a changed row.
  { name: 'issued-values', issued: { before: GENERATED_STEP } },
];

/** Names of the built-in rules, for `normalize.disable`. */
export const BUILTIN_RULE_NAMES: string[] = BUILTIN_RULES.map((r) => r.name);
