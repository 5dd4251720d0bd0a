// startShadow (scenario/shadow/run.ts) in front of https targets, through the
// library: HTTP/1.1 mirrors reach each target's recording proxy in plain
// text, and it speaks TLS on to the target (trusting the CA given in
// upstreamTls), so a plain client's requests are mirrored and compared as
// over plain HTTP. gRPC over TLS, and clients on TLS (--listen-tls), are in
// mirror-h2.cli.test.ts.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startShadow } from '../../../scenario/index.js';
import { createLeafFactory, loadOrCreateCa } from '../../../proxy/tls/index.js';
import { startHttp1Upstream } from '../../proxy/tls/alpn-peers.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();

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
