// Keyed ordinals (docs/diff.md "Redacted secrets"): markers whose value is
// an identity of its own, the same in every recording made under one key,
// rather than an index the run's table gave out. bb's redaction placeholder
// is one: `<redacted:XXXXXXXX>` is an HMAC of the secret under the bb home's
// key, so the same placeholder on both sides is the same secret, wherever it
// sits.
//
// Numbering such a class (ordinals.ts OrdinalNumbering) follows two rules:
// - a value present on both sides is its own partner: one number on both
//   sides, and it never binds to another value (a secret that changed at
//   one place while it still pairs with itself elsewhere renders as a
//   change, whichever place the walk meets first);
// - a value present on one side only (recorded under another key, or a
//   secret the server made up for each run) binds one to one to the value at
//   the same aligned place on the other side, as every ordinal does (one
//   numbered alone first still takes its partner when they first meet).
// Both need to know, before the first pair is numbered, which values each
// side holds: the stores collect them (keyedSlotsIn) as they summarize.

/** The first 8 hex digits of a placeholder (`<redacted:0123abcd>`) as a number: its identity under its key. */
export function placeholderIdentity(placeholder: string): number {
  return parseInt(placeholder.slice(10, 18), 16);
}

// One number for a (class, value) pair: values stay below 2^32 and classes
// are few, so the product is an exact integer (a cheaper map key than a string).
export function slotKey(cls: number, value: number): number {
  return cls * 0x1_0000_0000 + value;
}

/** The indices of the keyed classes (RuleSet.keyedClasses) in a table seeded with the rules' classes. */
export function keyedClassIndices(table: { indexOf(cls: string): number | undefined }, names: readonly string[]): Set<number> {
  const out = new Set<number>();
  for (const n of names) {
    const c = table.indexOf(n);
    if (c !== undefined) out.add(c);
  }
  return out;
}

/** Adds to `into` the slots of a markersOf sequence ([class, value] flattened) whose class is keyed. */
export function keyedSlotsIn(marks: ArrayLike<number>, keyedClasses: ReadonlySet<number>, into: Set<number>): void {
  if (keyedClasses.size === 0) return;
  for (let i = 0; i < marks.length; i += 2) if (keyedClasses.has(marks[i]!)) into.add(slotKey(marks[i]!, marks[i + 1]!));
}

/** What numbering needs to know of the keyed classes of one run. */
export class KeyedSlots {
  /** Slots that occur on both sides: each is the same secret on both, its own partner. */
  private readonly both = new Set<number>();

  /** `classes`: the keyed class indices; `old`, `cur`: the keyed slots each side's compared entries hold. */
  constructor(
    readonly classes: ReadonlySet<number>,
    old: ReadonlySet<number>,
    cur: ReadonlySet<number>,
  ) {
    const [small, large] = old.size <= cur.size ? [old, cur] : [cur, old];
    for (const k of small) if (large.has(k)) this.both.add(k);
  }

  /** True when class `cls` is keyed. */
  has(cls: number): boolean {
    return this.classes.has(cls);
  }

  /** True when the slot occurs on both sides (its own partner). */
  onBoth(key: number): boolean {
    return this.both.has(key);
  }

  /** True when two slots met at one place may share a number: the same value, or values each on one side only. */
  mayPair(ok: number, nk: number): boolean {
    return ok === nk || (!this.both.has(ok) && !this.both.has(nk));
  }
}
