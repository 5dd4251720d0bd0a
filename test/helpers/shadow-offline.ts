// bb shadow's promise checked after a run: `bb diff DIR/primary.har DIR/candidate.har --noise DIR/secondary.har`
// reaches the live comparison's findings, each with its id and the live count.
import assert from 'node:assert/strict';
import { diffCaptures } from '../../diff/index.js';
import type { ShadowReport } from '../../scenario/index.js';

/** Asserts the live findings of a run into `out` are bb diff's of its captures; with `regressionsOnly`, none is noise or unclassified. */
export async function assertLiveIsOffline(report: ShadowReport, out: string, regressionsOnly = false): Promise<void> {
  const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
  const live = report.findings.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.id} ${f.kind} ${f.pattern} ×${f.count}`).sort();
  assert.deepEqual(offline.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.id} ${f.kind} ${f.pattern} ×${f.entries}`).sort(), live);
  if (regressionsOnly) assert.deepEqual(report.findings.filter((f) => f.class !== 'regression'), [], live.join('\n'));
}
