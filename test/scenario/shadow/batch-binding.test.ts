// A value issued in one comparison batch and sent back in a later one
// (scenario/shadow/batch-binding.ts): orders numbered by each build from its
// own start (1000, 5000, 9000: plain numbers, which bind only by their use),
// created, then read once the creations were compared (so the reads come in
// a later batch), and one read in the same batch. The relay sends each target
// its own number; the live comparison must bind them as `bb diff` of the
// captures does: the reads pair, a changed field in them is one regression,
// and a run of two equal builds without a secondary has nothing unclassified
// (what --fail-on gates).
//
// Realistic traffic through bb shadow (issue 37): a session cookie that
// rotates on every answer (with Expires), order ids sent back in paths, query
// strings, form bodies and GraphQL variables, 201 + Location and a 302 chain,
// gzip and br answers, HEAD and a CORS preflight, and several connections
// interleaving creates and reads, each across comparison batches (the run
// is made to compare before the reads). Two builds of test/scenario/shadow/shop.ts
// and a secondary: every target must get its own values back (none refused
// a request for an unknown order or session), the new build's changed status
// must be a regression and nothing else one, and the live findings must
// equal `bb diff` of the written captures.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { Client } from 'undici';
import { startShadow, type Shadow, type ShadowReport } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { compared, findingKeys, offlineKeys } from './compared.js';
import { startShadowService, type ShadowService } from './service.js';
import { startShop, type Shop } from './shop.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

/** Three orders created and compared (without `batchEdge`: not waited for), then read (a later batch); a fourth created and read at once. */
async function orders(shadow: Shadow, batchEdge = true): Promise<void> {
  const c = new Client(shadow.url);
  const post = async () => {
    const res = await c.request({ method: 'POST', path: '/orders', headers: { 'content-type': 'application/json' }, body: '{"item":"widget"}' });
    assert.equal(res.statusCode, 201);
    return (JSON.parse(await res.body.text()) as { id: number }).id;
  };
  const read = async (id: number) => {
    const res = await c.request({ method: 'GET', path: `/orders/${id}` });
    assert.equal(res.statusCode, 200);
    await res.body.text();
  };
  try {
    const ids = [await post(), await post(), await post()];
    if (batchEdge) await compared(shadow, 3);
    for (const id of ids) await read(id);
    await read(await post());
  } finally {
    await c.close();
  }
}

describe('bb shadow: values issued in one batch, sent back in a later one', () => {
  it('bind on every side: the reads pair and compare as bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await startShadowService('old', 1000), await startShadowService('new', 5000), await startShadowService('old', 9000)];
    services.push(primary, candidate, secondary);
    const out = tmp.path('orders');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
    await orders(shadow);
    const report = await shadow.close();

    // The relay sent each target its own numbers: every read found its order there.
    assert.equal(report.totals.errors, 0);
    assert.equal(report.totals.mirrored, 8);
    assert.deepEqual(report.routes['POST /orders'] && { equal: report.routes['POST /orders'].equal, regressions: report.routes['POST /orders'].regressions }, { equal: 4, regressions: 0 });
    const reads = report.routes['GET /orders/{id}'];
    assert.ok(reads, JSON.stringify(report.routes));
    assert.deepEqual({ regressions: reads.regressions, noise: reads.noise, equal: reads.equal }, { regressions: 4, noise: 0, equal: 0 }, JSON.stringify(reads));
    assert.deepEqual(findingKeys(report), ['real changed response.body.status']);

    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
    assert.equal(offline.pairs.filter((p) => p.old !== undefined && p.new !== undefined).length, 8);
  });

  it('two equal builds without a secondary: nothing unclassified', async () => {
    const [primary, candidate] = [await startShadowService('old', 1000), await startShadowService('old', 5000)];
    services.push(primary, candidate);
    const out = tmp.path('equal');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
    await orders(shadow);
    const report = await shadow.close();
    assert.deepEqual({ equal: report.totals.equal, unclassified: report.totals.unclassified, errors: report.totals.errors }, { equal: 8, unclassified: 0, errors: 0 }, JSON.stringify(report.routes));
    assert.equal(report.regressionRate, 0);
    assert.deepEqual(report.findings, []);
  });

  // Compared as the traffic goes (the failed creation in an earlier batch than its read), and all in one batch at the
  // end (a loaded machine's worker falls behind so: the failed creation, left out of the diff, and its read together).
  for (const [when, reportEveryMs] of [['as it goes', 100], ['in one batch', 600_000]] as const)
  it(`a flaky secondary that failed a creation: the candidate still binds, the read pairs as in bb diff of the captures (compared ${when})`, async () => {
    const [primary, candidate, secondary] = [await startShadowService('old', 1000), await startShadowService('new', 5000), await startShadowService('old', 9000, { hangUpOnOrder: 1 })];
    services.push(primary, candidate, secondary);
    const out = tmp.path(`flaky-${reportEveryMs}`);
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs });
    await orders(shadow, reportEveryMs < 1000);
    const report = await shadow.close();

    // The secondary's failed creation is one error; its read (the primary's number, unknown to it) is compared.
    assert.equal(report.totals.errors, 1, JSON.stringify(report.routes));
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    // Every read pairs in bb diff of the captures; live, the read of the order whose secondary failed must pair as well.
    assert.equal(offline.pairs.filter((p) => p.old !== undefined && p.new !== undefined).length, 8);
    const reads = report.routes['GET /orders/{id}']!;
    assert.equal(reads.regressions + reads.noise + reads.equal + reads.unclassified, 4, JSON.stringify(report.routes));
    assert.deepEqual(report.findings.filter((f) => f.pattern.startsWith('response.body') && f.kind === 'added').map((f) => f.pattern), [], JSON.stringify(report.findings));
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
  });

  it('a read on another connection right after the creation waits for a slow candidate\'s own answer (a browser\'s parallel connections)', async () => {
    // The candidate answers creations 300 ms late: the primary's read of the new order is mirrored before it.
    const [primary, candidate, secondary] = [await startShadowService('old', 1000), await startShadowService('new', 5000, { createDelayMs: 300 }), await startShadowService('old', 9000)];
    services.push(primary, candidate, secondary);
    const out = tmp.path('parallel');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all' });
    const [a, b] = [new Client(shadow.url), new Client(shadow.url)];
    try {
      for (let i = 0; i < 2; i++) {
        const made = await a.request({ method: 'POST', path: '/orders', headers: { 'content-type': 'application/json' }, body: '{}' });
        const { id } = JSON.parse(await made.body.text()) as { id: number };
        const read = await b.request({ method: 'GET', path: `/orders/${id}` });
        assert.equal(read.statusCode, 200);
        await read.body.text();
      }
    } finally {
      await a.close();
      await b.close();
    }
    const report = await shadow.close();
    // Each read reached the candidate with its own number (no 404): the new build's changed status is the one regression.
    const reads = report.routes['GET /orders/{id}'];
    assert.deepEqual(reads && { regressions: reads.regressions, noise: reads.noise }, { regressions: 2, noise: 0 }, JSON.stringify(report.findings));
    assert.deepEqual(findingKeys(report), ['real changed response.body.status']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
  });
});

const shops: Shop[] = [];
after(async () => {
  for (const s of shops) await s.close();
});

/** A client on one connection that keeps the latest session cookie. */
type Browser = ReturnType<typeof browser>;

function browser(url: string) {
  const c = new Client(url);
  let cookie: string | undefined;
  const call = async (method: string, path: string, opts: { body?: string; type?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...(cookie ? { cookie } : {}), ...(opts.type ? { 'content-type': opts.type } : {}), ...opts.headers };
    const res = await c.request({ method, path, headers, ...(opts.body !== undefined ? { body: opts.body } : {}) });
    const set = res.headers['set-cookie'];
    if (typeof set === 'string') cookie = set.split(';')[0];
    const raw = Buffer.from(await res.body.arrayBuffer());
    const coding = res.headers['content-encoding'];
    const text = (coding === 'gzip' ? gunzipSync(raw) : coding === 'br' ? brotliDecompressSync(raw) : raw).toString('utf8');
    return { status: res.statusCode, headers: res.headers, json: () => JSON.parse(text) as Record<string, unknown> };
  };
  return { call, close: () => c.close() };
}

/** Runs `traffic` (a browser on one connection, closed after) through a shadow of old/new/old shops; checks what every probe checks; returns the report. */
async function shadowed(name: string, traffic: (b: Browser, shadow: Shadow) => Promise<void>, expected: string[]): Promise<ShadowReport> {
  const [primary, candidate, secondary] = [await startShop('old', 1000), await startShop('new', 5000), await startShop('old', 9000)];
  shops.push(primary, candidate, secondary);
  const out = tmp.path(name);
  const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
  const b = browser(shadow.url);
  try {
    await traffic(b, shadow);
  } finally {
    await b.close();
    var report = await shadow.close();
  }
  assert.deepEqual(primary.refused, [], 'the primary refused nothing');
  assert.deepEqual({ candidate: candidate.refused, secondary: secondary.refused }, { candidate: [], secondary: [] }, 'each target got its own values');
  assert.equal(report.totals.errors, 0, JSON.stringify(report.routes));
  const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
  const offlineList = offlineKeys(offline);
  // Live and offline alike, and the expected verdict.
  assert.deepEqual({ live: findingKeys(report), offline: offlineList }, { live: expected, offline: expected }, JSON.stringify(report.findings.map((f) => [f.pattern, f.samples.slice(0, 2)])));
  return report;
}

describe('bb shadow: realistic traffic, live verdict = bb diff of the captures', () => {
  it('a rotating session cookie (Expires), ids in paths and query strings, a redirect chain, HEAD (its content-length tells the changed body) and a preflight', async () => {
    await shadowed(
      'session',
      async (b, shadow) => {
        await b.call('POST', '/login');
        const made = await b.call('POST', '/s/orders', { body: '{"item":"widget"}', type: 'application/json' });
        assert.equal(made.status, 201);
        const location = `/orders/${made.json().id}`;
        await compared(shadow, 2);
        assert.equal((await b.call('GET', `/s${location}`)).status, 200);
        await compared(shadow, 3);
        assert.equal((await b.call('GET', `/s/order?order=${made.json().id}`)).status, 200);
        await compared(shadow, 4);
        let hop = await b.call('GET', `/go/${made.json().id}`);
        while (hop.status === 302) hop = await b.call('GET', hop.headers.location as string);
        assert.equal(hop.status, 200);
        assert.equal((await b.call('HEAD', location)).status, 200);
        assert.equal((await b.call('OPTIONS', location, { headers: { origin: 'http://app.example', 'access-control-request-method': 'DELETE' } })).status, 204);
      },
      ['real changed response.body.status', 'real changed response.headers.content-length'],
    );
  });

  it('form bodies and gzip / br answers', async () => {
    await shadowed(
      'form',
      async (b, shadow) => {
        const made = await b.call('POST', '/form-orders', { body: 'item=widget&qty=2', type: 'application/x-www-form-urlencoded', headers: { 'accept-encoding': 'gzip' } });
        assert.equal(made.status, 201);
        const id = made.json().id as number;
        await compared(shadow, 1);
        assert.equal((await b.call('POST', '/order-form', { body: `order=${id}&x=1`, type: 'application/x-www-form-urlencoded' })).status, 200);
        assert.equal((await b.call('GET', `/orders/${id}`, { headers: { 'accept-encoding': 'gzip' } })).status, 200);
        assert.equal((await b.call('GET', `/orders/${id}`, { headers: { 'accept-encoding': 'br' } })).status, 200);
      },
      ['real changed response.body.status'],
    );
  });

  for (const coding of ['gzip', 'identity']) it(`an answer (${coding}) past the 256 KiB kept for binding: the id before the cut still binds on the relay`, async () => {
    await shadowed(
      `bulk-${coding}`,
      async (b, shadow) => {
        const made = await b.call('POST', '/bulk-orders', { body: '{}', type: 'application/json', headers: { 'accept-encoding': coding } });
        assert.equal(made.status, 201);
        await compared(shadow, 1);
        assert.equal((await b.call('GET', `/orders/${made.json().id}`)).status, 200);
      },
      // The receipt is random bytes on every build: noise.
      ['noise changed response.body.receipt', 'real changed response.body.status'],
    );
  });

  // The 201's Location (`/orders/1000`, the candidate's `/orders/5000`) is compared in the creation's batch,
  // before the read that sends it back: a number inside a path has no shape rule, so it differs there, and its
  // verdict waits (scenario/shadow/compare.ts settle) until the read sent it back, then compares with it bound.
  it('201 + Location read in a later batch: the Location compares as bb diff of the captures compares it', async () => {
    await shadowed(
      'located',
      async (b, shadow) => {
        const made = await b.call('POST', '/orders?located', { body: '{}', type: 'application/json' });
        await compared(shadow, 1);
        assert.equal((await b.call('GET', made.headers.location as string)).status, 200);
      },
      ['real changed response.body.status'],
    );
  });

  it('a real change of that Location is still a regression, and the waiting verdict comes during the run', async () => {
    const report = await shadowed(
      'moved',
      async (b, shadow) => {
        const made = await b.call('POST', '/orders?located=v2', { body: '{}', type: 'application/json' });
        await compared(shadow, 1);
        assert.equal((await b.call('GET', made.headers.location as string)).status, 200);
        // Idle now: the creation's verdict is given within SETTLE_MS on the clock, not only at the end (bounded: 20 s).
        for (let i = 0; i < 400 && !(shadow.report()?.routes['POST /orders']?.regressions); i++) await new Promise((r) => setTimeout(r, 50));
        assert.equal(shadow.report()?.routes['POST /orders']?.regressions, 1, JSON.stringify(shadow.report()?.routes));
      },
      ['real changed response.body.status', 'real changed response.headers.location'],
    );
    assert.equal(report.routes['POST /orders']?.regressions, 1);
  });

  // The read comes only after the creation's verdict was given (SETTLE_MS on the clock: noise, the secondary's
  // Location differs too): bb diff of the captures binds a value sent back however late, so the live run takes
  // that verdict and its finding back when the read sends the Location, and counts the creation equal.
  it('a Location read after the creation\'s verdict was given: the verdict is compared again and revised', async () => {
    const creations = (shadow: Shadow) => {
      const c = shadow.report()?.routes['POST /orders'];
      return c && { equal: c.equal, noise: c.noise, regressions: c.regressions };
    };
    const report = await shadowed(
      'late',
      async (b, shadow) => {
        const made = await b.call('POST', '/orders?located', { body: '{}', type: 'application/json' });
        for (let i = 0; i < 400 && !creations(shadow)?.noise; i++) await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(creations(shadow), { equal: 0, noise: 1, regressions: 0 });
        assert.deepEqual(findingKeys(shadow.report()!), ['noise changed response.headers.location']);
        assert.equal((await b.call('GET', made.headers.location as string)).status, 200);
        for (let i = 0; i < 400 && !creations(shadow)?.equal; i++) await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(creations(shadow), { equal: 1, noise: 0, regressions: 0 }, 'revised during the run');
      },
      ['real changed response.body.status'],
    );
    assert.deepEqual({ equal: report.routes['POST /orders']?.equal, noise: report.routes['POST /orders']?.noise }, { equal: 1, noise: 0 });
    assert.equal(report.totals.requests, 2);
  });

  it('GraphQL on one path: a mutation, then queries with the id in variables', async () => {
    await shadowed(
      'graphql',
      async (b, shadow) => {
      const gql = (query: string, variables: Record<string, unknown> = {}) => b.call('POST', '/graphql', { body: JSON.stringify({ query, variables }), type: 'application/json' });
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) ids.push(((await gql('mutation { createOrder { id } }')).json().data as { createOrder: { id: string } }).createOrder.id);
        await compared(shadow, 3);
        for (const id of ids.reverse()) assert.equal((await gql('query($id: ID!) { order(id: $id) { id status } }', { id })).status, 200);
        // Over GET, the variables URL-encoded: `%22` glued to the id must not hide it.
        const search = new URLSearchParams({ query: 'query($id: ID!) { order(id: $id) { id status } }', variables: JSON.stringify({ id: ids[0] }) });
        assert.equal((await b.call('GET', `/graphql?${search}`)).status, 200);
      },
      ['real changed response.body.data.order.status'],
    );
  });

  it('several connections interleaving creates and reads of the same orders', async () => {
    await shadowed(
      'interleaved',
      async (a, shadow) => {
        const [b, c] = [browser(shadow.url), browser(shadow.url)];
        try {
          const ids = (await Promise.all([a, b, c].map((x) => x.call('POST', '/orders', { body: '{}', type: 'application/json' })))).map((r) => r.json().id as number);
          await compared(shadow, 3);
          // Each connection reads the others' orders, interleaved; then creates one more and reads it on another connection once compared.
          await Promise.all([a, b, c].map((x, i) => Promise.all([x.call('GET', `/orders/${ids[(i + 1) % 3]}`), x.call('GET', `/order?order=${ids[(i + 2) % 3]}`)])));
          const more = (await a.call('POST', '/orders', { body: '{}', type: 'application/json' })).json().id as number;
          await compared(shadow, 10);
          await Promise.all([b.call('GET', `/orders/${more}`), c.call('GET', `/orders/${more}`)]);
        } finally {
          await Promise.all([b, c].map((x) => x.close()));
        }
      },
      ['real changed response.body.status'],
    );
  });
});
