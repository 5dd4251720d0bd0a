// The four comparison bugs of issue 15, each on both paths (in memory, and
// the bounded path forced with a zero threshold), and findings built from
// the rows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderText, validateDiffConfig, type DiffOptions, type DiffResult } from '../../diff/index.js';
import { noiseRules } from '../../diff/triage-rules.js';
import { capture, uuid, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

// The bounded path's sides in this thread, as diffBounded has them; their trip
// through workers is checked in store/bounded.test.ts and normalize/keyed.test.ts.
const PATHS: Array<[string, DiffOptions]> = [
  ['in memory', {}],
  ['bounded', { boundedThreshold: 0, workers: false }],
];

const rows = (r: DiffResult) => r.differences.map((d) => `${d.class} ${d.kind} ${d.entry} ${d.path}`);
const show = (r: DiffResult) => renderText(r, { color: false, rows: true });

describe('comparison bugs of a real upgrade (issue 15)', () => {
  const write = async (docs: Record<string, ExchangeSpec[]>): Promise<Record<string, string>> => {
    const dir = tempDir();
    const out: Record<string, string> = {};
    for (const [name, specs] of Object.entries(docs)) out[name] = await dir.write(`${name}.har`, capture(specs));
    return out;
  };

  for (const [name, base] of PATHS) {
    it(`noise hides a changed value, never a removed field (${name})`, async () => {
      const created = (location?: string): ExchangeSpec => ({ method: 'POST', url: 'http://127.0.0.1:3001/posts', status: 201, requestBody: { title: 't' }, body: { title: 't' }, ...(location ? { responseHeaders: [['Location', location]] } : {}) });
      const f = await write({ old: [created('/posts/x81')], old2: [created('/posts/x93')], new: [created()] });
      const r = await diffCaptures(f.old!, f.new!, { ...base, noisePath: f.old2 });
      assert.deepEqual(rows(r), ['real removed /POST /posts#1 response.headers.location'], show(r));
      assert.equal(r.exitCode, 1);
      // The config bb noise writes for the two old runs agrees: the removal stays real.
      const noise = await diffCaptures(f.old!, f.old2!, base);
      const config = validateDiffConfig(noiseRules(noise.differences));
      const viaRules = await diffCaptures(f.old!, f.new!, { ...base, config });
      assert.deepEqual(rows(viaRules), ['real removed /POST /posts#1 response.headers.location'], show(viaRules));
      // A changed value that changed between the old runs too is noise.
      const f2 = await write({ old: [created('/posts/x81')], old2: [created('/posts/x93')], new: [created('/posts/x99')] });
      const changed = await diffCaptures(f2.old!, f2.new!, { ...base, noisePath: f2.old2 });
      assert.deepEqual(rows(changed), ['noise changed /POST /posts#1 response.headers.location'], show(changed));
    });

    it(`a field on one side only does not shift the numbers of server ids (${name})`, async () => {
      const run = (withLocation: boolean) => {
        const id = uuid();
        const other = uuid();
        return [
          { method: 'POST', url: 'http://127.0.0.1:3001/posts', status: 201, requestBody: { title: 'a' }, body: { id, title: 'a' }, ...(withLocation ? { responseHeaders: [['Location', `/posts/${id}`]] as Array<[string, string]> } : {}) },
          { url: `http://127.0.0.1:3001/posts/${id}`, body: { id, title: 'a' } },
          { url: 'http://127.0.0.1:3001/posts', body: [{ id: other, title: 'seed' }, { id, title: 'a' }] },
        ] satisfies ExchangeSpec[];
      };
      const f = await write({ old: run(true), new: run(false) });
      const r = await diffCaptures(f.old!, f.new!, base);
      assert.deepEqual(rows(r), ['real removed /POST /posts#1 response.headers.location'], show(r));
      // The created record's id reads the same on both sides everywhere it appears.
      assert.equal(r.pairs.length, 3);
    });

    it(`a reordered array is one reordered row per moved item, an inserted item one added row (${name})`, async () => {
      const item = (id: number) => ({ id: String(id), title: `post ${id}`, views: id * 10 });
      const list = (ids: number[]): ExchangeSpec => ({ url: 'http://127.0.0.1:3001/posts?_sort=views', body: ids.map(item) });
      const f = await write({ old: [list([1, 2, 3, 4, 5])], new: [list([2, 1, 3, 4, 5])], inserted: [list([1, 2, 9, 3, 4, 5])], moved: [list([2, 3, 4, 5, 1])] });
      const r = await diffCaptures(f.old!, f.new!, base);
      assert.deepEqual(r.differences.map((d) => [d.kind, d.path]), [['reordered', 'response.body[0]']], show(r));
      assert.equal(r.differences[0]!.request, 'GET /posts?_sort=views');
      const ins = await diffCaptures(f.old!, f.inserted!, base);
      assert.deepEqual(ins.differences.map((d) => [d.kind, d.path]), [['added', 'response.body[2]']], show(ins));
      const mv = await diffCaptures(f.old!, f.moved!, base);
      assert.deepEqual(mv.differences.map((d) => [d.kind, d.path]), [['reordered', 'response.body[0]']], show(mv));
      // Items that moved and changed: one reordered row and the field, under the item's old place.
      const f2 = await write({ old: [list([1, 2, 3])], new: [{ url: 'http://127.0.0.1:3001/posts?_sort=views', body: [item(2), { ...item(1), title: 'renamed' }, item(3)] }] });
      const both = await diffCaptures(f2.old!, f2.new!, base);
      assert.deepEqual(both.differences.map((d) => [d.kind, d.path]).sort(), [['changed', 'response.body[0].title'], ['reordered', 'response.body[0]']], show(both));
      // An unordered array is a multiset: no rows at all.
      const multiset = await diffCaptures(f.old!, f.new!, { ...base, config: validateDiffConfig({ normalize: { unorderedArrays: ['response.body'] } }) });
      assert.deepEqual(multiset.differences, [], show(multiset));
      // A configured identity key.
      const sku = (s: string, n: number) => ({ sku: s, n });
      const f3 = await write({
        old: [{ url: 'http://127.0.0.1:3001/cart', body: { items: [sku('a', 1), sku('b', 2)] } }],
        new: [{ url: 'http://127.0.0.1:3001/cart', body: { items: [sku('b', 3), sku('a', 1)] } }],
      });
      const keyed = await diffCaptures(f3.old!, f3.new!, { ...base, config: validateDiffConfig({ pairing: { arrayKeys: [{ path: 'response.body.items', key: 'sku' }] } }) });
      assert.deepEqual(keyed.differences.map((d) => [d.kind, d.path, d.old, d.new]).sort(), [['changed', 'response.body.items[1].n', 2, 3], ['reordered', 'response.body.items[1]', 'at 1: {"n":2,"sku":"b"}', 'at 0: {"n":3,"sku":"b"}']], show(keyed));
    });

    it(`same-key entries pair position by position whatever their bodies (${name})`, async () => {
      // Data changed between the runs: old's first GET /posts has the body of new's last.
      const page = (n: number): ExchangeSpec => ({ url: `http://127.0.0.1:3001/posts?_page=${n % 4}`, body: { page: n } });
      const oldRun = Array.from({ length: 20 }, (_, i) => page(i));
      const newRun = Array.from({ length: 20 }, (_, i) => page(i === 19 ? 0 : i + 100));
      const f = await write({ old: oldRun, new: newRun });
      const r = await diffCaptures(f.old!, f.new!, base);
      assert.ok(r.pairs.every((p) => p.status === 'paired' && p.old === p.new), show(r));
      assert.ok(!r.differences.some((d) => d.kind === 'reordered'), show(r));
      // Findings name the calls by their request line with the query.
      const f0 = r.findings[0]!;
      assert.equal(f0.kind, 'changed');
      assert.equal(f0.pattern, 'response.body.page');
      assert.deepEqual(f0.samples.map((s) => s.request), ['GET /posts?_page=0', 'GET /posts?_page=1', 'GET /posts?_page=2']);
      // One extra call in a run of one key: content decides which is the extra one.
      const same = Array.from({ length: 5 }, (_, i) => page(i * 4));
      const f2 = await write({ old: same, new: [...same.slice(0, 2), { url: 'http://127.0.0.1:3001/posts?_page=0', body: { page: 'x' } }, ...same.slice(2)] });
      const extra = await diffCaptures(f2.old!, f2.new!, base);
      assert.deepEqual(extra.differences.map((d) => [d.kind, d.path]), [['extra', '']], show(extra));
      assert.equal(extra.pairs.find((p) => p.status === 'extra')!.new, 2);
    });
  }

  it('groups the same change across routes into one finding, varying values per route', async () => {
    const ex = (path: string, server: string, body: unknown): ExchangeSpec => ({ url: `http://127.0.0.1:3001${path}`, responseHeaders: [['Server', server]], body });
    const oldRun = [ex('/a', 'api/1.4', { t: 'x1' }), ex('/a', 'api/1.4', { t: 'x2' }), ex('/b', 'api/1.4', { t: 'y' }), ex('/c', 'api/1.4', {})];
    const newRun = [ex('/a', 'api/2.0', { t: 'z1' }), ex('/a', 'api/2.0', { t: 'z2' }), ex('/b', 'api/2.0', { t: 'y' }), ex('/c', 'api/2.0', {})];
    const f = await write({ old: oldRun, new: newRun });
    for (const [, base] of PATHS) {
      const r = await diffCaptures(f.old!, f.new!, base);
      assert.equal(r.findings.length, 2, show(r));
      const [server, title] = r.findings;
      assert.deepEqual({ ...server, id: '', rows: server!.rows.length }, {
        id: '', class: 'real', kind: 'changed', pattern: 'response.headers.server', old: 'api/1.4', new: 'api/2.0', rows: 4, entries: 4, of: 4, routes: ['GET /a', 'GET /b', 'GET /c'], everywhere: true,
        // One entry of each route before a second of one.
        samples: [{ id: '/GET /a#1', request: 'GET /a' }, { id: '/GET /b#1', request: 'GET /b' }, { id: '/GET /c#1', request: 'GET /c' }],
      });
      assert.match(server!.id, /^F[0-9a-f]{9}$/);
      assert.deepEqual([title!.pattern, title!.routes, title!.entries, title!.of, 'old' in title!], ['response.body.t', ['GET /a'], 2, 2, false]);
      assert.ok(r.differences.every((d) => d.finding === server!.id || d.finding === title!.id));
      assert.match(renderText(r, { color: false }), /^DIFF: 2 real findings \(6 differences\)/);
      assert.match(renderText(r, { color: false }), /response\.headers\.server changed "api\/1\.4" → "api\/2\.0" in 4 of 4 entries, 3 routes/);
    }
  });
});
