// Ordinal placeholders (<SID:1>, <UUID:2>, ...) that do not shift.
//
// Normalizing replaces each identifier with a marker that remembers its class
// and original value, made of private-use characters so no later pattern
// can match inside it. Pairing sees markers as un-numbered placeholders
// (<SID>), so an inserted request cannot change any key. Only then are the
// numbers given out (diff/correspond.ts): walking the pairs in order, a
// marker of the old entry and one of the new entry met at the same aligned
// place share a number; what no place binds is numbered after, and entries
// present on one side only take their numbers after all paired ones, so
// neither can renumber the rest.

import { escapeRegExp, setOwn } from '../../core/index.js';
import { slotKey, type KeyedSlots } from './keyed.js';

const OPEN = '\uE000';
const SEP = '\uE001';
const CLOSE = '\uE002';
// Numbers are written in base 4096, one private-use character per digit.
const DIGIT0 = 0xe100;
const BASE = 0x1000;
const MARKER = /\uE000([\uE100-\uF0FF]+)\uE001([\uE100-\uF0FF]+)\uE002/g;
/** adoptAlong reads values of at most this many characters and markers (a link of a few ids; a regular expression of one group per marker). */
const MAX_ADOPT_LENGTH = 4096;
const MAX_ADOPT_MARKERS = 16;
// One whole marker, as a regular expression's source without groups.
const WHOLE_MARKER = '\\uE000[\\uE100-\\uF0FF]+\\uE001[\\uE100-\\uF0FF]+\\uE002';

function encode(n: number): string {
  let s = String.fromCharCode(DIGIT0 + (n % BASE));
  for (n = Math.floor(n / BASE); n > 0; n = Math.floor(n / BASE)) s = String.fromCharCode(DIGIT0 + (n % BASE)) + s;
  return s;
}

function decode(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) n = n * BASE + (s.charCodeAt(i) - DIGIT0);
  return n;
}

/** Value numbers of adopted values (OrdinalNumbering.adopt) start here: below slotKey's 2^32, above any table's count. */
const ADOPTED_FROM = 0xf000_0000;

/** Interns ordinal classes and values for one diff run (both sides share it). */
export class OrdinalTable {
  private readonly classes: string[] = [];
  private readonly classIndex = new Map<string, number>();
  private readonly valueIndex = new Map<string, number>();
  /** Each value by its number (valueOf): what a marker stood for, to show a bound value as it was written. */
  private readonly values: string[] = [];
  private nextValue = 0;

  /** `classes`: class names to intern first, in order (RuleSet.ordinalClasses), so two tables agree on class numbers. */
  constructor(classes: readonly string[] = []) {
    for (const c of classes) this.classIndex.set(c, this.classes.push(c) - 1);
  }

  // The index of class `cls`, interned on first use.
  private classNumber(cls: string): number {
    let c = this.classIndex.get(cls);
    if (c === undefined) {
      c = this.classes.length;
      this.classes.push(cls);
      this.classIndex.set(cls, c);
    }
    return c;
  }

  /** The marker standing for `value` of class `cls`. */
  mark(cls: string, value: string): string {
    const c = this.classNumber(cls);
    let v = this.valueIndex.get(value);
    if (v === undefined) {
      v = this.nextValue++;
      this.valueIndex.set(value, v);
      this.values.push(value);
    }
    return OPEN + encode(c) + SEP + encode(v) + CLOSE;
  }

  /** The value marked with number `v` (mark), if this table gave it out. */
  valueOf(v: number): string | undefined {
    return this.values[v];
  }

  /** The number `value` was marked with, if it was. */
  numberOfValue(value: string): number | undefined {
    return this.valueIndex.get(value);
  }

  /** The marker of a keyed class (keyed.ts): its value is the identity `n` (below 2^32), the same in every table and thread. */
  markKeyed(cls: string, n: number): string {
    return OPEN + encode(this.classNumber(cls)) + SEP + encode(n) + CLOSE;
  }

  /** The index of a class interned already (seeded ones always are). */
  indexOf(cls: string): number | undefined {
    return this.classIndex.get(cls);
  }

  /** Class name of a class index. */
  className(c: number): string {
    return this.classes[c] ?? '?';
  }
}

/** True when the string holds at least one marker. */
export function hasMarker(s: string): boolean {
  return s.includes(OPEN);
}

/**
 * Markers → un-numbered placeholders (<SID>): what pairing compares. With
 * `markers`, the same scan appends the text's markersOf sequence to it.
 */
export function unnumber(s: string, table: OrdinalTable, markers?: number[]): string {
  let at = s.indexOf(OPEN);
  if (at < 0) return s;
  // A scan rather than a regex with a callback: pairing tokens run this over whole entries.
  let out = '';
  let from = 0;
  for (; at >= 0; at = s.indexOf(OPEN, from)) {
    const sep = markerPart(s, at + 1, SEP);
    const close = sep < 0 ? -1 : markerPart(s, sep + 1, CLOSE);
    if (close < 0) {
      // Not a whole marker: keep the character, as the regex would.
      out += s.slice(from, at + 1);
      from = at + 1;
      continue;
    }
    const cls = decode(s.slice(at + 1, sep));
    markers?.push(cls, decode(s.slice(sep + 1, close)));
    out += s.slice(from, at) + '<' + table.className(cls) + '>';
    from = close + 1;
  }
  return out + s.slice(from);
}

// Index of `end` after one or more marker digits starting at `i`, else -1.
function markerPart(s: string, i: number, end: string): number {
  const start = i;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xe100 && c <= 0xf0ff) continue;
    return i > start && s[i] === end ? i : -1;
  }
  return -1;
}

/** Deep copy of a JSON value with every marker un-numbered (keys included). */
export function unnumberDeep(v: unknown, table: OrdinalTable): unknown {
  return mapStrings(v, (s) => unnumber(s, table));
}

/** Deep copy of a JSON value with each string (and key) passed through `f`. */
export function mapStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, f(k), mapStrings(x, f));
    return out;
  }
  return v;
}

/**
 * The markers of a text in order, as [class, value] pairs flattened: the same
 * sequence `collect` finds in the value the text is the JSON of (JSON writes
 * each key before its value, in Object.keys order, and leaves private-use
 * characters unescaped).
 */
export function markersOf(s: string): number[] {
  const out: number[] = [];
  for (let at = s.indexOf(OPEN); at >= 0; at = s.indexOf(OPEN, at + 1)) {
    const sep = markerPart(s, at + 1, SEP);
    const close = sep < 0 ? -1 : markerPart(s, sep + 1, CLOSE);
    if (close < 0) continue;
    out.push(decode(s.slice(at + 1, sep)), decode(s.slice(sep + 1, close)));
    at = close;
  }
  return out;
}

// Copy-on-write deep map of the strings that hold markers: a value with none
// is returned as it is (no copy), so rendering allocates only along changes.
function mapMarked(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return v.includes(OPEN) ? f(v) : v;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      const y = mapMarked(x, f);
      if (out) out.push(y);
      else if (y !== x) {
        out = v.slice(0, i);
        out.push(y);
      }
    }
    return out ?? v;
  }
  const src = v as Record<string, unknown>;
  const keys = Object.keys(src);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = src[k];
    const nk = k.includes(OPEN) ? f(k) : k;
    const y = mapMarked(x, f);
    if (!out && (nk !== k || y !== x)) {
      out = {};
      for (let j = 0; j < i; j++) setOwn(out, keys[j]!, src[keys[j]!]);
    }
    if (out) setOwn(out, nk, y);
  }
  return out ?? v;
}

/** Numbers given out along the pairing, per side. */
export class OrdinalNumbering {
  private readonly counters = new Map<number, number>();
  private readonly sides = [new Map<number, number>(), new Map<number, number>()];
  // Per side, slots numbered alone (met where the other side held nothing to bind them to) and not bound
  // since: each may still take a partner where the two sides first meet, so a field one side sent in an
  // earlier entry never shifts the numbers later entries compare by. Two loose slots of opposite sides
  // that meet become partners (a field renamed: each side's value was numbered alone).
  private readonly loose = [new Set<number>(), new Set<number>()] as const;

  /** `keyed`: the run's keyed classes and the slots each side holds (keyed.ts); without it every class numbers by place alone. */
  constructor(
    private readonly table: OrdinalTable,
    private readonly keyed?: KeyedSlots,
  ) {}

  private fresh(cls: number): number {
    const n = (this.counters.get(cls) ?? 0) + 1;
    this.counters.set(cls, n);
    return n;
  }

  private numberString(side: 0 | 1, s: string): void {
    const m = markersOf(s);
    const map = this.sides[side]!;
    for (let i = 0; i < m.length; i += 2) {
      const key = slotKey(m[i]!, m[i + 1]!);
      if (map.has(key)) continue;
      const n = this.fresh(m[i]!);
      map.set(key, n);
      // A keyed value on both sides is its own partner: its number is the other side's too.
      if (this.keyed?.has(m[i]!) && this.keyed.onBoth(key)) this.sides[1 - side]!.set(key, n);
      else this.loose[side].add(key);
    }
  }

  // Binds one marker of each side met at one place: two unnumbered take one fresh number; one numbered
  // alone before (loose) lends its number to an unnumbered partner; two loose ones share the first's
  // number (partners), and markers bound already keep theirs.
  private bindSlots(cls: number, ok: number, nk: number): void {
    if (this.keyed?.has(cls) && !this.keyed.mayPair(ok, nk)) return;
    const [old, cur] = this.sides as [Map<number, number>, Map<number, number>];
    const on = old.get(ok);
    const nn = cur.get(nk);
    if (on === undefined && nn === undefined) {
      const k = this.fresh(cls);
      old.set(ok, k);
      cur.set(nk, k);
    } else if (nn === undefined && this.loose[0].delete(ok)) cur.set(nk, on!);
    else if (on === undefined && this.loose[1].delete(nk)) old.set(ok, nn!);
    else if (on !== undefined && nn !== undefined && on !== nn && this.bothLoose(ok, nk)) {
      this.loose[0].delete(ok);
      this.loose[1].delete(nk);
      const k = Math.min(on, nn);
      old.set(ok, k);
      cur.set(nk, k);
    }
  }

  // True when slot `ok` (old) and `nk` (new) are each numbered alone and not bound since: met, they become partners.
  private bothLoose(ok: number, nk: number): boolean {
    return this.loose[0].has(ok) && this.loose[1].has(nk);
  }

  /** Values adopted per side (adopt), each with its value number in the reserved range. */
  private readonly adopted = [new Map<string, number>(), new Map<string, number>()] as const;

  /**
   * A marker of class `cls` for a value of `side` that normalizing left as it is (correspond.ts: a random id whose
   * letters read as words, met where the other side holds a marker of that class): the same value gets the same
   * marker in every place. Its value numbers are taken from the top of the range (no table gives out that many).
   */
  adopt(side: 0 | 1, value: string, cls: number): string {
    const map = this.adopted[side];
    let v = map.get(value);
    if (v === undefined) map.set(value, (v = ADOPTED_FROM + map.size));
    return OPEN + encode(cls) + SEP + encode(v) + CLOSE;
  }

  /**
   * `plain` (a value of `side` with no marker) read as `marked` (the other side's value at the same place): its
   * text where `marked` has text, a token where `marked` has a marker; when every marker is of a class `may` takes
   * that token for, `plain` with those tokens as adopted markers (adopt), else undefined.
   */
  adoptAlong(side: 0 | 1, marked: string, plain: string, may: (token: string, cls: string) => boolean): string | undefined {
    // A value of a few ids (a link, a composite token), not a body of thousands: one group a marker.
    if (marked.length > MAX_ADOPT_LENGTH || plain.length > MAX_ADOPT_LENGTH) return undefined;
    // split with the marker's two groups: text, class, value, text, class, value, ..., text.
    const parts = marked.split(new RegExp(MARKER.source));
    if (parts.length > 3 * MAX_ADOPT_MARKERS + 1) return undefined;
    const classes: number[] = [];
    let pattern = '^';
    for (let i = 0; i < parts.length; i += 3) {
      pattern += escapeRegExp(parts[i]!);
      if (i + 1 < parts.length) {
        classes.push(decode(parts[i + 1]!));
        // A token, or a marker `plain` already holds there (a string of several ids, one of them read as words).
        pattern += `(${WHOLE_MARKER}|[A-Za-z0-9_+/=-]+)`;
      }
    }
    const m = new RegExp(`${pattern}$`).exec(plain);
    if (!m || classes.length === 0) return undefined;
    let out = parts[0]!;
    let adopted = false;
    for (let k = 0; k < classes.length; k++) {
      const token = m[k + 1]!;
      if (token.startsWith(OPEN)) out += token;
      else {
        if (!may(token, this.table.className(classes[k]!))) return undefined;
        out += this.adopt(side, token, classes[k]!);
        adopted = true;
      }
      out += parts[3 * (k + 1)]!;
    }
    return adopted ? out : undefined;
  }

  /** Per number given to class `cls` on `side`, the value number of its marker (the last one given that number). */
  valuesOfClass(side: 0 | 1, cls: number): Map<number, number> {
    const out = new Map<number, number>();
    for (const [key, n] of this.sides[side]!) if (Math.floor(key / 0x1_0000_0000) === cls) out.set(n, key % 0x1_0000_0000);
    return out;
  }

  /** The number given to marker (cls, value) on `side`, if any. */
  numberOf(side: 0 | 1, cls: number, value: number): number | undefined {
    return this.sides[side]!.get(slotKey(cls, value));
  }

  /**
   * Binds the markers of two strings met at the same aligned place: the k-th
   * marker of each, when of one class and both still unnumbered, get one number
   * (docs/diff.md "Ids numbered along aligned places"); one numbered alone
   * in an earlier entry (a field only its side sent) and not bound since
   * gives its number to an unnumbered partner, and two such of opposite
   * sides become partners. Markers already bound keep their numbers; a value
   * that breaks a binding then renders differently.
   */
  bindStrings(a: string, b: string): void {
    const ma = markersOf(a);
    const mb = markersOf(b);
    for (let i = 0; i < ma.length && i < mb.length; i += 2) {
      if (ma[i] === mb[i]) this.bindSlots(ma[i]!, slotKey(ma[i]!, ma[i + 1]!), slotKey(mb[i]!, mb[i + 1]!));
    }
  }

  /**
   * Binds two values known to have the same structure (their un-numbered JSON
   * texts are equal), given as their markersOf sequences, and true when every
   * slot then has the same number on both sides (the rendered values are
   * equal). Nothing is bound unless that holds: when it would not, the
   * caller binds along the aligned walk instead (bindPair), which may pair
   * array items other than by place.
   */
  numberPairMarkers(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 2) if (a[i] !== b[i]) return false;
    const [old, cur] = this.sides as [Map<number, number>, Map<number, number>];
    // Dry run, slot by slot as bindSlots would bind them: what it would number, in overlays (a fresh
    // number as -1, -2, ... in order), and each slot pair must then carry one number.
    const more = [new Map<number, number>(), new Map<number, number>()] as const;
    // The overlay first: two loose slots made partners carry their shared number there.
    const numberOn = (side: 0 | 1, k: number) => more[side].get(k) ?? this.sides[side]!.get(k);
    let fresh = 0;
    for (let i = 0; i < a.length; i += 2) {
      const ok = slotKey(a[i]!, a[i + 1]!);
      const nk = slotKey(b[i]!, b[i + 1]!);
      // Two keyed values that may not pair render apart (keyed.ts): not equal.
      if (this.keyed?.has(a[i]!) && !this.keyed.mayPair(ok, nk)) return false;
      const on = numberOn(0, ok);
      const nn = numberOn(1, nk);
      if (on === undefined && nn === undefined) {
        more[0].set(ok, --fresh);
        more[1].set(nk, fresh);
      } else if (nn === undefined && this.loose[0].has(ok) && !more[0].has(ok)) {
        // A loose slot lends its number once; a lent slot is marked with its own number in the overlay.
        more[0].set(ok, on!);
        more[1].set(nk, on!);
      } else if (on === undefined && this.loose[1].has(nk) && !more[1].has(nk)) {
        more[1].set(nk, nn!);
        more[0].set(ok, nn!);
      } else if (on !== nn && this.bothLoose(ok, nk) && !more[0].has(ok) && !more[1].has(nk)) {
        // Two loose slots become partners, on the first's number.
        const k = Math.min(on!, nn!);
        more[0].set(ok, k);
        more[1].set(nk, k);
      } else if (on !== nn) return false;
    }
    // Every pair agrees: bind for real, fresh numbers given out in slot order.
    const given = new Map<number, number>();
    const real = (n: number, cls: number): number => {
      if (n > 0) return n;
      let k = given.get(n);
      if (k === undefined) given.set(n, (k = this.fresh(cls)));
      return k;
    };
    for (let i = 0; i < a.length; i += 2) {
      const ok = slotKey(a[i]!, a[i + 1]!);
      const nk = slotKey(b[i]!, b[i + 1]!);
      const x = more[0].get(ok);
      const y = more[1].get(nk);
      // A slot numbered already is in the overlay only when it lent its number or took a loose partner's.
      if (x !== undefined) {
        old.set(ok, real(x, a[i]!));
        this.loose[0].delete(ok);
      }
      if (y !== undefined) {
        cur.set(nk, real(y, a[i]!));
        this.loose[1].delete(nk);
      }
    }
    return true;
  }

  /**
   * True when two strings could render equal: the same text around their
   * markers, markers of the same classes, and markers numbered on both sides
   * carrying the same number (or both loose: they would become partners).
   */
  compatible(a: string, b: string): boolean {
    if (a === b) return true;
    const ma = markersOf(a);
    const mb = markersOf(b);
    if (ma.length !== mb.length || ma.length === 0) return false;
    for (let i = 0; i < ma.length; i += 2) {
      if (ma[i] !== mb[i]) return false;
      const ok = slotKey(ma[i]!, ma[i + 1]!);
      const nk = slotKey(mb[i]!, mb[i + 1]!);
      const x = this.sides[0]!.get(ok);
      const y = this.sides[1]!.get(nk);
      if (x !== undefined && y !== undefined && x !== y && !this.bothLoose(ok, nk)) return false;
    }
    return a.replace(MARKER, '$1') === b.replace(MARKER, '$1');
  }

  /** numberPairMarkers on two JSON texts. */
  numberPairText(oldText: string, newText: string): boolean {
    return this.numberPairMarkers(markersOf(oldText), markersOf(newText));
  }

  /** Numbers, in walk order, every marker of a value not numbered yet (a value present on one side only, or what binding left). */
  numberAlone(side: 0 | 1, value: unknown): void {
    if (typeof value === 'string') {
      if (value.includes(OPEN)) this.numberString(side, value);
    } else if (Array.isArray(value)) {
      for (const x of value) this.numberAlone(side, x);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, x] of Object.entries(value)) {
        if (k.includes(OPEN)) this.numberString(side, k);
        this.numberAlone(side, x);
      }
    }
  }

  /** The value with markers replaced by <CLASS:n> for that side; parts without markers are shared, not copied. */
  render(side: 0 | 1, value: unknown): unknown {
    const map = this.sides[side]!;
    return mapMarked(value, (s) => {
      return s.replace(MARKER, (_m, c: string, v: string) => {
        const cls = decode(c);
        const n = map.get(slotKey(cls, decode(v)));
        return `<${this.table.className(cls)}${n === undefined ? '' : `:${n}`}>`;
      });
    });
  }
}
