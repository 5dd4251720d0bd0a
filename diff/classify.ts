// Classify (docs/diff.md "Triage: known differences, noise, `bb known add`, `bb
// noise`"): each difference is real, known (it matches a `known` entry of the
// config, which carries the reason) or noise (the same entry and path also
// differ between two captures of the old build, kind for kind and value for
// value). A known entry that recorded
// values (diff/ratified.ts) passes only rows holding them; a row at its place
// with other values stays real and carries what was ratified. Known entries
// that matched nothing are stale. Pure functions.
import type { KnownConfig } from './config.js';
import { globMatcher } from '../core/index.js';
import { pathMatcher } from './selector.js';
import { knownValuesOf, valueShape, valuesMatch } from './ratified.js';
import { entryGlob, hasShape, varyingShape } from './noise-shape.js';
import type { Difference, DifferenceKind, NoiseHidden, StaleKnown } from './types.js';

/** A compiled known entry. */
interface KnownMatcher {
  index: number;
  entry: KnownConfig;
  where: (id: string) => boolean;
  path: (p: string) => boolean;
}

function compile(known: KnownConfig[]): KnownMatcher[] {
  return known.map((entry, index) => ({
    index,
    entry,
    where: whereMatcher(entry.where),
    // An empty path selects the whole-entry rows (missing / extra / reordered entry) only.
    path: entry.path === '' ? (p: string) => p === '' : pathMatcher(entry.path),
  }));
}

/** A known entry's `where`: one glob, or any of several. */
function whereMatcher(where: string | string[]): (id: string) => boolean {
  if (typeof where === 'string') return globMatcher(where);
  const all = where.map((w) => globMatcher(w));
  return (id) => all.some((m) => m(id));
}

// The place a known entry selects: entry ids, field path and kind (its values aside).
function selects(m: KnownMatcher, d: Pick<Difference, 'entry' | 'path' | 'kind'>): boolean {
  return m.where(d.entry) && m.path(d.path) && (!m.entry.kind || m.entry.kind === d.kind);
}

/** True when a known entry selects this difference: its place, and its values when it recorded some. */
export function knownMatches(k: KnownConfig, d: Pick<Difference, 'entry' | 'path' | 'kind' | 'old' | 'new'>): boolean {
  return selects(compile([k])[0]!, d) && valuesMatch(k, d);
}

/**
 * Marks real differences matched by a known entry as known (in place, with
 * the reason); a real difference at a known entry's place whose values are
 * not the recorded ones gets `ratified` instead. Returns the known entries
 * that matched nothing (a broken ratification matched its place: not stale).
 */
export function classifyKnown(differences: Difference[], known: KnownConfig[]): StaleKnown[] {
  const matchers = compile(known);
  const used = new Set<number>();
  for (const d of differences) {
    if (d.class !== 'real') continue;
    let broken: KnownMatcher | undefined;
    const m = matchers.find((k) => {
      if (!selects(k, d)) return false;
      if (valuesMatch(k.entry, d)) return true;
      broken ??= k;
      return false;
    });
    if (m) {
      d.class = 'known';
      d.reason = m.entry.reason;
      used.add(m.index);
    } else if (broken) {
      d.ratified = { known: broken.index, ...knownValuesOf(broken.entry), reason: broken.entry.reason };
      used.add(broken.index);
    }
  }
  return matchers
    .filter((m) => !used.has(m.index))
    .map((m) => ({ index: m.index, where: m.entry.where, path: m.entry.path, ...(m.entry.kind ? { kind: m.entry.kind } : {}), reason: m.entry.reason }));
}

// Whole entries and WebSocket messages that are on one side only: their presence varies.
const PRESENCE: ReadonlySet<DifferenceKind> = new Set(['missing', 'extra']);

// The place whose presence varies: the entry as a glob without its occurrence (entryGlob), and the field pattern.
function presenceKey(d: Pick<Difference, 'entry' | 'pattern'>): string {
  return `${entryGlob(d.entry).replace(/#\d+$/, '')}\n${d.pattern}`;
}

/**
 * True when a value that changed between the old runs (`n`) explains a
 * changed row (`d`), value for value: both of the row's values have the shape
 * the two old values share (noise-shape.ts), when they share one, and are
 * of the old values' types (a string never hides a number).
 */
function explains(n: Pick<Difference, 'old' | 'new'>, d: Pick<Difference, 'old' | 'new'>): boolean {
  const types = new Set([valueShape(n.old), valueShape(n.new)]);
  if (!types.has(valueShape(d.old)) || !types.has(valueShape(d.new))) return false;
  const shape = varyingShape(n.old, n.new);
  return !shape || (hasShape(shape, d.old) && hasShape(shape, d.new));
}

/**
 * Marks real differences as noise (in place) when the two old runs differ at
 * the same place too, kind for kind and value for value (docs/diff.md "Triage:
 * known differences, noise, `bb known add`, `bb noise`"): a value that changed
 * between the old runs hides a changed value of its shape (never one of
 * another shape), never a field that is removed or added; a field removed or
 * added, a reordered item, only the same kind at the same place. An entry or
 * message on one side only between the old runs makes its presence noise in
 * both directions (missing or extra alike: which run has it is chance), as
 * many rows as the old runs showed, so a route gone altogether stays real. A
 * path that is noise in one entry is not hidden in another entry unless it
 * differs there too. Returns how many rows it hid, by kind.
 */
export function classifyNoise(differences: Difference[], noise: Difference[]): NoiseHidden {
  const changed = new Map<string, Difference[]>();
  const same = new Set<string>();
  const presence = new Map<string, number>();
  for (const n of noise) {
    if (PRESENCE.has(n.kind)) presence.set(presenceKey(n), (presence.get(presenceKey(n)) ?? 0) + 1);
    else if (n.kind === 'changed') {
      const k = `${n.entry}\n${n.path}`;
      changed.set(k, [...(changed.get(k) ?? []), n]);
    } else same.add(`${n.entry}\n${n.path}\n${n.kind}`);
  }
  const hidden: NoiseHidden = { rows: 0, byKind: {} };
  for (const d of differences) {
    if (d.class !== 'real') continue;
    let hide = false;
    if (PRESENCE.has(d.kind)) {
      const k = presenceKey(d);
      const left = presence.get(k) ?? 0;
      if (left > 0) {
        presence.set(k, left - 1);
        hide = true;
      }
    } else if (d.kind === 'changed') hide = (changed.get(`${d.entry}\n${d.path}`) ?? []).some((n) => explains(n, d));
    else hide = same.has(`${d.entry}\n${d.path}\n${d.kind}`);
    if (!hide) continue;
    d.class = 'noise';
    hidden.rows++;
    hidden.byKind[d.kind] = (hidden.byKind[d.kind] ?? 0) + 1;
  }
  return hidden;
}
