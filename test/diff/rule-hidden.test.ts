// A config rule that erases a whole field (`normalize.paths` without a
// pattern) says in the report how many rows it hid (issue 33 "Bad input");
// a rule with a pattern masks only what it matches, so a value of another
// shape stays a real change. On both stores.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderHtml, renderJson, renderText, validateDiffConfig, type DiffOptions, type DiffResult } from '../../diff/index.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

const PATHS: Array<[string, DiffOptions]> = [
  ['in memory', {}],
  ['bounded', { boundedThreshold: 0 }],
];

const show = (r: DiffResult) => renderText(r, { color: false, rows: true });

describe('rows hidden by rules (issue 33 item 5)', () => {
  const t = tempDir();
  let n = 0;
  const write = async (specs: ExchangeSpec[]) => t.write(`c${n++}.har`, capture(specs));
  const run = (token: (i: number) => string, plan = 'free'): ExchangeSpec[] => [
    ...[1, 2, 3].map((i) => ({ url: `http://127.0.0.1:1/things/${i}`, body: { token: token(i), plan } })),
    { url: 'http://127.0.0.1:1/meta', body: { v: 1 } },
  ];

  for (const [name, base] of PATHS) {
    it(`a rule that erases a field is reported with the rows it hid (${name})`, async () => {
      const old = await write(run((i) => `tok-${i}`));
      // Two tokens changed (one of them into a number), one did not; the plan changed everywhere.
      const neu = await write(run((i) => (i === 1 ? `tok-${i}` : i === 2 ? 'other' : '42'), 'paid'));
      const config = validateDiffConfig({ normalize: { paths: [{ path: 'response.body.token', replace: '<T>' }, { where: '*/GET /things/*', path: 'response.body.plan', ignore: true }, { path: 'response.body.v', replace: '<V>' }] } });
      const r = await diffCaptures(old, neu, { ...base, config });
      assert.equal(r.exitCode, 0, show(r));
      assert.deepEqual(r.hiddenByRules, [
        { rule: 'normalize.paths[0]', path: 'response.body.token', rows: 2 },
        { rule: 'normalize.paths[1]', where: '*/GET /things/*', path: 'response.body.plan', rows: 3 },
      ]);
      const text = renderText(r, { color: false });
      assert.match(text, /hidden by rule normalize\.paths\[0\] \(response\.body\.token\): 2 rows/);
      assert.match(text, /hidden by rule normalize\.paths\[1\] \(\*\/GET \/things\/\* response\.body\.plan\): 3 rows/);
      assert.doesNotMatch(text, /normalize\.paths\[2\]/);
      assert.match(await renderHtml(r), /hidden by rule normalize\.paths\[0\]/);
      assert.deepEqual(JSON.parse(renderJson(r)).hiddenByRules, r.hiddenByRules);
      // Nothing erased differed: no line.
      const same = await diffCaptures(old, old, { ...base, config });
      assert.equal(same.hiddenByRules, undefined);
      assert.doesNotMatch(renderText(same, { color: false }), /hidden by rule/);
    });

    it(`a rule with a pattern masks what matches and leaves another shape real (${name})`, async () => {
      const old = await write(run((i) => `tok-${i}a`));
      const neu = await write(run((i) => (i === 3 ? 'no token' : `tok-${i}b`)));
      const config = validateDiffConfig({ normalize: { paths: [{ path: 'response.body.token', pattern: '^tok-\\d[a-z]$', replace: '<TOK>' }] } });
      const r = await diffCaptures(old, neu, { ...base, config });
      assert.deepEqual(r.differences.map((d) => `${d.class} ${d.entry} ${d.path} ${JSON.stringify(d.old)} ${JSON.stringify(d.new)}`), ['real /GET /things/3#1 response.body.token "<TOK>" "no token"'], show(r));
      assert.equal(r.hiddenByRules, undefined);
    });
  }

  it('a path rule with both pattern and ignore, or a bad pattern, is a bad config', () => {
    assert.throws(() => validateDiffConfig({ normalize: { paths: [{ path: 'a', pattern: 'x', ignore: true }] } }), /normalize\.paths\[0\].*use one/);
    assert.throws(() => validateDiffConfig({ normalize: { paths: [{ path: 'a', pattern: '(' }] } }), /normalize\.paths\[0\]\.pattern.*bad regular expression/);
  });
});
