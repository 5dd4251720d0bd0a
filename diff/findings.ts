// Rows → findings (docs/diff.md "Findings"): a real upgrade changes a handful
// of things that show up in hundreds of places. A finding is every
// difference row of one class and kind with the same field pattern (indices
// as [], ordinal numbers dropped) and the same old → new values, across any
// number of entries and routes; rows of one pattern whose values vary group
// per route, and whole entries (missing, extra, reordered) always do. A
// field that was removed or added is one finding whatever values it held
// (shown when they are all the same). What follows from a status change
// folds under it (findings-fold.ts). Pure.
import { createHash } from 'node:crypto';
import { canonical } from '../core/index.js';
import { joinPath } from './selector.js';
import { hasMarker } from './normalize/index.js';
import type { Difference, DifferenceClass, Finding } from './types.js';
import { appendAll } from '../core/index.js';
import { foldConsequences, followsFromStatus, isStatusPattern, statusChanges, statusKey, type BuiltFinding } from './findings-fold.js';
import { valueShape } from './ratified.js';


/** A field pattern with ordinal numbers dropped: `items[]["<UUID:3>"]` → `items[]["<UUID>"]`. */
export function findingPattern(pattern: string): string {
  return pattern.replace(/<([A-Z][A-Z0-9_]*):\d+>/g, '<$1>');
}

/**
 * The field patterns entries have (their shapes), as the differences name
 * them: every path from the top with indices as [] and identifiers as their
 * class. Patterns are nodes of a trie, so walking an entry builds no strings
 * (a path is spelled once, when first met); an entry's shape is the set of
 * nodes it touches, and equal sets get one shape number.
 */
export class ShapeIndex {
  private readonly paths: string[] = [];
  private readonly children: Array<Map<string, number>> = [];
  private readonly itemOf: number[] = [];
  private seen = new Uint32Array(1024);
  private epoch = 0;
  private readonly shapeIds = new Map<string, number>();
  private readonly shapeNodes: number[][] = [];
  private readonly roots: Record<'request' | 'response' | 'ws' | 'grpc', number>;

  /** `unnumberKey` turns a key holding markers into its un-numbered form. */
  constructor(private readonly unnumberKey: (k: string) => string) {
    this.roots = { request: this.node('request'), response: this.node('response'), ws: this.node('ws'), grpc: this.node('grpc') };
  }

  private node(path: string): number {
    this.children.push(new Map());
    this.itemOf.push(-1);
    const n = this.paths.push(path) - 1;
    if (n >= this.seen.length) {
      const next = new Uint32Array(this.seen.length * 2);
      next.set(this.seen);
      this.seen = next;
    }
    return n;
  }

  private child(n: number, key: string): number {
    const children = this.children[n]!;
    // Most keys hold no markers and were met before: found as they are, no marker test.
    // (Keys holding markers are not kept as met: ids as keys would grow the map per entry.)
    let c = children.get(key);
    if (c !== undefined) return c;
    const k = hasMarker(key) ? this.unnumberKey(key) : key;
    c = children.get(k);
    if (c === undefined) children.set(k, (c = this.node(joinPath(this.paths[n]!, k))));
    return c;
  }

  private item(n: number): number {
    let c = this.itemOf[n]!;
    if (c < 0) this.itemOf[n] = c = this.node(`${this.paths[n]}[]`);
    return c;
  }

  private touched: number[] = [];

  private mark(n: number): void {
    if (this.seen[n] !== this.epoch) {
      this.seen[n] = this.epoch;
      this.touched.push(n);
    }
  }

  // Marks node n and everything under it for value v (primitives mark their node only).
  private walk(v: unknown, n: number): void {
    this.mark(n);
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      if (!v.length) return;
      const c = this.item(n);
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (x !== null && typeof x === 'object') this.walk(x, c);
        else this.mark(c);
      }
      return;
    }
    for (const k in v) {
      const x = (v as Record<string, unknown>)[k];
      const c = this.child(n, k);
      if (x === null || typeof x !== 'object') this.mark(c);
      else this.walk(x, c);
    }
  }

  /** The shape number of an entry's compared content. */
  add(body: { request: unknown; response: unknown; ws?: unknown; grpc?: unknown }): number {
    if (++this.epoch === 0xffffffff) {
      this.seen.fill(0);
      this.epoch = 1;
    }
    this.touched = [];
    this.walk(body.request, this.roots.request);
    this.walk(body.response, this.roots.response);
    if (body.ws !== undefined) this.walk(body.ws, this.roots.ws);
    if (body.grpc !== undefined) this.walk(body.grpc, this.roots.grpc);
    // The nodes in the order first met: the same structure meets them in the
    // same order (key order aside, which only makes two shapes of one set).
    // Keyed by two 32-bit hashes of that order rather than a joined string.
    const touched = this.touched;
    let h1 = 0x811c9dc5;
    let h2 = touched.length;
    for (let i = 0; i < touched.length; i++) {
      h1 = Math.imul(h1 ^ touched[i]!, 0x01000193);
      h2 = Math.imul(h2 + touched[i]! + 0x9e3779b9, 0x85ebca6b) ^ (h2 >>> 13);
    }
    const key = `${h1 >>> 0}:${h2 >>> 0}:${touched.length}`;
    let s = this.shapeIds.get(key);
    if (s !== undefined && !sameNodes(this.shapeNodes[s]!, touched)) s = undefined; // a hash collision: a shape of its own, unnamed
    if (s === undefined) {
      s = this.shapeNodes.push(touched) - 1;
      if (!this.shapeIds.has(key)) this.shapeIds.set(key, s);
    }
    return s;
  }

  /** Every shape's patterns, joined by newlines, by shape number (to hand to ShapeTable.addText). */
  texts(): string[] {
    return this.shapeNodes.map((nodes) => nodes.map((n) => this.paths[n]).join('\n'));
  }

  /** Every shape's patterns as a set, by shape number. */
  sets(): Array<Set<string>> {
    return this.shapeNodes.map((nodes) => new Set(nodes.map((n) => this.paths[n]!)));
  }
}

function sameNodes(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Interns shapes: equal shapes get one number, so entries carry a number and the table the patterns. */
export class ShapeTable {
  /** Patterns of each shape. */
  readonly shapes: Array<Set<string>> = [];
  private readonly index = new Map<string, number>();

  /** The number of a shape given as its sorted patterns. */
  add(patterns: string[]): number {
    const key = patterns.join('\n');
    let n = this.index.get(key);
    if (n === undefined) {
      n = this.shapes.push(new Set(patterns)) - 1;
      this.index.set(key, n);
    }
    return n;
  }

  /** The number of a shape given as its joined text (from a worker's table). */
  addText(text: string): number {
    return this.add(text === '' ? [] : text.split('\n'));
  }
}

/** One line-up as the findings stage sees it: its route and each side's shape. */
export interface PairShape {
  route: string;
  old?: Set<string>;
  new?: Set<string>;
}

/** The whole hash a finding id is cut from (hex). */
export function findingHash(parts: string[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}

/** A stable finding id: `F` and nine hex digits of a hash of its class-independent parts. */
export function findingId(parts: string[]): string {
  return idOfHash(findingHash(parts));
}

/** The finding id of a findingHash. */
export function idOfHash(hash: string): string {
  return `F${hash.slice(0, 9)}`;
}

/**
 * What a row groups by within its finding's class, kind, pattern and reason (docs/diff.md "Findings"): whole
 * entries and moves by route; a field that came or went by its presence, whatever it held; a changed field by
 * its values (ordinal numbers dropped). `bb diff` and `bb shadow`'s live findings group by it.
 */
export function rowSignature(d: Pick<Difference, 'path' | 'kind' | 'route' | 'old' | 'new'>): string {
  return d.path === '' || WHOLE.has(d.kind) || d.kind === 'reordered'
    ? `route\n${d.route}`
    : d.kind === 'removed' || d.kind === 'added'
      ? 'presence'
      : `value\n${findingPattern(valueSig(d.old))}\n${findingPattern(valueSig(d.new))}`;
}

/** True for a signature that is a group however few entries have it (by route, by presence); a value signature is one only when more than one entry has it. */
export function groupsAlone(sig: string): boolean {
  return sig === 'presence' || sig.startsWith('route\n');
}

/**
 * The part of its route a value seen in one entry only joins (values that vary group per route): the kinds of
 * its values, and its entry's status change where the pattern is told apart by it (`change`).
 */
export function varyingPart(old: unknown, cur: unknown, change: string | undefined): string {
  return `${valueShape(old) ?? '∅'} → ${valueShape(cur) ?? '∅'}${change ? `\nstatus ${change}` : ''}`;
}

/** A route's group of values seen in one entry each: named by the route alone, or by route and part where the route has several parts. */
export function varyingSignature(route: string, part: string, parts: number): string {
  return parts === 1 ? `route\n${route}` : `route\n${route}\n${part}`;
}

/**
 * Whether a group splits by its entries' status changes (each part then folds under its cause): when every
 * entry had one (`undefined`: none) and they had more than one. A part's signature is `withStatus`'s.
 */
export function splitsByStatus(changes: Iterable<string | undefined>): boolean {
  const seen = new Set<string>();
  for (const c of changes) {
    if (c === undefined) return false;
    seen.add(c);
  }
  return seen.size > 1;
}

/** The signature of a group's part of one status change. */
export function withStatus(sig: string, change: string): string {
  return `${sig}\nstatus ${change}`;
}

/** Whether a pattern's groups are told apart by their entries' status changes: a status, and what follows from one. */
export function byStatusPattern(pattern: string): boolean {
  return isStatusPattern(pattern) || followsFromStatus(pattern);
}

const CLASS_ORDER: Record<DifferenceClass, number> = { real: 0, known: 1, noise: 2 };
// Timing findings (slower) are about a route as a whole, like missing and extra entries.
const WHOLE = new Set(['missing', 'extra', 'slower']);

/**
 * Groups the classified rows into findings (setting each row's `finding`),
 * real first, largest first within a class. `pairs`: every line-up's route
 * and shapes, for the `of` counts.
 */
export function buildFindings(differences: Difference[], pairs: PairShape[]): Finding[] {
  // (class, kind, pattern, reason) → value signature → rows
  const buckets = new Map<string, Map<string, Difference[]>>();
  for (const d of differences) {
    const pattern = findingPattern(d.pattern);
    const b = `${d.class}\n${d.kind}\n${pattern}\n${d.reason ?? ''}`;
    let sub = buckets.get(b);
    if (!sub) buckets.set(b, (sub = new Map()));
    const sig = rowSignature(d);
    const list = sub.get(sig);
    if (list) list.push(d);
    else sub.set(sig, [d]);
  }
  // Per route, the line-ups counted by their (old shape, new shape): shapes
  // are shared sets, so a route has a few combinations however many pairs it
  // has, and each finding's counts look at those, not at every pair.
  const shapeIds = new Map<Set<string> | undefined, number>([[undefined, 0]]);
  const idOf = (s: Set<string> | undefined) => {
    let id = shapeIds.get(s);
    if (id === undefined) shapeIds.set(s, (id = shapeIds.size));
    return id;
  };
  const routesOf = new Map<string, Map<string, PairShape & { n: number }>>();
  for (const p of pairs) {
    let combos = routesOf.get(p.route);
    if (!combos) routesOf.set(p.route, (combos = new Map()));
    const key = `${idOf(p.old)}:${idOf(p.new)}`;
    const c = combos.get(key);
    if (c) c.n++;
    else combos.set(key, { ...p, n: 1 });
  }
  const has = (p: PairShape, pattern: string) => !!(p.old?.has(pattern) || p.new?.has(pattern));
  const of = (pattern: string, routes: string[], whole: boolean) => {
    let n = 0;
    for (const r of routes) for (const c of routesOf.get(r)?.values() ?? []) if (whole || has(c, pattern)) n += c.n;
    return n;
  };
  const fieldRoutes = (pattern: string) => {
    const out = new Set<string>();
    for (const [r, combos] of routesOf) for (const c of combos.values()) if (has(c, pattern)) out.add(r);
    return out;
  };
  const built: BuiltFinding[] = [];
  const statusOf = statusChanges(differences);
  for (const sub of buckets.values()) {
    // A status and what follows from it are told apart by each entry's status change (findings-fold.ts).
    const byStatus = byStatusPattern(findingPattern(sub.values().next().value![0]!.pattern));
    const statusChange = (r: Difference) => (byStatus ? statusOf.get(statusKey(r.class, r.entry)) : undefined);
    // Value groups seen in one entry only are what varies: those group per
    // route, apart by the kinds of their values and by their entries' status
    // change (a JSON body that became a 404 page and a text that was edited are
    // two changes, not one that varies).
    const groups: Array<{ sig: string; rows: Difference[] }> = [];
    const varying = new Map<string, Map<string, Difference[]>>();
    for (const [sig, rows] of sub) {
      if (groupsAlone(sig) || new Set(rows.map((r) => r.entry)).size > 1) appendAll(groups, splitByStatus(sig, rows, statusChange));
      else {
        const r = rows[0]!;
        let parts = varying.get(r.route);
        if (!parts) varying.set(r.route, (parts = new Map()));
        const part = varyingPart(r.old, r.new, statusChange(r));
        const list = parts.get(part);
        if (list) appendAll(list, rows);
        else parts.set(part, [...rows]);
      }
    }
    // A route's varying rows in one part keep the id they always had; parts are named by what sets them apart.
    for (const [route, parts] of varying) for (const [part, rows] of parts) groups.push({ sig: varyingSignature(route, part, parts.size), rows });
    for (const { sig, rows } of groups) {
      const first = rows[0]!;
      const pattern = findingPattern(first.pattern);
      const routes = [...new Set(rows.map((r) => r.route))];
      const entries = [...new Set(rows.map((r) => r.entry))];
      const sameValues = rows.every((r) => canonical(r.old) === canonical(first.old) && canonical(r.new) === canonical(first.new));
      const whole = first.path === '' || WHOLE.has(first.kind) || /^ws\.messages\[\]$/.test(pattern);
      const id = findingId([first.kind, pattern, sig]);
      const samples = findingSamples(rows);
      // A real finding at a ratified place says what was ratified (its rows broke the same entry, or the first one's).
      const ratified = rows.find((r) => r.ratified)?.ratified;
      const f: Finding = {
        id,
        class: first.class,
        kind: first.kind,
        pattern,
        ...(sameValues && first.old !== undefined ? { old: first.old } : {}),
        ...(sameValues && first.new !== undefined ? { new: first.new } : {}),
        rows: rows.map((r) => r.id),
        entries: entries.length,
        of: Math.max(entries.length, of(pattern, routes, whole)),
        routes,
        everywhere: !whole && [...fieldRoutes(pattern)].every((r) => routes.includes(r)),
        samples,
        ...(first.reason ? { reason: first.reason } : {}),
        ...(ratified ? { ratified } : {}),
      };
      for (const r of rows) r.finding = id;
      built.push({ finding: f, rows });
    }
  }
  return foldConsequences(built).sort((x, y) => CLASS_ORDER[x.class] - CLASS_ORDER[y.class] || y.rows.length - x.rows.length || y.entries - x.entries || (x.pattern < y.pattern ? -1 : x.pattern > y.pattern ? 1 : 0) || (x.id < y.id ? -1 : 1));
}

/**
 * A group of rows whose entries all had their status changed, in more than
 * one way: one group per status change, so each part folds under its cause.
 * Any other group stays whole (a header that changed on every response is one
 * change, whatever some of those responses' status did).
 */
function splitByStatus(sig: string, rows: Difference[], statusChange: (r: Difference) => string | undefined): Array<{ sig: string; rows: Difference[] }> {
  if (!splitsByStatus(rows.map(statusChange))) return [{ sig, rows }];
  const parts = new Map<string, Difference[]>();
  for (const r of rows) {
    const change = statusChange(r)!;
    const list = parts.get(change);
    if (list) list.push(r);
    else parts.set(change, [r]);
  }
  return [...parts].map(([change, part]) => ({ sig: withStatus(sig, change), rows: part }));
}

// Rows hold rendered values (<UUID:3>, never markers): their JSON, ordinal numbers dropped by the caller.
function valueSig(v: unknown): string {
  return v === undefined ? '∅' : canonical(v);
}

/**
 * Up to three entries a finding shows, the first row's first: entries whose
 * request line none shown has come first (a finding across routes names
 * three of them, not one route's three calls), then the others in row order.
 */
function findingSamples(rows: ReadonlyArray<{ entry: string; request: string }>): Finding['samples'] {
  const samples: Finding['samples'] = [];
  const entries = new Set<string>();
  const requests = new Set<string>();
  for (const distinct of [true, false]) {
    for (const r of rows) {
      if (samples.length === 3) return samples;
      if (entries.has(r.entry) || (distinct && requests.has(r.request))) continue;
      entries.add(r.entry);
      requests.add(r.request);
      samples.push({ id: r.entry, request: r.request });
    }
  }
  return samples;
}
