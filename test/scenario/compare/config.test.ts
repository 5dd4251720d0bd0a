import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCompareConfig } from '../../../scenario/compare/config.js';
import { planSlots } from '../../../scenario/compare/run.js';
import { isBbError } from '../../../core/index.js';
import { exitStatusFor } from '../../../cli/exit.js';

const file = '/work/proj/bb/bb.config.json';
const ok = { servers: { old: { command: 'node', args: ['s.js'] }, new: { command: 'npm start' } }, scenario: 'scenario.ts' };

describe('parseCompareConfig', () => {
  it('resolves paths against the config folder and keeps the diff keys', () => {
    const cfg = parseCompareConfig({ ...ok, known: [{ where: '*', path: 'response.body.stack', reason: 'dropped' }] }, file);
    assert.equal(cfg.scenario, '/work/proj/bb/scenario.ts');
    assert.deepEqual(cfg.servers.old, { command: 'node', args: ['s.js'], cwd: '/work/proj/bb' });
    assert.equal(cfg.diff.known.length, 1);
  });

  it('reads a git-ref server: repo resolved, cwd kept relative to the worktree', () => {
    const cfg = parseCompareConfig({ ...ok, servers: { ...ok.servers, old: { repo: '..', ref: 'v1', install: 'npm ci', command: 'node', args: ['x.js'], cwd: 'pkg', ready: { port: 3000 } } } }, file);
    assert.deepEqual(cfg.servers.old, { command: 'node', args: ['x.js'], ready: { port: 3000 }, repo: '/work/proj', ref: 'v1', install: 'npm ci', cwd: 'pkg' });
  });

  const refusals: Array<[string, unknown, RegExp]> = [
    ['no servers', { scenario: 'x' }, /servers: must be an object/],
    ['no command', { ...ok, servers: { ...ok.servers, new: { args: [] } } }, /servers\.new\.command: must be a non-empty string/],
    ['args not strings', { ...ok, servers: { ...ok.servers, old: { command: 'node', args: [1] } } }, /servers\.old\.args: must be an array of strings/],
    ['bad ready regex', { ...ok, servers: { ...ok.servers, old: { command: 'x', ready: { line: '(' } } } }, /servers\.old\.ready\.line: is not a valid regex/],
    ['empty ready', { ...ok, servers: { ...ok.servers, old: { command: 'x', ready: {} } } }, /servers\.old\.ready: needs line, port or health/],
    ['install without repo', { ...ok, servers: { ...ok.servers, old: { command: 'x', install: 'npm ci' } } }, /servers\.old\.install: only applies to git-ref servers/],
    ['env not strings', { ...ok, servers: { ...ok.servers, old: { command: 'x', env: { A: 1 } } } }, /servers\.old\.env: must map names to string values/],
    ['no scenario', { servers: ok.servers }, /scenario: must be a non-empty string/],
    ['known without reason', { ...ok, known: [{ where: '*', path: 'x' }] }, /known\[0\].*reason/],
    ['a misspelt server key', { ...ok, servers: { ...ok.servers, old: { command: 'x', arg: ['s.js'] } } }, /servers\.old: unknown key "arg": did you mean "args"\?$/],
    ['a third server', { ...ok, servers: { ...ok.servers, newer: { command: 'x' } } }, /servers: unknown key "newer": the keys here are old, new \(and "\/\/…" for a comment\)$/],
    ['a misspelt readiness key', { ...ok, servers: { ...ok.servers, old: { command: 'x', ready: { helth: '/h' } } } }, /servers\.old\.ready: unknown key "helth": did you mean "health"\?$/],
    ['a misspelt replay key', { ...ok, replay: { value: { password: 'p' } } }, /replay: unknown key "value": did you mean "values"\?$/],
    ['a misspelt top-level key', { ...ok, scenarios: 'x.ts' }, /bb\.config\.json: unknown key "scenarios": did you mean "scenario"\?$/],
  ];
  for (const [name, doc, message] of refusals) {
    it(`refuses ${name} with exit code 2`, () => {
      assert.throws(() => parseCompareConfig(doc, file), (err: Error) => isBbError(err) && exitStatusFor(err) === 2 && message.test(err.message));
    });
  }
});

describe('planSlots', () => {
  it('names the runs by tree, the second of a pair -2, the noise run old-noise', () => {
    assert.deepEqual(planSlots(['old', 'new'], false).map((s) => s.label), ['old', 'new']);
    assert.deepEqual(planSlots(['new', 'new'], false).map((s) => `${s.tree}:${s.label}`), ['new:new', 'new:new-2']);
    assert.deepEqual(planSlots(['old', 'new'], true).map((s) => `${s.tree}:${s.label}`), ['old:old', 'new:new', 'old:old-noise']);
  });
});
