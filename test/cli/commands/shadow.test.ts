// bb shadow's terminal lines (cli/commands/shadow.ts findingLines): a finding's sample values elided around the
// change as bb diff's lines are. A changed 200 KB body was one 400,000-character line (a probe's 20 MiB one, 42 MB).
// What came from the traffic has its controls and bidi characters written as \u202E: a request's U+202E reversed
// the rest of bb's line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findingLines, routeLines } from '../../../cli/commands/shadow.js';
import type { LiveFinding, ShadowReport } from '../../../scenario/index.js';

describe('bb shadow: a finding line', () => {
  it('shows a long value a few dozen characters around the change', () => {
    const head = 'lorem ipsum '.repeat(20_000);
    const sample = { id: 7, request: 'GET /doc', primary: `${head}word${head}`, candidate: `${head}wore${head}`, path: 'response.body' };
    const finding: LiveFinding = { id: 'F1', class: 'unclassified', kind: 'changed', routes: ['GET /doc'], pattern: 'response.body', count: 1, samples: [sample] };
    const [line] = findingLines({ findings: [finding] } as unknown as ShadowReport);
    assert.ok(line!.length < 300, `${line!.length} characters`);
    assert.match(line!, /word.*→.*wore/);
  });
  it('shows short values as JSON, as before', () => {
    const finding: LiveFinding = { id: 'F2', class: 'regression', kind: 'changed', routes: ['GET /items'], pattern: 'response.body.total', count: 3, samples: [{ id: 3, request: 'GET /items', primary: 1, candidate: 2 }] };
    assert.deepEqual(findingLines({ findings: [finding] } as unknown as ShadowReport), ['  regression response.body.total changed in 3 exchanges (1 → 2), e.g. GET /items #3']);
  });
  it('writes a bidi or control character from the traffic as its escape, in the finding and the route lines', () => {
    const finding: LiveFinding = {
      id: 'F3', class: 'regression', kind: 'changed', routes: ['GET /x/\u202E'], pattern: 'response.body["\u202Ek"]', count: 1,
      samples: [{ id: 1, request: 'GET /x/%E2%80%AE?q=\u202Espoof', primary: 'a\u2066', candidate: 'b\u001b[2J' }],
    };
    assert.deepEqual(findingLines({ findings: [finding] } as unknown as ShadowReport), [
      '  regression response.body["\\u202Ek"] changed in 1 exchange ("a\\u2066" → "b\\u001b[2J"), e.g. GET /x/%E2%80%AE?q=\\u202Espoof #1',
    ]);
    const counts = { requests: 1, mirrored: 1, equal: 0, regressions: 1, noise: 0, unclassified: 0, errors: 0, skipped: {} };
    const lines = routeLines({ routes: { 'GET /x/\u202E': counts }, totals: counts, latency: {} } as unknown as ShadowReport);
    assert.equal(lines[0], '  GET /x/\\u202E: 1 request, 1 mirrored (0 equal, 1 regressions, 0 noise, 0 errors)');
  });
});
