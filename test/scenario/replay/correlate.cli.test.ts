// bb replay of a server-rendered app (test/helpers/orders-html.ts): the
// values a browser sends back come from the pages themselves (a CSRF token
// in a hidden input, a version token in a link), not from JSON or headers.
// The replay must send the target's own (diff/bind/html.ts reads them), or
// every form post is refused (422) and the link is not found (404).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startRecording } from '../../../scenario/index.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startOrdersApp, visitOrders, type OrdersApp } from '../../helpers/orders-html.js';
import { startFlowsApp, flowsClient, FEED_PAGES, type FlowsApp } from '../../helpers/web-flows.js';
import { startMoreFlowsApp, startH2FlowsApp, moreFlowsClient, h2CreateThenRead } from '../../helpers/web-flows-more.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const apps: OrdersApp[] = [];
after(async () => {
  for (const a of apps) await a.close();
});
const app = async (firstId: number): Promise<OrdersApp> => {
  const a = await startOrdersApp(firstId);
  apps.push(a);
  return a;
};

describe('bb replay: values an HTML page issued', () => {
  it("sends the target's own CSRF token and link token back: no post refused, no link lost; bb diff of the two captures is MATCH", async () => {
    const original = await app(1000);
    const rec = await startRecording({ target: original.url, out: tmp.path('orders.har'), label: 'orders', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    try {
      assert.match(await visitOrders(rec.url, 'widget'), /Cancelled/);
    } finally {
      await rec.close(1000);
    }
    assert.equal(original.refused(), 0);

    const fresh = await app(5000);
    const out = tmp.path('orders-replay.har');
    const json = tmp.path('orders-replay.json');
    const run = await runBb(['replay', rec.out, '--target', fresh.url, '--out', out, '--json', json], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.deepEqual(fresh.log, ['GET /orders/new 200', 'POST /orders 303', 'GET /orders/5000 200', 'GET /orders/5000/edit 200', 'POST /orders/5000/cancel 303', 'GET /orders/5000 200']);
    const report = JSON.parse(await readFile(json, 'utf8')) as { rewritten: Array<{ from: { path: string }; uses: number }> };
    const places = report.rewritten.map((r) => r.from.path);
    assert.ok(places.some((p) => p.startsWith('html:input[authenticity_token]') || p.startsWith('html:meta[csrf-token]')), places.join(' '));
    assert.ok(places.includes('html:a#0@href~3'), places.join(' '));
    const diff = await runBb(['diff', rec.out, out], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });
});

// Realistic flows (test/helpers/web-flows.ts), each recorded from one build and
// replayed against a fresh one: the fresh server must get its own issued
// values back (none refused, a conditional GET still 304) and bb diff of the
// two captures must be MATCH.
type Flows = Awaited<ReturnType<typeof flowsClient>>;
const flowApps: FlowsApp[] = [];
after(async () => {
  for (const a of flowApps) await a.close();
});
const feedPages = Array.from({ length: FEED_PAGES }, (_, i) => i);
const flows: Array<[string, (c: Flows) => Promise<unknown>, unknown]> = [
  ['ETag / If-None-Match revalidation: still 304', (c) => c.revalidate('etag'), 304],
  ['Last-Modified / If-Modified-Since revalidation: still 304 where the fresh build\'s document is newer', (c) => c.revalidate('date'), 304],
  ['an OAuth-style redirect: the 302 Location carries code and state, the callback sends them back, then the token', (c) => c.signIn(), 'open'],
  ['pagination by a Link rel="next" header, then a next_cursor field', (c) => c.paginate(), [0, 1, 2]],
  ['a feed paged by random standard-base64 cursors (`+`, `/`), sent back URL-encoded, the last in a JSON body', (c) => c.feed(), feedPages],
  ['an id inside a longer string ("href": "/orders/1042/items"), then a GET of that href', (c) => c.followHref(), 'open'],
  ['GraphQL over WebSocket (graphql-transport-ws): ids in next messages queried over HTTP', (c) => c.subscribe(), ['open', 'open']],
  ['a multipart/form-data upload answered with a file id that is then fetched', (c) => c.upload(), 'hello file'],
  ['an event stream resumed with Last-Event-ID set to the last event id the server issued', (c) => c.resumeEvents(), 'open'],
  ['a tus-style resumable upload: POST answers Location: /files/<id>, PATCHes at Upload-Offset, a HEAD for the offset', (c) => c.resumableUpload(), 'open'],
  ['HAL _links.self.href, then a JSON:API links.related, each followed', (c) => c.followLinks(), 'open'],
  ['a JSON login\'s access and refresh tokens: Bearer, POST /token with the refresh token, the new access token', (c) => c.refreshTokens(), ['open', 'open']],
  ['an Idempotency-Key the client made up, a POST sent twice: the same payment', (c) => c.payTwice(), true],
  ['a WebSocket resume token sent back in a new WebSocket\'s URL', (c) => c.resumeSocket(), 'open'],
];

/** Replays `recorded` against `fresh`: none refused, as many requests as `original` got, the same Idempotency-Keys, and bb diff of the two captures MATCH. */
async function replaysAlike(recorded: string, original: FlowsApp, fresh: FlowsApp, slug: string): Promise<void> {
  const out = tmp.path(`${slug}-replay.har`);
  const run = await runBb(['replay', recorded, '--target', fresh.url, '--out', out], env);
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.deepEqual(fresh.refused, [], fresh.log.join('\n'));
  assert.equal(fresh.log.length, original.log.length, fresh.log.join('\n'));
  assert.deepEqual(fresh.keys, original.keys);
  const diff = await runBb(['diff', recorded, out], env);
  assert.match(diff.stdout, /^MATCH/, diff.stdout + diff.stderr);
  assert.equal(diff.code, 0);
}

describe('bb replay: realistic flows send the target its own issued values', () => {
  for (const [name, flow, expected] of flows) {
    it(name, async () => {
      const original = await startFlowsApp(1042);
      flowApps.push(original);
      const slug = name.replace(/\W+/g, '-').slice(0, 40);
      const rec = await startRecording({ target: original.url, out: tmp.path(`${slug}.har`), label: slug, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
      const client = await flowsClient(rec.url);
      try {
        assert.deepEqual(await flow(client), expected);
      } finally {
        await client.close();
        await rec.close(1000);
      }
      assert.deepEqual(original.refused, []);

      const fresh = await startFlowsApp(5077);
      flowApps.push(fresh);
      await replaysAlike(rec.out, original, fresh, slug);
    });
  }
});

// More flows (test/helpers/web-flows-more.ts): a Socket.IO-style session, a
// redirect chain, SOAP, a CSV export's job, a 202's Operation-Location and
// an h2c create-then-read, each replayed against a fresh build.
const more = (run: (c: ReturnType<typeof moreFlowsClient>) => Promise<unknown>) => async (url: string) => {
  const c = moreFlowsClient(url);
  try {
    return await run(c);
  } finally {
    await c.close();
  }
};
const moreFlows: Array<[string, () => Promise<FlowsApp>, (url: string) => Promise<unknown>, unknown]> = [
  ['a Socket.IO-style session: an order id in a 42 event packet sent back in a later packet, polling then WebSocket', () => startMoreFlowsApp(), more((c) => c.socketIo()), ['open', 'open']],
  ['a chain of three 302s, each Location with a fresh token, the last setting a cookie', () => startMoreFlowsApp(), more((c) => c.redirectChain()), 'open'],
  ['a SOAP answer\'s OrderId sent back in the next request\'s XML body', () => startMoreFlowsApp(), more((c) => c.soap()), 'open'],
  ['a CSV export whose first line names the job then polled at /jobs/<id>', () => startMoreFlowsApp(), more((c) => c.exportJob()), 'open'],
  ['a 202 Accepted with Retry-After and Operation-Location polled until done', () => startMoreFlowsApp(), more((c) => c.longRunning()), 'open'],
  ['h2c: a JSON create then a read of its id on the same connection', () => startH2FlowsApp(), h2CreateThenRead, 'open'],
];

describe('bb replay: more realistic flows send the target its own issued values', () => {
  for (const [name, start, flow, expected] of moreFlows) {
    it(name, async () => {
      const original = await start();
      flowApps.push(original);
      const slug = `more-${name.replace(/\W+/g, '-').slice(0, 40)}`;
      const rec = await startRecording({ target: original.url, out: tmp.path(`${slug}.har`), label: slug, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
      try {
        assert.deepEqual(await flow(rec.url), expected);
      } finally {
        await rec.close(1000);
      }
      assert.deepEqual(original.refused, []);

      const fresh = await start();
      flowApps.push(fresh);
      await replaysAlike(rec.out, original, fresh, slug);
    });
  }
});
