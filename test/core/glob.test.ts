import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { globMatcher } from '../../core/index.js';
import { hostMatcher } from '../../proxy/forward.js';
import { diffCaptures, validateDiffConfig } from '../../diff/index.js';
import { capture } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

describe('globMatcher', () => {
  it('reads * as any run (slashes included), ? as one character, the rest literally', () => {
    const m = globMatcher('*/GET /v?/items*');
    assert.equal(m('page/GET /v1/items#1'), true);
    assert.equal(m('a/b/GET /v2/items'), true);
    assert.equal(m('page/GET /v10/items#1'), false, '? is exactly one character');
    assert.equal(m('page/GET /v/items'), false);
    assert.equal(globMatcher('a.b(c)[d]+$')('a.b(c)[d]+$'), true);
    assert.equal(globMatcher('a.b')('aXb'), false, '. is literal');
    assert.equal(globMatcher('line*')('line one\nline two'), true, '* crosses newlines');
  });

  it('is case-sensitive unless asked', () => {
    assert.equal(globMatcher('*/GET /Users*')('p/GET /users#1'), false);
    assert.equal(globMatcher('*.Example.COM', { ignoreCase: true })('api.example.com'), true);
  });

  it('is the same glob in forward mode hosts: ? is one character, case does not matter', () => {
    const only = hostMatcher(['api?.example.com']);
    assert.equal(only('API1.Example.com'), true);
    assert.equal(only('api12.example.com'), false);
    assert.equal(only('api.example.com'), false);
  });
});

describe('a known entry with ? in its where', () => {
  const t = tempDir();

  it('ratifies the difference on every route the ? stands for, and no other', async () => {
    const run = (v: number) => capture([
      { url: 'http://127.0.0.1:1/v1/items', body: { v } },
      { url: 'http://127.0.0.1:1/v2/items', body: { v } },
      { url: 'http://127.0.0.1:1/v10/items', body: { v } },
    ]);
    const dir = t;
    const oldPath = await dir.write('old.har', run(1));
    const newPath = await dir.write('new.har', run(2));
    const config = validateDiffConfig({ known: [{ where: '*/GET /v?/items#*', path: 'response.body.v', reason: 'v bumped' }] });
    const r = await diffCaptures(oldPath, newPath, { config });
    const byRoute = r.differences.map((d) => [d.entry.replace(/^.*\/GET /, ''), d.class]).sort();
    assert.deepEqual(byRoute, [['/v1/items#1', 'known'], ['/v10/items#1', 'real'], ['/v2/items#1', 'known']]);
  });
});
