// Pages pair by title when both captures have them; a capture without pages
// (a proxy recording with no steps) still pairs with a browser HAR that has them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures } from '../../../diff/index.js';
import { capture } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();

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
  const two = [...exchanges('Home page'), { url: 'http://127.0.0.1:8080/api/more', body: { more: true }, page: 'Other page' }];
  const a = await tmp.write('a.har', capture(two));
  const b = await tmp.write('b.har', capture([{ url: 'http://127.0.0.1:8080/api/more', body: { more: true }, page: 'Other page' }, ...exchanges('Other page').slice(1)]));
  const result = await diffCaptures(a, b, {});
  assert.equal(result.verdict, 'diff');
  const kinds = result.differences.map((d) => `${d.kind} ${d.entry}`).sort();
  assert.deepEqual(kinds, ['extra Other page/GET /api/data#1', 'missing Home page/GET /#1', 'missing Home page/GET /api/data#1'], JSON.stringify(result.differences));
});

test('a page whose title differs in the same place of the sequence pairs with it (a browser names pages by a title scripts change)', async () => {
  const steps = (title: string) => [
    { url: 'http://127.0.0.1:8080/login', body: 'form', mime: 'text/html', page: 'Sign in' },
    ...exchanges(title),
    { url: 'http://127.0.0.1:8080/bye', body: 'bye', mime: 'text/html', page: 'Goodbye' },
  ];
  const a = await tmp.write('ta.har', capture(steps('loading')));
  const b = await tmp.write('tb.har', capture(steps('loaded 2 items')));
  const result = await diffCaptures(a, b, {});
  assert.equal(result.verdict, 'match', JSON.stringify(result.differences));
  assert.deepEqual(result.pairs.map((p) => p.id).sort(), ['Goodbye/GET /bye#1', 'Sign in/GET /login#1', 'loading/GET /#1', 'loading/GET /api/data#1']);
});

test('pages pair by title first: a page missing from the new capture does not shift the others', async () => {
  const a = await tmp.write('sa.har', capture([...exchanges('One'), { url: 'http://127.0.0.1:8080/two', body: '2', page: 'Two' }, { url: 'http://127.0.0.1:8080/three', body: '3', page: 'Three' }]));
  const b = await tmp.write('sb.har', capture([...exchanges('One'), { url: 'http://127.0.0.1:8080/three', body: '3', page: 'Three' }]));
  const result = await diffCaptures(a, b, {});
  assert.deepEqual(result.differences.map((d) => `${d.kind} ${d.entry}`), ['missing Two/GET /two#1'], JSON.stringify(result.differences));
});
