// What `bb replay` records of the capture it replayed (docs/replay.md
// "Order, concurrency and pacing": one origin is replayed): which of that
// capture's entries it did not send and why, with enough of the capture's
// identity that `bb diff ORIGINAL REPLAYED` can tell the old side is that very capture before it leaves
// those entries out. Written by replay as log._bb.replayOf, read by diff.
import { createHash } from 'node:crypto';
import type { HarEntry, HarReplayOf, HarReplaySkip } from './har.js';

/** An entry's identity: a short hash of when it started, its method and its URL (the same entry of the same file, or practically no other). */
export function entryIdentity(entry: HarEntry): string {
  const r = entry.request as Partial<HarEntry['request']> | undefined;
  return createHash('sha256').update(`${entry.startedDateTime}\n${r?.method ?? ''}\n${r?.url ?? ''}`).digest('hex').slice(0, 16);
}

/** A replayOf read from a file, when it has the shape replay writes (anything else is ignored: nothing is left out). */
export function replayOfShape(v: unknown): HarReplayOf | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Partial<HarReplayOf>;
  if (typeof r.entries !== 'number' || typeof r.first !== 'string' || !Array.isArray(r.skipped)) return undefined;
  const ok = r.skipped.every((s) => s && typeof s === 'object' && Number.isInteger(s.index) && s.index >= 0 && s.index < r.entries! && typeof s.id === 'string' && typeof s.reason === 'string');
  return ok ? (r as HarReplayOf) : undefined;
}

/** The indices of the replayed capture that replaySkipsIn reads (its first entry and the skipped ones). */
export function claimedIndices(claim: HarReplayOf): number[] {
  return [0, ...claim.skipped.map((s) => s.index)];
}

/**
 * The skipped entries of `claim` when the capture with `count` entries read
 * by `read` is the one replayed (same size, same first entry, every skipped
 * entry the same at its index); undefined when it is not. Synchronous: the
 * in-memory store reads both sides without yielding (diff/store/memory.ts).
 */
export function replaySkipsIn(claim: HarReplayOf | undefined, count: number, read: (index: number) => HarEntry | undefined): HarReplaySkip[] | undefined {
  if (!claim || claim.entries !== count || count === 0) return undefined;
  const same = (index: number, id: string) => {
    const e = read(index);
    return e !== undefined && entryIdentity(e) === id;
  };
  if (!same(0, claim.first)) return undefined;
  return claim.skipped.every((s) => same(s.index, s.id)) ? claim.skipped : undefined;
}
