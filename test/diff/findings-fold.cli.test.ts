// A real server whose new build replaces one route by a 404 page, recorded
// through bb twice: bb diff reports ONE finding with its consequences under
// it, --rows still lists every row, and `bb known add` of that finding
// ratifies the consequences too, so the next diff is a MATCH.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Cleanups } from '../helpers/cleanups.js';
import { record, get } from '../helpers/recording.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { retiredRouteApp, RETIRED_ROUTE_CALLS } from '../helpers/retired-route.js';
import type { DiffResult } from '../../diff/index.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

describe('a route replaced by a 404 page', () => {
  it('is one finding with its consequences; --rows lists every row; known add of it gives MATCH', async () => {
    const target = await retiredRouteApp();
    cleanups.add(() => target.close());
    const dir = tempDir(cleanups).dir;
    const files: Record<string, string> = {};
    for (const build of ['old', 'new'] as const) {
      target.setBuild(build);
      const rec = await record(cleanups, target.url);
      for (const path of RETIRED_ROUTE_CALLS) await get(rec.port, path);
      const har = await rec.finish();
      files[build] = join(dir, `${build}.har`);
      await writeFile(files[build]!, JSON.stringify(har));
    }
    const report = join(dir, 'report.json');
    const r = await runBb(['diff', files.old!, files.new!, '--json', report]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^DIFF: 1 real finding \(\d+ differences\)/, r.stdout);
    const result = JSON.parse(await readFile(report, 'utf8')) as DiffResult;
    assert.equal(result.findings.length, 1, r.stdout);
    const [f] = result.findings;
    assert.deepEqual([f!.pattern, f!.old, f!.new, f!.entries, f!.routes], ['response.status', 200, 404, 3, ['GET /legacy']]);
    const consequences = f!.consequences!.map((c) => `${c.kind} ${c.pattern}`).sort();
    assert.deepEqual(consequences, [
      'added response.headers.content-security-policy',
      'added response.headers.x-content-type-options',
      'changed response.body',
      'changed response.headers.content-type',
      'removed response.headers.cache-control',
      'removed response.headers.etag',
      'removed response.headers.vary',
      'removed response.headers.x-legacy',
    ], r.stdout);
    // The cause line, then each consequence indented under it.
    assert.match(r.stdout, /\n {2}\[F[0-9a-f]{9}\] response\.status changed 200 → 404 in 3 of 3 GET \/legacy\n( {6}↳ \[F[0-9a-f]{9}\] response\.[^\n]+\n){8} {6}e\.g\. GET \/legacy\?id=1/, r.stdout);
    // Every row is still listed, each under the finding that holds it.
    const rows = await runBb(['diff', files.old!, files.new!, '--rows']);
    assert.equal(rows.code, 1, rows.stderr);
    assert.equal(result.differences.length, f!.rows.length + f!.consequences!.reduce((n, c) => n + c.rows.length, 0));
    for (const d of result.differences) {
      assert.equal(d.finding, f!.id);
      assert.ok(rows.stdout.includes(`[${d.id}]`), `--rows lists ${d.id}:\n${rows.stdout}`);
    }
    // Ratifying the finding ratifies what follows from it.
    const config = join(dir, 'bb.config.json');
    const known = await runBb(['known', 'add', f!.id, '--from', report, '--reason', 'legacy retired in 2.0', '--config', config]);
    assert.equal(known.code, 0, known.stderr);
    assert.equal(known.stdout.split('\n').filter((l) => l.startsWith('added to')).length, 9, known.stdout);
    const again = await runBb(['diff', files.old!, files.new!, '--config', config]);
    assert.equal(again.code, 0, again.stdout);
    assert.match(again.stdout, /^MATCH with 1 known/, again.stdout);
    // Folded to one line, like every known finding; --rows shows what it holds.
    assert.match(again.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.status changed 200 → 404 in 3 of 3 GET \/legacy\n {6}reason: legacy retired in 2\.0\n/, again.stdout);
    const againRows = await runBb(['diff', files.old!, files.new!, '--config', config, '--rows']);
    assert.match(againRows.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.status changed 200 → 404[^\n]*\n( {6}↳ [^\n]+\n){8}/, againRows.stdout);
  });
});
