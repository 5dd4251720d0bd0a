// The tee's decisions (scenario/shadow/tee.ts), through the library.
// Sampling: --sample keeps a share, and with --sample-by a user's requests
// are all mirrored or none (a stable hash of the header's or cookie's
// value), so their sessions stay whole; every request not chosen is counted
// as `sampled out`. Caps: over the in-flight, queued-bytes or mirrored-body
// cap the mirror is dropped (the primary never) and counted by reason.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Client } from 'undici';
import { startShadow } from '../../../scenario/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { recordingUpstream, type RecordingUpstream } from '../../helpers/servers.js';
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
  const report = await shadow.close();
  return { report, candidate, users: await usersIn(shadow.out.candidate!) };
}

/** How many requests of each user (x-user) a capture holds. */
async function usersIn(har: string): Promise<Map<string, number>> {
  const doc = JSON.parse(await readFile(har, 'utf8')) as { log: { entries: Array<{ request: { headers: Array<{ name: string; value: string }> } }> } };
  const users = new Map<string, number>();
  for (const e of doc.log.entries) {
    const user = e.request.headers.find((h) => h.name.toLowerCase() === 'x-user')!.value;
    users.set(user, (users.get(user) ?? 0) + 1);
  }
  return users;
}

describe('bb shadow: sampling', () => {
  it('--sample-by header: each user all in or all out, the rest counted sampled out', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const { report, candidate, users: mirrored } = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 3);
    const t = report.totals;
    assert.equal(t.requests, 36);
    assert.equal(t.mirrored + (t.skipped['sampled out'] ?? 0), 36);
    // Whole users: each user the candidate saw, it saw all 3 requests of.
    for (const [user, n] of mirrored) assert.equal(n, 3, `${user}: ${n} of 3 mirrored`);
    assert.equal(t.mirrored, mirrored.size * 3, JSON.stringify(t));
    assert.ok(mirrored.size > 0 && mirrored.size < 12, `a share of 12 users at 0.5: ${mirrored.size}`);
    assert.equal(candidate.hits.get('GET /items'), t.mirrored);
  });

  it('--sample-by header: users whose values differ in their last character only spread over the share', async () => {
    // Sequential user ids (a hash whose last character barely moved put all ten on one side of 0.5).
    const users = Array.from({ length: 10 }, (_, i) => `user-${i}`);
    const { users: mirrored } = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 1);
    assert.ok(mirrored.size >= 2 && mirrored.size <= 8, `a share of 10 users at 0.5: ${mirrored.size}`);
  });

  it('--sample-by cookie picks the same users as the header of the same values', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const byHeader = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 1);
    const byCookie = await run({ sample: 0.5, sampleBy: { kind: 'cookie', name: 'uid' } }, users, 1);
    assert.deepEqual([...byCookie.users.keys()].sort(), [...byHeader.users.keys()].sort());
    assert.equal(byCookie.report.totals.mirrored, byHeader.report.totals.mirrored);
  });

  it('--sample 0 mirrors nothing and says why', async () => {
    const { report, candidate } = await run({ sample: 0 }, ['a'], 4);
    assert.deepEqual(report.totals.skipped, { 'sampled out': 4 });
    assert.equal(report.totals.mirrored, 0);
    assert.equal(candidate.hits.get('GET /items') ?? 0, 0);
  });
});

/** A recording upstream, stopped when the file ends. */
async function upstream(hold = false): Promise<RecordingUpstream> {
  const u = await recordingUpstream(hold);
  after(() => u.close());
  return u;
}

/** The `_bb.shadow` tags of a capture's entries, in its order. */
async function shadowTags(har: string): Promise<Array<{ id: number; skipped?: string }>> {
  const doc = JSON.parse(await readFile(har, 'utf8')) as { log: { entries: Array<{ _bb: { shadow: { id: number; skipped?: string } } }> } };
  return doc.log.entries.map((e) => e._bb.shadow);
}

describe('bb shadow: caps drop the mirror, never the primary, and count it', () => {
  it('past the in-flight cap a request is skipped as queue full while the candidate still holds the one before', async () => {
    const [primary, candidate] = [await upstream(), await upstream(true)];
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('in-flight'), bbHome: tmp.bbHome, maxInFlight: 1 });
    const c = new Client(shadow.url);
    try {
      assert.equal((await c.request({ method: 'GET', path: '/a' })).statusCode, 200);
      // The mirror of /a is in flight (the candidate has it, unanswered): /b and /c find the cap full.
      await candidate.received(1);
      for (const path of ['/b', '/c']) {
        const res = await c.request({ method: 'GET', path });
        assert.equal(res.statusCode, 200, `the primary answers ${path}`);
        await res.body.text();
      }
    } finally {
      candidate.release();
      await c.close();
    }
    const report = await shadow.close();
    assert.deepEqual(primary.seen.map((s) => s.url), ['/a', '/b', '/c']);
    assert.deepEqual(candidate.seen.map((s) => s.url), ['/a']);
    assert.equal(report.totals.requests, 3);
    assert.equal(report.totals.mirrored, 1);
    assert.deepEqual(report.totals.skipped, { 'queue full': 2 });
    // The primary's capture says which were not mirrored, and why.
    assert.deepEqual((await shadowTags(shadow.out.primary!)).map((t) => t.skipped ?? 'mirrored'), ['mirrored', 'queue full', 'queue full']);
  });

  it('a body past the queued-bytes cap is queue full, past the mirrored-body cap too large; the primary gets each whole', async () => {
    const [primary, candidate] = [await upstream(), await upstream()];
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('bytes'), bbHome: tmp.bbHome, mirror: 'all', maxQueuedBytes: 16, maxMirrorBody: 32 });
    const c = new Client(shadow.url);
    try {
      for (const [path, n] of [['/small', 8], ['/queued', 24], ['/large', 100]] as const) {
        const res = await c.request({ method: 'POST', path, body: 'x'.repeat(n) });
        assert.equal(res.statusCode, 200);
        await res.body.text();
      }
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    assert.deepEqual(primary.seen.map((s) => [s.url, s.bodyBytes]), [['/small', 8], ['/queued', 24], ['/large', 100]]);
    assert.deepEqual(candidate.seen.map((s) => [s.url, s.bodyBytes]), [['/small', 8]]);
    assert.equal(report.totals.mirrored, 1);
    assert.deepEqual(report.totals.skipped, { 'queue full': 1, 'too large': 1 });
    assert.equal(report.totals.mirrored + 2, report.totals.requests);
    assert.deepEqual(report.routes['POST /large']?.skipped, { 'too large': 1 });
  });
});
