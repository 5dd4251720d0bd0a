// bb diff --timing through the real CLI: the Timing section on stdout, the
// exit code unchanged without a budget and 1 over it, JSON `timing`, known
// entries of kind slower, and bad settings refused with exit 2.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { runBb } from '../helpers/cli.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import type { Har } from '../../capture/har.js';

function run(waitOf: (path: string, k: number) => number): Har {
  const specs: ExchangeSpec[] = [];
  const waits: number[] = [];
  for (let k = 0; k < 12; k++) {
    for (const p of ['/slow', '/steady']) {
      specs.push({ url: `http://127.0.0.1:3001${p}`, body: { p } });
      waits.push(waitOf(p, k));
    }
  }
  const har = capture(specs);
  har.log.entries.forEach((e, i) => {
    e.timings.wait = waits[i]!;
    e.time = waits[i]! + 2;
  });
  return har;
}

describe('bb diff --timing on the command line', () => {
  const t = tempDir();
  let old: string;
  let neu: string;
  before(async () => {
    old = await t.write('old.har', run((_p, k) => 10 + (k % 3) * 0.1));
    neu = await t.write('new.har', run((p, k) => (p === '/slow' ? 50 : 10) + (k % 3) * 0.1));
  });

  it('prints the Timing section and keeps exit 0 without a budget', async () => {
    const r = await runBb(['diff', old, neu, '--timing']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^MATCH/);
    assert.match(r.stdout, /Timing \(time to first byte, median old → new; threshold ×1\.2, floor 1 ms\)/);
    assert.match(r.stdout, /\/GET \/slow\s+slower\s+×4\.96 \[\d\.\d\d, \d\.\d\d\]  \+40\.0 ms \(10\.1 → 50\.1 ms\)  p=\S+  n=12\/12/);
    assert.match(r.stdout, /\/GET \/steady\s+~/);
  });

  it('fails with a budget, writes JSON timing, and a known entry of kind slower passes it', async () => {
    const json = t.path('report.json');
    const r = await runBb(['diff', old, neu, '--timing-budget', '2', '--json', json]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^DIFF: 1 real finding/);
    const report = JSON.parse(await readFile(json, 'utf8')) as { timing: { routes: Array<Record<string, unknown>>; geomean: number; budget: number }; findings: Array<{ id: string; kind: string }> };
    assert.equal(report.timing.budget, 2);
    const slow = report.timing.routes[0]!;
    assert.deepEqual(Object.keys(slow).slice(0, 8), ['route', 'old', 'new', 'ratio', 'ci', 'p', 'delta', 'verdict']);
    assert.equal(slow.strip, undefined, 'the strip chart points stay out of --json');
    const finding = report.findings.find((f) => f.kind === 'slower')!;
    const config = t.path('bb.config.json');
    const added = await runBb(['known', 'add', finding.id, '--from', json, '--reason', 'slower by design', '--config', config]);
    assert.equal(added.code, 0, added.stderr);
    const known = await runBb(['diff', old, neu, '--timing-budget', '2', '--config', config]);
    assert.equal(known.code, 0, known.stdout + known.stderr);
    assert.match(known.stdout, /^MATCH with 1 known/);
    // Without a budget nothing is judged for time, so the slower entry is not stale; with one and no slow route, it is.
    const json2 = t.path('plain.json');
    const plain = await runBb(['diff', old, neu, '--config', config, '--json', json2]);
    assert.equal(plain.code, 0, plain.stdout + plain.stderr);
    assert.deepEqual((JSON.parse(await readFile(json2, 'utf8')) as { staleKnown: unknown[] }).staleKnown, []);
    const json3 = t.path('same.json');
    const same = await runBb(['diff', old, old, '--timing-budget', '2', '--config', config, '--json', json3]);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    assert.equal((JSON.parse(await readFile(json3, 'utf8')) as { staleKnown: Array<{ kind?: string }> }).staleKnown[0]?.kind, 'slower');
  });

  it('refuses a threshold under 1, a budget of 0 and a floor that is not a number of 0 or more with exit 2 and one line', async () => {
    const a = await runBb(['diff', old, neu, '--timing-threshold', '0.5']);
    assert.equal(a.code, 2);
    assert.match(a.stderr, /--timing-threshold needs a ratio of 1 or more/);
    const b = await runBb(['diff', old, neu, '--timing-budget', '0']);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /--timing-budget needs a ratio above 0/);
    // `1ms` is not a number (yargs would make it NaN, and `delta > NaN` would judge every route ~ in silence).
    for (const floor of ['1ms', '-1']) {
      const c = await runBb(['diff', old, neu, '--timing-floor', floor]);
      assert.equal(c.code, 2, `--timing-floor ${floor}: ${c.stdout}${c.stderr}`);
      assert.match(c.stderr, new RegExp(`--timing-floor needs a number of 0 or more, got '${floor}'`));
      assert.equal(c.stderr.trim().split('\n').length, 1, c.stderr);
    }
  });
});
