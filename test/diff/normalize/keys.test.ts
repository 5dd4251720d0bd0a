// Hosts in entry keys (docs/diff.md "What is compared"): decided per pair of
// captures. When either capture has several hosts (forward mode, a browser's
// HAR) the host is part of the key, route and id, so two sites' `GET /` never
// pair; captures of one host each (a reverse proxy) leave it out, so old and
// new on different hosts or ports still pair.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { diffCaptures, renderText, type DiffResult } from '../../../diff/index.js';
import { compileRules } from '../../../diff/normalize/rules.js';
import { valueWalk } from '../../../diff/normalize/walk.js';
import { OrdinalTable } from '../../../diff/normalize/ordinals.js';
import { entryHost, hostsInKeys, hostsOf } from '../../../diff/normalize/keys.js';
import { capture, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';
import { sharedFixture } from '../../helpers/fixtures.js';

const show = (r: DiffResult) => renderText(r, { color: false });

describe('hosts in entry keys', () => {
  const t = tempDir();
  // Both paths (in memory, and bounded forced with a zero threshold) must agree; the in-memory result is returned.
  const diff = (a: ExchangeSpec[], b: ExchangeSpec[], config?: unknown): Promise<DiffResult> => diffAgreeing(t, capture(a), capture(b), config);

  it('normalizes hosts with the loopback-port rule and counts them per capture', () => {
    const rules = compileRules();
    const table = new OrdinalTable(rules.ordinalClasses);
    const host = (url: string) => entryHost(capture([{ url }]).log.entries[0]!, { hostWalk: valueWalk(rules, [], table), table });
    assert.equal(host('http://127.0.0.1:43123/x'), '127.0.0.1:<PORT>');
    assert.equal(host('https://A.Test/x'), 'a.test');
    assert.equal(host('https://a.test:8443/x'), 'a.test:8443');
    const two = capture([{ url: 'http://127.0.0.1:3001/a' }, { url: 'http://127.0.0.1:4002/b' }]).log.entries;
    assert.deepEqual([...hostsOf(two, { hostWalk: valueWalk(rules, [], table), table })], ['127.0.0.1:<PORT>']);
    assert.equal(hostsInKeys(new Set(['a.test']), new Set(['b.test'])), false);
    assert.equal(hostsInKeys(new Set(['a.test', 'b.test']), new Set(['b.test'])), true);
  });

  it('in a capture of several hosts, GET / of two sites do not pair', async () => {
    const r = await diff(
      [{ url: 'https://a.test/', body: { site: 'a' } }, { url: 'https://b.test/', body: { site: 'b' } }],
      [{ url: 'https://b.test/', body: { site: 'b' } }],
    );
    assert.deepEqual(r.differences.map((d) => [d.kind, d.entry, d.route]), [['missing', '/GET //a.test/#1', 'GET //a.test/']], show(r));
    assert.deepEqual(r.pairs.map((p) => [p.id, p.status]), [['/GET //a.test/#1', 'missing'], ['/GET //b.test/#1', 'paired']]);
  });

  it('captures of one host each pair across hosts and ports', async () => {
    const same = (origin: string): ExchangeSpec[] => [{ url: `${origin}/v1/items`, body: [1] }, { method: 'POST', url: `${origin}/v1/items`, body: { ok: true } }];
    for (const [a, b] of [['http://127.0.0.1:3001', 'http://127.0.0.1:4002'], ['https://staging.test', 'https://prod.test:8443']]) {
      const r = await diff(same(a!), same(b!));
      assert.deepEqual(r.pairs.map((p) => [p.id, p.status]), [['/GET /v1/items#1', 'paired'], ['/POST /v1/items#1', 'paired']], show(r));
      // What differs is what was on the wire: the Host header, where no rule normalizes it.
      assert.ok(r.differences.every((d) => d.path === 'request.headers.host'), show(r));
    }
  });

  it('unordered route globs written without a host still apply with hosts in keys', async () => {
    const part = (n: number): ExchangeSpec => ({ url: `https://api.test/v1/parts/${n}`, body: { n } });
    const r = await diff([part(1), part(2), { url: 'https://cdn.test/a.js', body: 'x' }], [part(2), part(1), { url: 'https://cdn.test/a.js', body: 'x' }], { pairing: { unordered: ['GET /v1/parts/*'] } });
    assert.deepEqual(r.differences, [], show(r));
  });

  it('route keys configured without a host still apply with hosts in keys', async () => {
    const gql = (host: string, op: string): ExchangeSpec => ({ method: 'POST', url: `https://${host}/graphql`, requestBody: { operationName: op, query: '{x}' }, body: { data: op } });
    const r = await diff(
      [gql('api.test', 'A'), gql('api.test', 'B'), { url: 'https://cdn.test/app.js', body: 'x' }],
      [gql('api.test', 'B'), { url: 'https://cdn.test/app.js', body: 'x' }],
      { pairing: { keys: [{ route: 'POST /graphql', by: 'graphql' }] } },
    );
    assert.deepEqual(r.differences.map((d) => [d.kind, d.entry]), [['missing', '/POST //api.test/graphql[A]#1']], show(r));
  });

  it('ids of pages named by a URL ending in "/" never read https://x//GET (Chrome export)', async (t2) => {
    const fixtures = sharedFixture(t2);
    if (!fixtures) return;
    const r = await diffCaptures(join(fixtures, 'chrome.har'), join(fixtures, 'chrome.har'));
    assert.equal(r.verdict, 'match', show(r));
    const ids = r.pairs.map((p) => p.id);
    assert.ok(ids.every((id) => !id.includes('//GET')), ids.join('\n'));
    assert.ok(ids.includes('https://mitmproxy.org/GET //mitmproxy.org/#1'), ids.join('\n'));
  });
});
