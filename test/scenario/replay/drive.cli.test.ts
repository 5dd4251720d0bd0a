// bb replay's pacing and progress: --pace original keeps the gaps, <N>x
// scales them, asap keeps only the order; a terminal sees "done / total".
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startRecording } from '../../../scenario/index.js';
import { readFile } from 'node:fs/promises';
import { runBb, startBb, startBbOnTty } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { firstOf } from '../../helpers/bounded.js';
import { startReplayService, type ReplayService } from './service.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const services: ReplayService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

/** A fresh service and the times its requests arrived. */
async function timedService(): Promise<{ s: ReplayService; times: number[] }> {
  const s = await startReplayService();
  services.push(s);
  return { s, times: s.arrivals };
}

describe('bb replay: pacing', () => {
  let original: string;
  before(async () => {
    const { s } = await timedService();
    const rec = await startRecording({ target: s.url, out: tmp.path('gaps.har'), label: 'gaps', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const c = new Client(rec.url);
    for (let i = 0; i < 3; i++) {
      await (await c.request({ method: 'GET', path: '/items' })).body.text();
      if (i < 2) await new Promise((r) => setTimeout(r, 500));
    }
    await c.close();
    original = await rec.close(1000);
  });

  // The schedule runs from the first exchange's start: arrivals keep the original span,
  // give or take the first connection's set-up (generous bounds: the machine is shared).
  const span = (t: number[]) => t.at(-1)! - t[0]!;

  it('--pace original keeps the 2 × 500 ms gaps; --pace 2x halves them', async () => {
    const one = await timedService();
    assert.equal((await runBb(['replay', original, '--target', one.s.url, '--out', tmp.path('p1.har'), '--pace', 'original'], env)).code, 0);
    assert.ok(span(one.times) >= 800, `span ${span(one.times).toFixed(0)} ms`);
    const two = await timedService();
    assert.equal((await runBb(['replay', original, '--target', two.s.url, '--out', tmp.path('p2.har'), '--pace', '2x'], env)).code, 0);
    assert.ok(span(two.times) >= 350 && span(two.times) < 800, `span ${span(two.times).toFixed(0)} ms`);
  });

  it('asap keeps the order only', async () => {
    const fast = await timedService();
    assert.equal((await runBb(['replay', original, '--target', fast.s.url, '--out', tmp.path('p0.har')], env)).code, 0);
    assert.deepEqual(fast.s.log, ['GET /items 200', 'GET /items 200', 'GET /items 200']);
    assert.ok(span(fast.times) < 800, `span ${span(fast.times).toFixed(0)} ms`);
  });

  it('Ctrl-C stops a paced replay at once: exit 130, the capture written with what crossed', async () => {
    const { s, times } = await timedService();
    const out = tmp.path('interrupted.har');
    const bb = startBb(['replay', original, '--target', s.url, '--out', out, '--pace', '0.1x'], env, { timeoutMs: 30_000 });
    for (let i = 0; i < 200 && times.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(times.length, 1, 'the first exchange went');
    bb.child.kill('SIGINT');
    // The next exchange was 5 s away at 0.1x: bb exited before it fell due, the sleep cut short.
    assert.equal(await firstOf(bb.exited, 4_000), 'first', 'bb exited before the next exchange was due');
    assert.equal(await bb.exited, 130, bb.stderr());
    assert.equal(times.length, 1, 'no second exchange went');
    assert.match(bb.stderr(), /bb replay was interrupted; what it replayed is in /);
    const har = JSON.parse(await readFile(out, 'utf8'));
    assert.equal(har.log.entries.length, 1);
  });

  it('on a terminal a progress line counts exchanges done out of the total', async () => {
    const { s } = await timedService();
    const bb = startBbOnTty(['replay', original, '--target', s.url, '--out', tmp.path('tty.har'), '--pace', 'original'], { ...env, BB_PROGRESS_AFTER_MS: '0' }, { timeoutMs: 30_000 });
    assert.equal(await bb.exited, 0, bb.stdout());
    assert.match(bb.stdout(), /bb replay: [12] \/ 3 exchanges/);
    assert.match(bb.stdout(), /replayed 3 exchanges/);
  });
});
