// The normalizing rules: the built-ins (builtin-rules.ts, each named so a
// config can switch it off) plus what the config adds, compiled once per run
// into a RuleSet; walk.ts applies them to values.
//
// Key rules replace the value under a matching key at any depth; value
// patterns rewrite inside strings and object keys; ordinal patterns leave
// markers (see ordinals.ts) that become <CLASS:n>. The `keep` list wins over
// everything: values under those keys are compared verbatim.
import type { NormalizeConfig } from '../config-types.js';
import type { OrdinalTable } from './ordinals.js';
import type { CaptureWindow } from './timestamps.js';
import { BUILTIN_RULES, CONFIG_PATTERNS_STEP, type BuiltinValueRule, type Hint } from './builtin-rules.js';
import { EIO_SID } from './engine-io.js';
import { ISSUED_CLASS } from '../bind/index.js';
import { compileConfigPatterns, tokenGuard } from './config-patterns.js';
import { markSpans } from './shapes.js';

/** Keys compared verbatim by default (sequence numbers, cursors, counts, codes, event names). */
export const DEFAULT_KEEP = [
  'seq', 'cursor', 'protocol_version', 'protocolVersion', 'code', 'status', 'type', 'event', 'kind',
  'prompt_tokens', 'completion_tokens', 'total_tokens', 'input_tokens', 'output_tokens', 'version',
];

/** One key rule, compiled. */
export interface KeyRule {
  /** Rule name. */
  name: string;
  /** Whether the value under `key` is replaced; looks at the value's JSON type only (answers are memoized per key and type). */
  test: (key: string, value: unknown) => boolean;
  /** A built-in's check of the value itself, asked each time (builtin-rules.ts BuiltinKeyRule.accepts); a config rule takes every value. */
  accepts?: (value: unknown, window: CaptureWindow | undefined) => boolean;
  /** The placeholder. */
  replace: string;
  /** A built-in's: the value with its varying parts replaced, normalized further instead of the placeholder. */
  transform?: (value: unknown) => unknown;
  /** Its index in the config's `normalize.keys` (a built-in has none): what it erases is noted (erased.ts). */
  config?: number;
}

/** One value rule, compiled: rewrites a string. */
export interface ValueRule {
  /** Rule name. */
  name: string;
  /** Rewrites one string; `homes` are this side's server home directories, `window` its time window. Pure given its arguments (results are memoized). */
  apply: (s: string, homes: readonly string[], table: OrdinalTable, window: CaptureWindow | undefined) => string;
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
  /** The config's own `keep` keys: verbatim even for a value the server issued (a built-in kept key binds a made one: keptIssued in walk.ts). */
  keepAlways: Set<string>;
  /** Lower-case header name → placeholder. */
  maskedHeaders: Map<string, string>;
  /** Of maskedHeaders, those masked only when the value is what the header says (built-in-rules' `accepts`); others are compared. */
  maskAccepts: Map<string, (value: string) => boolean>;
  /** Lower-case header name → its index in the config's `normalize.headers`, for names no built-in masks anyway: what they erase is noted. */
  configHeaders: Map<string, number>;
  /** The config has rules that replace whole values as they are normalized (`normalize.keys`, `configHeaders`): normalizeEntry notes what they erase. */
  erasing: boolean;
  /** Mask content-length of bodies that are compared parsed (text, JSON, events). */
  maskBodyLength: boolean;
  /** Drop WebSocket ping/pong (timer-driven) from comparison. */
  dropPingPong: boolean;
  /** JSON numbers that are epoch seconds or milliseconds inside the side's time window → <TS> (epoch-timestamps). */
  epochNumbers: boolean;
  /** Cookie and Set-Cookie compared as fields, `request.cookies` and `response.cookies` (cookies). */
  cookies: boolean;
  /** A Set-Cookie's Expires compared as a lifetime from the response's date (http-dates). */
  cookieLifetimes: boolean;
  /** Values a server issued and its client sent back are marked <ISSUED:n> (issued-values, diff/bind). */
  issued: boolean;
  /** How many of `valueRules` run before bound values are marked (the issued-values rule's `before` step). */
  issuedAt: number;
  /** Integers of 4+ digits and digit strings under id keys marked as ordinals INT / DIGITS (numeric-ids). */
  numericIds: boolean;
  /** Tokens under id keys that no value rule marked, marked by their shape (id-key-tokens). */
  idKeyTokens: boolean;
  /** Server home directories from the config (both sides). */
  configHomes: string[];
  /** The ordinal classes the value rules mark, in rule order: an OrdinalTable seeded with them numbers classes alike in every thread. */
  ordinalClasses: string[];
  /** Those of them whose markers carry their own identity (keyed.ts: redaction placeholders). */
  keyedClasses: string[];
}

const always: Hint = () => true;

// `shortest`: the length of the shortest string the built-in pattern matches (config patterns have none).
function regexRule(name: string, re: RegExp, replace: string, hint: Hint = always, shortest?: number): ValueRule {
  // String#replace with a global regex always starts at 0 and resets lastIndex.
  return { name, apply: (s) => (hint(s) ? s.replace(re, replace) : s), ...(shortest !== undefined ? { shortest: () => shortest } : {}) };
}

// `keyed`: the match's own identity (keyed.ts), marked by it rather than by the table's index.
function ordinalRule(name: string, re: RegExp, cls: string, hint: Hint = always, shortest?: number, keyed?: (match: string) => number): ValueRule & { cls: string } {
  return {
    name,
    cls,
    apply: keyed
      ? (s, _homes, table) => (hint(s) ? s.replace(re, (m) => table.markKeyed(cls, keyed(m))) : s)
      : (s, _homes, table) => (hint(s) ? s.replace(re, (m) => table.mark(cls, m)) : s),
    ...(shortest !== undefined ? { shortest: () => shortest } : {}),
  };
}

/** A built-in value rule of the table, compiled. */
function builtinValueRule(name: string, v: BuiltinValueRule): ValueRule & { classes?: readonly string[] } {
  if ('spans' in v) {
    const { hint, spans } = v;
    const shortest = v.shortest;
    return { name, classes: v.classes, apply: (s, _homes, table) => (hint(s) ? markSpans(s, spans(s), (cls, m) => table.mark(cls, m)) : s), shortest: () => shortest };
  }
  if ('apply' in v) {
    const apply = v.apply;
    return { name, apply: (s, homes, _table, window) => apply(s, homes, window), shortest: v.shortest };
  }
  return 'ordinal' in v ? ordinalRule(name, v.pattern, v.ordinal, v.hint, v.shortest, v.keyed) : regexRule(name, v.pattern, v.replace, v.hint, v.shortest);
}

/** Compiles the built-ins minus `disable`, plus the config's rules. Config is already validated. */
export function compileRules(cfg: NormalizeConfig = {}): RuleSet {
  const off = new Set(cfg.disable ?? []);
  const builtins = BUILTIN_RULES.filter((r) => !off.has(r.name));
  const keyRules: KeyRule[] = [];
  for (const [config, k] of (cfg.keys ?? []).entries()) {
    const re = k.pattern ? new RegExp(k.pattern) : undefined;
    const exact = k.key?.toLowerCase();
    keyRules.push({
      name: `key:${k.key ?? k.pattern}`,
      test: (key, v) => v !== null && (exact !== undefined ? key.toLowerCase() === exact : re!.test(key)),
      replace: k.replace,
      config,
    });
  }
  for (const r of builtins) if (r.key) keyRules.push({ name: r.name, ...r.key });

  // The built-in value rules in step order, the config's patterns at theirs.
  const steps: { step: number; rules: ValueRule[] }[] = builtins.flatMap((r) => (r.value ? [{ step: r.value.step, rules: [builtinValueRule(r.name, r.value)] }] : []));
  // The config's patterns may not cut a token a built-in after them takes whole.
  const later = builtins.flatMap((r) => (r.value && r.value.step > CONFIG_PATTERNS_STEP ? [r.value] : []));
  const patterns: ValueRule[] = compileConfigPatterns(cfg.patterns ?? [], tokenGuard(later)).map((p) => ({
    name: p.name,
    ...(p.cls ? { cls: p.cls } : {}),
    apply: (s, _homes, table) => p.apply(s, table),
  }));
  steps.push({ step: CONFIG_PATTERNS_STEP, rules: patterns });
  const valueRules = steps.sort((a, b) => a.step - b.step).flatMap((s) => s.rules);
  const issuedBefore = builtins.find((r) => r.issued)?.issued?.before;

  const maskedHeaders = new Map<string, string>();
  // A built-in's header mask may take only the values that are what the header says (a request id, not an empty one).
  const maskAccepts = new Map<string, (value: string) => boolean>();
  for (const r of builtins) {
    if (!r.headers) continue;
    for (const h of r.headers.names) {
      maskedHeaders.set(h, r.headers.replace);
      if (r.headers.accepts) maskAccepts.set(h, r.headers.accepts);
    }
  }
  const configHeaders = new Map<string, number>();
  for (const [i, h] of (cfg.headers ?? []).entries()) {
    const name = h.toLowerCase();
    if (!maskedHeaders.has(name) && !configHeaders.has(name)) configHeaders.set(name, i);
  }
  for (const h of cfg.headers ?? []) {
    maskedHeaders.set(h.toLowerCase(), '<MASKED>');
    maskAccepts.delete(h.toLowerCase());
  }

  const homes = cfg.serverHome === undefined ? [] : Array.isArray(cfg.serverHome) ? cfg.serverHome : [cfg.serverHome];
  return {
    keyRules,
    valueRules,
    keep: new Set([...DEFAULT_KEEP, ...(cfg.keep ?? [])]),
    keepAlways: new Set(cfg.keep ?? []),
    maskedHeaders,
    maskAccepts,
    configHeaders,
    erasing: (cfg.keys?.length ?? 0) > 0 || configHeaders.size > 0,
    maskBodyLength: builtins.some((r) => r.maskBodyLength),
    dropPingPong: builtins.some((r) => r.dropPingPong),
    epochNumbers: builtins.some((r) => r.epochNumbers),
    cookies: builtins.some((r) => r.cookies),
    cookieLifetimes: builtins.some((r) => r.cookieLifetimes),
    issued: issuedBefore !== undefined,
    issuedAt: issuedBefore === undefined ? valueRules.length : steps.filter((s) => s.step < issuedBefore).reduce((n, s) => n + s.rules.length, 0),
    numericIds: builtins.some((r) => r.numericIds),
    idKeyTokens: builtins.some((r) => r.idKeyTokens),
    configHomes: homes,
    // EIO_SID: Engine.IO session ids (engine-io.ts), ISSUED: bound values (diff/bind), numbered like any ordinal.
    ordinalClasses: [
      ...new Set([
        ...valueRules.flatMap((r) => ('cls' in r && typeof r.cls === 'string' ? [r.cls] : 'classes' in r && Array.isArray(r.classes) ? (r.classes as string[]) : [])),
        ...builtins.flatMap((r) => r.numericIds?.classes ?? []),
        ...builtins.flatMap((r) => r.idKeyTokens?.classes ?? []),
        EIO_SID,
        ISSUED_CLASS,
      ]),
    ],
    keyedClasses: builtins.flatMap((r) => (r.value && 'ordinal' in r.value && r.value.keyed ? [r.value.ordinal] : [])),
  };
}

/** Home directories for one side: the capture's own, then the config's, longest first. */
export function homesFor(captureHome: string | undefined, extra: readonly string[] = [], rules: RuleSet): string[] {
  const all = [captureHome, ...extra, ...rules.configHomes].filter((h): h is string => !!h && h !== '/');
  return [...new Set(all)].sort((a, b) => b.length - a.length);
}
