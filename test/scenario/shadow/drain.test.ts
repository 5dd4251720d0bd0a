// The end of a shadow run whose comparison worker is starved
// (scenario/shadow/drain-watch.ts). A fresh worker at the process's priority
// compares the journals whole: its report must be the live worker's (the
// same counts per route, the same findings), here with the two builds of
// service.ts and a secondary, through startShadow and a real client. And the
// watch must see a thread starved when it is: a worker at the lowest
// priority spinning while more processes than cores spin at the process's.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { Client } from 'undici';
import { startShadow, type ShadowReport } from '../../../scenario/index.js';
import { schedTimes, watchStarved } from '../../../scenario/shadow/drain-watch.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
const spinners: ChildProcess[] = [];
after(async () => {
  for (const p of spinners) p.kill();
  for (const s of services) await s.close();
});

/** One shadow run of the same traffic (a session, three lists and their first items, /me, a POST); its final report and which worker wrote it. */
async function run(name: string, drain: 'live' | 'whole'): Promise<{ report: ShadowReport; by: string | undefined }> {
  const [primary, candidate, secondary] = [await startShadowService('old'), await startShadowService('new'), await startShadowService('old')];
  services.push(primary, candidate, secondary);
  const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: tmp.path(name), bbHome: tmp.bbHome, drain });
  const c = new Client(shadow.url);
  try {
    const json = async (path: string, headers: Record<string, string> = {}) => {
      const res = await c.request({ method: 'GET', path, headers });
      return { headers: res.headers, body: JSON.parse(await res.body.text()) };
    };
    const session = await json('/session');
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 3; i++) {
      const list = await json('/items');
      await json(`/items/${list.body.items[0].id}`);
    }
    await json('/me', { cookie });
    const post = await c.request({ method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
    await post.body.text();
  } finally {
    await c.close();
  }
  const report = await shadow.close();
  return { report, by: shadow.drainedBy() };
}

/** What two reports of the same traffic must share: counts per route and in all, and the findings with their counts. */
function verdicts(r: ShadowReport) {
  return {
    totals: r.totals,
    routes: r.routes,
    findings: r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern} ×${f.count}`).sort(),
  };
}

describe('bb shadow: the end of a run compared whole', () => {
  it("a fresh worker reading the journals whole reaches the live worker's report", async () => {
    // The live worker's report as the reference, whatever the machine's load (no race).
    const live = await run('live', 'live');
    const whole = await run('whole', 'whole');
    assert.equal(live.by, 'live');
    assert.equal(whole.by, 'whole');
    // The run's own verdicts, as bb shadow's end-to-end test has them.
    assert.deepEqual(whole.report.totals.skipped, { unsafe: 1 });
    assert.equal(whole.report.totals.requests, 9);
    assert.equal(whole.report.routes['GET /items']?.regressions, 3, JSON.stringify(whole.report.routes));
    assert.equal(whole.report.routes['GET /me']?.equal, 1, JSON.stringify(whole.report.routes));
    assert.deepEqual(
      whole.report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(),
      ['regression changed response.body.total', 'regression removed response.headers.x-served-by'],
    );
    assert.deepEqual(verdicts(whole.report), verdicts(live.report));
    // Each target's latency from the same entries: as many samples.
    for (const [route, byTarget] of Object.entries(live.report.latency)) {
      for (const [target, h] of Object.entries(byTarget)) assert.equal(whole.report.latency[route]?.[target as 'primary']?.count, h!.count, `${route} ${target}`);
    }
    // The run's start, not the fresh worker's.
    assert.ok(whole.report.startedDateTime < whole.report.endedDateTime);
  });

  it('the watch sees a thread at the lowest priority starved while more processes than cores spin', { timeout: 60_000, skip: process.platform !== 'linux' && 'thread times from /proc: Linux only' }, async () => {
    const source = `
      const { parentPort } = require('node:worker_threads');
      const os = require('node:os');
      const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
      os.setPriority(tid, 19);
      parentPort.postMessage(tid);
      for (const end = Date.now() + 30000; Date.now() < end; );`;
    const worker = new Worker(source, { eval: true });
    try {
      const tid = await new Promise<number>((res, rej) => (worker.once('message', res), worker.once('error', rej)));
      assert.ok(schedTimes(tid), 'the thread\'s times are readable in /proc');
      const spin = 'for (const end = Date.now() + 20000; Date.now() < end; );';
      for (let i = 0; i <= availableParallelism(); i++) spinners.push(spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
      const t0 = Date.now();
      await new Promise<void>((resolve) => watchStarved(tid, resolve));
      // Four periods of 250 ms at least; well within the spinners' 20 s.
      assert.ok(Date.now() - t0 < 15_000, `starved seen after ${Date.now() - t0} ms`);
    } finally {
      for (const p of spinners.splice(0)) p.kill();
      await worker.terminate();
    }
  });
});
