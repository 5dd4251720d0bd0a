// A target's counterparts of the primary's issued values, for `bb shadow`
// (docs/shadow.md "Sessions: each target's own ids and cookies"): where the
// primary's answer and a target's answer to the same request issued
// different values at the same place (issued.ts's responseValues: a JSON
// field, Location, a Set-Cookie value, an event's field; messageValues: a
// field of the same server WebSocket message of one conversation), the
// target's value is the counterpart of the primary's. The relay rewrites later mirrored
// requests with them (each target gets its own ids and cookies back), and
// the live comparison binds them across its batches (a value issued in one
// batch and sent back in a later one compares through the binding, as
// `bb diff` of the whole captures binds it: scenario/shadow/compare.ts).
// One learning for both, so the comparison binds what the relay rewrote.
import { madeNotWord, placeSaysId, placeSaysQuantity, responseValues, sameIssued, streamMessageValues, type IssuedValue, type ResponseView } from './issued.js';

/** Counterparts remembered, at most; past it the oldest go. */
const MAX_COUNT = 100_000;
/** Characters of values and counterparts remembered, at most (a token may be 4 KiB: captured content is hostile input); past it the oldest go. */
const MAX_CHARS = 8 * 1024 * 1024;

/** Primary value → one target's value, learned from their answers to the same requests. */
export class Counterparts {
  private readonly map = new Map<string, string>();
  private chars = 0;
  /** What the primary's client sent first, for the callers that learn as traffic crosses (bb shadow's relay: its tee sets it). */
  sends?: ClientSends;
  /** With `track`: primary values this target issued nothing for (unlike). */
  private readonly unlikeValues?: Set<string>;
  private unlikeChars = 0;
  /** With `track`: primary values met under a JSON key that says id (isId). */
  private readonly idValues?: Set<string>;
  private idChars = 0;

  /**
   * `track`: also remember what the live comparison asks of the primary's values beside their counterparts
   * (scenario/shadow/batch-binding.ts): those the target issued nothing for, at their place (its answer lacked it,
   * or it gave none: learnNone), told from those it issued alike (`unlike`); and those met under a JSON key that
   * says id (`isId`). The relay needs only the counterparts.
   */
  constructor(track = false) {
    if (!track) return;
    this.unlikeValues = new Set();
    this.idValues = new Set();
  }

  /** A primary value met, where this target's answer differed, in a JSON field whose key says id (track). */
  isId(value: string): boolean {
    return this.idValues?.has(value) === true;
  }

  /**
   * True for a primary value the target issued nothing for where the primary issued it (track): neither
   * the value itself, as a target that answered alike issued it, nor a counterpart.
   */
  unlike(value: string): boolean {
    return this.unlikeValues?.has(value) === true && !this.map.has(value);
  }

  /** The target gave no answer to the request the primary answered so (track): each value it issued is unlike. */
  learnNone(primary: ResponseView, own?: (value: string) => boolean): void {
    if (!this.unlikeValues) return;
    for (const v of responseValues(primary)) if (madeNotWord(v.value) && !own?.(v.value) && !placeSaysQuantity(v.place)) this.addUnlike(v.value);
  }

  private addUnlike(value: string): void {
    this.unlikeChars = addBounded(this.unlikeValues!, value, this.unlikeChars);
  }

  /** Distinct primary values with a counterpart. */
  get size(): number {
    return this.map.size;
  }

  /** The target's value where the primary issued `value`, if they differed. */
  get(value: string): string | undefined {
    return this.map.get(value);
  }

  /**
   * Learns from the primary's answer and the target's to one request: each place where both issued a
   * value and the values differ. Returns the primary's values learned (none when the answers issue alike).
   * `own`: true for a value the primary's client sent before this answer issued it (ClientSends): the
   * client's own never binds (bound.ts), whatever the answers echo of it.
   */
  learn(primary: ResponseView, target: ResponseView, own?: (value: string) => boolean): string[] {
    // The same answer issues the same values at the same places: nothing to learn, and neither is parsed.
    if (sameIssued(primary, target)) return [];
    return this.learnValues(responseValues(primary), () => responseValues(target), own);
  }

  /**
   * Learns from the r-th server message of one stream on the primary and on the target (a WebSocket's text
   * messages, an event stream's events, a gRPC call's messages); the primary's values learned.
   */
  learnMessage(r: number, primary: string | Uint8Array, target: string | Uint8Array, own?: (value: string) => boolean): string[] {
    if (typeof primary !== typeof target) return [];
    if (typeof primary === 'string' ? primary === target : Buffer.compare(primary, target as Uint8Array) === 0) return [];
    return this.learnValues(streamMessageValues(primary, r), () => streamMessageValues(target, r), own);
  }

  /** Takes a counterpart learned elsewhere (bb shadow's relay, from stream messages the comparison has not read yet). */
  teach(value: string, counterpart: string): void {
    if (value !== counterpart) this.set(value, counterpart);
  }

  private learnValues(primary: IssuedValue[], target: () => IssuedValue[], own?: (value: string) => boolean): string[] {
    // The primary issued nothing: nothing of the target's is read.
    if (primary.length === 0) return [];
    const theirs = new Map(primary.map((v) => [v.place, v.value]));
    const learned: string[] = [];
    const values = target();
    for (const v of values) {
      const p = theirs.get(v.place);
      // A word never binds (bound.ts): `bb diff` of the captures compares it as it is, so the relay sends it on as the client wrote it.
      if (p === undefined || p === v.value || !madeNotWord(p) || own?.(p)) continue;
      // A value under a quantity key (a price the client echoes): the relay sends each target its own, as its
      // client would, but `bb diff` binds none (issued.ts quantityKey), so neither does the live comparison (track),
      // nor is it told of one (the primary's values learned).
      const quantity = placeSaysQuantity(v.place);
      if (quantity && this.unlikeValues) continue;
      this.set(p, v.value);
      if (!quantity) learned.push(p);
    }
    if (this.unlikeValues) {
      const places = new Set(values.map((v) => v.place));
      for (const v of primary) {
        if (!madeNotWord(v.value) || own?.(v.value) || placeSaysQuantity(v.place)) continue;
        if (!places.has(v.place)) this.addUnlike(v.value);
        if (placeSaysId(v.place)) this.idChars = addBounded(this.idValues!, v.value, this.idChars);
      }
    }
    return learned;
  }

  private set(value: string, counterpart: string): void {
    const old = this.map.get(value);
    if (old !== undefined) {
      this.chars -= value.length + old.length;
      // Re-learned: it moves to the newest end.
      this.map.delete(value);
    }
    this.map.set(value, counterpart);
    this.chars += value.length + counterpart.length;
    while (this.map.size > MAX_COUNT || this.chars > MAX_CHARS) {
      const [k, v] = this.map.entries().next().value!;
      this.map.delete(k);
      this.chars -= k.length + v.length;
    }
  }
}

/** Adds `value` to a set bounded as counterparts are (the oldest go); the set's characters after. */
function addBounded(set: Set<string>, value: string, chars: number): number {
  if (set.has(value)) return chars;
  set.add(value);
  chars += value.length;
  while (set.size > MAX_COUNT || chars > MAX_CHARS) {
    const [k] = set;
    set.delete(k!);
    chars -= k!.length;
  }
  return chars;
}

/** Values whose first send is remembered, at most, and their characters; past it the oldest go (captured content is hostile input). */
const MAX_SENT = 200_000;
const MAX_SENT_CHARS = 8 * 1024 * 1024;

/**
 * When the primary's client first sent each value, on a clock of the run's own ticks (bounded: the oldest
 * go). `bb diff` never binds a value the client sent before any server issued it (bound.ts: the client's
 * own, a name it typed, an id it made up), so bb shadow learns no counterpart of it either, though a
 * target's answer echoes it otherwise (a candidate that capitalizes a user name the client chose): the
 * relay sends it on as the client wrote it, and the comparison compares it as it is.
 */
export class ClientSends {
  private readonly first = new Map<string, number>();
  private chars = 0;
  private clock = 0;

  /** The next tick of the clock `note` and `before` read, for a caller that has none of its own (bb shadow's relay). */
  tick(): number {
    return ++this.clock;
  }

  /** Notes values the client sent at tick `at` (words never bind: not kept). */
  note(tokens: Iterable<string>, at: number): void {
    for (const t of tokens) {
      if (this.first.has(t) || !madeNotWord(t)) continue;
      this.first.set(t, at);
      this.chars += t.length;
      while (this.first.size > MAX_SENT || this.chars > MAX_SENT_CHARS) {
        const [k] = this.first.keys();
        this.first.delete(k!);
        this.chars -= k!.length;
      }
    }
  }

  /** Whether the client first sent `value` before tick `at`. */
  before(value: string, at: number): boolean {
    const t = this.first.get(value);
    return t !== undefined && t < at;
  }

  /** `before` at `at`, as Counterparts.learn's `own` asks it. */
  sentBefore(at: number): (value: string) => boolean {
    return (value) => this.before(value, at);
  }
}
