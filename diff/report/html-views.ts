// Where the HTML report's side-by-side views come from: the views the compare
// loop kept (diff/compare-loop.ts) when the run asked for them (options.views).
import type { PairView } from '../types.js';

/** Both sides of pair `i` of the result's pairs, from a run with options.views (a result, or the run's context). */
export function pairViewsFrom(run: { views?: Map<number, PairView> }): (pairIndex: number) => PairView | undefined {
  const views = run.views;
  return (i) => views?.get(i);
}
