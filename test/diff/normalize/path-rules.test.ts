// Per-path rules: compiled once per run, applied to named entries in place.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyPathRules, compilePathRules } from '../../../diff/normalize/path-rules.js';
import type { NormalizedEntry } from '../../../diff/types.js';
import type { PathRuleConfig } from '../../../diff/config-types.js';
import { createContext, normalizeContextFor } from '../../../diff/context.js';
import { emptyDiffConfig } from '../../../diff/config.js';
import { ZipBodies } from '../../../diff/normalize/zip.js';

function entry(id: string): NormalizedEntry {
  return {
    id,
    key: '',
    route: 'GET /a',
    request: { method: 'GET', path: '/a', query: { page: '2' }, headers: {} },
    response: { status: 200, headers: {}, body: { nonce: 'n1', items: [{ price: 1, name: 'a' }], tags: ['x', 'y'] } },
    meta: { index: 0, page: '' },
  };
}

describe('path rules', () => {
  it('are compiled once per run: both sides normalize with the run context\'s one compiled list', () => {
    const config = emptyDiffConfig();
    config.normalize.paths = [{ path: 'nonce' }];
    const ctx = createContext('old.har', 'new.har', { config });
    assert.equal(ctx.pathRules.length, 1);
    assert.equal(ctx.pathRules[0]!.at('response.body.nonce'), true);
    const zips = new ZipBodies();
    assert.equal(normalizeContextFor(ctx, 'old', undefined, zips).pathRules, ctx.pathRules);
    assert.equal(normalizeContextFor(ctx, 'new', undefined, zips).pathRules, ctx.pathRules);
  });

  it('masks, replaces and drops the fields it selects, in the entries it selects', () => {
    const rules: PathRuleConfig[] = [
      { where: '/GET /a#*', path: 'nonce' },
      { path: 'items[].price', ignore: true },
      // An array item is masked, never dropped (the indices after it would shift).
      { path: 'tags[]', ignore: true },
      { path: 'request.query.page', replace: '<P>' },
      { where: 'elsewhere', path: 'name' },
    ];
    const compiled = compilePathRules(rules);
    const e = entry('/GET /a#1');
    applyPathRules(e, compiled);
    assert.deepEqual(e.request.query, { page: '<P>' });
    assert.deepEqual(e.response.body, { nonce: '<MASKED>', items: [{ name: 'a' }], tags: ['<MASKED>', '<MASKED>'] });
    const other = entry('/GET /b#1');
    applyPathRules(other, compiled);
    assert.equal((other.response.body as { nonce: string }).nonce, 'n1');
  });
});
