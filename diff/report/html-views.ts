// Where the HTML report's side-by-side views come from: the rendered
// (numbered) entries a diff run left in its context.
import type { DiffContext } from '../pipeline.js';
import type { NormalizedEntry } from '../types.js';
import type { PairView } from './html-pair.js';

const attached = new WeakMap<object, Map<number, PairView>>();

/** Records the views of a run that does not keep its rendered entries (the bounded, streaming run). */
export function attachPairViews(ctx: object, views: Map<number, PairView>): void {
  attached.set(ctx, views);
}

/** Both sides of pair `i` of ctx.pairs, looked up by their index in log.entries. */
export function pairViewsFrom(ctx: DiffContext): (pairIndex: number) => PairView | undefined {
  const wsOrder = ctx.config.pairing.wsOrder;
  const withOrder = (v: PairView | undefined): PairView | undefined => (v && wsOrder ? { ...v, wsOrder } : v);
  const kept = attached.get(ctx);
  if (kept) return (i) => withOrder(kept.get(i));
  const byIndex = (list: NormalizedEntry[]) => new Map(list.map((e) => [e.meta.index, e]));
  const oldSide = byIndex(ctx.old.rendered);
  const newSide = byIndex(ctx.new.rendered);
  return (i) => {
    const p = ctx.pairs[i];
    if (!p) return undefined;
    return withOrder({
      ...(p.old !== undefined && oldSide.has(p.old) ? { old: oldSide.get(p.old)! } : {}),
      ...(p.new !== undefined && newSide.has(p.new) ? { new: newSide.get(p.new)! } : {}),
    });
  };
}
