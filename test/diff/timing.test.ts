// bb diff --timing on hand-made captures whose times are set per entry:
// routes (query left out, route keys kept), exchanges left out, n too small,
// noisy routes, the budget as a real finding ratified by `known`, the same
// report on both paths and run after run, and the reports that show it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderHtml, renderJson, renderJunit, renderText, validateDiffConfig, type DiffOptions, type DiffResult } from '../../diff/index.js';
import type { TimingRouteReport } from '../../diff/timing.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { mulberry32 } from '../../core/index.js';
import type { Har } from '../../capture/har.js';

const PATHS: Array<[string, DiffOptions]> = [
  ['in memory', {}],
  ['bounded', { boundedThreshold: 0, workers: false }],
];

/** A capture whose entry i takes waits[i] ms to first byte (and 2 ms more in total); `extra` edits entry i's _bb. */
function timed(specs: ExchangeSpec[], waits: number[], extra: (i: number) => Record<string, unknown> = () => ({})): Har {
  const har = capture(specs);
  har.log.entries.forEach((e, i) => {
    e.timings = { send: 1, wait: waits[i]!, receive: 1 };
    e.time = waits[i]! + 2;
    Object.assign(e._bb!, extra(i));
  });
  return har;
}

/** n GETs of each path, with waits drawn by `wait(path, k)`. */
function runOf(paths: string[], n: number, wait: (path: string, k: number) => number): { specs: ExchangeSpec[]; waits: number[] } {
  const specs: ExchangeSpec[] = [];
  const waits: number[] = [];
  for (let k = 0; k < n; k++) {
    for (const p of paths) {
      specs.push({ url: `http://127.0.0.1:3001${p}?k=${k}`, body: { ok: true } });
      waits.push(wait(p, k));
    }
  }
  return { specs, waits };
}

const byRoute = (r: DiffResult) => new Map((r.timing?.routes ?? []).map((x) => [x.route, x] as [string, TimingRouteReport]));

describe('bb diff --timing', () => {
  const files = async (docs: Record<string, Har>) => {
    const dir = tempDir();
    const out: Record<string, string> = {};
    for (const [name, har] of Object.entries(docs)) out[name] = await dir.write(`${name}.har`, har);
    return out;
  };
  const random = mulberry32(19);
  const jitter = () => 0.9 + 0.2 * random();
  const old = runOf(['/a', '/slow', '/fast'], 20, (p) => (p === '/fast' ? 0.3 : 10) * jitter());
  const neu = runOf(['/a', '/slow', '/fast'], 20, (p) => (p === '/slow' ? 30 : p === '/fast' ? 0.5 : 10) * jitter());

  for (const [name, base] of PATHS) {
    it(`finds the slower route, leaves the others ~, the same on every run (${name})`, async () => {
      const f = await files({ old: timed(old.specs, old.waits), new: timed(neu.specs, neu.waits) });
      const r = await diffCaptures(f.old!, f.new!, { ...base, timing: {} });
      const routes = byRoute(r);
      // The query is not part of the route: 20 samples each.
      assert.deepEqual([...routes.keys()], ['/GET /slow', '/GET /fast', '/GET /a'], renderText(r, { color: false }));
      const slow = routes.get('/GET /slow')!;
      assert.equal(slow.verdict, 'slower');
      assert.ok(slow.ratio! > 2.7 && slow.ratio! < 3.3, `ratio ${slow.ratio}`);
      assert.ok(slow.ci![0] > 2.5 && slow.ci![1] < 3.5, `interval ${slow.ci}`);
      assert.equal(slow.old.n, 20);
      assert.ok(slow.delta! > 15, `delta ${slow.delta}`);
      // /fast is 1.7× slower but by 0.2 ms: under the floor, so ~.
      assert.equal(routes.get('/GET /fast')!.verdict, '~');
      assert.ok(routes.get('/GET /fast')!.ratio! > 1.4);
      assert.equal(routes.get('/GET /a')!.verdict, '~');
      // Without a budget timing never fails.
      assert.equal(r.exitCode, 0);
      const again = await diffCaptures(f.old!, f.new!, { ...base, timing: {} });
      assert.deepEqual(again.timing, r.timing, 'the same captures give the same report');
      const text = renderText(r, { color: false });
      assert.match(text, /\/GET \/slow\s+slower\s+×\d\.\d\d \[\d\.\d\d, \d\.\d\d\]  \+\d+\.\d ms \(\d+\.\d+ → \d+\.\d ms\)  p=\S+  n=20\/20/);
    });
  }

  it('gives the same timing report on the bounded path as in memory (workers too)', async () => {
    const f = await files({ old: timed(old.specs, old.waits), new: timed(neu.specs, neu.waits), old2: timed(old.specs, old.waits.map((w) => w * jitter())) });
    const opts: DiffOptions = { timing: { budget: 1.5 }, noisePath: f.old2! };
    const mem = await diffCaptures(f.old!, f.new!, opts);
    const bounded = await diffCaptures(f.old!, f.new!, { ...opts, boundedThreshold: 0 });
    assert.deepEqual(bounded.timing, mem.timing);
    assert.deepEqual(bounded.findings, mem.findings);
  });

  it('says n too small under 5 samples per side', async () => {
    const o = runOf(['/few'], 4, () => 10);
    const n = runOf(['/few'], 4, () => 50);
    const f = await files({ old: timed(o.specs, o.waits), new: timed(n.specs, n.waits) });
    const r = await diffCaptures(f.old!, f.new!, { timing: { budget: 1.5 } });
    const few = byRoute(r).get('/GET /few')!;
    assert.equal(few.verdict, 'n too small');
    assert.equal(few.overBudget, undefined);
    assert.equal(r.exitCode, 0);
  });

  it('a budget is not failed by an interval alone: the change must be significant too', async () => {
    // Two bimodal runs (found by a seeded search): the bootstrap interval of the ratio of medians clears 1.5 and the
    // median grew by 3 ms, but the ranks overlap (Mann–Whitney p = 0.09): what old vs old gave on a loaded machine.
    const a = [0.396, 0.309, 0.312, 0.346, 3.783, 0.333];
    const b = [0.344, 3.359, 3.915, 3.32, 3.385, 3.633];
    const old = runOf(['/flaky'], 6, (_p, k) => a[k]!);
    const neu = runOf(['/flaky'], 6, (_p, k) => b[k]!);
    const f = await files({ old: timed(old.specs, old.waits), new: timed(neu.specs, neu.waits) });
    const r = await diffCaptures(f.old!, f.new!, { timing: { budget: 1.5 } });
    const route = byRoute(r).get('/GET /flaky')!;
    assert.ok(route.ci![0] > 1.5, `the interval clears the budget: ${JSON.stringify(route.ci)}`);
    assert.ok(route.delta! > 1, 'past the floor');
    assert.ok(route.p! >= 0.05, `not significant: p = ${route.p}`);
    assert.equal(route.verdict, '~');
    assert.equal(route.overBudget, undefined);
    assert.equal(r.exitCode, 0);
  });

  it('leaves out bb\'s 502s, aborted and truncated exchanges, and counts them', async () => {
    const o = runOf(['/x'], 8, () => 10);
    const bad = (i: number) => (i === 0 ? { error: { code: 'ECONNREFUSED', message: 'refused', phase: 'connect' } } : i === 1 ? { aborted: 'client' } : i === 2 ? { truncated: { response: 10 } } : {});
    const f = await files({ old: timed(o.specs, o.waits), new: timed(o.specs, o.waits.map((w, i) => (i < 3 ? 1000 : w)), bad) });
    const r = await diffCaptures(f.old!, f.new!, { timing: { budget: 1.1 } });
    const x = byRoute(r).get('/GET /x')!;
    assert.equal(x.new.n, 5);
    assert.equal(x.new.skipped, 3);
    assert.equal(x.verdict, '~');
    assert.deepEqual(r.timing!.skipped.new, { error: 1, aborted: 1, truncated: 1, untimed: 0 });
    assert.match(renderText(r, { color: false }), /left out: new 1 error, 1 aborted, 1 truncated/);
  });

  it('keeps pairing route keys in the route', async () => {
    const gql = (op: string): ExchangeSpec => ({ method: 'POST', url: 'http://127.0.0.1:1/graphql', requestBody: { operationName: op, query: `query ${op} { x }` }, body: { data: 1 } });
    const specs = Array.from({ length: 10 }, (_, i) => gql(i % 2 ? 'Slow' : 'Fast'));
    const f = await files({ old: timed(specs, specs.map(() => 10)), new: timed(specs, specs.map((_, i) => (i % 2 ? 40 : 10))) });
    const config = validateDiffConfig({ pairing: { keys: [{ route: 'POST /graphql', by: 'graphql' }] } });
    const r = await diffCaptures(f.old!, f.new!, { config, timing: {} });
    const routes = byRoute(r);
    assert.equal(routes.get('/POST /graphql[Slow]')?.verdict, 'slower');
    assert.equal(routes.get('/POST /graphql[Fast]')?.verdict, '~');
  });

  it('marks routes noisy when two old runs differ past the threshold, and they never fail', async () => {
    const o = runOf(['/wobbly', '/steady'], 10, (p, k) => (p === '/wobbly' ? 20 : 10) + k * 0.01);
    const o2 = runOf(['/wobbly', '/steady'], 10, (p, k) => (p === '/wobbly' ? 40 : 10) + k * 0.01);
    const n = runOf(['/wobbly', '/steady'], 10, (p, k) => (p === '/wobbly' ? 60 : 10) + k * 0.01);
    const f = await files({ old: timed(o.specs, o.waits), old2: timed(o2.specs, o2.waits), new: timed(n.specs, n.waits) });
    const r = await diffCaptures(f.old!, f.new!, { timing: { budget: 1.5 }, noisePath: f.old2! });
    const routes = byRoute(r);
    assert.equal(routes.get('/GET /wobbly')!.verdict, 'noisy');
    assert.ok(Math.abs(routes.get('/GET /wobbly')!.noise!.ratio! - 2) < 0.01);
    assert.equal(routes.get('/GET /steady')!.verdict, '~');
    assert.equal(r.exitCode, 0, renderText(r, { color: false }));
    assert.match(renderText(r, { color: false }), /noisy: old\/old2 past ×1\.2, never fails/);
  });

  for (const [name, base] of PATHS) {
    it(`a route over --timing-budget is a real finding of kind slower, and known ratifies it (${name})`, async () => {
      const f = await files({ old: timed(old.specs, old.waits), new: timed(neu.specs, neu.waits) });
      const r = await diffCaptures(f.old!, f.new!, { ...base, timing: { budget: 1.5 } });
      assert.equal(r.exitCode, 1);
      const slow = r.findings.filter((x) => x.kind === 'slower');
      assert.equal(slow.length, 1, renderText(r, { color: false }));
      assert.equal(slow[0]!.class, 'real');
      assert.deepEqual(slow[0]!.routes, ['GET /slow']);
      assert.equal(slow[0]!.pattern, 'timing.ttfb');
      assert.equal(byRoute(r).get('/GET /slow')!.overBudget, true);
      const text = renderText(r, { color: false });
      assert.match(text, /^DIFF: 1 real finding/);
      assert.match(text, /timing\.ttfb slower median \d+\.\d+ ms → \d+\.\d ms \(×\d\.\d\d\) in GET \/slow$/m);
      const json = JSON.parse(renderJson(r)) as { timing: { routes: Array<{ route: string; old: { n: number; p50: number }; ratio: number; ci: number[]; p: number; verdict: string }>; geomean: number } };
      const j = json.timing.routes.find((x) => x.route === '/GET /slow')!;
      assert.equal(j.verdict, 'slower');
      assert.equal(j.old.n, 20);
      assert.equal(j.ci.length, 2);
      assert.ok(json.timing.geomean > 1);
      const junit = renderJunit(r);
      assert.match(junit, /type="bb\.diff\.slower"/);
      const html = await renderHtml(r);
      assert.match(html, /<section id="timing">/);
      assert.match(html, /<svg[^>]*class="strip"/);

      const config = validateDiffConfig({ known: [{ where: '*/GET /slow#*', path: 'timing.ttfb', kind: 'slower', reason: 'the new build hashes passwords with more rounds' }] });
      const k = await diffCaptures(f.old!, f.new!, { ...base, config, timing: { budget: 1.5 } });
      assert.equal(k.exitCode, 0, renderText(k, { color: false }));
      assert.equal(k.findings.find((x) => x.kind === 'slower')!.class, 'known');
      assert.match(renderText(k, { color: false }), /^MATCH with 1 known/);
    });
  }

  it('escapes route names in the HTML report', async () => {
    const o = runOf(['/x'], 6, () => 10);
    for (const s of o.specs) s.page = '<img src=x onerror=alert(1)>';
    const f = await files({ old: timed(o.specs, o.waits), new: timed(o.specs, o.waits) });
    const html = await renderHtml(await diffCaptures(f.old!, f.new!, { timing: {} }));
    const section = html.slice(html.indexOf('<section id="timing">'));
    assert.match(section, /&lt;img src=x onerror=alert\(1\)&gt;\/GET \/x/);
    assert.doesNotMatch(section, /<img/);
  });
});

describe('bb diff --timing --timing-metric total', () => {
  it('judges on total time when asked, and reports both times either way', async () => {
    const dir = tempDir();
    const o = runOf(['/body'], 10, (_p, k) => 10 + k * 0.01);
    const mk = (extra: number) => {
      const har = timed(o.specs, o.waits);
      // Same time to first byte, a body that takes `extra` ms more to arrive.
      for (const e of har.log.entries) {
        e.timings.receive = 1 + extra;
        e.time = e.timings.send + e.timings.wait + e.timings.receive;
      }
      return har;
    };
    const a = await dir.write('a.har', mk(0));
    const b = await dir.write('b.har', mk(40));
    const ttfb = byRoute(await diffCaptures(a, b, { timing: {} })).get('/GET /body')!;
    assert.equal(ttfb.verdict, '~');
    assert.ok(ttfb.new.total.p50! > 50 && ttfb.new.ttfb.p50! < 11, JSON.stringify(ttfb.new));
    const total = byRoute(await diffCaptures(a, b, { timing: { metric: 'total' } })).get('/GET /body')!;
    assert.equal(total.verdict, 'slower');
    assert.equal(total.old.p50, total.old.total.p50);
  });
});
