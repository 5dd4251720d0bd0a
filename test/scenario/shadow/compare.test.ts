// How the live comparison cuts its batches: up to 400 exchanges, and up to
// 20,000 stream messages, so long WebSocket conversations that all end with
// the run are compared a few at a time, not in one batch holding them all.
// And how it classes each differing field (through the library, real
// servers): noise when the secondary differs too, kind for kind; a
// regression otherwise; unclassified with no secondary.
//
// A candidate that answers 500 on some requests: its error body differs from
// the primary's answer in every field, as a matter of course. `bb diff` of the
// captures folds those fields under the status change (diff/findings-fold.ts:
// one finding, `changed response.status`, with its consequences); the live
// report must list the same findings, not four where bb diff lists one. A
// header the candidate changed on every answer (the 500s too) is a change of
// its own in both.
//
// An exchange only the secondary failed (it hung up on that request): the
// primary and the candidate both answered it. `bb diff primary.har
// candidate.har --noise secondary.har` compares the candidate's answer with
// the primary's and has no noise evidence for it; the live comparison must
// reach the same verdict (issue 37: the live findings and counts are
// `bb diff`'s of the written captures).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import { startShadow, type LiveFinding, type ShadowReport } from '../../../scenario/index.js';
import { diffCaptures, type Finding } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import type { HarEntry } from '../../../capture/index.js';
import { batchLength, ShadowComparer, type Group } from '../../../scenario/shadow/compare.js';
import { findingKeys as liveFindingKeys, offlineKeys as offlineFindingKeys } from './compared.js';

const tmp = tempDir();

const entry = (messages: number): HarEntry =>
  ({ _webSocketMessages: Array.from({ length: messages }, () => ({ type: 'send', time: 0, opcode: 1, data: 'x' })) }) as unknown as HarEntry;
const group = (messages: number): [number, Group] => [0, { primary: entry(messages), candidate: entry(messages), secondary: entry(messages), since: 0 }];

describe('the live comparison batches', () => {
  it('holds up to 400 plain exchanges', () => {
    assert.equal(batchLength(Array.from({ length: 1000 }, () => group(0))), 400);
    assert.equal(batchLength(Array.from({ length: 7 }, () => group(0))), 7);
  });
  it('cuts before the stream messages pass 20,000, and takes a huge conversation alone', () => {
    assert.equal(batchLength(Array.from({ length: 10 }, () => group(3000))), 2);
    assert.equal(batchLength([group(50_000), group(1)]), 1);
  });
  it('counts a conversation handed over with its first messages by all of them', () => {
    const whole = { messages: 12_000, build: () => assert.fail('batching builds nothing') };
    const deferred: [number, Group] = [0, { primary: entry(64), candidate: entry(64), whole: { primary: whole, candidate: whole }, since: 0 }];
    assert.equal(batchLength([deferred, deferred, group(1)]), 1);
    assert.equal(batchLength([group(64), group(64)]), 2);
  });
});

/** One instance of a small service: `node` names the instance (differs on every instance), `region` is the old build's, `total` changed in the new. */
async function instance(name: 'primary' | 'candidate' | 'secondary') {
  const server = http.createServer((req, res) => {
    const body = req.url === '/quiet'
      ? { node: name }
      : { node: name, total: name === 'candidate' ? 2 : 1, ...(name === 'candidate' ? {} : { region: name === 'primary' ? 'eu' : 'us' }) };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => closeHttpAndWs(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** GET /quiet and GET /items through a shadow of those instances; the final report. */
async function shadowRun(withSecondary: boolean): Promise<ShadowReport> {
  const shadow = await startShadow({
    primary: await instance('primary'),
    candidate: await instance('candidate'),
    ...(withSecondary ? { secondary: await instance('secondary') } : {}),
    outDir: tmp.path(withSecondary ? 'with-secondary' : 'alone'),
    bbHome: tmp.bbHome,
  });
  const c = new Client(shadow.url);
  try {
    for (const path of ['/quiet', '/items']) await (await c.request({ method: 'GET', path })).body.text();
  } finally {
    await c.close();
  }
  return shadow.close();
}

const findingKeys = (r: ShadowReport) => r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort();

describe('the live comparison classes each differing field', () => {
  it('with a secondary: what it differs on too is noise, kind for kind; the rest is a regression', async () => {
    const report = await shadowRun(true);
    assert.deepEqual(findingKeys(report), [
      'noise changed response.body.node',
      // The secondary changed the region, the candidate removed it: noisy and broken, a regression.
      'regression changed response.body.total',
      'regression removed response.body.region',
    ]);
    assert.deepEqual([report.routes['GET /quiet']?.noise, report.routes['GET /quiet']?.regressions], [1, 0], JSON.stringify(report.routes));
    assert.deepEqual([report.routes['GET /items']?.noise, report.routes['GET /items']?.regressions], [0, 1], JSON.stringify(report.routes));
    assert.equal(report.totals.unclassified, 0);
    assert.equal(report.regressionRate, 0.5);
  });

  it('without one: every difference is unclassified, and counts toward the rate', async () => {
    const report = await shadowRun(false);
    assert.deepEqual(findingKeys(report), [
      'unclassified changed response.body.node',
      'unclassified changed response.body.total',
      'unclassified removed response.body.region',
    ]);
    assert.deepEqual([report.totals.unclassified, report.totals.noise, report.totals.regressions], [2, 0, 0]);
    assert.equal(report.regressionRate, 1);
  });
});

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

/** A build answering GET /things/N; the new one fails every third with a 500 and names itself in a header. */
async function build(kind: 'old' | 'new'): Promise<string> {
  const server = http.createServer((req, res) => {
    const n = Number(/\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0);
    const headers = { 'content-type': 'application/json', 'x-build': kind };
    if (kind === 'new' && n % 3 === 0) {
      res.writeHead(500, headers);
      return void res.end('{"error":"boom"}');
    }
    res.writeHead(200, headers);
    res.end(JSON.stringify({ n, ok: true }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const liveKeys = (list: LiveFinding[]): string[] => list.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern} [${(f.consequences ?? []).map((c) => `${c.kind} ${c.pattern}`).join(', ')}]`).sort();
const offlineKeys = (list: Finding[]): string[] => list.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern} [${(f.consequences ?? []).map((c) => `${c.kind} ${c.pattern}`).join(', ')}]`).sort();

describe('bb shadow: a candidate that answers 500 on some requests', () => {
  it('lists the status change with its consequences folded under it, as bb diff of the captures does', async () => {
    const [primary, candidate, secondary] = [await build('old'), await build('new'), await build('old')];
    const out = tmp.path('e500');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
    const client = new Client(shadow.url);
    try {
      for (let i = 1; i <= 9; i++) {
        const res = await client.request({ method: 'GET', path: `/things/${i}` });
        assert.equal(res.statusCode, 200, 'the client gets the primary\'s answer');
        await res.body.text();
      }
    } finally {
      await client.close();
    }
    const report = await shadow.close();
    // Three exchanges failed on the candidate: regressions (compared answers, not mirror errors).
    assert.deepEqual({ regressions: report.totals.regressions, errors: report.totals.errors }, { regressions: 9, errors: 0 });
    assert.deepEqual(liveKeys(report.findings), [
      'real changed response.headers.x-build []',
      'real changed response.status [added response.body.error, removed response.body.n, removed response.body.ok]',
    ]);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline.findings), liveKeys(report.findings));
  });
});

// A conversation whose mirrors were dropped part-way is skipped in the primary's capture, and in each target's when
// its side was still open to be tagged. A target's side that had ended first keeps an untagged entry; when that
// entry reaches the comparison after the primary's, it waited for a primary entry that never comes, for the rest of
// the run (a whole conversation held). The comparison now leaves a target's entry of a skipped exchange, whichever
// comes first.
describe('the live comparison and an exchange skipped part-way', () => {
  const ws = (id: number, skipped?: string): HarEntry =>
    ({
      startedDateTime: new Date(0).toISOString(),
      time: 5,
      request: { method: 'GET', url: 'http://127.0.0.1:1/live', httpVersion: 'HTTP/1.1', headers: [], queryString: [], cookies: [], headersSize: -1, bodySize: 0 },
      response: { status: 101, statusText: '', httpVersion: 'HTTP/1.1', headers: [], cookies: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      _resourceType: 'websocket',
      _webSocketMessages: [],
      _bb: { shadow: skipped ? { id, skipped } : { id } },
    }) as unknown as HarEntry;

  it("holds no target entry of it, before or after the primary's", async () => {
    const comparer = new ShadowComparer({ secondary: false, targets: { primary: 'http://p', candidate: 'http://c' } });
    comparer.add('candidate', ws(1));
    comparer.add('primary', ws(1, 'queue full'));
    comparer.add('primary', ws(2, 'queue full'));
    comparer.add('candidate', ws(2));
    assert.equal(comparer.waiting, 0);
    await comparer.compareReady(true);
    const totals = comparer.live.report().totals;
    assert.deepEqual([totals.requests, totals.mirrored, totals.skipped], [2, 0, { 'queue full': 2 }]);
  });
});

describe('bb shadow: an exchange only the secondary failed', () => {
  /** A build answering GET /things/N with N and a state; `hangUpOn`: the request number (from 1) whose socket it destroys. */
  async function things(state: string, hangUpOn?: number): Promise<string> {
    let n = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      if (++n === hangUpOn) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, state }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  for (const compare of ['live', 'end'] as const)
  it(`is compared as bb diff --noise compares it: the candidate's change there is a regression, counted as in the captures (compared ${compare})`, async () => {
    const [primary, candidate, secondary] = [await things('open'), await things('pending'), await things('open', 2)];
    const out = tmp.path(`secondary-fails-${compare}`);
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, compare });
    const c = new Client(shadow.url);
    try {
      for (let i = 1; i <= 4; i++) {
        const res = await c.request({ method: 'GET', path: `/things/${i}` });
        assert.equal(res.statusCode, 200);
        await res.body.text();
      }
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    // bb diff of the captures: the change on all four reads, /things/2 among them (no noise evidence there).
    const change = offline.findings.find((f) => f.pattern === 'response.body.state');
    assert.deepEqual(change && [change.class, change.entries, change.routes], ['real', 4, ['GET /things/1', 'GET /things/2', 'GET /things/3', 'GET /things/4']], JSON.stringify(offline.findings));
    // Live: the same four regressions; the secondary's failure is counted an error all the same, not the candidate's.
    const r = report.routes['GET /things/{id}'];
    assert.deepEqual(r && [r.mirrored, r.equal, r.regressions, r.noise, r.unclassified, r.errors, r.candidateErrors], [4, 0, 4, 0, 0, 1, 0], JSON.stringify(report.routes));
    const live = report.findings.find((f) => f.pattern === 'response.body.state');
    assert.deepEqual(live && [live.class, live.count, live.routes], ['regression', 4, change!.routes], JSON.stringify(report.findings));
    assert.deepEqual(offlineFindingKeys(offline), liveFindingKeys(report));
  });
});
