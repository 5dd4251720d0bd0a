// A value issued in one comparison batch and sent back in a later one
// (scenario/shadow/batch-binding.ts): orders numbered by each build from its
// own start (1000, 5000, 9000: plain numbers, which bind only by their use),
// created, then read once the creations were compared (so the reads come in
// a later batch), and one read in the same batch. The relay sends each target
// its own number; the live comparison must bind them as `bb diff` of the
// captures does: the reads pair, a changed field in them is one regression,
// and a run of two equal builds without a secondary has nothing unclassified
// (what --fail-on gates).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startShadow, type Shadow, type ShadowReport } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { compared } from './compared.js';
import { startShadowService, type ShadowService } from './service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

/** Three orders created and compared, then read (a later batch); a fourth created and read at once. */
async function orders(shadow: Shadow): Promise<void> {
  const c = new Client(shadow.url);
  const post = async () => {
    const res = await c.request({ method: 'POST', path: '/orders', headers: { 'content-type': 'application/json' }, body: '{"item":"widget"}' });
    assert.equal(res.statusCode, 201);
    return (JSON.parse(await res.body.text()) as { id: number }).id;
  };
  const read = async (id: number) => {
    const res = await c.request({ method: 'GET', path: `/orders/${id}` });
    assert.equal(res.statusCode, 200);
    await res.body.text();
  };
  try {
    const ids = [await post(), await post(), await post()];
    await compared(shadow, 3);
    for (const id of ids) await read(id);
    await read(await post());
  } finally {
    await c.close();
  }
}

function findingKeys(r: ShadowReport): string[] {
  return r.findings.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern}`).sort();
}

describe('bb shadow: values issued in one batch, sent back in a later one', () => {
  it('bind on every side: the reads pair and compare as bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await startShadowService('old', 1000), await startShadowService('new', 5000), await startShadowService('old', 9000)];
    services.push(primary, candidate, secondary);
    const out = tmp.path('orders');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
    await orders(shadow);
    const report = await shadow.close();

    // The relay sent each target its own numbers: every read found its order there.
    assert.equal(report.totals.errors, 0);
    assert.equal(report.totals.mirrored, 8);
    assert.deepEqual(report.routes['POST /orders'] && { equal: report.routes['POST /orders'].equal, regressions: report.routes['POST /orders'].regressions }, { equal: 4, regressions: 0 });
    const reads = report.routes['GET /orders/{id}'];
    assert.ok(reads, JSON.stringify(report.routes));
    assert.deepEqual({ regressions: reads.regressions, noise: reads.noise, equal: reads.equal }, { regressions: 4, noise: 0, equal: 0 }, JSON.stringify(reads));
    assert.deepEqual(findingKeys(report), ['real changed response.body.status']);

    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offline.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), findingKeys(report));
    assert.equal(offline.pairs.filter((p) => p.old !== undefined && p.new !== undefined).length, 8);
  });

  it('two equal builds without a secondary: nothing unclassified', async () => {
    const [primary, candidate] = [await startShadowService('old', 1000), await startShadowService('old', 5000)];
    services.push(primary, candidate);
    const out = tmp.path('equal');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
    await orders(shadow);
    const report = await shadow.close();
    assert.deepEqual({ equal: report.totals.equal, unclassified: report.totals.unclassified, errors: report.totals.errors }, { equal: 8, unclassified: 0, errors: 0 }, JSON.stringify(report.routes));
    assert.equal(report.regressionRate, 0);
    assert.deepEqual(report.findings, []);
  });

  it('a flaky secondary that failed a creation: the candidate still binds, the read pairs as in bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await startShadowService('old', 1000), await startShadowService('new', 5000), await startShadowService('old', 9000, { hangUpOnOrder: 1 })];
    services.push(primary, candidate, secondary);
    const out = tmp.path('flaky');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
    await orders(shadow);
    const report = await shadow.close();

    // The secondary's failed creation is one error; its read (the primary's number, unknown to it) is compared.
    assert.equal(report.totals.errors, 1, JSON.stringify(report.routes));
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    // Every read pairs in bb diff of the captures; live, the read of the order whose secondary failed must pair as well.
    assert.equal(offline.pairs.filter((p) => p.old !== undefined && p.new !== undefined).length, 8);
    const reads = report.routes['GET /orders/{id}']!;
    assert.equal(reads.regressions + reads.noise + reads.equal + reads.unclassified, 4, JSON.stringify(report.routes));
    assert.deepEqual(report.findings.filter((f) => f.pattern.startsWith('response.body') && f.kind === 'added').map((f) => f.pattern), [], JSON.stringify(report.findings));
    assert.deepEqual(offline.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), findingKeys(report));
  });

  it('a read on another connection right after the creation waits for a slow candidate\'s own answer (a browser\'s parallel connections)', async () => {
    // The candidate answers creations 300 ms late: the primary's read of the new order is mirrored before it.
    const [primary, candidate, secondary] = [await startShadowService('old', 1000), await startShadowService('new', 5000, { createDelayMs: 300 }), await startShadowService('old', 9000)];
    services.push(primary, candidate, secondary);
    const out = tmp.path('parallel');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all' });
    const [a, b] = [new Client(shadow.url), new Client(shadow.url)];
    try {
      for (let i = 0; i < 2; i++) {
        const made = await a.request({ method: 'POST', path: '/orders', headers: { 'content-type': 'application/json' }, body: '{}' });
        const { id } = JSON.parse(await made.body.text()) as { id: number };
        const read = await b.request({ method: 'GET', path: `/orders/${id}` });
        assert.equal(read.statusCode, 200);
        await read.body.text();
      }
    } finally {
      await a.close();
      await b.close();
    }
    const report = await shadow.close();
    // Each read reached the candidate with its own number (no 404): the new build's changed status is the one regression.
    const reads = report.routes['GET /orders/{id}'];
    assert.deepEqual(reads && { regressions: reads.regressions, noise: reads.noise }, { regressions: 2, noise: 0 }, JSON.stringify(report.findings));
    assert.deepEqual(findingKeys(report), ['real changed response.body.status']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offline.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), findingKeys(report));
  });
});
