// Route keys (diff/normalize/route-keys.ts, docs/diff.md "Route keys") on
// hand-made captures: what each detector recognizes and what it leaves
// alone, how the key reads in routes and request lines, `pairing.unordered`
// over keyed routes, and what the config accepts. Real servers:
// route-keys.cli.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderText, validateDiffConfig, type DiffResult } from '../../../diff/index.js';
import { keyedRequestLine, keyedRoute, routeWithoutKey } from '../../../diff/normalize/route-keys.js';
import { capture, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';

const show = (r: DiffResult) => renderText(r, { color: false });
const base = 'http://127.0.0.1:1';

describe('route keys', () => {
  const t = tempDir();
  const ids = async (specs: ExchangeSpec[], config?: unknown) => (await diffAgreeing(t, capture(specs), capture(specs), config)).pairs.map((p) => p.id);

  it('GraphQL: operationName, else the named operation, else a hash; a batch; a persisted query; GET ?query=', async () => {
    const post = (requestBody: unknown): ExchangeSpec => ({ method: 'POST', url: `${base}/graphql`, requestBody, body: { data: {} } });
    assert.deepEqual(await ids([
      post({ operationName: 'A', query: 'query Other { x }' }),
      post({ query: '  # a comment\n  mutation B($v: Int) { y(v: $v) }' }),
      post({ query: '{ x }' }),
      post({ query: '{   x }' }),
      post([{ query: 'query C { x }' }, { query: 'query D { x }' }]),
      post({ operationName: 'E', extensions: { persistedQuery: { version: 1, sha256Hash: 'ab' } } }),
      { url: `${base}/graphql?query=${encodeURIComponent('query F { x }')}&variables=%7B%7D`, body: { data: {} } },
    ]), [
      '/POST /graphql[A]#1',
      '/POST /graphql[B]#1',
      '/POST /graphql[#cd140144]#1',
      '/POST /graphql[#cd140144]#2',
      '/POST /graphql[C,D]#1',
      '/POST /graphql[E]#1',
      '/GET /graphql[F]#1',
    ]);
  });

  it('leaves alone what only looks like GraphQL or JSON-RPC', async () => {
    assert.deepEqual(await ids([
      { method: 'POST', url: `${base}/search`, requestBody: { query: 'red shoes' }, body: [] },
      { url: `${base}/search?query=red`, body: [] },
      { method: 'POST', url: `${base}/cmd`, requestBody: { method: 'GET' }, body: {} },
    ]), ['/POST /search#1', '/GET /search#1', '/POST /cmd#1']);
  });

  it('JSON-RPC 2.0 and 1.0, and batches, key by method', async () => {
    const rpc = (requestBody: unknown): ExchangeSpec => ({ method: 'POST', url: `${base}/rpc`, requestBody, body: { result: 1 } });
    assert.deepEqual(await ids([
      rpc({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [] }),
      rpc({ id: 2, method: 'echo', params: ['x'] }),
      rpc([{ jsonrpc: '2.0', id: 3, method: 'a' }, { jsonrpc: '2.0', id: 4, method: 'b' }]),
    ]), ['/POST /rpc[eth_call]#1', '/POST /rpc[echo]#1', '/POST /rpc[a,b]#1']);
  });

  it('a sample request line shows the key and leaves out what it stands for', async () => {
    const a = [{ url: `${base}/graphql?query=${encodeURIComponent('query F { x }')}&variables=%7B%7D`, body: { n: 1 } }];
    const b = [{ url: `${base}/graphql?query=${encodeURIComponent('query F { x }')}&variables=%7B%7D`, body: { n: 2 } }];
    const r = await diffAgreeing(t, capture(a), capture(b));
    assert.deepEqual(r.differences.map((d) => [d.entry, d.request]), [['/GET /graphql[F]#1', 'GET /graphql[F]?variables={}']], show(r));
    assert.equal(keyedRequestLine('GET', '/socket.io/', { EIO: '4', transport: 'polling', sid: '<EIO_SID:1>', t: '<T>' }, { bracket: 'open', query: ['transport=polling'], hide: ['EIO', 'sid', 't'] }), 'GET /socket.io/[open]?transport=polling');
    assert.equal(keyedRoute('GET /api', { query: ['op=list'] }), 'GET /api?op=list');
    assert.equal(routeWithoutKey('POST /graphql[CreateItem]'), 'POST /graphql');
    assert.equal(routeWithoutKey('GET /socket.io/[open]?transport=polling'), 'GET /socket.io/');
    assert.equal(routeWithoutKey('GET /plain'), 'GET /plain');
  });

  it('pairing.unordered matches a keyed route by its route without the key', async () => {
    const gql = (op: string, n: number): ExchangeSpec => ({ method: 'POST', url: `${base}/graphql`, requestBody: { query: `query ${op} { x }` }, body: { n } });
    const r = await diffAgreeing(t, capture([gql('A', 1), gql('B', 2)]), capture([gql('B', 2), gql('A', 1)]), { pairing: { unordered: ['POST /graphql'] } });
    assert.equal(r.verdict, 'match', show(r));
  });

  it('the config takes query:NAME, header:NAME and pairing.disable, and names what it does not know', () => {
    const ok = validateDiffConfig({ pairing: { keys: [{ route: 'GET /a', by: 'query:op' }, { route: 'POST /b', by: 'header:X-Op' }], disable: ['engine-io', 'graphql', 'jsonrpc'] } });
    assert.deepEqual(ok.pairing.disable, ['engine-io', 'graphql', 'jsonrpc']);
    assert.throws(() => validateDiffConfig({ pairing: { keys: [{ route: 'GET /a', by: 'header:bad name' }] } }), /pairing\.keys\[0\]\.by.*query:<parameter> or header:<name>/);
    assert.throws(() => validateDiffConfig({ pairing: { disable: ['grpc'] } }), /pairing\.disable\[0\].*unknown key detector "grpc"; built-in detectors: engine-io, graphql, jsonrpc/);
  });
});
