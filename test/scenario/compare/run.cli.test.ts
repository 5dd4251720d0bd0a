// bb compare --repeat through the real CLI: runs planned interleaved, every run
// pooled into the timing. bb compare's failing closed is in
// test/cli/commands/compare.cli.test.ts, a capture as the scenario in replay.cli.test.ts.
// test: quiet — it times a real server's routes (test/run.mjs runs it beside one other job at most).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCompare } from './helpers.js';
import { tempDir } from '../../helpers/tmp.js';
import { planSlots } from '../../../scenario/compare/run.js';

// bb compare --repeat N: each side runs N times, interleaved; the first pair
// is diffed for the wire and every run feeds the timing. With --trees
// old,old it measures the false-positive rate of the user's own setup.
const server = fileURLToPath(new URL('../fixtures/timing-server.mjs', import.meta.url));
const scenario = fileURLToPath(new URL('../fixtures/timing-scenario.mjs', import.meta.url));

interface Report {
  counts: { real: number };
  timing: { runs: { old: number; new: number }; routes: Array<{ route: string; verdict: string; old: { n: number }; new: { n: number }; ratio: number; overBudget?: boolean }> };
}

describe('bb compare --repeat', () => {
  const dir = tempDir().dir;
  const env = { BB_HOME: join(dir, 'home') };
  const config = async (name: string, slowNew: number) => {
    const file = join(dir, name);
    await writeFile(file, JSON.stringify({ servers: { old: { command: 'node', args: [server, '10'] }, new: { command: 'node', args: [server, String(slowNew)] } }, scenario }));
    return file;
  };

  it('plans the runs interleaved, the noise run last', () => {
    assert.deepEqual(planSlots(['old', 'new'], false, 3).map((s) => s.label), ['old', 'new', 'old-run2', 'new-run2', 'old-run3', 'new-run3']);
    assert.deepEqual(planSlots(['old', 'old'], false, 2).map((s) => `${s.tree}:${s.label}`), ['old:old', 'old:old-2', 'old:old-run2', 'old:old-2-run2']);
    assert.deepEqual(planSlots(['old', 'new'], true, 2).map((s) => s.label), ['old', 'new', 'old-run2', 'new-run2', 'old-noise']);
  });

  it('pools every run per side: the delayed route is slower, over budget, exit 1', async () => {
    const out = join(dir, 'slow');
    const run = await runCompare(['compare', '--config', await config('slow.json', 40), '--repeat', '3', '--timing-budget', '1.5', '--out', out], env);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /Timing \(time to first byte, .*, 3\+3 runs\)/);
    assert.match(run.stdout, /timing\/GET \/slow\s+slower .* n=18\/18  OVER BUDGET/);
    for (const f of ['old.har', 'new.har', 'old-run2.har', 'new-run3.har']) assert.ok(existsSync(join(out, f)), f);
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as Report;
    assert.deepEqual(report.timing.runs, { old: 3, new: 3 });
    // The unchanged routes share the machine with everything else: they may
    // wobble past the threshold on a busy machine, never past the budget.
    const over = report.timing.routes.filter((r) => r.overBudget).map((r) => r.route);
    assert.deepEqual(over, ['timing/GET /slow'], run.stdout);
    assert.equal(report.timing.routes.find((r) => r.route === 'timing/GET /slow')!.verdict, 'slower');
  });

  it('--trees old,old --repeat: the same build against itself stays inside the budget', async () => {
    const out = join(dir, 'self');
    const run = await runCompare(['compare', '--config', await config('self.json', 40), '--trees', 'old,old', '--repeat', '3', '--timing-budget', '1.5', '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as Report;
    assert.equal(report.timing.routes.filter((r) => r.overBudget).length, 0);
    assert.ok(report.timing.routes.every((r) => r.old.n === 18 && r.new.n === 18));
  });

  it('refuses --repeat 0 with exit 2', async () => {
    const run = await runCompare(['compare', '--config', await config('zero.json', 10), '--repeat', '0', '--out', join(dir, 'zero')], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--repeat needs a whole number of runs from 1 to 100, got 0/);
  });
});
