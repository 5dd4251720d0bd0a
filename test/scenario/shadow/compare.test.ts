// How the live comparison cuts its batches: up to 400 exchanges, and up to
// 20,000 stream messages, so long WebSocket conversations that all end with
// the run are compared a few at a time, not in one batch holding them all.
// And how it classes each differing field (through the library, real
// servers): noise when the secondary differs too, kind for kind; a
// regression otherwise; unclassified with no secondary.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import { startShadow, type ShadowReport } from '../../../scenario/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import type { HarEntry } from '../../../capture/index.js';
import { batchLength, type Group } from '../../../scenario/shadow/compare.js';

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
