// gRPC traffic no scenario wrote: six grpc-js clients at once, each a seeded
// random walk (test/helpers/random-grpc-walk.ts) over the shop service
// (test/scenario/shadow/grpc-service.ts): logins whose token later calls carry
// as metadata, items created and read back, item streams, bidi chats that send
// issued ids back. grpc-js gives every client of a target one h2 connection,
// so all six clients' calls are streams of one connection.
// - Recorded twice against the same build: MATCH (the calls of one connection
//   that ran at once are in no order).
// - Replayed against a fresh instance of the same build: MATCH.
// - Against the old build and the new one: exactly the new build's changes.
// - Through bb shadow: the live findings are `bb diff`'s of the captures, the
//   same ids, counts and consequences (a streaming call opened right after a
//   login reaches each mirror with that target's own token).
// - Over TLS (the shop's own CA, bb --listen-tls in front): recorded twice,
//   MATCH; replayed with the shop's CA trusted, MATCH.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { replayCapture, startRecording, startShadow } from '../../scenario/index.js';
import { diffCaptures, renderText } from '../../diff/index.js';
import { mulberry32 } from '../../core/index.js';
import { loadOrCreateCa } from '../../proxy/tls/index.js';
import { localhostCert } from '../helpers/localhost-cert.js';
import { tempDir } from '../helpers/tmp.js';
import { grpcWalk } from '../helpers/random-grpc-walk.js';
import { startGrpcShop, type GrpcShopService } from '../scenario/shadow/grpc-service.js';

const tmp = tempDir();
const services: GrpcShopService[] = [];
after(async () => {
  for (const s of services) await s.close();
});
const USERS = [1, 2, 3, 4, 5, 6];

async function shop(build: 'old' | 'new', tls?: { key: string; cert: string }): Promise<GrpcShopService> {
  const s = await startGrpcShop(build, tls);
  services.push(s);
  return s;
}

/** The walks of seed `seed` recorded through bb capture in front of a fresh build; the capture's path. */
async function record(name: string, build: 'old' | 'new', seed: number): Promise<string> {
  const service = await shop(build);
  const rec = await startRecording({ target: service.url, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
  await Promise.all(USERS.map((user) => grpcWalk(rec.url, user, mulberry32(seed * 1000 + user))));
  return rec.close(2000);
}

describe('random concurrent gRPC traffic, two recordings against the same build', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: bb diff of the two is MATCH`, async () => {
      const r = await diffCaptures(await record(`a-${seed}`, 'old', seed), await record(`b-${seed}`, 'old', seed));
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    });
  }
});

describe('random concurrent gRPC traffic replayed against the same build', () => {
  it('bb diff of the capture and its replay is MATCH', async () => {
    const recorded = await record('orig', 'old', 3);
    const summary = await replayCapture(recorded, { target: (await shop('old')).url, out: tmp.path('replay.har'), bbHome: tmp.bbHome });
    assert.deepEqual(summary.failed, []);
    const r = await diffCaptures(recorded, tmp.path('replay.har'));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });
});

describe('random concurrent gRPC traffic against two builds', () => {
  it("bb diff finds exactly the new build's changes: Get's stock, Chat's echo, List's trailer", async () => {
    const r = await diffCaptures(await record('old', 'old', 4), await record('new', 'new', 4));
    const text = renderText(r, { color: false });
    const values = new Set(['5 → 7', '1 → 101', '2 → 102', '3 → 103']);
    for (const f of r.findings) {
      assert.equal(f.class, 'real', text);
      if (f.pattern === 'response.trailers') assert.deepEqual([f.kind, f.routes, f.entries], ['removed', ['POST /demo.Shop/List'], f.of], text);
      else {
        assert.deepEqual([f.kind, f.pattern], ['changed', 'grpc.messages[].data["2"]'], text);
        assert.ok(values.has(`${String(f.old)} → ${String(f.new)}`), text);
      }
    }
    const found = r.findings.map((f) => `${f.routes.join()} ${String(f.old)} → ${String(f.new)}`);
    assert.ok(found.includes('POST /demo.Shop/Get 5 → 7') && found.includes('POST /demo.Shop/Chat 1 → 101'), text);
    // Every chat that sent a message echoed its first one changed; every stream of items lost its trailer.
    for (const f of r.findings.filter((x) => x.old === 1 || x.pattern === 'response.trailers')) assert.equal(f.entries, f.of, text);
  });
});

describe('bb shadow over random concurrent gRPC traffic: the live findings are bb diff\'s of the captures', () => {
  for (const seed of [5, 6]) {
    it(`seed ${seed}: the same findings, ids, counts and consequences`, async () => {
      const [primary, candidate, secondary] = [await shop('old'), await shop('new'), await shop('old')];
      const out = tmp.path(`shadow-${seed}`);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 100, mirror: 'all' });
      await Promise.all(USERS.map((user) => grpcWalk(shadow.url, user, mulberry32(seed * 1000 + user))));
      const report = await shadow.close();
      assert.equal(report.totals.errors, 0);
      assert.equal(report.totals.mirrored, report.totals.requests);
      const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
      const listed = (fs: Array<{ id: string; class: string; count: number; consequences?: Array<{ id: string; count: number }> }>) =>
        fs.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.id} ×${f.count} [${(f.consequences ?? []).map((c) => `${c.id} ×${c.count}`).join(' ')}]`).sort();
      const live = listed(report.findings);
      assert.deepEqual(live, listed(offline.findings.filter((f) => f.class !== 'known').map((f) => ({ ...f, count: f.entries, consequences: f.consequences?.map((c) => ({ id: c.id, count: c.entries })) }))), renderText(offline, { color: false }));
      // Each target got its own token (no request header differs), and the changes are regressions.
      assert.ok(report.findings.every((f) => f.class === 'regression' && !f.pattern.startsWith('request.')), JSON.stringify(report.findings, null, 1));
      assert.ok(report.findings.some((f) => f.pattern === 'response.trailers'), live.join('\n'));
    });
  }
});

describe('random concurrent gRPC traffic over TLS', () => {
  it('recorded twice through bb --listen-tls against the same build: MATCH; replayed with the shop\'s CA trusted: MATCH', async () => {
    const { key, cert, caPem } = await localhostCert(tmp.path('shop-ca'));
    const tls = { key, cert };
    const upstreamTls = { extraCa: [caPem] };
    const bbCa = (await loadOrCreateCa(tmp.bbHome)).certPem;
    const recordTls = async (name: string) => {
      const service = await shop('old', tls);
      const rec = await startRecording({ target: service.url, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listenTls: true, upstreamTls, listen: { host: '127.0.0.1', port: 0 } });
      await Promise.all(USERS.map((user) => grpcWalk(rec.url.replace('127.0.0.1', 'localhost'), user, mulberry32(7000 + user), 14, bbCa)));
      return rec.close(2000);
    };
    const [a, b] = [await recordTls('tls-a'), await recordTls('tls-b')];
    const twice = await diffCaptures(a, b);
    assert.equal(twice.verdict, 'match', renderText(twice, { color: false }));
    const summary = await replayCapture(a, { target: (await shop('old', tls)).url, out: tmp.path('tls-replay.har'), bbHome: tmp.bbHome, upstreamTls });
    assert.deepEqual(summary.failed, []);
    const replayed = await diffCaptures(a, tmp.path('tls-replay.har'));
    assert.equal(replayed.verdict, 'match', renderText(replayed, { color: false }));
  });
});
