// The value walk (diff/normalize/walk.ts) on whole captures: an issued id
// compares through its binding whatever its letters happen to be. A random
// 12-hex id is all digits about once in 300 runs; under an id key the
// numeric-ids rule named it `<DIGITS:n>` while the other run's id, with
// letters, was `<ISSUED:n>`, so two runs of one build differed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffHars, renderText } from '../../../diff/index.js';
import { ITEMS_COMPARED } from '../../../diff/normalize/walk.js';
import { capture, runTime, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';

/** A create that issues `id` under `id` keys, then the id sent back in a path and in a JSON body. */
const run = (id: string): ExchangeSpec[] => [
  { method: 'POST', url: 'http://127.0.0.1:1/notes', requestBody: { title: 'a' }, status: 201, body: { id, title: 'a' } },
  { url: `http://127.0.0.1:1/notes/${id}`, body: { id, title: 'a' } },
  { method: 'POST', url: 'http://127.0.0.1:1/orders', requestBody: { noteId: id }, status: 201, body: { noteId: id, items: 3 } },
];

describe('issued ids under id keys', () => {
  const t = tempDir();

  it('a hex id that happens to be all digits binds to the other run’s id: MATCH, both ways', async () => {
    for (const [a, b] of [['861203958817', 'a1b2c3d4e5f6'], ['a1b2c3d4e5f6', '861203958817']] as const) {
      const r = await diffAgreeing(t, capture(run(a)), capture(run(b)));
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    }
  });

  it('all-digit ids on both sides still match, and a broken binding is still real', async () => {
    assert.equal((await diffAgreeing(t, capture(run('861203958817')), capture(run('120395881786')))).verdict, 'match');
    const broken = run('a1b2c3d4e5f6');
    broken[2] = { ...broken[2]!, requestBody: { noteId: '999999999999' }, body: { noteId: '999999999999', items: 3 } };
    const r = await diffAgreeing(t, capture(run('861203958817')), capture(broken));
    assert.equal(r.verdict, 'diff', renderText(r, { color: false }));
  });
});

/** An OAuth-style sign-in: the 302's Location issues `code`, the callback sends it back and is answered a `cursor` the next read sends back; `status` is a word the client echoes. */
const signIn = (code: string, cursor: string, status = 'open'): ExchangeSpec[] => [
  { url: 'http://127.0.0.1:1/authorize?state=xyz', status: 302, responseHeaders: [['location', `/callback?code=${code}&state=xyz`]] },
  { url: `http://127.0.0.1:1/callback?code=${code}&state=xyz`, body: { status, next_cursor: cursor } },
  { url: `http://127.0.0.1:1/items?cursor=${cursor}&status=${status}`, body: { page: 1, status } },
];

describe('issued values under kept keys (code, cursor)', () => {
  const t = tempDir();

  it('an OAuth code and a page cursor the server issued and the client sent back bind: MATCH', async () => {
    const r = await diffAgreeing(t, capture(signIn('xELi80VoExr8', 'aHS9wq1TCPwX')), capture(signIn('EzB5XiWFQUMj', 'VVbM9la2lYYL')));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('a word under a kept key stays verbatim even sent back, and a key the config keeps stays verbatim', async () => {
    const changed = await diffAgreeing(t, capture(signIn('xELi80VoExr8', 'aHS9wq1TCPwX')), capture(signIn('EzB5XiWFQUMj', 'VVbM9la2lYYL', 'active')));
    assert.ok(changed.findings.some((f) => f.pattern === 'response.body.status'), renderText(changed, { color: false }));
    const kept = await diffAgreeing(t, capture(signIn('xELi80VoExr8', 'aHS9wq1TCPwX')), capture(signIn('EzB5XiWFQUMj', 'VVbM9la2lYYL')), { normalize: { keep: ['code'] } });
    assert.deepEqual(kept.findings.map((f) => f.pattern), ['request.query.code'], renderText(kept, { color: false }));
  });
});

// An array's items past the first ITEMS_COMPARED are one value: how many and a digest of their normalized forms.
// A body of 5.6M empty objects took 3 GB and 21 s to diff, and 22M (64 MiB, what a gzip answer decodes to at most)
// killed bb diff with V8's out-of-memory abort after 80 s.
describe('an array longer than bb diff compares item by item', () => {
  const items = (n: number, f: (i: number) => unknown) => JSON.stringify({ items: Array.from({ length: n }, (_, i) => f(i)) });
  const mk = (body: string) => capture([{ url: 'http://127.0.0.1:1/list', body, mime: 'application/json' }]);
  const diff = (a: string, b: string) => diffHars({ name: 'a.har', har: mk(a) }, { name: 'b.har', har: mk(b) });
  const n = ITEMS_COMPARED + 3;

  it('matches when the items past the list differ only where rules apply (times in the capture\'s window)', async () => {
    const r = await diff(items(n, (i) => ({ i, at: runTime() })), items(n, (i) => ({ i, at: runTime() })));
    assert.equal(r.verdict, 'match', JSON.stringify(r.differences.slice(0, 3)));
  });

  it('finds a changed item past the list, and one more, as one difference at [ITEMS_COMPARED]', async () => {
    const base = items(n, (i) => ({ i, ok: true }));
    const changed = await diff(base, items(n, (i) => ({ i, ok: i !== ITEMS_COMPARED + 1 })));
    assert.deepEqual(changed.differences.map((d) => d.path), [`response.body.items[${ITEMS_COMPARED}]`]);
    assert.match(String(changed.differences[0]!.old), /^<3 items past the first 100000, digest [0-9a-f]{16}>$/);
    const longer = await diff(base, items(n + 1, (i) => ({ i, ok: true })));
    assert.deepEqual(longer.differences.map((d) => [d.path, String(d.new).slice(0, 30)]), [[`response.body.items[${ITEMS_COMPARED}]`, '<4 items past the first 100000']]);
    // A change among the first ITEMS_COMPARED is still found field by field.
    const early = await diff(base, items(n, (i) => ({ i, ok: i !== 5 })));
    assert.deepEqual(early.differences.map((d) => d.path), ['response.body.items[5].ok']);
  });
});
