import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { runBb } from '../helpers/cli.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomInt, randomUUID } from 'node:crypto';
import { diffCaptures, renderHtml, renderText, validateDiffConfig, type DiffResult } from '../../diff/index.js';
import { addKnownToConfigText } from '../../diff/triage-rules.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';

const show = (r: DiffResult) => renderText(r, { color: false });

// The real CLI, run to completion (NO_COLOR set: output is compared as text).
const bb = runBb;

// The old service leaks a stack in its 40401 envelope; the new one dropped it.
const envelope = (withStack: boolean, msg = 'unknown session') => ({
  status: 404,
  body: { code: 40401, msg, ...(withStack ? { stack: 'Error: at /srv/app/resolver.ts:12' } : {}) },
});
const run = (opts: { stack: boolean; msg?: string; items?: number }): ExchangeSpec[] => [
  { url: 'http://127.0.0.1:1/v1/meta', body: { v: 1 }, page: 'meta' },
  { method: 'POST', url: 'http://127.0.0.1:1/v1/sessions/session_x/prompts', ...envelope(opts.stack, opts.msg), page: 'errors' },
  { url: 'http://127.0.0.1:1/v1/items', body: { items: Array.from({ length: opts.items ?? 2 }, (_, i) => ({ i })) }, page: 'meta' },
];
const stackKnown = { where: '*/POST /v1/sessions/*/prompts#*', path: 'response.body.stack', reason: 'M5c drops the stack field that leaked server paths', since: 'M5c' };

describe('known differences', () => {
  const t = tempDir();
  let oldPath: string;
  before(async () => {
    oldPath = await t.write('old.har', capture(run({ stack: true })));
  });

  it('a known entry hides exactly its difference and no other', async () => {
    const newPath = await t.write('new-two.har', capture(run({ stack: false, msg: 'no such session' })));
    const r = await diffCaptures(oldPath, newPath, { config: validateDiffConfig({ known: [stackKnown] }) });
    assert.equal(r.verdict, 'diff', show(r));
    assert.deepEqual(r.counts, { real: 1, known: 1, noise: 0, pairs: 3, findings: { real: 1, known: 1, noise: 0 } });
    assert.deepEqual(r.differences.map((d) => [d.class, d.path]), [['real', 'response.body.msg'], ['known', 'response.body.stack']]);
    assert.equal(r.differences[1]!.reason, stackKnown.reason);
    assert.deepEqual(r.staleKnown, []);
  });

  it('only the known difference left: MATCH with 1 known, exit 0, KNOWN-DIFF printed', async () => {
    const newPath = await t.write('new.har', capture(run({ stack: false })));
    const r = await diffCaptures(oldPath, newPath, { config: validateDiffConfig({ known: [stackKnown] }) });
    assert.equal(r.exitCode, 0);
    const text = show(r);
    assert.match(text, /^MATCH with 1 known/);
    assert.match(text, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.body\.stack removed .* in 1 of 1 POST \/v1\/sessions\/session_x\/prompts\n/);
    assert.match(text, /reason: M5c drops the stack field/);
  });

  it('a kind restricts the match', async () => {
    const newPath = await t.write('new-k.har', capture(run({ stack: false })));
    const r = await diffCaptures(oldPath, newPath, { config: validateDiffConfig({ known: [{ ...stackKnown, kind: 'changed' }] }) });
    assert.equal(r.counts.real, 1);
    assert.equal(r.staleKnown.length, 1);
  });

  it('a stale entry is reported, and fails the run with --strict-known', async () => {
    const same = await t.write('same.har', capture(run({ stack: true })));
    const config = validateDiffConfig({ known: [stackKnown] });
    const r = await diffCaptures(oldPath, same, { config });
    assert.equal(r.verdict, 'match');
    assert.equal(r.staleKnown.length, 1);
    assert.match(show(r), /Stale known entries[\s\S]*known\[0\] where "\*\/POST \/v1\/sessions\/\*\/prompts#\*"/);
    const strict = await diffCaptures(oldPath, same, { config, strictKnown: true });
    assert.equal(strict.exitCode, 1);
    assert.match(show(strict), /^DIFF: 1 stale known/);
  });

  it('in a self-check (both captures of one build) an unmet known entry is expected, not stale, and never fails the run', async () => {
    const same = await t.write('same-build.har', capture(run({ stack: true })));
    const r = await diffCaptures(oldPath, same, { config: validateDiffConfig({ known: [stackKnown] }), sameBuild: true, strictKnown: true });
    assert.equal(r.exitCode, 0, show(r));
    assert.deepEqual(r.staleKnown, []);
    assert.deepEqual(r.sameBuild, { knownUnmet: 1 });
    const text = show(r);
    assert.match(text, /^MATCH {2}\(3 pairs;/);
    assert.match(text, /\n1 known entry matched nothing, as expected: both captures are of one build, so none of the ratified changes is in them\.\n/);
    assert.doesNotMatch(text, /[Ss]tale/);
    const html = await renderHtml(r);
    assert.match(html, /<p id="same-build">1 known entry matched nothing, as expected: both captures are of one build/);
    assert.doesNotMatch(html, /Stale known/);
  });

  it('a reasonless entry is refused (exit 2)', async () => {
    assert.throws(() => validateDiffConfig({ known: [{ where: '*', path: 'x' }] }), (err: Error) => isBbError(err) && exitStatusFor(err) === 2 && /known\[0\]: needs a "reason"/.test(err.message));
    const cfg = await t.write('reasonless.json', { known: [{ where: '*', path: 'response.body.stack', reason: '  ' }] });
    const r = await bb(['diff', oldPath, oldPath, '--config', cfg]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /known\[0\]: needs a "reason"/);
  });

  it('bb known add round trip: the run after it passes', async () => {
    const newPath = await t.write('new-rt.har', capture(run({ stack: false })));
    const report = join(t.dir, 'report.json');
    const cfgPath = join(t.dir, 'bb.config.json');
    await t.write('bb.config.json', '{\n    "normalize": { "keep": ["turn"] },\n    "scenario": "kept as is"\n}\n');
    const first = await bb(['diff', oldPath, newPath, '--json', report, '--config', cfgPath]);
    assert.equal(first.code, 1, first.stderr);
    const doc = JSON.parse(await readFile(report, 'utf8'));
    const id = doc.differences[0].id;
    const add = await bb(['known', 'add', id, '--from', report, '--reason', 'stack dropped on purpose', '--since', 'M5c', '--config', cfgPath]);
    assert.equal(add.code, 0, add.stderr);
    const written = await readFile(cfgPath, 'utf8');
    assert.match(written, /^\{\n {4}"normalize"/, 'keeps the file’s indentation');
    const cfg = JSON.parse(written);
    assert.equal(cfg.scenario, 'kept as is');
    assert.deepEqual(cfg.known, [{ where: 'errors/POST /v1/sessions/session_x/prompts#1', path: 'response.body.stack', kind: 'removed', reason: 'stack dropped on purpose', since: 'M5c' }]);
    const again = await bb(['diff', oldPath, newPath, '--config', cfgPath]);
    assert.equal(again.code, 0, again.stdout);
    assert.match(again.stdout, /^MATCH with 1 known/);
    const twice = await bb(['known', 'add', id, '--from', report, '--reason', 'again', '--config', cfgPath]);
    assert.equal(twice.code, 0);
    assert.match(twice.stdout, /already has a known entry/);
    const unknownId = await bb(['known', 'add', 'ffffffffff', '--from', report, '--reason', 'x', '--config', cfgPath]);
    assert.equal(unknownId.code, 2);
    assert.match(unknownId.stderr, /no finding or difference ffffffffff in/);
  });

  it('writes a new config when there is none', () => {
    const text = addKnownToConfigText(undefined, { where: 'a', path: 'b', reason: 'r' })!;
    assert.deepEqual(JSON.parse(text), { known: [{ where: 'a', path: 'b', reason: 'r' }] });
  });
});

describe('noise from two runs of one build', () => {
  const t = tempDir();

  // A server that puts a random nonce in /a (every run) and a fixed one in /b. The nonce is 8 hex digits with a
  // letter in the middle: two runs' all-decimal ones would say the field is a number (docs/diff.md, `bb noise`'s
  // value shapes), and a third run's hex one would then not be that noise (1 in 1,500 runs failed so).
  const serverRun = (bNonce = 'fixed', extraPing = false): ExchangeSpec[] => [
    { url: 'http://127.0.0.1:1/a', body: { nonce: `${randomUUID().slice(0, 4)}${'abcdef'[randomInt(6)]}${randomUUID().slice(0, 3)}`, v: 1 } },
    { url: 'http://127.0.0.1:1/b', body: { nonce: bNonce, v: 1 } },
    ...(extraPing ? [{ url: 'http://127.0.0.1:1/ping', body: 'pong' }] : []),
  ];

  it('hides the random field, and only that field in only that entry', async () => {
    const oldPath = await t.write('o1.har', capture(serverRun()));
    const old2 = await t.write('o2.har', capture(serverRun()));
    const newPath = await t.write('n.har', capture(serverRun('changed')));
    const plain = await diffCaptures(oldPath, newPath);
    assert.equal(plain.counts.real, 2, show(plain));
    const r = await diffCaptures(oldPath, newPath, { noisePath: old2 });
    assert.deepEqual(r.differences.map((d) => [d.class, d.entry, d.path]), [['noise', '/GET /a#1', 'response.body.nonce'], ['real', '/GET /b#1', 'response.body.nonce']], show(r));
    assert.equal(r.counts.noise, 1);
    assert.equal(r.exitCode, 1);
    assert.deepEqual(r.noiseRun, { path: old2, differences: 1, hidden: { rows: 1, byKind: { changed: 1 } } });
    assert.match(show(r), /Noise[\s\S]*NOISE \[/);
    const onlyNoise = await diffCaptures(oldPath, await t.write('n2.har', capture(serverRun())), { noisePath: old2 });
    assert.equal(onlyNoise.exitCode, 0, show(onlyNoise));
  });

  it('bb noise output, used as config, makes the pair MATCH', async () => {
    const a = await t.write('ra.har', capture(serverRun()));
    const b = await t.write('rb.har', capture(serverRun('fixed', true)));
    const rules = join(t.dir, 'rules.json');
    const r = await bb(['noise', a, b, '-o', rules]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /2 differences between the two runs → 1 normalize path rule\(s\) and 2 known entries/);
    const doc = JSON.parse(await readFile(rules, 'utf8'));
    // The nonce's shape (8 hex digits, issue 33 item 5), never the field erased: a nonce of another shape stays real.
    const [nonce, ...others] = doc.normalize.paths;
    assert.deepEqual(others, []);
    assert.deepEqual({ where: nonce.where, path: nonce.path }, { where: '/GET /a#1', path: 'response.body.nonce' });
    assert.ok(new RegExp(nonce.pattern).test('01234567') && !new RegExp(nonce.pattern).test('a nonce'), nonce.pattern);
    // A whole entry on one side only: both directions.
    const reason = 'noise: differs between two runs of one build';
    assert.deepEqual(doc.known, [{ where: '/GET /ping#1', path: '', kind: 'missing', reason }, { where: '/GET /ping#1', path: '', kind: 'extra', reason }]);
    const before = await bb(['diff', a, b]);
    assert.equal(before.code, 1);
    const after = await bb(['diff', a, b, '--config', rules]);
    assert.equal(after.code, 0, after.stdout);
    assert.match(after.stdout, /^MATCH with 1 known/);
  });

  it('bb noise rules keep the values\' type: a number that varied does not hide the new build sending a string, nor a flag a word', async () => {
    const runOf = (queue: unknown, warm: unknown, label: unknown): ExchangeSpec[] => [{ url: 'http://127.0.0.1:1/status', body: { queue, warm, label } }];
    const a = await t.write('ta.har', capture(runOf(1, true, '7')));
    const b = await t.write('tb.har', capture(runOf(2, false, '8')));
    const rules = join(t.dir, 'typed.json');
    const r = await bb(['noise', a, b, '-o', rules]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(await readFile(rules, 'utf8'));
    assert.deepEqual(doc.normalize.paths.map((p: { path: string; type: string }) => [p.path, p.type]).sort(), [['response.body.label', 'string'], ['response.body.queue', 'number'], ['response.body.warm', 'boolean']]);
    // Another run of the build: its values are noise. The new build: each field turned into another type.
    const same = await bb(['diff', a, await t.write('tc.har', capture(runOf(3, true, '9'))), '--config', rules]);
    assert.equal(same.code, 0, same.stdout);
    const typed = await bb(['diff', a, await t.write('td.har', capture(runOf('5', 'no', 9))), '--config', rules, '--rows']);
    assert.equal(typed.code, 1, typed.stdout);
    for (const row of ['response.body.queue: "<NUM>" → "5"', 'response.body.warm: "<WORD>" → "no"', 'response.body.label: "<NUM>" → 9']) assert.ok(typed.stdout.includes(row), `${row}\n${typed.stdout}`);
  });
});
