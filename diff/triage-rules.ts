// Turning differences into config: `bb known add` (the narrowest known entry
// for one difference, or one entry for a whole finding, with the values it
// ratified: diff/ratified.ts) and `bb noise` (what differs between two runs of
// one build, as rules a person reviews and commits). Pure: text in, text out.
import type { DiffConfig, KnownConfig, PathRuleConfig } from './config.js';
import { knownMatches } from './classify.js';
import { knownValuesOf, recordValues, valueShape } from './ratified.js';
import { entryGlob, pathGlob, varyingShape } from './noise-shape.js';
import type { Difference, DifferenceKind, Finding } from './types.js';

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
 * `where` its routes, and the values of its rows (`rows`, from the report) as
 * diff/ratified.ts records them. Always the routes it was seen on, never `*`,
 * even when they were every route that had the field: a route that later
 * breaks the same field was never looked at, so it is not accepted.
 */
export function knownForFinding(f: Pick<Finding, 'pattern' | 'kind' | 'routes'>, rows: ReadonlyArray<Pick<Difference, 'old' | 'new'>>, reason: string, extra: { since?: string; tracking?: string } = {}): KnownConfig {
  const where = f.routes.length === 1 ? routeGlob(f.routes[0]!) : f.routes.map(routeGlob);
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

// What is on one side only, in pairs: a rule for one direction is written for both (which run has it is chance).
const BOTH_WAYS: Partial<Record<DifferenceKind, [DifferenceKind, DifferenceKind]>> = {
  missing: ['missing', 'extra'],
  extra: ['missing', 'extra'],
  removed: ['removed', 'added'],
  added: ['removed', 'added'],
};

/**
 * Rules that make two runs of one build match, and that will match a third
 * run (docs/diff.md "Triage: known differences, noise, `bb known add`, `bb
 * noise`"): a changed value becomes a `normalize.paths` rule whose `pattern`
 * is the shape both values share (noise-shape.ts: `^[0-9a-f]{12}$` →
 * `<HEX12>`), so a value of another shape stays a real change; a value with
 * no such shape, a field, entry or message that comes and goes (both
 * directions), a reordered item, become known entries with the noise reason
 * (visible as KNOWN-DIFF, never erased; a changed value's entry records the
 * values' types). Never a literal random value: entry ids and field paths
 * have their generated segments as globs (`*`). Never a rule that erases a
 * whole field.
 */
export function noiseRules(differences: ReadonlyArray<Pick<Difference, 'entry' | 'path' | 'pattern' | 'kind' | 'old' | 'new'>>): { normalize: { paths: PathRuleConfig[] }; known: KnownConfig[] } {
  const paths: PathRuleConfig[] = [];
  const known: KnownConfig[] = [];
  const seen = new Set<string>();
  const once = <T>(list: T[], x: T) => {
    const key = JSON.stringify(x);
    if (seen.has(key)) return;
    seen.add(key);
    list.push(x);
  };
  for (const d of differences) {
    const where = entryGlob(d.entry);
    const whole = d.path === '' || /^ws\.messages\[\d+\]$/.test(d.path);
    // A whole entry or message keeps its place (`ws.messages[]`); a field's path loses its generated keys.
    const path = whole ? d.pattern : pathGlob(d.pattern);
    const shape = d.kind === 'changed' && !whole ? varyingShape(d.old, d.new) : undefined;
    if (shape) {
      // The values' type too (varyingShape gives a shape to two values of one type only): a pattern over a number's
      // text would also take a string of digits, and the new build turning 1 into "5" is a change.
      once(paths, { where, path, pattern: shape.regex, replace: shape.replace, type: typeof d.old as 'string' | 'number' | 'boolean' });
      continue;
    }
    const kinds = BOTH_WAYS[d.kind] ?? [d.kind];
    const types = d.kind === 'changed' ? { oldShape: valueShape(d.old)!, newShape: valueShape(d.new)! } : {};
    // Entry and place only (a changed value: its types): the values of two runs of one build are what varies, never a thing to record.
    for (const kind of kinds) once(known, { where, path, kind, ...types, reason: NOISE_REASON });
  }
  return { normalize: { paths }, known };
}
