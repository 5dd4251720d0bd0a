import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderText, validateDiffConfig, type DiffResult } from '../../diff/index.js';
import { capture, uuid, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { contentTexts, pairByKeys } from '../../diff/pair.js';
import { mulberry32 } from '../../core/index.js';

const show = (r: DiffResult) => renderText(r, { color: false });

describe('pairing entries', () => {
  const t = tempDir();

  const base = (): ExchangeSpec[] => [
    { url: 'http://127.0.0.1:1/v1/meta', body: { v: 1 } },
    { method: 'POST', url: 'http://127.0.0.1:1/v1/items', body: { id: uuid(), n: 1 } },
    { method: 'POST', url: 'http://127.0.0.1:1/v1/items', body: { id: uuid(), n: 2 } },
    { url: 'http://127.0.0.1:1/v1/items', body: { items: [{ n: 1 }, { n: 2 }] } },
    { url: 'http://127.0.0.1:1/v1/health', body: 'ok' },
  ];
  async function diffSpecs(a: ExchangeSpec[], b: ExchangeSpec[], config?: unknown): Promise<DiffResult> {
    const name = uuid();
    return diffCaptures(await t.write(`${name}-a.har`, capture(a)), await t.write(`${name}-b.har`, capture(b)), config ? { config: validateDiffConfig(config) } : {});
  }

  it('an inserted request is one extra and the rest stays clean (ordinals do not shift)', async () => {
    const b = base();
    b.splice(1, 0, { method: 'POST', url: 'http://127.0.0.1:1/v1/items', body: { id: uuid(), n: 0 } });
    const r = await diffSpecs(base(), b);
    assert.deepEqual(r.differences.map((d) => d.kind), ['extra'], show(r));
    assert.equal(r.differences[0]!.entry, '/POST /v1/items#1');
  });

  it('a deleted request is one missing', async () => {
    const b = base();
    b.splice(2, 1);
    const r = await diffSpecs(base(), b);
    assert.deepEqual(r.differences.map((d) => [d.kind, d.entry]), [['missing', '/POST /v1/items#2']], show(r));
  });

  it('duplicated requests pair one for one, the duplicate is extra', async () => {
    const a = base();
    const b = base();
    b.splice(4, 0, { url: 'http://127.0.0.1:1/v1/items', body: { items: [{ n: 1 }, { n: 2 }] } });
    const r = await diffSpecs(a, b);
    assert.deepEqual(r.differences.map((d) => d.kind), ['extra'], show(r));
    assert.equal(r.pairs.filter((p) => p.status === 'paired').length, 5);
  });

  it('a changed field is reported with its path and entry id', async () => {
    const b = base();
    b[3] = { url: 'http://127.0.0.1:1/v1/items', body: { items: [{ n: 1 }, { n: 3 }] } };
    const r = await diffSpecs(base(), b);
    assert.deepEqual(r.differences.map((d) => [d.kind, d.entry, d.path, d.old, d.new]), [['changed', '/GET /v1/items#1', 'response.body.items[1].n', 2, 3]]);
    assert.match(show(r), /^DIFF: 1 real/);
    assert.match(show(r), /response\.body\.items\[\]\.n changed 2 → 3 in 1 of 1 GET \/v1\/items/);
  });

  it('an unordered group pairs as a multiset', async () => {
    const fetches = (order: number[]): ExchangeSpec[] => order.map((i) => ({ url: `http://127.0.0.1:1/v1/part/${i}`, body: { part: i } }));
    const a = [...base(), ...fetches([1, 2, 3])];
    const b = [...base(), ...fetches([3, 1, 2])];
    const ordered = await diffSpecs(a, b);
    assert.ok(ordered.differences.some((d) => d.kind === 'reordered'), show(ordered));
    const r = await diffSpecs(a, b, { pairing: { unordered: ['GET /v1/part/*'] } });
    assert.equal(r.verdict, 'match', show(r));
  });

  it('calls of one key sent in another order pair by what each sent: reordered, unless the route is unordered', async () => {
    const parts = (order: number[]): ExchangeSpec[] => order.map((i) => ({ url: `http://127.0.0.1:1/v1/parts?i=${i}`, body: { part: i } }));
    const a = [...base(), ...parts([1, 2, 3])];
    const b = [...base(), ...parts([3, 1, 2])];
    const ordered = await diffSpecs(a, b);
    assert.deepEqual(ordered.differences.map((d) => d.kind), ['reordered'], show(ordered));
    const r = await diffSpecs(a, b, { pairing: { unordered: ['GET /v1/parts'] } });
    assert.equal(r.verdict, 'match', show(r));
  });

  it('GraphQL POSTs pair by operationName', async () => {
    const gql = (op: string, data: unknown): ExchangeSpec => ({ method: 'POST', url: 'http://127.0.0.1:1/graphql', requestBody: { operationName: op, query: `query ${op} { x }` }, body: { data } });
    const a = [gql('GetUser', { u: 1 }), gql('ListItems', { items: [1, 2] }), gql('GetStats', { s: 9 })];
    const b = [gql('GetUser', { u: 1 }), gql('GetStats', { s: 9 })];
    const cfg = { pairing: { keys: [{ route: 'POST /graphql', by: 'graphql' }] } };
    const r = await diffSpecs(a, b, cfg);
    assert.deepEqual(r.differences.map((d) => [d.kind, d.entry]), [['missing', '/POST /graphql[ListItems]#1']], show(r));
    const changed = await diffSpecs(a, [gql('GetUser', { u: 1 }), gql('ListItems', { items: [1, 2, 3] }), gql('GetStats', { s: 9 })], cfg);
    assert.deepEqual(changed.differences.map((d) => [d.kind, d.entry, d.path]), [['added', '/POST /graphql[ListItems]#1', 'response.body.data.items[2]']], show(changed));
  });

  it('an inserted array item is one added row', async () => {
    const list = (xs: number[]): ExchangeSpec[] => [{ url: 'http://127.0.0.1:1/l', body: { items: xs.map((x) => ({ x })) } }];
    const r = await diffSpecs(list([1, 2, 3, 4]), list([1, 2, 9, 3, 4]));
    assert.deepEqual(r.differences.map((d) => [d.kind, d.path]), [['added', 'response.body.items[2]']], show(r));
  });

  it('pages pair by title, not by id', async () => {
    const a = capture([{ url: 'http://127.0.0.1:1/a', body: 'x', page: 'step one' }]);
    const b = capture([{ url: 'http://127.0.0.1:1/a', body: 'x', page: 'step one' }]);
    b.log.pages![0]!.id = 'page_99';
    b.log.entries[0]!.pageref = 'page_99';
    const r = await diffCaptures(await t.write('pa.har', a), await t.write('pb.har', b));
    assert.equal(r.verdict, 'match', show(r));
    assert.equal(r.pairs[0]!.id, 'step one/GET /a#1');
  });
});

// Two clients at once (docs/diff.md "Pairing"): their requests interleave in another order from run to run, and a
// replay keeps only the order the original's exchanges had (one ended before the next started). Entries pair by
// what each client sent within a key, and a move among exchanges that ran at once is no reordering.
describe('pairing the exchanges of clients that ran at once', () => {
  const t = tempDir();
  const call = (user: string, path: string, body: unknown): ExchangeSpec => ({ url: `http://127.0.0.1:1${path}`, requestHeaders: [['X-User', user]], body });
  const me = (user: string, plan = 'pro') => call(user, '/me', { name: user, plan });
  const items = (user: string) => call(user, '/items', { items: [{ owner: user }] });
  /** A capture of `specs` in that order, each exchange starting `gapMs` after the one before and lasting `timeMs`. */
  const timed = (specs: ExchangeSpec[], gapMs: number, timeMs: number) => {
    const h = capture(specs);
    const t0 = Date.parse(h.log.entries[0]!.startedDateTime);
    h.log.entries.forEach((e, i) => {
      e.startedDateTime = new Date(t0 + i * gapMs).toISOString();
      e.time = timeMs;
    });
    return h;
  };
  const diffOf = async (a: unknown, b: unknown) => {
    const name = uuid();
    return diffCaptures(await t.write(`${name}-a.har`, a), await t.write(`${name}-b.har`, b), {});
  };

  it('two clients whose calls interleave the other way: MATCH, no call paired with the other client\'s', async () => {
    const r = await diffOf(timed([me('ann'), me('bob'), items('ann'), items('bob')], 5, 100), timed([me('bob'), me('ann'), items('bob'), items('ann')], 5, 100));
    assert.equal(r.verdict, 'match', show(r));
    assert.deepEqual(r.pairs.map((p) => p.status), ['paired', 'paired', 'paired', 'paired']);
  });

  it("one client's real change is found on that client's call", async () => {
    const r = await diffOf(timed([me('ann'), me('bob')], 5, 100), timed([me('bob', 'free'), me('ann')], 5, 100));
    assert.deepEqual(r.differences.map((d) => [d.kind, d.path, d.old, d.new]), [['changed', 'response.body.plan', 'pro', 'free']], show(r));
  });

  it('calls that came one after the other, in the other order in the new capture, are still reordered', async () => {
    const r = await diffOf(timed([me('ann'), me('bob')], 500, 100), timed([me('bob'), me('ann')], 500, 100));
    assert.deepEqual(r.differences.map((d) => d.kind), ['reordered'], show(r));
  });

  it('where calls ran at once, an order counts within one connection only', async () => {
    // ann's calls on connection a, bob's on b; a third client's call runs beside them (so the captures have calls at once).
    const onConnection = (h: ReturnType<typeof timed>, connections: string[]) => (h.log.entries.forEach((e, i) => (e.connection = connections[i]!)), h);
    const specs = (x: ExchangeSpec, y: ExchangeSpec) => [call('cy', '/slow', { ok: true }), x, y];
    const old = onConnection(timed(specs(me('ann'), items('bob')), 200, 100), ['c', 'a', 'b']);
    const cur = onConnection(timed(specs(items('bob'), me('ann')), 200, 100), ['c', 'b', 'a']);
    old.log.entries[0]!.time = cur.log.entries[0]!.time = 1000;
    assert.equal((await diffOf(old, cur)).verdict, 'match');
    // One client's two calls on its one connection, the other way round: reordered.
    const mine = onConnection(timed(specs(me('ann'), items('ann')), 200, 100), ['c', 'a', 'a']);
    const swapped = onConnection(timed(specs(items('ann'), me('ann')), 200, 100), ['c', 'a', 'a']);
    mine.log.entries[0]!.time = swapped.log.entries[0]!.time = 1000;
    assert.deepEqual((await diffOf(mine, swapped)).differences.map((d) => d.kind), ['reordered']);
  });

  it('on one connection that carried calls at once (h2 streams of several clients), its calls are in no order', async () => {
    // grpc-js gives every client of a target one shared connection: ann's and bob's calls are streams of it.
    const onOne = (h: ReturnType<typeof timed>) => (h.log.entries.forEach((e) => (e.connection = 'c1')), h);
    const specs = (x: ExchangeSpec, y: ExchangeSpec) => [call('cy', '/slow', { ok: true }), x, y];
    const old = onOne(timed(specs(me('ann'), items('bob')), 200, 100));
    const cur = onOne(timed(specs(items('bob'), me('ann')), 200, 100));
    old.log.entries[0]!.time = cur.log.entries[0]!.time = 1000;
    assert.equal((await diffOf(old, cur)).verdict, 'match', show(await diffOf(old, cur)));
    // The same connection carrying one call after the other (no stream beside another): its order counts.
    const a = onOne(timed([me('ann'), items('bob')], 200, 100));
    const b = onOne(timed([items('bob'), me('ann')], 200, 100));
    assert.deepEqual((await diffOf(a, b)).differences.map((d) => d.kind), ['reordered']);
  });

  it('calls that ran at once on one side only are in no order: paired', async () => {
    const r = await diffOf(timed([me('ann'), items('ann')], 500, 100), timed([items('ann'), me('ann')], 5, 100));
    assert.equal(r.verdict, 'match', show(r));
  });
});

describe('contentTexts', () => {
  it("writes the same text as JSON.stringify of the compared content, and the request's JSON within it", () => {
    const request = { method: 'GET', path: '/a', query: { q: ['1'] }, headers: { 'x-id': '\u2028"' } };
    const response = { status: 200, headers: {}, body: { a: [1, 'two', null], 'k"ey': { n: -0.5 } } };
    for (const e of [{ request, response }, { request, response, ws: { messages: [] } }, { request, response, grpc: { messages: [], status: 0 } }] as const) {
      const { text, request: req } = contentTexts(e as never);
      const x = e as { ws?: unknown; grpc?: unknown };
      assert.equal(text, JSON.stringify({ request: e.request, response: e.response, ws: x.ws ?? null, ...(x.grpc ? { grpc: x.grpc } : {}) }));
      assert.equal(req, JSON.stringify(e.request));
    }
  });
});

// A run of one key's entries reached from the block before and from the block after (two blocks of one key, an
// entry of another between them on one side) was taken by both: one entry paired twice, another left `missing`
// (two recordings of six concurrent gRPC clients were DIFF once in about eight runs).
describe('pairByKeys', () => {
  const once = (out: ReturnType<typeof pairByKeys>) => {
    const olds = out.flatMap((l) => (l.old !== undefined ? [l.old] : []));
    const news = out.flatMap((l) => (l.new !== undefined ? [l.new] : []));
    return new Set(olds).size === olds.length && new Set(news).size === news.length;
  };

  it('pairs each entry once where two blocks of one key reach the same free entries', () => {
    const out = pairByKeys(['K', 'L', 'K'], ['K', 'K', 'K'], ['K2', 'L2', 'K2'], ['K0', 'K2', 'K0']);
    assert.ok(once(out), out.map((l) => `${l.old ?? '-'}→${l.new ?? '-'} ${l.status}`).join(' '));
  });

  it('pairs each entry at most once, over random runs of few keys', () => {
    const random = mulberry32(11);
    for (let t = 0; t < 20_000; t++) {
      const side = () => Array.from({ length: 2 + Math.floor(random() * 7) }, () => 'KKL'[Math.floor(random() * 3)]!);
      const [a, b] = [side(), side()];
      const token = (k: string) => k + String(Math.floor(random() * 3));
      const out = pairByKeys(a, b, a.map(token), b.map(token));
      assert.ok(once(out), `${a.join('')} / ${b.join('')}`);
      assert.equal(out.filter((l) => l.old !== undefined).length, a.length);
      assert.equal(out.filter((l) => l.new !== undefined).length, b.length);
    }
  });
});
