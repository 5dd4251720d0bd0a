// Per-path rules: compiled once per list, applied to named entries in place.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyPathRules, compilePathRules } from '../../../diff/normalize/path-rules.js';
import type { NormalizedEntry } from '../../../diff/types.js';
import type { PathRuleConfig } from '../../../diff/config-types.js';

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
  it('compiles a list once: the same list, or its compiled list, gives the same compiled rules back', () => {
    const rules: PathRuleConfig[] = [{ path: 'nonce' }];
    const compiled = compilePathRules(rules);
    assert.equal(compilePathRules(rules), compiled);
    assert.equal(compilePathRules(compiled), compiled);
    assert.notEqual(compilePathRules([{ path: 'nonce' }]), compiled);
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
    for (const list of [rules, compilePathRules(rules)]) {
      const e = entry('/GET /a#1');
      applyPathRules(e, list);
      assert.deepEqual(e.request.query, { page: '<P>' });
      assert.deepEqual(e.response.body, { nonce: '<MASKED>', items: [{ name: 'a' }], tags: ['<MASKED>', '<MASKED>'] });
    }
    const other = entry('/GET /b#1');
    applyPathRules(other, rules);
    assert.equal((other.response.body as { nonce: string }).nonce, 'n1');
  });
});
