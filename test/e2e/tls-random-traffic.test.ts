// The random concurrent traffic of random-traffic.test.ts and
// shadow-random-traffic.test.ts, over TLS: the service is https://localhost
// (a certificate from its own CA, h2 or HTTP/1.1 by ALPN, its chat on
// HTTP/1.1); bb terminates the clients' TLS with a leaf from its own CA
// (--listen-tls, or as the clients' forward proxy) and trusts the service's
// with --upstream-ca. Three clients walk over HTTP/1.1 (chats included),
// three over h2, one of them taking gzipped answers. A run of this kind found
// that bb replay could not be told to trust an https target's CA (every
// exchange a 502 from bb, and the run said it went well), and that a
// replayed WebSocket upgrade carried bb's own address as its Host, so it
// paired with no original upgrade.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { replayCapture, startRecording, startShadow } from '../../scenario/index.js';
import { diffCaptures, renderText } from '../../diff/index.js';
import { mulberry32 } from '../../core/index.js';
import { loadOrCreateCa } from '../../proxy/tls/index.js';
import { localhostCert } from '../helpers/localhost-cert.js';
import { tempDir } from '../helpers/tmp.js';
import { assertLiveIsOffline } from '../helpers/shadow-offline.js';
import { walk, walkH2 } from '../helpers/random-walk.js';
import { NEW_BUILD_CHANGES, startShadowService, type ShadowService } from '../scenario/shadow/service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

let tls: { key: string; cert: string };
let upstreamTls: { extraCa: string[] };
/** bb's CA, which the clients trust. */
let bbCa: string;
before(async () => {
  const { key, cert, caPem } = await localhostCert(tmp.path('service-ca'));
  tls = { key, cert };
  upstreamTls = { extraCa: [caPem] };
  bbCa = (await loadOrCreateCa(tmp.bbHome)).certPem;
});

async function service(build: 'old' | 'new', firstOrder: number): Promise<ShadowService> {
  const s = await startShadowService(build, firstOrder, { tls });
  services.push(s);
  return s;
}

/**
 * Six clients at once to `url`: three over HTTP/1.1, three over h2, each leaving an event stream after `events` (two
 * recordings of a stream left early may hold more or fewer events past that, which is timing: bb diff compares such
 * streams as far as both got). Through bb at `url` (https://127.0.0.1:PORT, reached as localhost), or to the service
 * at `url` through bb as the clients' forward proxy (`via`: CONNECT tunnels, TLS intercepted).
 */
function traffic(url: string, seed: number, events: number, via?: string): Promise<unknown> {
  const at = url.replace('127.0.0.1', 'localhost');
  const t = { ca: bbCa, ...(via ? { via } : {}) };
  return Promise.all([1, 2, 3, 4, 5, 6].map((user) => (user <= 3 ? walk(at, user, mulberry32(seed * 1000 + user), 14, events, t) : walkH2(at, user, mulberry32(seed * 1000 + user), 14, { ...t, gzip: user === 6, events }))));
}

/** Records the walks of `seed` against a fresh service of `build` through bb capture --listen-tls. */
async function record(name: string, build: 'old' | 'new', firstOrder: number, seed: number, events: number): Promise<string> {
  const target = await service(build, firstOrder);
  const rec = await startRecording({ target: target.url, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listenTls: true, upstreamTls, listen: { host: '127.0.0.1', port: 0 } });
  await traffic(rec.url, seed, events);
  return rec.close(2000);
}

describe('random concurrent traffic over TLS (HTTP/1.1, WebSocket and h2 by ALPN)', () => {
  it('recorded twice against the same build: bb diff is MATCH', async () => {
    const r = await diffCaptures(await record('twice-a', 'old', 1000, 1, 2), await record('twice-b', 'old', 1000, 1, 2));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('replayed against a fresh instance of the same build, its CA trusted: bb diff is MATCH', async () => {
    const recorded = await record('orig', 'old', 1000, 2, 2);
    const fresh = await service('old', 1000);
    const summary = await replayCapture(recorded, { target: fresh.url, out: tmp.path('replay.har'), bbHome: tmp.bbHome, upstreamTls });
    assert.deepEqual(summary.failed, []);
    const r = await diffCaptures(recorded, tmp.path('replay.har'));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('against the old build and the new one: exactly the new build\'s changes, each in all of its exchanges', async () => {
    const r = await diffCaptures(await record('old', 'old', 1000, 3, 2), await record('new', 'new', 5000, 3, 2));
    assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), [...NEW_BUILD_CHANGES], renderText(r, { color: false }));
    for (const f of r.findings) assert.equal(f.entries, f.of, `${f.pattern}: ${f.entries} of ${f.of}`);
  });

  it('through bb capture --mode forward (the clients\' HTTPS_PROXY): recorded twice, MATCH; replayed against a fresh instance, MATCH', async () => {
    const forward = async (name: string) => {
      const target = await service('old', 1000);
      const rec = await startRecording({ mode: 'forward', out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, upstreamTls, listen: { host: '127.0.0.1', port: 0 } });
      await traffic(target.url, 5, 2, rec.url);
      return rec.close(2000);
    };
    const [a, b] = [await forward('forward-a'), await forward('forward-b')];
    const twice = await diffCaptures(a, b);
    assert.equal(twice.verdict, 'match', renderText(twice, { color: false }));
    const fresh = await service('old', 1000);
    const summary = await replayCapture(a, { target: fresh.url, out: tmp.path('forward-replay.har'), bbHome: tmp.bbHome, upstreamTls });
    assert.deepEqual([summary.failed, summary.skipped], [[], []]);
    const replayed = await diffCaptures(a, tmp.path('forward-replay.har'));
    assert.equal(replayed.verdict, 'match', renderText(replayed, { color: false }));
  });

  it('through bb shadow --listen-tls, everything mirrored: the live findings = bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await service('old', 1000), await service('new', 5000), await service('old', 9000)];
    const out = tmp.path('shadow');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 100, listenTls: true, upstreamTls, mirror: 'all' });
    await traffic(shadow.url, 4, 2);
    const report = await shadow.close();
    assert.equal(report.totals.errors, 0);
    await assertLiveIsOffline(report, out, true);
    assert.ok(report.findings.length > 0);
  });
});
