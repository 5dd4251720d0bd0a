// PacedRuns (ui/paced.ts): work asked for again and again runs at most every
// `everyMs` after it was asked for, and at least `idle` times its last run's
// cost after that run ended. Real timers; the work's cost is a busy wait.
// Only lower bounds on time: a loaded machine makes things later (a CI run
// here once got one run in 600 ms), never sooner.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PacedRuns } from '../../ui/paced.js';
import { assertPaced, type Run } from '../helpers/live-feeds.js';

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('PacedRuns', () => {
  it('asks until a run are that run, which comes everyMs after the first ask', async () => {
    const runs: number[] = [];
    const asked = performance.now();
    const paced = new PacedRuns(() => runs.push(performance.now()), 30);
    for (let i = 0; i < 5; i++) paced.ask();
    // However late the run comes (a loaded machine), nothing runs again after it: nothing more was asked.
    while (runs.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(runs.length, 1);
    assert.ok(runs[0]! - asked >= 29, `ran ${runs[0]! - asked} ms after the ask`);
    paced.stop();
  });

  it('work done elsewhere (a first build in steps) paces the next run as a run of its own would', async () => {
    const runs: number[] = [];
    const paced = new PacedRuns(() => runs.push(performance.now()), 10, 4);
    const end = performance.now();
    paced.ranElsewhere(40, end);
    paced.ask();
    while (runs.length === 0) await new Promise((r) => setTimeout(r, 5));
    assert.ok(runs[0]! - end >= 4 * 40 - 2, `ran ${runs[0]! - end} ms after work of 40 ms`);
    paced.stop();
  });

  it('a run that cost c ms is followed by the next no sooner than idle × c after it ended', async () => {
    const runs: Run[] = [];
    const costs = [5, 50, 2, 20];
    const paced = new PacedRuns(() => {
      const start = performance.now();
      busy(costs[runs.length] ?? 1);
      runs.push({ start, end: performance.now() });
    }, 10, 4);
    // Asked all the time until the runs are done (however long a loaded machine makes that): the pace alone spaces them.
    while (runs.length < costs.length) {
      paced.ask();
      await new Promise((r) => setTimeout(r, 1));
    }
    paced.stop();
    assert.equal(runs.length, costs.length);
    assertPaced(runs, 10, 4, 'run');
    // After the 50 ms run, 200 ms at least. (How soon a cheap run's successor comes is a speed, and a loaded machine
    // only delays it: not asserted here.)
    const afterDear = runs[2]!.start - runs[1]!.end;
    assert.ok(afterDear >= 199, `${afterDear} ms after the 50 ms run`);
  });

  it('stop cancels a run asked for, and later asks do nothing', async () => {
    let ran = 0;
    const paced = new PacedRuns(() => ran++, 10);
    paced.ask();
    paced.stop();
    paced.ask();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ran, 0);
  });
});
