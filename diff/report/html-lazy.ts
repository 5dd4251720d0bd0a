// The HTML report on demand: report/html.ts and jsondiffpatch's formatter
// load on the first renderHtml, so a bb diff without --html does not pay
// for them at start-up (~20 ms of a small diff's ~250, measured).
import type { DiffResult } from '../types.js';
import type { HtmlOptions } from './html.js';

/** The HTML report of a diff (report/html.ts), loaded on first use. */
export async function renderHtml(result: DiffResult, opts: HtmlOptions = {}): Promise<string> {
  return (await import('./html.js')).renderHtml(result, opts);
}
