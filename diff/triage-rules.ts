// Turning differences into config: `bb known add` (the narrowest known entry
// for one difference, or one entry for a whole finding, with the values it
// ratified: diff/ratified.ts) and `bb noise` (what differs between two runs of
// one build, as rules a person reviews and commits). Pure: text in, text out.
import type { DiffConfig, KnownConfig, PathRuleConfig } from './config.js';
import { knownMatches } from './classify.js';
import { knownValuesOf, recordValues } from './ratified.js';
import type { Difference, Finding } from './types.js';

/** The reason `bb noise` writes. */
export const NOISE_REASON = 'noise: differs between two runs of one build';

/** The narrowest known entry that matches exactly this difference (its values too, for a changed one). */
export function narrowestKnown(d: Pick<Difference, 'entry' | 'path' | 'kind'> & Partial<Pick<Difference, 'old' | 'new'>>, reason: string, extra: { since?: string; tracking?: string } = {}): KnownConfig {
  return {
    where: d.entry,
    path: d.path,
    kind: d.kind,
    ...recordValues(d.kind, [d]),
    reason,
    ...(extra.since ? { since: extra.since } : {}),
    ...(extra.tracking ? { tracking: extra.tracking } : {}),
  };
}

/** An entry-id glob selecting every entry of a route, on any page (for GET /posts: star, slash, the route, #star). */
export function routeGlob(route: string): string {
  return `*/${route}#*`;
}

/**
 * The known entry that ratifies a whole finding (docs/diff.md "Triage: known
 * differences, noise, `bb known add`, `bb noise`"): its pattern and kind,
 * `where` its routes (`*` when it spans every route where the field exists),
 * and the values of its rows (`rows`, from the report) as diff/ratified.ts
 * records them.
 */
export function knownForFinding(f: Pick<Finding, 'pattern' | 'kind' | 'routes' | 'everywhere'>, rows: ReadonlyArray<Pick<Difference, 'old' | 'new'>>, reason: string, extra: { since?: string; tracking?: string } = {}): KnownConfig {
  const where = f.everywhere ? '*' : f.routes.length === 1 ? routeGlob(f.routes[0]!) : f.routes.map(routeGlob);
  return {
    where,
    path: f.pattern,
    kind: f.kind,
    ...recordValues(f.kind, rows),
    reason,
    ...(extra.since ? { since: extra.since } : {}),
    ...(extra.tracking ? { tracking: extra.tracking } : {}),
  };
}

/**
 * The part of a finding on the routes `route` selects (`bb known add
 * --route`): those routes and their rows; `everywhere` only when it kept every
 * route. Undefined when none of its routes is selected.
 */
export function findingOnRoutes<F extends Pick<Finding, 'routes' | 'everywhere'>, R extends Pick<Difference, 'route'>>(f: F, rows: R[], route: (r: string) => boolean): { finding: F; rows: R[] } | undefined {
  const routes = f.routes.filter(route);
  if (!routes.length) return undefined;
  return { finding: { ...f, routes, everywhere: f.everywhere && routes.length === f.routes.length }, rows: rows.filter((r) => route(r.route)) };
}

/** The indentation a JSON text uses (two spaces when it cannot tell). */
export function detectIndent(text: string): string | number {
  const m = /^[{[][^\n]*\n([ \t]+)\S/.exec(text);
  return m ? m[1]! : 2;
}

/**
 * Adds a known entry to a config file's text (or a new config when `text` is
 * undefined), keeping the other keys and the file's indentation. Returns
 * undefined when an equal entry is already there.
 */
export function addKnownToConfigText(text: string | undefined, entry: KnownConfig): string | undefined {
  const doc = text === undefined || text.trim() === '' ? {} : (JSON.parse(text.replace(/^\uFEFF/, '')) as Record<string, unknown>);
  const known = Array.isArray(doc.known) ? (doc.known as KnownConfig[]) : [];
  const same = (k: KnownConfig) => JSON.stringify(k.where) === JSON.stringify(entry.where) && k.path === entry.path && (k.kind ?? undefined) === entry.kind && JSON.stringify(knownValuesOf(k)) === JSON.stringify(knownValuesOf(entry));
  if (known.some(same)) return undefined;
  doc.known = [...known, entry];
  return `${JSON.stringify(doc, null, text ? detectIndent(text) : 2)}\n`;
}

/** Known entries (and their indices) that already select a difference. */
export function knownCovering(config: DiffConfig, d: Difference): number[] {
  return config.known.flatMap((k, i) => (knownMatches(k, d) ? [i] : []));
}

/**
 * Rules that make two runs of one build match: a changed field is masked
 * (`normalize.paths` with replace "<NOISE>"), a field present in one run only
 * is dropped (`ignore`), and whole entries or messages that come and go become
 * known entries with the noise reason. Field rules select the entry by id and
 * the field with indices generalized (`items[].id`).
 */
export function noiseRules(differences: Difference[]): { normalize: { paths: PathRuleConfig[] }; known: KnownConfig[] } {
  const paths: PathRuleConfig[] = [];
  const known: KnownConfig[] = [];
  const seen = new Set<string>();
  for (const d of differences) {
    const whole = d.path === '' || /^ws\.messages\[\d+\]$/.test(d.path) || d.kind === 'missing' || d.kind === 'extra' || d.kind === 'reordered';
    if (whole) {
      // Entry and place only: the values of two runs of one build are what varies, never a thing to record.
      const k = narrowestKnown({ entry: d.entry, kind: d.kind, path: d.path.replace(/\[\d+\]$/, '[]') }, NOISE_REASON);
      const key = `k\n${k.where}\n${k.path}\n${k.kind}`;
      if (!seen.has(key)) {
        seen.add(key);
        known.push(k);
      }
      continue;
    }
    const rule: PathRuleConfig = d.kind === 'changed' ? { where: d.entry, path: d.pattern, replace: '<NOISE>' } : { where: d.entry, path: d.pattern, ignore: true };
    const key = `p\n${rule.where}\n${rule.path}\n${rule.ignore ? 'i' : 'r'}`;
    if (seen.has(key)) continue;
    seen.add(key);
    paths.push(rule);
  }
  return { normalize: { paths }, known };
}
