// bb shadow's promise checked after a run: `bb diff DIR/primary.har DIR/candidate.har --noise DIR/secondary.har`
// (without a secondary, `bb diff DIR/primary.har DIR/candidate.har`) reaches the live comparison's findings, each
// with its id and the live count.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { diffCaptures } from '../../diff/index.js';
import type { ShadowReport } from '../../scenario/index.js';

/**
 * Asserts the live findings of a run into `out` are bb diff's of its captures; with `regressionsOnly`, none is noise
 * or unclassified. A run without a secondary is diffed without --noise, where bb diff's `real` is the live `unclassified`.
 */
export async function assertLiveIsOffline(report: ShadowReport, out: string, regressionsOnly = false): Promise<void> {
  const noise = existsSync(`${out}/secondary.har`);
  const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, noise ? { noisePath: `${out}/secondary.har` } : {});
  const real = noise ? 'regression' : 'unclassified';
  const live = report.findings.map((f) => `${f.class === real ? 'real' : f.class} ${f.id} ${f.kind} ${f.pattern} ×${f.count}`).sort();
  assert.deepEqual(offline.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.id} ${f.kind} ${f.pattern} ×${f.entries}`).sort(), live);
  if (regressionsOnly) assert.deepEqual(report.findings.filter((f) => f.class !== 'regression'), [], live.join('\n'));
}
