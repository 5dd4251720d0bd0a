// bb shadow's sampling (the tee's decision, scenario/shadow/tee.ts), through the library: --sample keeps a share, and with
// --sample-by a user's requests are all mirrored or none (a stable hash of the
// header's or cookie's value), so their sessions stay whole; every request
// not chosen is counted as `sampled out`.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startShadow } from '../../../scenario/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

async function run(options: { sample: number; sampleBy?: { kind: 'header' | 'cookie'; name: string } }, users: string[], perUser: number) {
  const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
  services.push(primary, candidate);
  const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path(`sample-${services.length}`), bbHome: tmp.bbHome, ...options });
  const c = new Client(shadow.url);
  try {
    for (let i = 0; i < perUser; i++) {
      for (const user of users) {
        const res = await c.request({ method: 'GET', path: '/items', headers: { 'x-user': user, cookie: `uid=${user}` } });
        await res.body.text();
      }
    }
  } finally {
    await c.close();
  }
  return { report: await shadow.close(), candidate };
}

describe('bb shadow: sampling', () => {
  it('--sample-by header: each user all in or all out, the rest counted sampled out', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const { report, candidate } = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 3);
    const t = report.totals;
    assert.equal(t.requests, 36);
    assert.equal(t.mirrored + (t.skipped['sampled out'] ?? 0), 36);
    // Whole users: a multiple of the 3 requests each made, on both sides.
    assert.equal(t.mirrored % 3, 0, JSON.stringify(t));
    assert.ok(t.mirrored > 0 && t.mirrored < 36, `a share of 12 users at 0.5: ${t.mirrored} of 36`);
    assert.equal(candidate.hits.get('GET /items'), t.mirrored);
  });

  it('--sample-by cookie picks the same users as the header of the same values', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const byHeader = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 1);
    const byCookie = await run({ sample: 0.5, sampleBy: { kind: 'cookie', name: 'uid' } }, users, 1);
    assert.equal(byCookie.report.totals.mirrored, byHeader.report.totals.mirrored);
  });

  it('--sample 0 mirrors nothing and says why', async () => {
    const { report, candidate } = await run({ sample: 0 }, ['a'], 4);
    assert.deepEqual(report.totals.skipped, { 'sampled out': 4 });
    assert.equal(report.totals.mirrored, 0);
    assert.equal(candidate.hits.get('GET /items') ?? 0, 0);
  });
});
