// Classify (docs/diff.md "Triage: known differences, noise, `bb known add`, `bb
// noise`"): each difference is real, known (it matches a `known` entry of the
// config, which carries the reason) or noise (the same entry and path also
// differ between two captures of the old build). A known entry that recorded
// values (diff/ratified.ts) passes only rows holding them; a row at its place
// with other values stays real and carries what was ratified. Known entries
// that matched nothing are stale. Pure functions.
import type { KnownConfig } from './config.js';
import { globMatcher } from '../core/index.js';
import { pathMatcher } from './selector.js';
import { knownValuesOf, valuesMatch } from './ratified.js';
import type { Difference, StaleKnown } from './types.js';

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

/**
 * Marks real differences as noise (in place) when the same entry id and path
 * also differ between the two old runs, kind for kind (docs/diff.md "Triage:
 * known differences, noise, `bb known add`, `bb noise`"): a value that changed
 * between the old runs hides a changed value, never a field that is removed or
 * added or a whole entry or message that is missing or extra; those are noise
 * only when the old pair shows the same presence difference. A path that is
 * noise in one entry is not hidden in another entry unless it differs there
 * too.
 */
export function classifyNoise(differences: Difference[], noise: Difference[]): number {
  const noisy = new Set(noise.map((d) => `${d.entry}\n${d.path}\n${d.kind}`));
  let n = 0;
  for (const d of differences) {
    if (d.class !== 'real' || !noisy.has(`${d.entry}\n${d.path}\n${d.kind}`)) continue;
    d.class = 'noise';
    n++;
  }
  return n;
}
