// Pages pair by title when both captures have them; a capture without pages
// (a proxy recording with no steps) still pairs with a browser HAR that has them.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures } from '../../diff/index.js';
import { capture, tempDir } from './har-builder.js';

const tmp = await tempDir();
after(() => tmp.remove());

const exchanges = (page?: string) => [
  { url: 'http://127.0.0.1:8080/', body: 'home', mime: 'text/html', page },
  { url: 'http://127.0.0.1:8080/api/data', body: { items: [1, 2] }, page },
];

test('entries pair without page titles when only one capture has pages', async () => {
  const withPages = await tmp.write('paged.har', capture(exchanges('Home page')));
  const without = await tmp.write('plain.har', capture(exchanges()));
  const result = await diffCaptures(withPages, without, {});
  assert.equal(result.verdict, 'match', JSON.stringify(result.differences));
  assert.deepEqual(result.pairs.map((p) => p.id).sort(), ['/GET /#1', '/GET /api/data#1']);
});

test('page titles still separate entries when both captures have pages', async () => {
  const a = await tmp.write('a.har', capture(exchanges('Home page')));
  const b = await tmp.write('b.har', capture(exchanges('Other page')));
  const result = await diffCaptures(a, b, {});
  assert.equal(result.verdict, 'diff');
  assert.ok(result.differences.some((d) => d.kind === 'missing' && d.entry.startsWith('Home page/')));
});
