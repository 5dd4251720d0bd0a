// The order entries are compared in and the ids that count along it. Both
// stores order and name their entries here, after both sides are read, so
// the host decision (hostsInKeys) is made once for the two; the ids count
// per key in comparison order, so the two go together.
import { entryKey, routeWithHost } from './normalize/index.js';
import type { HarEntry } from '../capture/index.js';

/** What ordering needs of an entry. */
export interface Orderable {
  /** Index in log.entries. */
  index: number;
  /** bb's capture sequence number. */
  seq?: number;
  /** HAR's startedDateTime, as written. */
  started?: string;
}

/**
 * Sorts entries into comparison order (in place): `_bb.seq` when every
 * entry has one (bb writes entries in completion order; seq is arrival
 * order), else the start time as a date (ISO strings with offsets do not
 * sort as text), else file position. `startedOf`: where an item's start
 * time is, when it does not carry it as `started`.
 */
export function sortForComparison<T extends Omit<Orderable, 'started'>>(list: T[], startedOf: (x: T) => string | undefined = (x) => (x as Orderable).started): T[] {
  if (list.every((x) => typeof x.seq === 'number')) return list.sort((a, b) => a.seq! - b.seq! || a.index - b.index);
  const time = new Map<T, number>();
  for (const x of list) {
    const started = startedOf(x);
    const t = started === undefined ? NaN : Date.parse(started);
    time.set(x, Number.isNaN(t) ? Infinity : t);
  }
  return list.sort((a, b) => time.get(a)! - time.get(b)! || a.index - b.index);
}

/** The number an entry is compared in order of: `bb shadow`'s shared id (the primary's order in all three captures), else `_bb.seq`. */
export function comparisonSeq(entry: HarEntry): number | undefined {
  return shadowId(entry) ?? entry._bb?.seq;
}

/** `bb shadow`'s shared id of an entry of one of its captures (EntrySummary.shadow). */
export function shadowId(entry: HarEntry): number | undefined {
  const id = entry._bb?.shadow?.id;
  return typeof id === 'number' ? id : undefined;
}

/**
 * An entry `bb shadow` did not mirror (docs/shadow.md "The captures"): only the primary has it, so no comparison
 * with another of the shadow's captures holds it (PairFacts.shadowPair). Tagged skipped, or not tagged at all: a
 * request bb refused itself (a malformed or oversized head, answered 400 or 431) never reached the tee.
 */
function notCompared(entry: HarEntry): boolean {
  const tag = entry._bb?.shadow;
  return tag === undefined || typeof tag.skipped === 'string';
}

/**
 * A mirror target's entry that is no answer: bb's own error response, the target hung up before answering whole,
 * or no response came at all (the mirror's connection failed under it: a target that went away). The live
 * comparison counts such an exchange an error and compares nothing of it; so does `bb diff` of the captures
 * (PairFacts.shadowMirror).
 */
export function noAnswer(entry: HarEntry): boolean {
  return entry._bb?.error !== undefined || entry._bb?.aborted === 'upstream' || !(entry.response?.status > 0);
}

/**
 * Between two of a shadow's captures (PairFacts.shadowPair): why an entry is left out of both sides' comparison —
 * not mirrored (notCompared), or, on a mirror's side (PairFacts.shadowMirror), not answered (noAnswer) — or
 * undefined when it is compared. Both stores ask this one question.
 */
export function shadowLeftOut(entry: HarEntry, pair: { shadowPair?: boolean; shadowMirror?: boolean }): 'not mirrored' | 'unanswered' | undefined {
  if (!pair.shadowPair) return undefined;
  if (notCompared(entry)) return 'not mirrored';
  return pair.shadowMirror && noAnswer(entry) ? 'unanswered' : undefined;
}

/**
 * Names each entry (in comparison order): with `hostOf` (hosts in keys:
 * either capture has several), its route and key name its host; then its id
 * `<page>/<route>#<n>`, n counting per pairing key.
 */
export function assignIds<T extends { key: string; route: string; id: string }>(list: T[], pageOf: (e: T) => string, hostOf?: (e: T, i: number) => string): void {
  const occurrences = new Map<string, number>();
  for (const [i, e] of list.entries()) {
    const host = hostOf?.(e, i);
    if (host) {
      e.route = routeWithHost(e.route, host);
      e.key = entryKey(pageOf(e), e.route);
    }
    const n = (occurrences.get(e.key) ?? 0) + 1;
    occurrences.set(e.key, n);
    e.id = `${pageOf(e)}/${e.route}#${n}`;
  }
}
