// Classify (docs/diff.md "Triage: known differences, noise, `bb known add`, `bb
// noise`"): each difference is real, known (it matches a `known` entry of the
// config, which carries the reason) or noise (the same entry and path also
// differ between two captures of the old build). Known entries that matched
// nothing are stale. Pure functions.
import type { KnownConfig } from './config.js';
import { globMatcher } from '../core/index.js';
import { pathMatcher } from './selector.js';
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

/** True when a known entry selects this difference. */
export function knownMatches(k: KnownConfig, d: Pick<Difference, 'entry' | 'path' | 'kind'>): boolean {
  const [m] = compile([k]);
  return m!.where(d.entry) && m!.path(d.path) && (!k.kind || k.kind === d.kind);
}

/**
 * Marks real differences matched by a known entry as known (in place, with
 * the reason) and returns the known entries that matched nothing.
 */
export function classifyKnown(differences: Difference[], known: KnownConfig[]): StaleKnown[] {
  const matchers = compile(known);
  const used = new Set<number>();
  for (const d of differences) {
    if (d.class !== 'real') continue;
    const m = matchers.find((k) => k.where(d.entry) && k.path(d.path) && (!k.entry.kind || k.entry.kind === d.kind));
    if (!m) continue;
    d.class = 'known';
    d.reason = m.entry.reason;
    used.add(m.index);
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
