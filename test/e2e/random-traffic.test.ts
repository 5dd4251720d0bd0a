// Traffic no scenario wrote: six clients at once, each a seeded random walk
// (test/helpers/random-walk.ts) over the shadow service, recorded through bb.
// - Replayed against a fresh instance of the same build: bb diff of the
//   capture and its replay is MATCH. It takes every part at once: each
//   client's connection and order kept, the session cookies and ids each
//   target issued followed, event streams the clients read in part read as
//   far again, and a pairing that pairs each client's calls with its own and
//   moves among exchanges that ran at once as no reordering.
// - Against the old build and the new one: exactly the new build's changes.
// - Recorded twice against the same build: MATCH, whatever order the clients
//   fell in.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { replayCapture, startRecording } from '../../scenario/index.js';
import { diffCaptures, renderText } from '../../diff/index.js';
import { mulberry32 } from '../../core/index.js';
import { tempDir } from '../helpers/tmp.js';
import { walk, walkH2 } from '../helpers/random-walk.js';
import { NEW_BUILD_CHANGES, startShadowService, type ShadowService } from '../scenario/shadow/service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

describe('bb replay of random concurrent traffic, against the same build', () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: bb diff of the capture and its replay is MATCH`, async () => {
      const [original, fresh] = [await startShadowService('old', 1000), await startShadowService('old', 1000)];
      services.push(original, fresh);
      const rec = await startRecording({ target: original.url, out: tmp.path(`orig-${seed}.har`), label: 'orig', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
      await Promise.all([1, 2, 3, 4, 5, 6].map((user) => walk(rec.url, user, mulberry32(seed * 1000 + user), 12, 2)));
      const recorded = await rec.close(2000);
      const summary = await replayCapture(recorded, { target: fresh.url, out: tmp.path(`replay-${seed}.har`), bbHome: tmp.bbHome });
      assert.deepEqual(summary.failed, []);
      const r = await diffCaptures(recorded, tmp.path(`replay-${seed}.har`));
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    });
  }
});

describe('bb replay of random concurrent h2 traffic, against the same build', () => {
  it('bb diff of the capture and its replay is MATCH (h2c, gzipped answers, event streams left early)', async () => {
    const h2c = { h2c: true };
    const [original, fresh] = [await startShadowService('old', 1000, h2c), await startShadowService('old', 1000, h2c)];
    services.push(original, fresh);
    const rec = await startRecording({ target: original.url, out: tmp.path('orig-h2.har'), label: 'orig', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    await Promise.all([1, 2, 3, 4, 5, 6].map((user) => walkH2(rec.url, user, mulberry32(4000 + user), 12, { gzip: user % 2 === 0 })));
    const recorded = await rec.close(2000);
    const summary = await replayCapture(recorded, { target: fresh.url, out: tmp.path('replay-h2.har'), bbHome: tmp.bbHome });
    assert.deepEqual(summary.failed, []);
    const r = await diffCaptures(recorded, tmp.path('replay-h2.har'));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });
});

// The same walks against the old build and the new one (service.ts: a field, a header, a page's markup, an event's
// level, a chat's room, an order's state; orders numbered from another start): bb diff finds those six changes, each
// in every exchange that shows it, and nothing else.
describe('the same random concurrent traffic against two builds', () => {
  it('bb diff finds exactly the new build\'s changes, each in all of its exchanges', async () => {
    const record = async (name: string, build: 'old' | 'new') => {
      const service = await startShadowService(build, build === 'new' ? 5000 : 1000);
      services.push(service);
      const rec = await startRecording({ target: service.url, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
      await Promise.all([1, 2, 3, 4, 5, 6].map((user) => walk(rec.url, user, mulberry32(7000 + user), 16)));
      return rec.close(2000);
    };
    const r = await diffCaptures(await record('old', 'old'), await record('new', 'new'));
    const found = r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort();
    assert.deepEqual(found, [...NEW_BUILD_CHANGES], renderText(r, { color: false }));
    for (const f of r.findings) assert.equal(f.entries, f.of, `${f.pattern}: ${f.entries} of ${f.of}`);
  });
});

// The same walks recorded twice, against two instances of the same build, no replay between: the clients fall
// in another order each time (one client's call before another's in one recording, after it in the other), and
// only the order within one client connection is the clients' own.
describe('two recordings of the same random concurrent traffic, against the same build', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: bb diff of the two is MATCH`, async () => {
      const record = async (name: string) => {
        const service = await startShadowService('old', 1000);
        services.push(service);
        const rec = await startRecording({ target: service.url, out: tmp.path(`${name}-${seed}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
        await Promise.all([1, 2, 3, 4, 5, 6].map((user) => walk(rec.url, user, mulberry32(seed * 1000 + user), 12)));
        return rec.close(2000);
      };
      const [a, b] = [await record('a'), await record('b')];
      const r = await diffCaptures(a, b);
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    });
  }
});
