// The terminal's table of a `bb shadow` run (cli/commands/shadow.ts
// routeLines): a line per route in name order, the busiest ROUTE_LINES only
// when there are more (the JSON report lists each), then all routes together.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { routeLines, ROUTE_LINES } from '../../../cli/commands/shadow.js';
import type { RouteCounts, ShadowReport } from '../../../scenario/index.js';

const counts = (requests: number): RouteCounts => ({ requests, mirrored: requests, equal: requests, regressions: 0, noise: 0, unclassified: 0, errors: 0, skipped: {} });

function report(n: number): ShadowReport {
  const routes: Record<string, RouteCounts> = {};
  // Route i has i + 1 requests: the busiest are the last ones.
  for (let i = 0; i < n; i++) routes[`GET /r${String(i).padStart(3, '0')}`] = counts(i + 1);
  const totals = counts(Object.values(routes).reduce((s, c) => s + c.requests, 0));
  return { format: 1, targets: { primary: 'http://a', candidate: 'http://b' }, startedDateTime: '', endedDateTime: '', totals, routes, latency: {}, findings: [], regressionRate: 0 };
}

describe('routeLines', () => {
  it('lists every route when there are few', () => {
    const lines = routeLines(report(3));
    assert.deepEqual(lines.map((l) => l.split(':')[0]!.trim()), ['GET /r000', 'GET /r001', 'GET /r002', 'all routes']);
  });

  it('lists the busiest ROUTE_LINES in name order, says how many more, then all routes', () => {
    const n = ROUTE_LINES + 7;
    const lines = routeLines(report(n));
    assert.equal(lines.length, ROUTE_LINES + 2);
    assert.deepEqual(lines.slice(0, ROUTE_LINES).map((l) => l.split(':')[0]!.trim()), Array.from({ length: ROUTE_LINES }, (_, k) => `GET /r${String(k + 7).padStart(3, '0')}`));
    assert.equal(lines[ROUTE_LINES], '  … and 7 more routes (--json FILE lists each)');
    assert.match(lines.at(-1)!, new RegExp(`^  all routes: ${(n * (n + 1)) / 2} requests`));
  });
});
