// The value walk: applies a RuleSet's key rules and value patterns to
// strings and parsed values, at any depth, for one side (its server homes
// and time window) and the run's ordinal table.
import type { KeyRule, RuleSet } from './rules.js';
import type { OrdinalTable } from './ordinals.js';
import { isEpochInWindow, TIMESTAMP, type CaptureWindow } from './timestamps.js';
import { boundAbsent, ISSUED_CLASS, madeNotWord, markIssued } from '../bind/index.js';
import { ID_KEY, idKeyTokenShape, numericIdShape } from './shapes.js';
import { BoundedMemo, setOwn } from '../../core/index.js';
import { UnlistedFold } from './unlisted.js';
import { joinPath } from '../selector.js';
import { unnumber } from './ordinals.js';
import { erasedNote, type ErasedNote } from './erased.js';

// Normalizing is pure given the rules, the ordinal table, the homes and the window (a
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
  /** The run's compiled rules. */
  readonly rules: RuleSet;
  /** This side's server home directories, longest first (server-home). */
  readonly homes: readonly string[];
  /** The run's ordinal table (both sides share it). */
  readonly table: OrdinalTable;
  /** This side's time window (timestamps.ts); undefined when its capture has no times. */
  readonly window: CaptureWindow | undefined;
  /** Strings already normalized with this combination, bounded (MEMO_MAX_SIZE). */
  readonly strings: BoundedMemo<string, string>;
  /** What normalizeValue asks of an object key, asked once per key (bounded: MEMO_MAX_KEYS). */
  readonly keys: BoundedMemo<string, KeyFacts>;
  /** Strings shorter than this are left as they are by every value rule (most keys and many values: no memo lookup). */
  readonly shortest: number;
  /** Values this side's server issued and its client sent back (diff/bind), marked `<ISSUED:n>` wherever they appear. */
  readonly issued: ReadonlySet<string> | undefined;
  /** True for a string holding none of `issued` (boundAbsent), when there are few enough to look for. */
  readonly issuedAbsent?: (s: string) => boolean;
  /** While normalizeEntry normalizes an entry under erasing config rules (RuleSet.erasing): what the config's key rules erased in it. */
  notes?: ErasedNote[];
}

/**
 * An object key's answers, the same for every value under it (keys repeat: a body of 40 fields asked the string
 * memo, the kept set, the key-rule memo and the id-key pattern for each, ~10 % of normalizing in the diff bench).
 */
interface KeyFacts {
  /** The key normalized (normalizeString). */
  normalized: string;
  /** The config or a built-in keeps values under it verbatim (RuleSet.keep). */
  keep: boolean;
  /** Its name says id (shapes.ts ID_KEY). */
  id: boolean;
  /** The key rule for a value of each JSON type slot (typeSlot); undefined: not asked yet. */
  rules: Array<KeyRule | null | undefined>;
}

/** Distinct keys kept in a walk's key memo (hostile input may make every key new); past it the memo starts over. */
const MEMO_MAX_KEYS = 20_000;

/** Issued values are tokens of 4+ characters (diff/bind). */
const ISSUED_SHORTEST = 4;

/** A walk with an empty string memo; `issued`: the side's bound values (diff/bind boundValues), when the issued-values rule is on. */
export function valueWalk(rules: RuleSet, homes: readonly string[], table: OrdinalTable, window?: CaptureWindow, issued?: ReadonlySet<string>): ValueWalk {
  const marks = issued?.size ? issued : undefined;
  const shortest = Math.min(...rules.valueRules.map((r) => (r.shortest ? r.shortest(homes) : 0)), marks ? ISSUED_SHORTEST : Infinity);
  const absent = marks && boundAbsent(marks);
  return { rules, homes, table, window, strings: new BoundedMemo(MEMO_MAX_SIZE), keys: new BoundedMemo(MEMO_MAX_KEYS), shortest, issued: marks, ...(absent ? { issuedAbsent: absent } : {}) };
}

function applyValueRules(s: string, w: ValueWalk): string {
  const rules = w.rules.valueRules;
  // Bound values are marked where the rules table puts them (rules.issuedAt): after the rules that name a
  // value (a uuid stays <UUID:n>), before the generated-value shapes.
  for (let i = 0; i <= rules.length; i++) {
    if (i === w.rules.issuedAt && w.issued && !w.issuedAbsent?.(s)) s = markIssued(s, w.issued, (v) => w.table.mark(ISSUED_CLASS, v));
    if (i < rules.length) s = rules[i]!.apply(s, w.homes, w.table, w.window);
  }
  return s;
}

/** Applies the value rules to one string. */
export function normalizeString(s: string, w: ValueWalk): string {
  if (s.length < w.shortest) return s;
  if (s.length > MEMO_MAX_LENGTH) return applyValueRules(s, w);
  return w.strings.get(s) ?? w.strings.set(s, applyValueRules(s, w));
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

function keyFacts(k: string, w: ValueWalk): KeyFacts {
  const known = w.keys.get(k);
  if (known !== undefined) return known;
  const f: KeyFacts = { normalized: normalizeString(k, w), keep: w.rules.keep.has(k), id: ID_KEY.test(k), rules: [] };
  // A key past the string memo's length is normalized again each time, as normalizeString would (not kept).
  return k.length > MEMO_MAX_LENGTH ? f : w.keys.set(k, f);
}

function keyRuleFor(k: string, f: KeyFacts, x: unknown, w: ValueWalk): KeyRule | null {
  const t = typeSlot(x);
  let rule = f.rules[t];
  if (rule === undefined) rule = f.rules[t] = w.rules.keyRules.find((r) => r.test(k, x)) ?? null;
  return rule;
}

/**
 * Notes what a config rule erased at `path` (erased.ts), as it would have
 * compared without the rule: normalized, with nothing inside it noted again.
 */
export function noteErased(rule: string, path: string, v: unknown, w: ValueWalk): void {
  const notes = w.notes!;
  w.notes = undefined;
  try {
    notes.push(erasedNote(rule, path, normalizeValue(v, w), (t) => unnumber(t, w.table)));
  } finally {
    w.notes = notes;
  }
}

/**
 * A value under a built-in kept key that the server issued and the client
 * sent back, and made (a digit or inner capitals): an OAuth callback's
 * `?code=…`, a page's `?cursor=…`. It binds as any issued value, or every
 * replay and mirror of such a flow reads as changed; a word (`status:
 * "open"`, `type: "order"`) stays verbatim even when sent back, and so does
 * anything under a key the config keeps.
 */
function keptIssued(k: string, x: unknown, w: ValueWalk): boolean {
  return typeof x === 'string' && w.issued !== undefined && w.issued.has(x) && madeNotWord(x) && !w.rules.keepAlways.has(k);
}

/**
 * Items of an array compared one by one; the later ones are one value, their count and a digest of their normalized
 * forms in order (pastItems). A body of 5.6M empty objects (16 MiB) took 3 GB and 21 s to diff, and 22M (64 MiB, what
 * a gzip answer decodes to at most) more than the heap holds: V8 aborted bb diff.
 */
export const ITEMS_COMPARED = 100_000;

// The items of `v` from `from` on, each normalized as any item (rules, ids and times apply) and let go: one string
// saying how many and their digest, so a change among them is one difference at `[ITEMS_COMPARED]`.
function pastItems(v: unknown[], from: number, w: ValueWalk, at: string): string {
  const fold = new UnlistedFold();
  for (let i = from; i < v.length; i++) fold.add(normalizeValue(v[i], w, w.notes ? joinPath(at, i) : at));
  return `<${v.length - from} items past the first ${from}, digest ${fold.done()!.digest.slice(0, 16)}>`;
}

/**
 * Applies key rules and value patterns to a parsed JSON value, at any depth.
 * `at`: the value's field path (`response.body`), for the notes of what a
 * config key rule erased (only followed while `w.notes` is set).
 */
export function normalizeValue(v: unknown, w: ValueWalk, at = ''): unknown {
  if (typeof v === 'string') return normalizeString(v, w);
  // epoch-timestamps: a number inside the side's time window, under any key.
  if (typeof v === 'number') {
    if (w.rules.epochNumbers && w.window && isEpochInWindow(v, w.window)) return TIMESTAMP;
    // An issued integer id (4+ digits) compares through its binding, as the same id in a path or a string does.
    if (w.issued && Number.isInteger(v) && Math.abs(v) >= 1000 && w.issued.has(String(v))) return w.table.mark(ISSUED_CLASS, String(v));
    return v;
  }
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const compared = Math.min(v.length, ITEMS_COMPARED);
    const out = new Array<unknown>(compared);
    for (let i = 0; i < compared; i++) out[i] = normalizeValue(v[i], w, w.notes ? joinPath(at, i) : at);
    if (v.length > compared) out.push(pastItems(v, compared, w, at));
    return out;
  }
  const src = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(src)) {
    const x = src[k];
    const facts = keyFacts(k, w);
    const nk = facts.normalized;
    // `keep` protects values (sequence numbers, cursors, type names); objects and
    // arrays under a kept key are still normalized inside.
    if ((x === null || typeof x !== 'object') && facts.keep && !keptIssued(k, x, w)) {
      setOwn(out, nk, x);
      continue;
    }
    const keyed = keyRuleFor(k, facts, x, w);
    // A built-in takes only what its key says the value is (a time, an id): anything else is compared as it is.
    const rule = keyed && (!keyed.accepts || keyed.accepts(x, w.window)) ? keyed : null;
    // numeric-ids: `"id": 48213` is marked like a uuid would be, as INT (or DIGITS for "48213"); not a
    // string the server issued: a random id with only digits this run binds like its other runs' ids.
    const numeric = !rule && facts.id && w.rules.numericIds && !(typeof x === 'string' && w.issued?.has(x)) ? numericIdShape(k, x) : undefined;
    const p = w.notes ? joinPath(at, nk) : at;
    if (rule?.config !== undefined && w.notes) noteErased(`keys[${rule.config}]`, p, x, w);
    const value = rule ? (rule.transform ? normalizeValue(rule.transform(x), w, p) : rule.replace) : numeric ? w.table.mark(numeric, String(x)) : normalizeValue(x, w, p);
    // id-key-tokens: a token under an id key that every value rule left as it is (too short for generated-ids, or
    // its letters read as words) is marked by its shape.
    const token = value === x && facts.id && typeof x === 'string' && w.rules.idKeyTokens ? idKeyTokenShape(k, x) : undefined;
    setOwn(out, nk, token ? w.table.mark(token, x as string) : value);
  }
  return out;
}
