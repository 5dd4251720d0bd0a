// Realistic flows (test/helpers/web-flows.ts) through bb shadow, end to end:
// three builds of a small web app as primary, candidate and secondary, each
// flow as the traffic comes and with each answer compared before the next
// request. Moved from test/scenario/shadow/mirror.test.ts, which ran near its
// file's 120 s budget in CI on a slower machine.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { startShadow } from '../../scenario/index.js';
import { diffCaptures } from '../../diff/index.js';
import { tempDir } from '../helpers/tmp.js';
import { startFlowsApp, flowsClient, FEED_PAGES, type FlowsApp } from '../helpers/web-flows.js';
import { compared, findingKeys, offlineKeys } from '../scenario/shadow/compared.js';

const tmp = tempDir();
const services: FlowsApp[] = [];
after(async () => {
  for (const s of services) await s.close();
});

// Realistic flows (test/helpers/web-flows.ts) through bb shadow: each target
// must get its own issued values back (none refused, a conditional GET still
// 304 on each), the client sees the primary's answers, the new build's
// renamed status is the one regression, and the live findings equal bb diff
// of the captures.
type Flows = Awaited<ReturnType<typeof flowsClient>>;
const flows: Array<[string, (c: Flows) => Promise<unknown>, unknown, string]> = [
  ['ETag / If-None-Match revalidation', (c) => c.revalidate('etag'), 304, 'response.body.status'],
  ['Last-Modified / If-Modified-Since revalidation (the candidate\'s document is newer)', (c) => c.revalidate('date'), 304, 'response.body.status'],
  ['an OAuth-style redirect: code and state in the 302 Location, the callback, then the token', (c) => c.signIn(), 'open', 'response.body.status'],
  ['pagination by a Link rel="next" header, then a next_cursor field', (c) => c.paginate(), [0, 1, 2], 'response.body.status'],
  ['a feed paged by random standard-base64 cursors (`+`, `/`), sent back URL-encoded, the last in a JSON body', (c) => c.feed(), Array.from({ length: FEED_PAGES }, (_, i) => i), 'response.body.status'],
  ['an id inside a longer string ("href": "/orders/1042/items"), then a GET of that href', (c) => c.followHref(), 'open', 'response.body.status'],
  ['GraphQL over WebSocket (graphql-transport-ws): ids in next messages queried over HTTP', (c) => c.subscribe(), ['open', 'open'], 'response.body.data.order.status'],
  ['a multipart/form-data upload answered with a file id that is then fetched', (c) => c.upload(), 'hello file', 'response.body.status'],
  ['an event stream resumed with Last-Event-ID set to the last event id the server issued', (c) => c.resumeEvents(), 'open', 'response.events[].data.status'],
  ['a tus-style resumable upload: POST answers Location: /files/<id>, PATCHes at Upload-Offset, a HEAD for the offset', (c) => c.resumableUpload(), 'open', 'response.body.status'],
  ['HAL _links.self.href, then a JSON:API links.related, each followed', (c) => c.followLinks(), 'open', 'response.body.status'],
  ['a JSON login\'s access and refresh tokens: Bearer, POST /token with the refresh token, the new access token', (c) => c.refreshTokens(), ['open', 'open'], 'response.body.status'],
  ['an Idempotency-Key the client made up, a POST sent twice: the same payment', (c) => c.payTwice(), true, 'response.body.status'],
  ['a WebSocket resume token sent back in a new WebSocket\'s URL', (c) => c.resumeSocket(), 'open', 'ws.messages[].data.status'],
];

describe('shadow mirror: realistic flows, each target its own issued values', () => {
  // As the traffic comes, and with each answer compared before the next request (each value used in a later batch than its issue).
  for (const [name, flow, expected, changed] of flows) for (const edges of [false, true]) {
    it(`${name}${edges ? ', each step in its own batch' : ''}`, async () => {
      const [primary, candidate, secondary] = [await startFlowsApp(1042), await startFlowsApp(5077, 'new'), await startFlowsApp(9013)];
      services.push(primary, candidate, secondary);
      const out = tmp.path(`${name.replace(/\W+/g, '-').slice(0, 40)}${edges ? '-edges' : ''}`);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 100 });
      const client = await flowsClient(shadow.url, edges ? (n) => compared(shadow, n) : undefined);
      try {
        assert.deepEqual(await flow(client), expected);
      } finally {
        await client.close();
      }
      const report = await shadow.close(2_000);
      assert.deepEqual({ primary: primary.refused, candidate: candidate.refused, secondary: secondary.refused }, { primary: [], candidate: [], secondary: [] }, JSON.stringify({ candidate: candidate.log, secondary: secondary.log }));
      assert.deepEqual([candidate.log.length, secondary.log.length], [primary.log.length, primary.log.length]);
      assert.deepEqual({ candidate: candidate.keys, secondary: secondary.keys }, { candidate: primary.keys, secondary: primary.keys });
      assert.equal(report.totals.errors, 0, JSON.stringify(report.routes));
      const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
      assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: [`real changed ${changed}`], offline: [`real changed ${changed}`] }, JSON.stringify(report.findings.map((f) => [f.pattern, f.samples.slice(0, 2)])));
    });
  }
});
