// Value correspondence (docs/diff.md "Ids numbered along aligned places"): an
// identifier the server made up is equal in the old and the new capture when it
// sits in the same places. For one pair of entries, the walk meets old and new
// values at the same aligned place — same key, array items aligned by identity
// (diff/arrays.ts), WebSocket messages lined up as the comparison lines them up
// — and binds the markers it meets there to one number. Only then is what no
// place bound numbered, in walk order: a field present on one side only (a
// removed Location header carrying the new record's id) can no longer take a
// number before the place where both sides hold the id.
import { alignItems, identityOf, type ArrayRules } from './arrays.js';
import { lineUpMessages } from './compare.js';
import { canonical } from '../core/index.js';
import { eventIdentity } from './streams.js';
import { joinPath } from './selector.js';
import { hasMarker, markersOf, type OrdinalNumbering } from './normalize/index.js';
import { couldBeShape, ID_KEY_TOKEN_CLASSES, SHAPE_CLASSES } from './normalize/shapes.js';
import type { NormalizedEntry, NormalizedWsMessage } from './types.js';

/** What of an entry is compared (and so numbered). */
export type EntryBody = Pick<NormalizedEntry, 'request' | 'response' | 'ws' | 'grpc'>;

/** The classes a random id is marked as by its shape (generated-ids; id-key-tokens' shorter ones too). */
const SHAPES = new Set([...SHAPE_CLASSES, ...ID_KEY_TOKEN_CLASSES]);

/** The walk's state for one pair. */
class Binder {
  constructor(
    private readonly numbering: OrdinalNumbering,
    private readonly rules: ArrayRules,
    /** The old response's SSE events: that array aligns as a stream (diff/streams.ts), and walks need not build paths to know it. */
    private readonly events?: unknown[],
  ) {}

  /** Renders a value of one side as it stands (bound markers numbered, others as <CLASS>), for alignment tokens. */
  private token(side: 0 | 1, v: unknown): string {
    return canonical(this.numbering.render(side, v));
  }

  /** True when the two values could render equal (numbers given so far agree). */
  compatible(x: unknown, y: unknown): boolean {
    if (x === y) return true;
    if (typeof x === 'string' || typeof y === 'string') return typeof x === 'string' && typeof y === 'string' && hasMarker(x) && this.numbering.compatible(x, y);
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) if (!this.compatible(x[i], y[i])) return false;
      return true;
    }
    if (Array.isArray(y)) return false;
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (kx.length !== ky.length) return false;
    for (let i = 0; i < kx.length; i++) {
      const a = kx[i]!;
      const b = ky[i]!;
      if (a !== b && !(hasMarker(a) && this.numbering.compatible(a, b))) return false;
      if (!this.compatible((x as Record<string, unknown>)[a], (y as Record<string, unknown>)[b])) return false;
    }
    return true;
  }

  /**
   * A random id the generated-ids rule read as words on one side only (its letters happened to: shapes.ts
   * couldBeShape) sits as its text where the other side holds a marker of its shape, as a whole value or inside
   * the same text (`/orders/<id>/items`): it is given a marker of that shape on its side
   * (OrdinalNumbering.adoptAlong), so the two compare by the numbering as two ids of that shape do, not as a
   * changed value. True when one was adopted.
   */
  adoptShape(a: Record<string | number, unknown> | unknown[], b: Record<string | number, unknown> | unknown[], ka: string | number, kb: string | number): boolean {
    const x = (a as Record<string | number, unknown>)[ka];
    const y = (b as Record<string | number, unknown>)[kb];
    if (typeof x !== 'string' || typeof y !== 'string' || x === y || (!hasMarker(x) && !hasMarker(y))) return false;
    // The side with fewer markers (none, or one id of several read as words) read as the other's: its text where
    // that one has text, an id of each shape where that one has one.
    const mx = markersOf(x).length;
    const my = markersOf(y).length;
    if (mx === my) return false;
    const may = (token: string, cls: string) => SHAPES.has(cls) && couldBeShape(token, cls);
    const adopted = mx > my ? this.numbering.adoptAlong(1, x, y, may) : this.numbering.adoptAlong(0, y, x, may);
    if (adopted === undefined) return false;
    if (mx > my) (b as Record<string | number, unknown>)[kb] = adopted;
    else (a as Record<string | number, unknown>)[ka] = adopted;
    return true;
  }

  /** Binds what sits at the same aligned places of `x` (old) and `y` (new). */
  bind(x: unknown, y: unknown, path: string): void {
    if (typeof x === 'string') {
      if (typeof y === 'string' && hasMarker(x) && hasMarker(y)) this.numbering.bindStrings(x, y);
      return;
    }
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return;
    if (Array.isArray(x)) {
      if (Array.isArray(y)) this.bindArrays(x, y, path);
      return;
    }
    if (Array.isArray(y)) return;
    const a = x as Record<string, unknown>;
    const b = y as Record<string, unknown>;
    const markedA: string[] = [];
    const markedB: string[] = [];
    for (const k of Object.keys(a)) {
      if (hasMarker(k)) markedA.push(k);
      else if (Object.hasOwn(b, k)) {
        this.adoptShape(a, b, k, k);
        this.bind(a[k], b[k], this.rules.needsPaths ? joinPath(path, k) : path);
      }
    }
    for (const k of Object.keys(b)) if (hasMarker(k)) markedB.push(k);
    // Keys that are identifiers themselves: by place among such keys.
    for (let i = 0; i < markedA.length && i < markedB.length; i++) {
      this.numbering.bindStrings(markedA[i]!, markedB[i]!);
      this.bind(a[markedA[i]!], b[markedB[i]!], path);
    }
  }

  private bindArrays(a: unknown[], b: unknown[], path: string): void {
    const item = (i: number) => (this.rules.needsPaths ? joinPath(path, i) : path);
    // Most arrays hold the same items in the same places: pair them by place.
    if (a.length === b.length) {
      let same = true;
      for (let i = 0; same && i < a.length; i++) same = this.compatible(a[i], b[i]);
      if (same) {
        for (let i = 0; i < a.length; i++) this.bind(a[i], b[i], item(i));
        return;
      }
      // The same items but for a random id one side's rule read as words: by place too.
      let adopted = false;
      for (let i = 0; i < a.length; i++) adopted = this.adoptShape(a, b, i, i) || adopted;
      if (adopted && a.every((x, i) => this.compatible(x, b[i]))) {
        for (let i = 0; i < a.length; i++) this.bind(a[i], b[i], item(i));
        return;
      }
    }
    const keys = this.rules.keysFor(path);
    const identity = a === this.events ? eventIdentity : identityOf;
    const ra = a.map((v) => this.numbering.render(0, v));
    const rb = b.map((v) => this.numbering.render(1, v));
    const lineup = alignItems(
      ra.map(canonical),
      rb.map(canonical),
      a.map((v) => identity(v, keys, (k) => this.token(0, k))),
      b.map((v) => identity(v, keys, (k) => this.token(1, k))),
      this.rules.unordered(path),
      { old: ra, new: rb },
    );
    for (const l of lineup) if (l.old !== undefined && l.new !== undefined) this.bind(a[l.old], b[l.new], item(l.old));
  }

  bindMessages(a: NormalizedWsMessage[], b: NormalizedWsMessage[], order: 'direction' | 'total' | undefined, root: 'ws' | 'grpc' = 'ws'): void {
    const lineup = lineUpMessages(a, b, order, {
      same: (x, y) => this.compatible(x, y),
      token: (side, v) => this.token(side, v),
      value: (side, v) => this.numbering.render(side, v),
    }, this.rules.keysFor(`${root}.messages`));
    for (const l of lineup) if (l.old !== undefined && l.new !== undefined) this.bind(a[l.old]!.data, b[l.new]!.data, `${root}.messages[${l.old}].data`);
  }
}

/**
 * Numbers the markers of one pair (old, new): first what the aligned walk
 * meets on both sides, then, in walk order, what is left on each side.
 */
export function bindPair(numbering: OrdinalNumbering, a: EntryBody, b: EntryBody, rules: ArrayRules, wsOrder?: 'direction' | 'total'): void {
  const binder = new Binder(numbering, rules, a.response.events);
  binder.bind(a.request, b.request, 'request');
  binder.bind(a.response, b.response, 'response');
  if (a.ws && b.ws) {
    binder.bindMessages(a.ws.messages, b.ws.messages, wsOrder);
    binder.bind(a.ws.close, b.ws.close, 'ws.close');
  }
  if (a.grpc && b.grpc) binder.bindMessages(a.grpc.messages, b.grpc.messages, wsOrder, 'grpc');
  numbering.numberAlone(0, a);
  numbering.numberAlone(1, b);
}
