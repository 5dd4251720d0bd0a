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
import { startShop, type Shop } from './shop.js';
import { compared } from './compared.js';

const tmp = tempDir();
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

function findingKeys(r: ShadowReport): string[] {
  return r.findings.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern}`).sort();
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
  const offlineKeys = offline.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort();
  // Live and offline alike, and the expected verdict.
  assert.deepEqual({ live: findingKeys(report), offline: offlineKeys }, { live: expected, offline: expected }, JSON.stringify(report.findings.map((f) => [f.pattern, f.samples.slice(0, 2)])));
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
