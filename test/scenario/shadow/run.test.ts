// A shadow run whose listener of a recording's facts throws: the client must
// not notice, and the errors the bus caught are reported once, at close, per
// target, as bb capture's are (scenario/record/recording.ts, STYLE principle 4).
//
// startShadow (scenario/shadow/run.ts) in front of https targets, through the
// library: HTTP/1.1 mirrors reach each target's recording proxy in plain
// text, and it speaks TLS on to the target (trusting the CA given in
// upstreamTls), so a plain client's requests are mirrored and compared as
// over plain HTTP. gRPC over TLS, and clients on TLS (--listen-tls), are in
// mirror-h2.cli.test.ts.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startShadow, type TargetName } from '../../../scenario/index.js';
import type { ListenerErrorReport } from '../../../proxy/index.js';
import { createLeafFactory, loadOrCreateCa } from '../../../proxy/tls/index.js';
import { startHttp1Upstream } from '../../proxy/tls/alpn-peers.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

describe('a shadow run whose tee throws', () => {
  it('keeps answering the client, and reports the errors by kind and target at close', async () => {
    const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
    services.push(primary, candidate);
    const reports: Array<{ target: TargetName; report: ListenerErrorReport }> = [];
    // The seam: the tee reads `sample` from the options it was given as each exchange starts,
    // inside its listener on the primary's facts; a getter that throws makes that listener throw.
    let reads = 0;
    const shadow = await startShadow({
      primary: primary.url,
      candidate: candidate.url,
      outDir: tmp.path('thrown'),
      bbHome: tmp.bbHome,
      get sample(): number {
        reads++;
        throw new TypeError(reads === 3 ? 'third one' : 'tee bug');
      },
      onListenerErrors: (report, target) => reports.push({ target, report }),
    });
    const c = new Client(shadow.url);
    const answers: string[] = [];
    try {
      for (const path of ['/items', '/items', '/items']) {
        const res = await c.request({ method: 'GET', path });
        answers.push(`${res.statusCode} total ${(JSON.parse(await res.body.text()) as { total: number }).total}`);
      }
    } finally {
      await c.close();
    }
    assert.equal(reads, 3, 'the tee read the option once per request');
    assert.deepEqual(reports, [], 'nothing is reported before close');

    await shadow.close(1000);

    assert.deepEqual(
      reports.map(({ target, report }) => ({ target, count: report.count, kinds: report.kinds.map((k) => `${k.error.name}: ${k.error.message} x${k.times}`) })),
      [{ target: 'primary', count: 3, kinds: ['TypeError: tee bug x2', 'TypeError: third one x1'] }],
    );
    assert.deepEqual(answers, ['200 total 1', '200 total 1', '200 total 1'], 'the client got the primary\'s answers');
  });
});

describe('startShadow with https targets', () => {
  it('mirrors to an https candidate over TLS (HTTP/1.1 by ALPN) and compares its answers', async () => {
    const ca = await loadOrCreateCa(tmp.path('targets-ca'));
    const leaves = createLeafFactory(ca);
    const [primary, candidate] = [await startHttp1Upstream(leaves), await startHttp1Upstream(leaves)];
    after(() => Promise.all([primary.close(), candidate.close()]));
    const shadow = await startShadow({
      primary: `https://localhost:${primary.port}`,
      candidate: `https://localhost:${candidate.port}`,
      upstreamTls: { extraCa: [ca.certPem] },
      outDir: tmp.path('out'),
      bbHome: tmp.bbHome,
    });
    const c = new Client(shadow.url);
    try {
      for (const path of ['/a', '/b?x=1']) {
        const res = await c.request({ method: 'GET', path });
        assert.equal(await res.body.text(), `h1 ${path}`);
      }
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    assert.deepEqual([report.totals.requests, report.totals.mirrored, report.totals.equal, report.totals.errors], [2, 2, 2, 0], JSON.stringify(report));
    assert.ok(candidate.connections.length > 0 && candidate.connections.every((alpn) => alpn === 'http/1.1'), JSON.stringify(candidate.connections));
  });
});
