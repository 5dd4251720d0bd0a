// A value the server answers alike in every run (a price, a page size, an
// opaque cursor of a fixed page) that the client sends back is the build's
// answer, not a value it made up: with a second run of the old build
// (--noise), such a value compares as it is, so a new build that changes it
// is a real finding where its client echoes it too (the POST that carries
// the price, the query that carries the page size), not bound to the new
// value and hidden. Without a second run the key tells it: a value answered
// under a key that names a quantity (`price_cents`, `maxPageSize`) never
// binds, with the same findings (and without a secondary, live in bb shadow). Random ids and the session cookie, which differ between
// the two old runs, still bind: two runs of one build MATCH, with --noise or
// without; so do the ids of fixed data, which both old runs answered alike
// (issued under `id`, read by path, GET /products/3001, or by query, GET
// /stock?product=3003): a new build that numbers them otherwise pairs its
// reads with the old's and compares them equal. Both stores of `bb
// diff` (in memory, bounded) give the same
// findings. Recorded through bb's proxy from a real server on loopback; and
// through `bb shadow` (the old build as primary and secondary, the new as
// candidate), whose live findings are bb diff's of the captures it wrote.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { runBb, startBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { assertLiveIsOffline } from '../helpers/shadow-offline.js';
import { startShadow, type ShadowReport } from '../../scenario/index.js';
import { compared } from '../scenario/shadow/compared.js';

type Build = 'old' | 'new';

/**
 * One build of a small shop: the new build's lamp costs 2099 cents, not 1999, and pages hold 500 reviews, not 1000.
 * Its featured products are fixed data, the same in every run of a build, numbered 3001… by the old build and 7001…
 * by the new (a migration renumbered them), and served alike.
 */
async function startCatalog(cleanups: Cleanups, build: Build): Promise<string> {
  const price = build === 'new' ? 2099 : 1999;
  const pageSize = build === 'new' ? 500 : 1000;
  const featured = ['Desk', 'Chair', 'Shelf'].map((name, i) => ({ id: (build === 'new' ? 7001 : 3001) + i, name }));
  const products = new Set<string>();
  let session = '';
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://catalog');
      if (url.pathname === '/login') {
        session = randomBytes(16).toString('hex');
        res.setHeader('set-cookie', `sid=${session}; Path=/; HttpOnly`);
        return json(res, 200, { ok: true });
      }
      if (req.headers.cookie !== `sid=${session}`) return json(res, 401, { error: 'who are you' });
      if (url.pathname === '/product') {
        const id = `p_${randomUUID()}`;
        products.add(id);
        // A fixed cursor: the second page of reviews, the same in every run of either build.
        return json(res, 200, { id, name: 'Lamp', price_cents: price, maxPageSize: pageSize, reviews: 'cGFnZT0y' });
      }
      if (url.pathname === '/cart' && req.method === 'POST') {
        const b = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; price_cents: number; qty: number };
        if (!products.has(b.id)) return json(res, 404, { error: 'no such product' });
        return json(res, 201, { cart: randomUUID(), item: b.id, total_cents: b.price_cents * b.qty });
      }
      if (url.pathname === '/featured') return json(res, 200, { items: featured });
      if (url.pathname === '/stock') return json(res, 200, { product: Number(url.searchParams.get('product')), inStock: featured.some((f) => f.id === Number(url.searchParams.get('product'))) });
      const fixed = /^\/products\/(\d+)$/.exec(url.pathname);
      if (fixed) {
        const p = featured.find((f) => f.id === Number(fixed[1]));
        return p ? json(res, 200, { ...p, sku: `SKU-${p.name.toUpperCase()}` }) : json(res, 404, { error: 'no such product' });
      }
      if (url.pathname === '/reviews') {
        const limit = Number(url.searchParams.get('limit'));
        return json(res, 200, { page: url.searchParams.get('cursor'), limit, items: Array.from({ length: 3 }, (_, i) => ({ stars: 5 - i })) });
      }
      json(res, 404, { error: 'not found' });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The client: logs in, reads the product, puts two in the cart at the price it was shown, reads the reviews page it was pointed to. */
async function drive(base: string): Promise<void> {
  const login = await request(`${base}/login`, { method: 'POST' });
  await login.body.dump();
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  const call = async (path: string, init: { method?: 'GET' | 'POST'; body?: unknown } = {}) => {
    const r = await request(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers: { cookie, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await r.body.text();
    assert.ok(r.statusCode < 400, `${path}: ${r.statusCode} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const p = await call('/product');
  await call('/cart', { method: 'POST', body: { id: p.id, price_cents: p.price_cents, qty: 2 } });
  await call(`/reviews?cursor=${p.reviews}&limit=${p.maxPageSize}`);
  const { items } = (await call('/featured')) as { items: Array<{ id: number }> };
  // Two read by path, the third's stock asked for by query: an id either way (issued under `id`).
  for (const f of items.slice(0, 2)) await call(`/products/${f.id}`);
  await call(`/stock?product=${items[2]!.id}`);
}

interface Finding {
  class: string;
  kind: string;
  pattern: string;
  routes: string[];
}

describe('values a server answers alike in every run, echoed by its client, recorded through bb', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const t = tempDir();
  const hars: Record<string, string> = {};
  const session = async (build: Build) => {
    const rec = await record(cleanups, await startCatalog(cleanups, build));
    await drive(`http://127.0.0.1:${rec.port}`);
    await rec.finish();
    return join(rec.dir, 'cap.har');
  };
  let reports = 0;
  /** bb diff a b [args]: the exit code, the text and the findings of each class as `kind pattern route`. */
  const diff = async (a: string, b: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) => {
    const json = t.path(`report-${reports++}.json`);
    const r = await runBb(['diff', a, b, '--json', json, ...args], env);
    assert.notEqual(r.code, 2, r.stderr);
    const doc = JSON.parse(await readFile(json, 'utf8')) as { findings: Finding[] };
    const of = (c: string) => doc.findings.filter((f) => f.class === c).map((f) => `${f.kind} ${f.pattern} ${f.routes.join(', ')}`).sort();
    return { code: r.code, text: r.stdout, real: of('real'), noise: of('noise') };
  };

  before(async () => {
    hars.old = await session('old');
    hars.old2 = await session('old');
    hars.old3 = await session('old');
    hars.new = await session('new');
  });

  const TRUE_CHANGES = [
    // The price, where the server answers it and where the client echoes it, and the total it makes.
    'changed request.body.price_cents POST /cart',
    'changed response.body.price_cents GET /product',
    'changed response.body.total_cents POST /cart',
    // The page size, where it is answered, asked for and reported.
    'changed request.query.limit GET /reviews',
    'changed response.body.limit GET /reviews',
    'changed response.body.maxPageSize GET /product',
  ];

  for (const [label, env] of [
    ['in memory', {}],
    ['bounded', { BB_DIFF_BOUNDED_BYTES: '0' }],
  ] as const) {
    it(`old → new without a second old run (${label}): the price and page size, answered under keys that name quantities, are real wherever they stand`, async () => {
      const r = await diff(hars.old!, hars.new!, [], env);
      assert.equal(r.code, 1, r.text);
      // Before, the price bound 1999 ↔ 2099 like an id, in the answer and in the cart's POST: only the total showed.
      assert.deepEqual(r.real, [...TRUE_CHANGES].sort(), r.text);
      assert.match(r.text, /request\.query\.limit changed "1000" → "500"/);
      assert.match(r.text, /response\.body\.maxPageSize changed 1000 → 500/);
      assert.match(r.text, /response\.body\.price_cents changed 1999 → 2099/);
      assert.match(r.text, /request\.body\.price_cents changed 1999 → 2099/);
    });
  }

  it('two runs of one build MATCH, with a second old run or without: random ids and cookies still bind', async () => {
    const plain = await diff(hars.old!, hars.old3!);
    assert.equal(plain.code, 0, plain.text);
    const withNoise = await diff(hars.old!, hars.old3!, ['--noise', hars.old2!]);
    assert.equal(withNoise.code, 0, withNoise.text);
    assert.deepEqual(withNoise.real, []);
    assert.deepEqual(withNoise.noise, []);
  });


  for (const [label, env] of [
    ['in memory', {}],
    ['bounded', { BB_DIFF_BOUNDED_BYTES: '0' }],
  ] as const) {
    it(`old → new with --noise (${label}): the changed price and page size are real wherever they stand, exit 1`, async () => {
      const r = await diff(hars.old!, hars.new!, ['--noise', hars.old2!], env);
      assert.equal(r.code, 1, r.text);
      assert.deepEqual(r.real, [...TRUE_CHANGES].sort(), r.text);
      assert.deepEqual(r.noise, [], r.text);
      // Each side's value as it wrote it: left unbound (the old price), or bound on the new side only (its client
      // echoed 2099) and shown as written where the other side holds a plain value.
      assert.match(r.text, /request\.query\.limit changed "1000" → "500"/);
      assert.match(r.text, /response\.body\.price_cents changed 1999 → 2099/);
      assert.match(r.text, /request\.body\.price_cents changed 1999 → 2099/);
    });
  }
});

describe('bb shadow: a price and a page size the client echoes, the secondary answering them alike', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const t = tempDir();

  /**
   * A `bb shadow` run of the shop (the old build as primary, and as secondary with `secondary`, the new as
   * candidate) driven by the client; its exit code, report and output. --mirror all: the login and the cart's POST
   * go to every target (each catalog keeps its own products).
   */
  async function shadowRun(name: string, secondary: boolean): Promise<{ code: number | null; report: ShadowReport; out: string; output: string }> {
    const [primary, candidate] = [await startCatalog(cleanups, 'old'), await startCatalog(cleanups, 'new')];
    const third = secondary ? ['--secondary', await startCatalog(cleanups, 'old')] : [];
    const out = t.path(name);
    const json = t.path(`${name}.json`);
    const bb = startBb(['shadow', '--primary', primary, '--candidate', candidate, ...third, '--mirror', 'all', '--out', out, '--json', json, '--until', '8'], { BB_HOME: t.bbHome }, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    await drive(url!);
    const code = await bb.exited;
    return { code, report: JSON.parse(await readFile(json, 'utf8')) as ShadowReport, out, output: `${bb.stdout()}\n${bb.stderr()}` };
  }

  it('the candidate\'s changed price and page size are regressions wherever they stand, live and in bb diff of the captures', async () => {
    const { code, report, out, output } = await shadowRun('shadow', true);
    assert.equal(code, 1, `exit 1 on regressions\n${output}`);
    assert.equal(report.totals.errors, 0, JSON.stringify(report.totals));
    const live = report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort();
    // The mirror sends each target the value its own answer gave where it issued one (the cart's price: the
    // candidate's 2099); a page size of 500 is no issued value (3 digits), so the candidate is asked for the
    // primary's 1000, answers it, and only its own answer of 500 differs.
    assert.deepEqual(
      live,
      [
        'regression changed request.body.price_cents',
        'regression changed response.body.maxPageSize',
        'regression changed response.body.price_cents',
        'regression changed response.body.total_cents',
      ],
      output,
    );
    await assertLiveIsOffline(report, out, true);
  });

  it('without a secondary, the changed price is unclassified wherever it stands, live and in bb diff of the captures', async () => {
    const { code, report, out, output } = await shadowRun('shadow-alone', false);
    assert.equal(code, 1, `exit 1 on unclassified differences\n${output}`);
    assert.equal(report.totals.errors, 0, JSON.stringify(report.totals));
    const live = report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort();
    assert.deepEqual(
      live,
      [
        'unclassified changed request.body.price_cents',
        'unclassified changed response.body.maxPageSize',
        'unclassified changed response.body.price_cents',
        'unclassified changed response.body.total_cents',
      ],
      output,
    );
    // bb diff of the two captures: the same findings, ids and counts.
    await assertLiveIsOffline(report, out);
  });

  it("fixed products' ids issued in one batch and read by query in a later one stay bound live, as bb diff of the captures binds them", async () => {
    const [primary, candidate, secondary] = [await startCatalog(cleanups, 'old'), await startCatalog(cleanups, 'new'), await startCatalog(cleanups, 'old')];
    const out = t.path('shadow-batches');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: t.bbHome, mirror: 'all', reportEveryMs: 100 });
    const login = await request(`${shadow.url}/login`, { method: 'POST' });
    await login.body.dump();
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const get = async (path: string) => {
      const r = await request(`${shadow.url}${path}`, { headers: { cookie } });
      const body = (await r.body.json()) as Record<string, unknown>;
      assert.equal(r.statusCode, 200, JSON.stringify(body));
      return body;
    };
    const { items } = (await get('/featured')) as { items: Array<{ id: number }> };
    // The listing is compared before the reads go: their ids were issued in an earlier batch.
    await compared(shadow, 2);
    for (const f of items) await get(`/stock?product=${f.id}`);
    const report = await shadow.close();
    assert.equal(report.totals.errors, 0, JSON.stringify(report.totals));
    // Each target was asked for its own product (the candidate's 7001…) and found it: nothing differs.
    assert.deepEqual(report.findings, [], JSON.stringify(report.findings));
    await assertLiveIsOffline(report, out);
  });
});
