// End to end, as a user meets an upgrade: two versions of a service of our
// own (test/e2e/upgrade-service.ts), each behind a real `bb capture`, driven
// by the same requests through undici; `bb diff` must report one finding per
// change and nothing false, and `bb known add` on each finding must take the
// comparison to MATCH.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runBb, startBb } from '../helpers/cli.js';
import { driveUpgradeService, startUpgradeService } from './upgrade-service.js';
import { tempDir } from '../helpers/tmp.js';

/** Records one version through `bb capture` into `out`. */
async function record(version: 1 | 2, out: string, home: string): Promise<void> {
  const service = await startUpgradeService(version);
  const bb = startBb(['capture', '--target', service.url, '--out', out, '--quiet'], { BB_HOME: home }, { timeoutMs: 30_000 });
  try {
    const [, base] = await bb.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
    await driveUpgradeService(base!);
    bb.child.kill('SIGINT');
    assert.equal(await bb.exited, 0, bb.stderr());
  } finally {
    if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    await service.close();
  }
}

describe('bb diff on a framework-like upgrade, end to end', () => {
  let dir: string;
  const env = () => ({ BB_HOME: join(dir, 'home') });
  before(async () => {
    dir = tempDir().dir;
    await record(1, join(dir, 'old.har'), join(dir, 'home'));
    await record(2, join(dir, 'new.har'), join(dir, 'home'));
    await record(1, join(dir, 'old2.har'), join(dir, 'home'));
  });

  it('two runs of one version match: the random ids are not differences', async () => {
    const r = await runBb(['diff', join(dir, 'old.har'), join(dir, 'old2.har')], env());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^MATCH/);
  });

  it('reports one finding per change, nothing false, and bb known add on each gets it to MATCH', async () => {
    const report = join(dir, 'report.json');
    const r = await runBb(['diff', join(dir, 'old.har'), join(dir, 'new.har'), '--json', report], env());
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const doc = JSON.parse(await readFile(report, 'utf8')) as { findings: Array<{ id: string; kind: string; pattern: string; routes: string[]; entries: number; of: number }>; differences: Array<{ finding: string; request: string }> };
    const found = doc.findings.map((f) => `${f.kind} ${f.pattern} ${f.routes.length === 1 ? f.routes[0] : `${f.routes.length} routes`} ${f.entries}/${f.of}`).sort();
    assert.deepEqual(found, [
      // The renamed header: what went and what came, on all 9 exchanges of 6 routes.
      'added response.headers.x-served-by 6 routes 9/9',
      // The 404 envelope, the same change on both routes that answer 404.
      'changed response.body.error 2 routes 2/2',
      'removed response.body[].legacyId GET /posts 2/2',
      'removed response.headers.location POST /posts 2/2',
      'removed response.headers.x-powered-by 6 routes 9/9',
      // The list in another order: moved items, one finding for the route.
      'reordered response.body[] GET /tags 1/1',
    ].sort(), r.stdout);
    assert.match(r.stdout, /^DIFF: 6 real findings \(\d+ differences\)/);
    assert.ok(doc.differences.every((d) => doc.findings.some((f) => f.id === d.finding)), 'every row belongs to a finding');
    assert.ok(doc.differences.some((d) => d.request === 'GET /posts?_sort=title'), 'rows name the call with its query');
    const config = join(dir, 'bb.config.json');
    for (const f of doc.findings) {
      const k = await runBb(['known', 'add', f.id, '--from', report, '--reason', `upgrade: ${f.pattern}`, '--config', config], env());
      assert.equal(k.code, 0, k.stdout + k.stderr);
    }
    const again = await runBb(['diff', join(dir, 'old.har'), join(dir, 'new.har'), '--config', config, '--noise', join(dir, 'old2.har')], env());
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /^MATCH with 6 known\b/);
  });
});
