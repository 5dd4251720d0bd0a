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
//
// The end of a run whose comparison worker is starved (drain-watch.ts): a
// fresh worker at the process's priority compares the journals whole, and
// its report must be the live worker's (the same counts per route, the same
// findings), here with the two builds of service.ts and a secondary. The
// same report when nothing is compared until the run ends (compare: 'end').
//
// Realistic flows end to end, each target its own issued values (moved here
// from mirror.test.ts, which ran near its file's 120 s budget on a slower machine;
// the other flows are in test/e2e/shadow-flows.test.ts).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startShadow, type Shadow, type ShadowOptions, type ShadowReport, type TargetName } from '../../../scenario/index.js';
import type { ListenerErrorReport } from '../../../proxy/index.js';
import { createLeafFactory, loadOrCreateCa } from '../../../proxy/tls/index.js';
import { startHttp1Upstream } from '../../proxy/tls/alpn-peers.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';
import { recordingUpstream } from '../../helpers/servers.js';
import { startMoreFlowsApp, startH2FlowsApp, moreFlowsClient, h2CreateThenRead } from '../../helpers/web-flows-more.js';
import type { FlowsApp } from '../../helpers/web-flows.js';
import { compared, findingKeys, offlineKeys } from './compared.js';
import { diffCaptures, renderText } from '../../../diff/index.js';
import type { Har } from '../../../capture/index.js';
import { readFile } from 'node:fs/promises';

const tmp = tempDir();
const services: Array<ShadowService | FlowsApp> = [];
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

/** One shadow run of the same traffic (a session, three lists and their first items, /me, a POST); its final report and which worker wrote it. */
async function run(
  name: string,
  when: Pick<ShadowOptions, 'drain' | 'compare' | 'reportEveryMs'>,
  beforeClose?: (shadow: Shadow) => Promise<void>,
): Promise<{ report: ShadowReport; by: string | undefined }> {
  const [primary, candidate, secondary] = [await startShadowService('old'), await startShadowService('new'), await startShadowService('old')];
  services.push(primary, candidate, secondary);
  const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: tmp.path(name), bbHome: tmp.bbHome, ...when });
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
  await beforeClose?.(shadow);
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
    const live = await run('live', { drain: 'live' });
    const whole = await run('whole', { drain: 'whole' });
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
});

describe("bb shadow --compare end", () => {
  it('compares nothing while the traffic flows, then reaches the live report at close', async () => {
    const live = await run('live-ref', { drain: 'live' });
    let during: { report: ShadowReport | undefined; requests: number } | undefined;
    const end = await run('end', { compare: 'end', reportEveryMs: 20 }, async (shadow) => {
      // Twenty report periods after the last request: a live worker would have reported by now.
      await new Promise((r) => setTimeout(r, 400));
      during = { report: shadow.report(), requests: shadow.requests() };
    });
    assert.equal(during!.report, undefined);
    // --until N counts what the primary answered (nothing is compared yet), the unmirrored POST too.
    assert.equal(during!.requests, 9);
    assert.equal(end.by, 'whole');
    assert.equal(end.report.routes['GET /items']?.regressions, 3, JSON.stringify(end.report.routes));
    assert.deepEqual(verdicts(end.report), verdicts(live.report));
  });

  it('is refused beside a live view or rotating captures, before any port is bound', async () => {
    const [primary, candidate] = [await startShadowService('old'), await startShadowService('new')];
    services.push(primary, candidate);
    const base = { primary: primary.url, candidate: candidate.url, bbHome: tmp.bbHome, compare: 'end' as const };
    await assert.rejects(startShadow({ ...base, outDir: tmp.path('end-ui'), ui: {} }), /--compare end shows findings only when the run ends/);
    await assert.rejects(startShadow({ ...base, outDir: tmp.path('end-rotate'), rotate: { bytes: 1 << 20 } }), /--rotate compares each segment as it is written/);
  });
});

// `--header candidate:'Authorization: …'` gives the candidate its own credentials: the user's choice for that target,
// not the build's. Compared, it was a regression in every exchange (the primary's copy has none), and the run failed.
describe('bb shadow --header', () => {
  it('what it sets on a target\'s copies is not compared, live or by bb diff of the captures; the answers still are', async () => {
    const [primary, candidate, secondary] = [await recordingUpstream(), await recordingUpstream(), await recordingUpstream()];
    after(() => Promise.all([primary.close(), candidate.close(), secondary.close()]));
    const out = tmp.path('set-headers');
    const shadow = await startShadow({
      primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50,
      headers: { candidate: [['Authorization', 'Bearer for-candidate']], secondary: [['X-Env', 'staging']] },
    });
    const c = new Client(shadow.url);
    try {
      await (await c.request({ method: 'GET', path: '/items' })).body.text();
      // The client's own Authorization: the candidate's copy carries bb's instead, and that is not compared either.
      await (await c.request({ method: 'GET', path: '/me', headers: { authorization: 'Bearer client', 'x-trace': 'a1' } })).body.text();
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    assert.deepEqual(candidate.seen.map((s) => s.headers.authorization), ['Bearer for-candidate', 'Bearer for-candidate']);
    assert.deepEqual(secondary.seen.map((s) => s.headers['x-env']), ['staging', 'staging']);
    assert.deepEqual({ equal: report.totals.equal, findings: report.findings.map((f) => f.pattern) }, { equal: 2, findings: [] });
    const harOf = async (side: string) => JSON.parse(await readFile(`${out}/${side}.har`, 'utf8')) as Har;
    assert.deepEqual((await harOf('candidate')).log._bb?.setHeaders, ['authorization']);
    assert.deepEqual((await harOf('secondary')).log._bb?.setHeaders, ['x-env']);
    assert.equal((await harOf('primary')).log._bb?.setHeaders, undefined);
    // Each capture says which of the run's it is (bb diff knows a shadow's captures by it).
    for (const side of ['primary', 'candidate', 'secondary']) assert.equal((await harOf(side)).log._bb?.shadowRole, side);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.equal(offline.verdict, 'match', renderText(offline, { color: false }));
    assert.equal(offline.noiseRun?.differences, 0);
  });
});

// Realistic flows (test/helpers/web-flows-more.ts) through bb shadow, each
// target its own issued values (as mirror.test.ts's flows): a
// Socket.IO-style session, a redirect chain, SOAP, a CSV export's job, a
// 202's Operation-Location and an h2c create-then-read.
type MoreFlows = ReturnType<typeof moreFlowsClient>;
const more = (run: (c: MoreFlows) => Promise<unknown>) => async (url: string, settle?: (n: number) => Promise<void>) => {
  const c = moreFlowsClient(url, settle);
  try {
    return await run(c);
  } finally {
    await c.close();
  }
};
const moreFlows: Array<[string, (build: 'old' | 'new') => Promise<FlowsApp>, (url: string, settle?: (n: number) => Promise<void>) => Promise<unknown>, unknown, string[]]> = [
  ['a Socket.IO-style session: an order id in a 42 event packet sent back in a later packet, polling then WebSocket', startMoreFlowsApp, more((c) => c.socketIo()), ['open', 'open'], ['response.body[].args[].status', 'ws.messages[].data.args[].status']],
  ['a chain of three 302s, each Location with a fresh token, the last setting a cookie', startMoreFlowsApp, more((c) => c.redirectChain()), 'open', ['response.body.status']],
  ['a SOAP answer\'s OrderId sent back in the next request\'s XML body', startMoreFlowsApp, more((c) => c.soap()), 'open', ['response.body']],
  ['a CSV export whose first line names the job then polled at /jobs/<id>', startMoreFlowsApp, more((c) => c.exportJob()), 'open', ['response.body.status']],
  ['a 202 Accepted with Retry-After and Operation-Location polled until done', startMoreFlowsApp, more((c) => c.longRunning()), 'open', ['response.body.status']],
  ['h2c: a JSON create then a read of its id on the same connection', startH2FlowsApp, (url) => h2CreateThenRead(url), 'open', ['response.body.status']],
];

describe('shadow mirror: more realistic flows, each target its own issued values', () => {
  for (const [name, start, flow, expected, changed] of moreFlows) for (const edges of [false, true]) {
    it(`${name}${edges ? ', each step in its own batch' : ''}`, async () => {
      const [primary, candidate, secondary] = [await start('old'), await start('new'), await start('old')];
      services.push(primary, candidate, secondary);
      const out = tmp.path(`more-${name.replace(/\W+/g, '-').slice(0, 40)}${edges ? '-edges' : ''}`);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
      assert.deepEqual(await flow(shadow.url, edges ? (n) => compared(shadow, n) : undefined), expected);
      const report = await shadow.close(2_000);
      assert.deepEqual({ primary: primary.refused, candidate: candidate.refused, secondary: secondary.refused }, { primary: [], candidate: [], secondary: [] }, JSON.stringify({ candidate: candidate.log, secondary: secondary.log }));
      assert.deepEqual([candidate.log.length, secondary.log.length], [primary.log.length, primary.log.length]);
      assert.equal(report.totals.errors, 0, JSON.stringify(report.routes));
      const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
      const real = changed.map((c) => `real changed ${c}`);
      assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: real, offline: real }, JSON.stringify(report.findings.map((f) => [f.pattern, f.samples.slice(0, 2)])));
    });
  }
});
