// Verdicts the live comparison may give again (docs/shadow.md "Limits": values
// bound across comparison batches). An exchange that differs and whose answers
// issued values differently per target waits SETTLE_MS for their use, then is
// counted; `bb diff` of the captures binds a value sent back however late, so
// the newest such verdicts whose values were not all sent back yet are kept
// here, by value, and ShadowComparer.revise compares one again when a later
// request sends one of its values back (and, where that comparison differs,
// takes back what it counted first: ShadowLive.forget). Bounded by count and
// by the kept entries' size; past either the oldest go (a use after that reads
// live as the change bb diff binds).
import type { HarEntry } from '../../capture/index.js';
import type { Difference } from '../../diff/index.js';
import type { BoundBefore } from './batch-binding.js';
import type { Counted, TargetName } from './live.js';

/** One exchange's entries on each side (compare.ts's Group is one). */
type Sides = Partial<Record<TargetName, HarEntry>>;

/** Verdicts kept, at most (the newest). */
export const MAX_REVISABLE = 1_000;
/** Their entries' size, estimated, at most. */
const MAX_REVISABLE_BYTES = 64 * 1024 * 1024;

/** A differing verdict given before every value its exchange issued was sent back. */
export interface Revisable<G extends Sides = Sides> {
  g: G;
  /** The primary's values its answers issued differently per target. */
  values: ReadonlySet<string>;
  /** What its first batch bound for it. */
  bound?: BoundBefore;
  /** Its differences as counted (`counted`). */
  diffs: Difference[];
  counted: Counted;
  /** Its values sent back so far (bound in `diffs`). */
  used: Set<string>;
  /** Its entries' size, estimated (groupBytes). */
  bytes: number;
}

/** The kept verdicts, oldest first, and by value. */
export class Revisables<G extends Sides = Sides> {
  private readonly kept = new Set<Revisable<G>>();
  private readonly byValue = new Map<string, Set<Revisable<G>>>();
  private bytes = 0;

  /** Keeps one (the oldest go past the bounds). */
  keep(r: Revisable<G>): void {
    this.kept.add(r);
    this.bytes += r.bytes;
    for (const v of r.values) {
      let set = this.byValue.get(v);
      if (!set) this.byValue.set(v, (set = new Set()));
      set.add(r);
    }
    while (this.kept.size > MAX_REVISABLE || this.bytes > MAX_REVISABLE_BYTES) this.drop(this.kept.values().next().value!);
  }

  /** The kept verdicts that one of `sent` (a batch's values sent back) binds anew. */
  due(sent: readonly string[]): Set<Revisable<G>> {
    const out = new Set<Revisable<G>>();
    for (const v of sent) for (const r of this.byValue.get(v) ?? []) if (!r.used.has(v)) out.add(r);
    return out;
  }

  /** Forgets one (nothing left to bind, or no difference left). */
  drop(r: Revisable<G>): void {
    if (!this.kept.delete(r)) return;
    this.bytes -= r.bytes;
    for (const v of r.values) {
      const set = this.byValue.get(v);
      set?.delete(r);
      if (set?.size === 0) this.byValue.delete(v);
    }
  }
}

/** What a verdict counts: its findings' classes, kinds and patterns (two comparisons with the same count the same). */
export function signature(diffs: readonly Difference[]): string {
  return [...new Set(diffs.map((d) => `${d.class}\n${d.kind}\n${d.pattern}`))].sort().join('\n\n');
}

/** An exchange's entries' size, estimated (bodies and stream messages as their text's length; a little for the rest). */
export function groupBytes(g: Sides): number {
  let n = 0;
  for (const e of [g.primary, g.candidate, g.secondary]) {
    if (!e) continue;
    n += 2048 + (e.request.postData?.text?.length ?? 0) + (e.response?.content?.text?.length ?? 0);
    for (const list of [e._webSocketMessages, e._eventSourceMessages, e._grpcMessages] as Array<Array<{ data?: string }> | undefined>) for (const m of list ?? []) n += 64 + (typeof m.data === 'string' ? m.data.length : 0);
  }
  return n;
}
