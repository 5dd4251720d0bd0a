// A config rule that erases a whole value (`normalize.paths` without a
// pattern, `normalize.keys`, `normalize.headers`) says in the report how many
// rows it hid (issue 33 "Bad input"); a rule with a pattern masks only what
// it matches, so a value of another shape stays a real change. On both stores.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderHtml, renderJson, renderText, validateDiffConfig, type DiffOptions, type DiffResult } from '../../diff/index.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

// The bounded path's sides in this thread, as diffBounded has them; their trip
// through workers is checked in store/bounded.test.ts and normalize/keyed.test.ts.
const PATHS: Array<[string, DiffOptions]> = [
  ['in memory', {}],
  ['bounded', { boundedThreshold: 0, workers: false }],
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

    it(`a key rule and a header mask that replace whole values are reported with the rows they hid (${name})`, async () => {
      const spec = (token: (i: number) => string, trace: (i: number) => string): ExchangeSpec[] => [
        ...[1, 2, 3].map((i) => ({ url: `http://127.0.0.1:1/keys/${i}`, responseHeaders: [['x-trace', trace(i)]] as Array<[string, string]>, body: { data: { secret: token(i), n: i } } })),
        { url: 'http://127.0.0.1:1/keys/meta', requestBody: { secret: 'same' }, method: 'POST', body: { v: 1 } },
      ];
      const old = await write(spec((i) => `s-${i}`, (i) => `trace-${i}`));
      // Two secrets changed (one into a number-like text), one did not; one trace changed.
      const neu = await write(spec((i) => (i === 1 ? 's-1' : i === 2 ? 'other' : '42'), (i) => (i === 3 ? 'trace-x' : `trace-${i}`)));
      const config = validateDiffConfig({ normalize: { keys: [{ key: 'secret', replace: '<S>' }, { pattern: '^nothing$', replace: '<N>' }], headers: ['X-Trace'] } });
      const r = await diffCaptures(old, neu, { ...base, config });
      assert.equal(r.exitCode, 0, show(r));
      assert.deepEqual(r.hiddenByRules, [
        { rule: 'normalize.keys[0]', key: 'secret', rows: 2 },
        { rule: 'normalize.headers[0]', header: 'x-trace', rows: 1 },
      ]);
      // With a path rule too (the bounded store then takes its other way to the summaries): the same, and the path rule hid nothing.
      const withPaths = validateDiffConfig({ normalize: { keys: [{ key: 'secret', replace: '<S>' }], headers: ['x-trace'], paths: [{ path: 'response.body.v', replace: '<V>' }] } });
      assert.deepEqual((await diffCaptures(old, neu, { ...base, config: withPaths })).hiddenByRules, [
        { rule: 'normalize.keys[0]', key: 'secret', rows: 2 },
        { rule: 'normalize.headers[0]', header: 'x-trace', rows: 1 },
      ]);
      const text = renderText(r, { color: false });
      assert.match(text, /hidden by rule normalize\.keys\[0\] \(key secret\): 2 rows/);
      assert.match(text, /hidden by rule normalize\.headers\[0\] \(header x-trace\): 1 row\b/);
      assert.doesNotMatch(text, /normalize\.keys\[1\]/);
      const html = await renderHtml(r);
      assert.match(html, /hidden by rule normalize\.keys\[0\] \(key secret\): 2 rows/);
      assert.match(html, /hidden by rule normalize\.headers\[0\] \(header x-trace\): 1 row\b/);
      assert.deepEqual(JSON.parse(renderJson(r)).hiddenByRules, r.hiddenByRules);
      // Nothing they replaced differed: no line.
      const same = await diffCaptures(old, old, { ...base, config });
      assert.equal(same.hiddenByRules, undefined);
      // Without the rules the same changes are real: what they hid was a real difference.
      const bare = await diffCaptures(old, neu, base);
      assert.deepEqual(bare.differences.filter((d) => d.class === 'real').map((d) => `${d.entry} ${d.path}`).sort(), [
        '/GET /keys/2#1 response.body.data.secret',
        '/GET /keys/3#1 response.body.data.secret',
        '/GET /keys/3#1 response.headers.x-trace',
      ], show(bare));
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

  for (const [name, base] of PATHS) {
    it(`a field on one side only stays its own row under a rule that replaces it, and is hidden only by one that drops it (${name})`, async () => {
      const old = await write([{ url: 'http://127.0.0.1:1/one', body: { token: 'a', n: 1 } }]);
      const neu = await write([{ url: 'http://127.0.0.1:1/one', body: { n: 1 } }]);
      for (const normalize of [{ paths: [{ path: 'response.body.token', replace: '<T>' }] }, { keys: [{ key: 'token', replace: '<T>' }] }]) {
        const r = await diffCaptures(old, neu, { ...base, config: validateDiffConfig({ normalize }) });
        assert.deepEqual(r.differences.map((d) => `${d.class} ${d.kind} ${d.path}`), ['real removed response.body.token'], show(r));
        assert.equal(r.hiddenByRules, undefined);
      }
      const dropped = await diffCaptures(old, neu, { ...base, config: validateDiffConfig({ normalize: { paths: [{ path: 'response.body.token', ignore: true }] } }) });
      assert.equal(dropped.exitCode, 0, show(dropped));
      assert.deepEqual(dropped.hiddenByRules, [{ rule: 'normalize.paths[0]', path: 'response.body.token', rows: 1 }]);
    });
  }

  it('a path rule with both pattern and ignore, or a bad pattern, is a bad config', () => {
    assert.throws(() => validateDiffConfig({ normalize: { paths: [{ path: 'a', pattern: 'x', ignore: true }] } }), /normalize\.paths\[0\].*use one/);
    assert.throws(() => validateDiffConfig({ normalize: { paths: [{ path: 'a', pattern: '(' }] } }), /normalize\.paths\[0\]\.pattern.*bad regular expression/);
  });
});
