// `bb shadow --merge` (scenario/shadow/live.ts mergeReports): the reports of
// several shadows add up into one verdict. Counts add route by route (skipped
// reasons too), latency histograms add bucket by bucket, a finding seen by
// several shadows is one finding whose count is the sum and whose samples
// fill up to the cap from each in turn. And the live findings themselves:
// grouped as `bb diff` groups the same rows, with the same ids.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mergeReports, quantile, type LiveFinding, type RouteCounts, type ShadowReport } from '../../../scenario/index.js';
import { boundedSample, liveRows, rateOf, MAX_FIELDS, MAX_ROUTES, MAX_SIGNATURES, OTHER_FIELDS, OTHER_ROUTES, SAMPLE_VALUE_MAX, SAMPLES_PER_FINDING, ShadowLive, type Counted } from '../../../scenario/shadow/live.js';
import { buildFindings } from '../../../diff/findings.js';
import type { Difference, DifferenceKind, Finding } from '../../../diff/types.js';
import { mulberry32 } from '../../../core/index.js';

const counts = (c: Partial<RouteCounts>): RouteCounts => ({ requests: 0, mirrored: 0, equal: 0, regressions: 0, noise: 0, unclassified: 0, errors: 0, candidateErrors: 0, skipped: {}, ...c });

/** A finding of response.body.total with samples of the given shared ids. */
const total = (count: number, ids: number[], route = 'GET /items'): LiveFinding => ({
  id: 'Ftotal', class: 'regression', kind: 'changed', pattern: 'response.body.total', routes: [route], count,
  samples: ids.map((id) => ({ id, request: route, primary: 1, candidate: 2 })),
});

function report(routes: Record<string, RouteCounts>, latency: ShadowReport['latency'], findings: LiveFinding[], at: string): ShadowReport {
  const totals = counts({});
  for (const c of Object.values(routes)) {
    for (const k of ['requests', 'mirrored', 'equal', 'regressions', 'noise', 'unclassified', 'errors'] as const) totals[k] += c[k];
    for (const [why, n] of Object.entries(c.skipped)) totals.skipped[why] = (totals.skipped[why] ?? 0) + n;
  }
  return { format: 1, targets: { primary: 'http://a', candidate: 'http://b' }, startedDateTime: at, endedDateTime: at, totals, routes, latency, findings, regressionRate: 0 };
}

describe('mergeReports', () => {
  const a = report(
    { 'GET /items': counts({ requests: 4, mirrored: 3, equal: 1, regressions: 2, skipped: { unsafe: 1 } }) },
    { 'GET /items': { primary: { buckets: [0, 2, 1], count: 3 }, candidate: { buckets: [3], count: 3 } } },
    [total(2, [11, 12])],
    '2026-12-05T01:00:00.000Z',
  );
  const b = report(
    {
      'GET /items': counts({ requests: 6, mirrored: 4, regressions: 4, skipped: { 'queue full': 2 } }),
      'GET /me': counts({ requests: 1, mirrored: 1, equal: 1 }),
    },
    { 'GET /items': { primary: { buckets: [1, 0, 0, 5], count: 6 } } },
    [total(4, [21, 22, 23, 24], 'GET /items/{id}'), { ...total(1, [25]), id: 'Fserved', kind: 'removed', pattern: 'response.headers.x-served-by' }],
    '2026-12-05T00:30:00.000Z',
  );
  const m = mergeReports([a, b]);

  it('adds the counts route by route, skipped reasons included, and keeps mirrored + skipped = requests', () => {
    assert.deepEqual(m.routes['GET /items'], counts({ requests: 10, mirrored: 7, equal: 1, regressions: 6, skipped: { unsafe: 1, 'queue full': 2 } }));
    assert.deepEqual(m.routes['GET /me'], counts({ requests: 1, mirrored: 1, equal: 1 }));
    assert.equal(m.totals.requests, 11);
    assert.equal(m.totals.mirrored + Object.values(m.totals.skipped).reduce((x, y) => x + y, 0), m.totals.requests);
    assert.equal(m.regressionRate, 6 / 8);
    assert.equal(m.merged, 2);
    assert.deepEqual([m.startedDateTime, m.endedDateTime], ['2026-12-05T00:30:00.000Z', '2026-12-05T01:00:00.000Z']);
  });

  it('adds latency histograms bucket by bucket, per target', () => {
    assert.deepEqual(m.latency['GET /items']?.primary, { buckets: [1, 2, 1, 5], count: 9 });
    assert.deepEqual(m.latency['GET /items']?.candidate, { buckets: [3], count: 3 });
    assert.equal(quantile(m.latency['GET /items']!.primary!, 0.99), quantile({ buckets: [0, 0, 0, 5], count: 5 }, 0.99));
  });

  it('one finding per class and id: counts add, routes join, samples fill up to the cap from each report in turn', () => {
    const f = m.findings.find((x) => x.pattern === 'response.body.total')!;
    assert.equal(f.count, 6);
    assert.deepEqual(f.routes, ['GET /items', 'GET /items/{id}']);
    assert.equal(SAMPLES_PER_FINDING, 5);
    assert.deepEqual(f.samples.map((s) => s.id), [11, 12, 21, 22, 23]);
    assert.deepEqual(m.findings.map((x) => `${x.kind} ${x.pattern} ${x.count}`), ['changed response.body.total 6', 'removed response.headers.x-served-by 1']);
  });

  it('leaves the reports it merged as they were', () => {
    assert.deepEqual(a.findings[0]!.samples.map((s) => s.id), [11, 12]);
    assert.deepEqual(a.latency['GET /items']!.primary, { buckets: [0, 2, 1], count: 3 });
    assert.deepEqual(a.routes['GET /items']!.skipped, { unsafe: 1 });
  });

  it('keeps a consequence folded under its status change only where every report folded it there', () => {
    const body = (count: number, id: number): LiveFinding => ({ ...total(count, [id]), id: 'Ferror', kind: 'added', pattern: 'response.body.error' });
    const status = (count: number, id: number, consequences?: LiveFinding[]): LiveFinding => ({ ...total(count, [id]), id: 'Fstatus', pattern: 'response.status', ...(consequences ? { consequences } : {}) });
    const at = '2026-12-05T00:00:00.000Z';
    const folded = (n: number) => report({}, {}, [status(n, n, [body(n, n)])], at);
    const both = mergeReports([folded(1), folded(2)]);
    assert.deepEqual(both.findings.map((f) => `${f.pattern} ${f.count} [${(f.consequences ?? []).map((c) => `${c.pattern} ${c.count}`).join()}]`), ['response.status 3 [response.body.error 3]']);
    // The other shadow saw the error body on an answer whose status did not change: a change of its own.
    const mixed = mergeReports([folded(1), report({}, {}, [body(2, 2)], at)]);
    assert.deepEqual(mixed.findings.map((f) => `${f.pattern} ${f.count} [${(f.consequences ?? []).map((c) => c.pattern).join()}]`), ['response.body.error 3 []', 'response.status 1 []']);
  });
});

// A verdict given before a later request bound the exchange's values is compared again (scenario/shadow/compare.ts
// revise); what it counted is taken back first: its verdict, its share of each finding, its sample, its route
// where no other exchange of that finding came on it, and its cause (a finding folds under a status change
// again once the one exchange that had it without that change is taken back).
describe('rateOf: the share the gate reads', () => {
  it('counts what the candidate failed where the primary answered with the regressions; a report without the count, none', () => {
    assert.equal(rateOf(counts({ equal: 3, candidateErrors: 1, errors: 2 })), 1 / 4);
    assert.equal(rateOf(counts({ equal: 2, regressions: 1, candidateErrors: 1 })), 2 / 4);
    const old: RouteCounts = { requests: 3, mirrored: 3, equal: 3, regressions: 0, noise: 0, unclassified: 0, errors: 1, skipped: {} };
    assert.equal(rateOf(old), 0);
    assert.equal(rateOf(counts({ errors: 3 })), 0);
  });
});

describe('ShadowLive.forget', () => {
  const sample = (id: number, route: string) => ({ id, request: route });
  /** Counts one exchange as ShadowComparer.record does: its status 200 → 500 (or not) and an error body added. */
  const count = (live: ShadowLive, id: number, route: string, withStatus: boolean): Counted => {
    live.route(route).regressions++;
    const diffs = [...(withStatus ? [row(`e${id}`, route, 'changed', 'response.status', 200, 500)] : []), row(`e${id}`, route, 'added', 'response.body.error', undefined, 'boom')];
    return { route, verdict: 'regressions', id, findings: liveRows(diffs, () => 'regression').map((r) => live.find(r, route, sample(id, route))) };
  };
  const summary = (live: ShadowLive) =>
    live.report().findings.map((f) => `${f.pattern} ${f.count} ${f.routes.join('+')} ids ${f.samples.map((s) => s.id).join(',')} [${(f.consequences ?? []).map((c) => `${c.pattern} ${c.count}`).join()}]`);

  it('takes back one exchange: its verdict, count, sample, route and cause', () => {
    const live = new ShadowLive({});
    count(live, 1, 'GET /a', true);
    count(live, 2, 'GET /a', true);
    const late = count(live, 3, 'GET /b', false);
    assert.deepEqual(summary(live), ['response.body.error 3 GET /a+GET /b ids 1,2,3 []', 'response.status 2 GET /a ids 1,2 []']);
    live.forget(late);
    assert.deepEqual(summary(live), ['response.status 2 GET /a ids 1,2 [response.body.error 2]']);
    assert.equal(live.route('GET /b').regressions, 0);
    assert.equal(live.totals().regressions, 2);
  });

  it('a finding no exchange has any more is gone, and a sample taken back leaves room for the next', () => {
    const live = new ShadowLive({});
    const all = Array.from({ length: SAMPLES_PER_FINDING + 1 }, (_, i) => count(live, i + 1, 'GET /a', false));
    assert.deepEqual(live.report().findings[0]!.samples.map((s) => s.id), [1, 2, 3, 4, 5]);
    live.forget(all[1]!);
    const nine = count(live, 9, 'GET /a', false);
    assert.deepEqual(live.report().findings[0]!.samples.map((s) => s.id), [1, 3, 4, 5, 9]);
    for (const c of [all[0]!, ...all.slice(2)]) live.forget(c);
    assert.deepEqual(summary(live), ['response.body.error 1 GET /a ids 9 []']);
    live.forget(nine);
    assert.deepEqual(live.report().findings, []);
    assert.equal(live.report().regressionRate, 0);
  });
});

/** A difference row of exchange `entry`, as the diff gives it (class real). */
function row(entry: string, route: string, kind: DifferenceKind, pattern: string, old?: unknown, cur?: unknown): Difference {
  return { id: `${entry} ${pattern}`, kind, entry, route, request: route, path: pattern, pattern, class: 'real', ...(old !== undefined ? { old } : {}), ...(cur !== undefined ? { new: cur } : {}) };
}

// The live findings and bb diff's of the same rows (diff/findings.ts buildFindings): the same findings, ids,
// counts and consequences, over random exchanges: values shared by several exchanges or seen once, per route,
// fields that come or go, status changes and what follows from them.
describe('ShadowLive: findings grouped as bb diff groups them', () => {
  const listed = (fs: Array<Pick<LiveFinding, 'id' | 'count'> & { consequences?: Array<Pick<LiveFinding, 'id' | 'count'>> }>) =>
    fs.map((f) => `${f.id} ×${f.count} [${(f.consequences ?? []).map((c) => `${c.id} ×${c.count}`).sort().join(' ')}]`).sort();
  const offline = (fs: Finding[]) => listed(fs.map((f) => ({ id: f.id, count: f.entries, consequences: f.consequences?.map((c) => ({ id: c.id, count: c.entries })) })));

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}`, () => {
      const random = mulberry32(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      const live = new ShadowLive({});
      const all: Difference[] = [];
      const routes = ['GET /a', 'GET /b', 'POST /c'];
      for (let id = 1; id <= 40; id++) {
        const route = pick(routes);
        const entry = `${route}#${id}`;
        const diffs: Difference[] = [];
        const status = random() < 0.3 ? pick([500, 404, 503]) : undefined;
        if (status) diffs.push(row(entry, route, 'changed', 'response.status', 200, status));
        if (random() < 0.6) diffs.push(row(entry, route, 'changed', 'response.body.total', pick([1, 2, 3]), random() < 0.5 ? pick([4, 5]) : Math.floor(random() * 1e6)));
        if (random() < 0.4) diffs.push(row(entry, route, 'changed', 'response.body.name', 'ada', pick(['bob', 'eve', `x${id}`, 7])));
        if (random() < 0.3) diffs.push(row(entry, route, pick(['added', 'removed'] as const), 'response.headers.x-served-by', 'catalog', 'catalog'));
        if (status && random() < 0.7) diffs.push(row(entry, route, 'added', 'response.body.error', undefined, pick(['boom', `failed ${id}`])));
        if (random() < 0.15) diffs.push(row(entry, route, 'reordered', ''));
        // One exchange may hold the same field twice (two messages, one value each).
        if (random() < 0.2) diffs.push(row(entry, route, 'changed', 'response.body.total', 9, pick([10, 11])));
        if (!diffs.length) continue;
        all.push(...diffs);
        for (const r of liveRows(diffs, () => 'regression')) live.find(r, route, { id, request: route });
      }
      const built = buildFindings(all, []);
      assert.deepEqual(listed(live.report().findings), offline(built));
      // Each finding keeps a sample of each exchange up to the cap.
      const kept = live.report().findings.flatMap((f) => [f, ...(f.consequences ?? [])]).filter((f) => f.samples.length !== Math.min(f.count, SAMPLES_PER_FINDING));
      assert.deepEqual(kept.map((f) => `${f.pattern} ×${f.count} samples ${f.samples.map((s) => s.id).join(',')}`), []);
    });
  }
});

// A value seen once keeps its sample within a budget per route and part; seen again, it is a finding of its own,
// and its sample leaves that budget (rv-check: seven requests whose values each build chose, a noise finding of
// five exchanges kept four samples).
describe('ShadowLive: samples of values seen once', () => {
  const seen = (live: ShadowLive, id: number, old: number, cur: number) => {
    for (const r of liveRows([row(`e${id}`, 'GET /rv', 'changed', 'response.body.v', old, cur)], () => 'noise')) live.find(r, 'GET /rv', { id, request: 'GET /rv', primary: old, candidate: cur });
  };
  const listed = (f: LiveFinding) => `×${f.count} ${f.samples.map((s) => `${s.id}:${String(s.primary)}→${String(s.candidate)}`).join(' ')}`;

  it('a value seen again leaves its route\'s finding with the samples of the five left', () => {
    const live = new ShadowLive({});
    for (const [id, old, cur] of [[1, 1, 2], [2, 2, 1], [3, 0, 2], [4, 0, 1], [5, 2, 0], [6, 1, 0], [7, 2, 0]] as const) seen(live, id, old, cur);
    assert.deepEqual(live.report().findings.map(listed), ['×5 1:1→2 2:2→1 3:0→2 4:0→1 6:1→0', '×2 5:2→0 7:2→0']);
  });

  it('values seen again give their place back: later values seen once still keep samples', () => {
    const live = new ShadowLive({});
    let id = 0;
    // Ten values, each seen twice: ten findings of their own, none left seen once.
    for (let v = 10; v < 20; v++) for (let k = 0; k < 2; k++) seen(live, ++id, v, v + 100);
    for (let v = 30; v < 33; v++) seen(live, ++id, v, v + 100);
    assert.deepEqual(live.report().findings.filter((f) => f.count !== 2).map(listed), ['×3 21:30→130 22:31→131 23:32→132']);
  });
});

// A long run whose field varies on every exchange (a timestamp no rule covers, without a secondary): the live
// findings stay bounded: one finding per route, five samples, and past MAX_SIGNATURES values are counted as
// values seen once without being kept.
describe('ShadowLive: bounded over a long run', () => {
  it('values that vary on every exchange are one finding per route with five samples, counted past the signature cap', () => {
    const live = new ShadowLive({});
    const n = MAX_SIGNATURES + 50;
    for (let id = 1; id <= n; id++) {
      const route = id % 2 ? 'GET /a' : 'GET /b';
      for (const r of liveRows([row(`e${id}`, route, 'changed', 'response.body.at', id, id + 0.5)], () => 'unclassified')) live.find(r, route, { id, request: route });
    }
    const found = live.report().findings;
    assert.deepEqual(found.map((f) => `${f.routes.join()} ×${f.count} samples ${f.samples.length}`).sort(), [`GET /a ×${n / 2} samples 5`, `GET /b ×${n / 2} samples 5`]);
    assert.equal(live.overflowed, 50);
  });

  it('a field named anew in every answer is a finding each up to MAX_FIELDS, then the other fields of its kind per route', () => {
    const live = new ShadowLive({});
    const n = MAX_FIELDS + 300;
    for (let id = 1; id <= n; id++) {
      const route = id % 2 ? 'GET /a' : 'GET /b';
      // A header the candidate names anew each time (a name no rule folds).
      for (const r of liveRows([row(`e${id}`, route, 'added', `response.headers.x-trace-${id.toString(36)}z`, undefined, 'v')], () => 'regression')) live.find(r, route, { id, request: route });
    }
    const found = live.report().findings;
    assert.equal(found.length, MAX_FIELDS + 2);
    const other = found.filter((f) => f.pattern === OTHER_FIELDS);
    assert.deepEqual(other.map((f) => `${f.class} ${f.kind} ${f.routes.join()} ×${f.count} samples ${f.samples.length}`).sort(), [
      'regression added GET /a ×150 samples 5', 'regression added GET /b ×150 samples 5',
    ]);
    assert.equal(live.otherFields, 300);
    assert.equal(found.reduce((s, f) => s + f.count, 0), n);
  });
});

describe('ShadowLive routes', () => {
  it('counts the first MAX_ROUTES routes apart and later new ones together, their latency with them', () => {
    const live = new ShadowLive({ primary: 'http://a', candidate: 'http://b' });
    const extra = 500;
    // Paths no rule folds (slugs): a route each.
    for (let i = 0; i < MAX_ROUTES + extra; i++) {
      const route = `GET /blog/post-${String.fromCharCode(97 + (i % 26))}-${i.toString(36)}`;
      const c = live.route(route);
      c.requests++;
      c.mirrored++;
      c.equal++;
      live.time(route, 'primary', 5);
      if (i % 2) live.skip(route, 'sampled out');
    }
    // An early route still has its own row.
    live.route('GET /blog/post-a-0').requests++;
    const r = live.report();
    assert.equal(Object.keys(r.routes).length, MAX_ROUTES + 1);
    assert.equal(r.routes[OTHER_ROUTES]!.requests, extra);
    assert.equal(r.routes[OTHER_ROUTES]!.skipped['sampled out'], extra / 2);
    assert.equal(r.routes['GET /blog/post-a-0']!.requests, 2);
    assert.equal(r.latency[OTHER_ROUTES]!.primary!.count, extra);
    assert.equal(Object.keys(r.latency).length, MAX_ROUTES + 1);
    assert.equal(r.totals.requests, MAX_ROUTES + extra + 1);
  });
});

// A changed 200 KB text body compared whole: its sample values were kept, written to the report and printed as they
// were (a probe's 20 MiB body: 42 MB of report.json and of terminal output).
describe('a sample of long values', () => {
  const head = 'lorem ipsum '.repeat(20_000);
  const sample = { id: 7, request: 'GET /doc', primary: `${head}word${head}`, candidate: `${head}wore${head}`, path: 'response.body' };
  it('keeps both values elided around the change, marked so; a short one stays as it is', () => {
    const b = boundedSample(sample);
    assert.equal(b.elided, true);
    for (const v of [b.primary, b.candidate]) assert.ok(typeof v === 'string' && v.length <= SAMPLE_VALUE_MAX + 2, String(v).length.toString());
    assert.match(String(b.primary), /word/);
    assert.match(String(b.candidate), /wore/);
    const short = { id: 8, request: 'GET /a', primary: 1, candidate: 2 };
    assert.equal(boundedSample(short), short);
  });
});
