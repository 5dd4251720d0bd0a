// Ordinal placeholders (<SID:1>, <UUID:2>, ...) that do not shift.
//
// Normalizing replaces each identifier with a marker that remembers its class
// and original value, made of private-use characters so no later pattern
// can match inside it. Pairing sees markers as un-numbered placeholders
// (<SID>), so an inserted request cannot change any key. Only then are the
// numbers given out, walking the pairs in order and numbering the old and the
// new entry of each pair in step, slot by slot: the same object maps to the
// same number on both sides, and an entry present on one side only takes its
// numbers after all paired ones, so it cannot renumber the rest.

const OPEN = '\uE000';
const SEP = '\uE001';
const CLOSE = '\uE002';
// Numbers are written in base 4096, one private-use character per digit.
const DIGIT0 = 0xe100;
const BASE = 0x1000;
const MARKER = /\uE000([\uE100-\uF0FF]+)\uE001([\uE100-\uF0FF]+)\uE002/g;

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

/** Interns ordinal classes and values for one diff run (both sides share it). */
export class OrdinalTable {
  private readonly classes: string[] = [];
  private readonly classIndex = new Map<string, number>();
  private readonly valueIndex = new Map<string, number>();
  private nextValue = 0;

  /** `classes`: class names to intern first, in order (RuleSet.ordinalClasses), so two tables agree on class numbers. */
  constructor(classes: readonly string[] = []) {
    for (const c of classes) this.classIndex.set(c, this.classes.push(c) - 1);
  }

  /** The marker standing for `value` of class `cls`. */
  mark(cls: string, value: string): string {
    let c = this.classIndex.get(cls);
    if (c === undefined) {
      c = this.classes.length;
      this.classes.push(cls);
      this.classIndex.set(cls, c);
    }
    let v = this.valueIndex.get(value);
    if (v === undefined) {
      v = this.nextValue++;
      this.valueIndex.set(value, v);
    }
    return OPEN + encode(c) + SEP + encode(v) + CLOSE;
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

/** Markers → un-numbered placeholders (<SID>): what pairing compares. */
export function unnumber(s: string, table: OrdinalTable): string {
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
    out += s.slice(from, at) + '<' + table.className(decode(s.slice(at + 1, sep))) + '>';
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
    for (const [k, x] of Object.entries(v)) out[f(k)] = mapStrings(x, f);
    return out;
  }
  return v;
}

interface Slot {
  slot: string;
  cls: number;
  value: number;
}

// The path to the value being walked, as segments: an array index (number),
// an object key (string), or a MarkerKey (a key that itself holds markers,
// named by its place among such keys of its object: ids as keys carry no name
// of their own). Joined into a slot name only where a marker is found, so the
// walk builds no string for the many values that hold none. Slot names are
// unambiguous (keys quoted), so two values with the same structure have the
// same slots in the same order, which is what OrdinalNumbering.numberPairText
// relies on.
class MarkerKey {
  constructor(
    readonly nth: number,
    readonly ofKey: boolean,
  ) {}
}
type Segment = string | number | MarkerKey;

function slotPath(path: Segment[]): string {
  let s = '';
  for (const p of path) {
    if (typeof p === 'number') s += `[${p}]`;
    else if (p instanceof MarkerKey) s += p.ofKey ? `{${p.nth}}` : `{${p.nth}}=`;
    else s += `.${JSON.stringify(p)}`;
  }
  return s;
}

function collectString(v: string, path: Segment[], out: Slot[]): void {
  const at = slotPath(path);
  let k = 0;
  for (const m of v.matchAll(MARKER)) out.push({ slot: `${at}#${k++}`, cls: decode(m[1]!), value: decode(m[2]!) });
}

function collect(v: unknown, path: Segment[], out: Slot[]): void {
  if (typeof v === 'string') {
    if (v.includes(OPEN)) collectString(v, path, out);
  } else if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      collect(v[i], path, out);
      path.pop();
    }
  } else if (v !== null && typeof v === 'object') {
    const src = v as Record<string, unknown>;
    let nth = 0;
    for (const key of Object.keys(src)) {
      if (key.includes(OPEN)) {
        path.push(new MarkerKey(nth, true));
        collectString(key, path, out);
        path.pop();
        path.push(new MarkerKey(nth++, false));
      } else path.push(key);
      collect(src[key], path, out);
      path.pop();
    }
  }
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
      for (let j = 0; j < i; j++) out[keys[j]!] = src[keys[j]!];
    }
    if (out) out[nk] = y;
  }
  return out ?? v;
}

// One number for a (class, value) pair: values stay far below 2^32 and
// classes are few, so the product is an exact integer (a cheaper map key than
// a string).
function slotKey(cls: number, value: number): number {
  return cls * 0x1_0000_0000 + value;
}

/** Numbers given out along the pairing, per side. */
export class OrdinalNumbering {
  private readonly counters = new Map<number, number>();
  private readonly sides = [new Map<number, number>(), new Map<number, number>()];

  constructor(private readonly table: OrdinalTable) {}

  private fresh(cls: number): number {
    const n = (this.counters.get(cls) ?? 0) + 1;
    this.counters.set(cls, n);
    return n;
  }

  private numberOne(side: 0 | 1, s: Slot): void {
    const key = slotKey(s.cls, s.value);
    if (!this.sides[side]!.has(key)) this.sides[side]!.set(key, this.fresh(s.cls));
  }

  /** Numbers the markers of a paired old/new value in step, slot by slot. */
  numberPair(oldValue: unknown, newValue: unknown): void {
    const a: Slot[] = [];
    const b: Slot[] = [];
    collect(oldValue, [], a);
    collect(newValue, [], b);
    const bySlot = new Map(b.map((s) => [s.slot, s]));
    for (const o of a) {
      const n = bySlot.get(o.slot);
      const ok = slotKey(o.cls, o.value);
      if (n && n.cls === o.cls) {
        const nk = slotKey(n.cls, n.value);
        const oNum = this.sides[0]!.get(ok);
        const nNum = this.sides[1]!.get(nk);
        if (oNum === undefined && nNum === undefined) {
          const k = this.fresh(o.cls);
          this.sides[0]!.set(ok, k);
          this.sides[1]!.set(nk, k);
          continue;
        }
      }
      this.numberOne(0, o);
    }
    for (const n of b) this.numberOne(1, n);
  }

  /**
   * numberPair for two values known to have the same structure (their
   * un-numbered JSON texts are equal), given as those JSON texts: numbers the
   * markers in step exactly as numberPair would, without parsing. True when
   * every slot then has the same number on both sides, so the rendered values
   * are equal; false when they may differ (numberPair on the parsed values is
   * then a no-op, all being numbered).
   */
  numberPairText(oldText: string, newText: string): boolean {
    return this.numberPairMarkers(markersOf(oldText), markersOf(newText));
  }

  /** numberPairText given each text's markersOf. */
  numberPairMarkers(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 2) if (a[i] !== b[i]) return false;
    const [old, cur] = this.sides as [Map<number, number>, Map<number, number>];
    for (let i = 0; i < a.length; i += 2) {
      const ok = slotKey(a[i]!, a[i + 1]!);
      const nk = slotKey(b[i]!, b[i + 1]!);
      if (!old.has(ok) && !cur.has(nk)) {
        const k = this.fresh(a[i]!);
        old.set(ok, k);
        cur.set(nk, k);
      } else if (!old.has(ok)) old.set(ok, this.fresh(a[i]!));
    }
    let same = true;
    for (let i = 0; i < b.length; i += 2) {
      const nk = slotKey(b[i]!, b[i + 1]!);
      if (!cur.has(nk)) cur.set(nk, this.fresh(b[i]!));
      if (old.get(slotKey(a[i]!, a[i + 1]!)) !== cur.get(nk)) same = false;
    }
    return same;
  }

  /** Numbers the markers of a value present on one side only. */
  numberAlone(side: 0 | 1, value: unknown): void {
    const a: Slot[] = [];
    collect(value, [], a);
    for (const s of a) this.numberOne(side, s);
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
