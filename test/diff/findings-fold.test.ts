// Consequences fold under their cause (docs/diff.md "Findings"): a status
// change holds the body, content-type and header changes of
// those responses; a request that got no response on one side is one finding
// that says so; a finding holds one old → new pair or one varying pattern,
// never two unrelated changes. Both paths (in memory, bounded).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderJunit, renderText, type DiffOptions, type DiffResult, type Finding } from '../../diff/index.js';
import { renderHtml } from '../../diff/report/html.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import type { Har } from '../../capture/har.js';
import { tempDir } from '../helpers/tmp.js';

// The bounded path's sides in this thread, as diffBounded has them; their trip
// through workers is checked in store/bounded.test.ts and normalize/keyed.test.ts.
const PATHS: Array<[string, DiffOptions]> = [
  ['in memory', {}],
  ['bounded', { boundedThreshold: 0, workers: false }],
];

const show = (r: DiffResult) => renderText(r, { color: false, rows: true });
const line = (f: Finding) => `${f.class} ${f.kind} ${f.pattern}${f.kind === 'changed' && 'old' in f ? ` ${JSON.stringify(f.old)} → ${JSON.stringify(f.new)}` : ''}`;
const U = 'http://127.0.0.1:3001';

async function write(docs: Record<string, Har>): Promise<Record<string, string>> {
  const dir = tempDir();
  const out: Record<string, string> = {};
  for (const [name, har] of Object.entries(docs)) out[name] = await dir.write(`${name}.har`, har);
  return out;
}

describe('consequences fold under their cause', () => {
  for (const [name, base] of PATHS) {
    it(`a route answering a 404 page is one finding holding its body and header changes (${name})`, async () => {
      const item = (id: number): ExchangeSpec => ({ url: `${U}/legacy?id=${id}`, body: { id, name: `legacy ${id}` }, responseHeaders: [['ETag', `"v${id}"`], ['X-Api', '1']] });
      const gone = (id: number): ExchangeSpec => ({ url: `${U}/legacy?id=${id}`, status: 404, mime: 'text/html', body: `<!DOCTYPE html><pre>Cannot GET /legacy?id=${id}</pre>`, responseHeaders: [['Content-Security-Policy', "default-src 'none'"], ['X-Content-Type-Options', 'nosniff']] });
      const health: ExchangeSpec = { url: `${U}/health`, body: { ok: true }, responseHeaders: [['X-Api', '1']] };
      const f = await write({ old: capture([item(1), item(2), health]), new: capture([gone(1), gone(2), health]) });
      const r = await diffCaptures(f.old!, f.new!, base);
      assert.deepEqual(r.findings.map(line), ['real changed response.status 200 → 404'], show(r));
      const [status] = r.findings;
      assert.deepEqual(status!.consequences!.map(line).sort(), [
        'real added response.headers.content-security-policy',
        'real added response.headers.x-content-type-options',
        'real changed response.body',
        'real changed response.headers.content-type "application/json" → "text/html"',
        'real removed response.headers.etag',
        'real removed response.headers.x-api',
      ]);
      // Every row belongs to the one finding the report lists, and is listed under it.
      assert.equal(r.counts.findings.real, 1);
      assert.ok(r.differences.every((d) => d.finding === status!.id), show(r));
      const rows = renderText(r, { color: false, rows: true });
      for (const d of r.differences) assert.ok(rows.includes(`[${d.id}]`), `--rows lists ${d.id}:\n${rows}`);
      const text = renderText(r, { color: false });
      assert.match(text, /^DIFF: 1 real finding \(\d+ differences\)/);
      assert.match(text, /\[F[0-9a-f]{9}\] response\.status changed 200 → 404 in 2 of 2 GET \/legacy\n {6}↳ \[F[0-9a-f]{9}\] response\.body changed/);
      assert.match(text, /↳ \[F[0-9a-f]{9}\] response\.headers\.content-type changed "application\/json" → "text\/html"\n/);
      // The other reports say the same: the cause, its consequences under it.
      const junit = renderJunit(r);
      assert.match(junit, /response\.status changed 200 → 404[^\n]*\n {4}↳ \[F[0-9a-f]{9}\] response\.body changed/);
      const html = renderHtml(r, {});
      assert.match(html, /<ul class="fconsequences"><li>.*response.*body.* changed/s);
    });

    it(`a request with no response in old is one finding that says so (${name})`, async () => {
      const slow = (status: number): ExchangeSpec => ({ url: `${U}/slow`, status, body: { error: 'boom' }, responseHeaders: [['X-Powered-By', 'Express'], ['Cache-Control', 'no-store']] });
      const old = capture([slow(500), { url: `${U}/ok`, body: { ok: 1 } }]);
      // The client gave up: bb records the exchange with no response (status 0, nothing else).
      old.log.entries[0]!.response = { status: 0, statusText: '', httpVersion: '', cookies: [], headers: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: -1 };
      const f = await write({ old, new: capture([slow(500), { url: `${U}/ok`, body: { ok: 1 } }]) });
      const r = await diffCaptures(f.old!, f.new!, base);
      assert.equal(r.findings.length, 1, show(r));
      const [gaveUp] = r.findings;
      assert.deepEqual([gaveUp!.pattern, gaveUp!.old, gaveUp!.new], ['response.status', 0, 500]);
      assert.ok(gaveUp!.consequences!.length >= 4, show(r));
      assert.ok(gaveUp!.consequences!.every((c) => c.kind === 'added'), show(r));
      const text = renderText(r, { color: false });
      assert.match(text, /^DIFF: 1 real finding/);
      assert.match(text, /\] no response in old \(new answered 500\) in 1 of 1 GET \/slow\n/);
      assert.doesNotMatch(text, /0 → 500/);
    });

    it(`two unrelated changes of one field in one route are two findings (${name})`, async () => {
      // One entry's JSON body became text; another's text body changed: different pairs of different kinds.
      const f = await write({
        old: capture([{ url: `${U}/doc?id=1`, body: { title: 'a' } }, { url: `${U}/doc?id=2`, body: 'plain one' }, { url: `${U}/doc?id=3`, body: 'same' }]),
        new: capture([{ url: `${U}/doc?id=1`, body: 'moved' }, { url: `${U}/doc?id=2`, body: 'plain two' }, { url: `${U}/doc?id=3`, body: 'same' }]),
      });
      const r = await diffCaptures(f.old!, f.new!, base);
      const body = r.findings.filter((x) => x.pattern === 'response.body');
      assert.equal(body.length, 2, show(r));
      assert.deepEqual(body.map((x) => x.entries), [1, 1]);
      assert.notEqual(body[0]!.id, body[1]!.id);
      // Status changes with different pairs in one route are two findings, each with its own consequences.
      const g = await write({
        old: capture([{ url: `${U}/p?id=1`, body: { a: 1 } }, { url: `${U}/p?id=2`, body: { a: 2 } }, { url: `${U}/p?id=3`, body: { a: 3 } }]),
        new: capture([{ url: `${U}/p?id=1`, status: 404, body: 'missing 1' }, { url: `${U}/p?id=2`, status: 500, body: 'failed 2' }, { url: `${U}/p?id=3`, body: { a: 3 } }]),
      });
      const s = await diffCaptures(g.old!, g.new!, base);
      assert.deepEqual(s.findings.map(line).sort(), ['real changed response.status 200 → 404', 'real changed response.status 200 → 500'], show(s));
      assert.ok(s.findings.every((x) => x.consequences!.some((c) => c.pattern === 'response.body')), show(s));
    });

    it(`a change that also holds elsewhere stays a finding of its own (${name})`, async () => {
      // The server header changed on every response, the 404 one among them: not a consequence of the 404.
      const ex = (path: string, server: string, status = 200): ExchangeSpec => ({ url: `${U}${path}`, status, responseHeaders: [['Server', server]], body: status === 200 ? { p: path } : 'not found' });
      const f = await write({ old: capture([ex('/a', 'api/1'), ex('/b', 'api/1')]), new: capture([ex('/a', 'api/2', 404), ex('/b', 'api/2')]) });
      const r = await diffCaptures(f.old!, f.new!, base);
      assert.deepEqual(r.findings.map(line).sort(), ['real changed response.headers.server "api/1" → "api/2"', 'real changed response.status 200 → 404'], show(r));
      const status = r.findings.find((x) => x.pattern === 'response.status')!;
      assert.ok(!status.consequences!.some((c) => c.pattern === 'response.headers.server'));
    });
  }
});
