// Entries of the old capture that the new one, a `bb replay` of it, says it
// did not send (docs/diff.md "A replay against its original"): left out of the
// comparison by the stores' summarize (they are no finding replay's target
// could cause), and said in one line of every report, never silently.
import type { HarReplaySkip } from '../capture/index.js';

/** What was left out: how many entries, of which other origins, why, and each one. */
export interface NotReplayed {
  /** Entries of the old capture left out. */
  entries: number;
  /** The other origins among them (reason "origin"), sorted. */
  origins: string[];
  /** How many for each reason (origin, tunnel, unparsed, url). */
  byReason: Partial<Record<HarReplaySkip['reason'], number>>;
  /** Each one: its index in the old capture's log.entries, its `_bb.seq`, origin and reason. */
  skipped: Array<Omit<HarReplaySkip, 'id'>>;
}

/** The note for the entries replay skipped, as the old side's store verified them; undefined for none. */
export function notReplayedOf(left: readonly HarReplaySkip[] | undefined): NotReplayed | undefined {
  if (!left?.length) return undefined;
  const byReason: NotReplayed['byReason'] = {};
  for (const s of left) byReason[s.reason] = (byReason[s.reason] ?? 0) + 1;
  const origins = [...new Set(left.flatMap((s) => (s.reason === 'origin' && s.origin !== undefined ? [s.origin] : [])))].sort();
  return { entries: left.length, origins, byReason, skipped: left.map(({ id: _id, ...s }) => s) };
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The report's one line: `not replayed: 7 entries of 3 other origins (bb replay skipped them)`. */
export function notReplayedText(n: NotReplayed | undefined): string | undefined {
  if (!n) return undefined;
  const b = n.byReason;
  const origins = b.origin ? `${b.origin === n.entries ? '' : `${b.origin} `}of ${count(n.origins.length, 'other origin')}` : '';
  const others = [
    ...(b.tunnel ? [count(b.tunnel, 'tunnel')] : []),
    ...(b.unparsed ? [count(b.unparsed, 'packet bb could not parse', 'packets bb could not parse')] : []),
    ...(b.url ? [count(b.url, 'non-http(s) URL')] : []),
  ];
  const what = others.length ? `(${[origins, ...others].filter(Boolean).join(', ')}; bb replay skipped them)` : `${origins} (bb replay skipped them)`;
  return `not replayed: ${count(n.entries, 'entry', 'entries')} ${what}`;
}
