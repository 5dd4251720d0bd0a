// bb compare (cli/commands/compare.ts) through the real CLI: it fails closed,
// every way a run can go wrong (a server that dies, never gets ready, a step
// that throws, an empty capture, a bad config, Ctrl-C) is exit 2 with one
// sentence and leaves no process behind; and a capture can be the scenario
// (--replay). Real servers and scenarios; bb as a child process. Timing
// (--repeat) is in test/scenario/compare/run.cli.test.ts, a quiet file.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COMPARE_TIMEOUT_MS, demoConfigWith, paths, runCompare } from '../../scenario/compare/helpers.js';
import { runBb, startBb } from '../../helpers/cli.js';
import { pidAlive } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/tmp.js';
import { capture as harOf } from '../../helpers/har.js';

describe('bb compare fails closed (exit 2) and leaves nothing running', () => {
  const dir = tempDir().dir;
  const env = { BB_HOME: join(dir, 'home') };
  const fixtureServer = (mode: string, extra: Record<string, unknown> = {}) => ({ command: 'node', args: [paths.fixtureServer, mode], ...extra });
  const config = async (name: string, doc: Record<string, unknown>) => {
    const file = join(dir, name);
    await writeFile(file, JSON.stringify(doc));
    return file;
  };
  const scenario = async (name: string, body: string) => {
    const file = join(dir, name);
    await writeFile(file, `export default async (t) => {\n${body}\n};\n`);
    return file;
  };

  // A run of two fixture servers and a one-file scenario (its steps' source) named `name`: its config, scenario and folder.
  const compareWith = async (name: string, servers: { old: unknown; new: unknown }, steps: string) => {
    const cfg = await config(`${name}.json`, { servers, scenario: await scenario(`${name}.mjs`, steps) });
    return runCompare(['compare', '--config', cfg, '--out', join(dir, name)], env);
  };

  it('a server that dies mid-scenario: exit 2 naming the server, the step and its log', async () => {
    const cfg = await demoConfigWith(dir, 'crash.json', { newArgs: ['--crash-on-export'] });
    const run = await runCompare(['compare', '--config', cfg, '--out', join(dir, 'crash')], env);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /server "new" exited with exit code 70 during scenario step "export"/);
    assert.match(run.stderr, /crashing on export, as asked/);
    assert.equal(run.stdout, '');
  });

  it('a server whose exit is seen after its dropped request: the exit is still the cause named', async () => {
    const run = await compareWith('dies-late', { old: fixtureServer('dies-late'), new: fixtureServer('dies-late') }, "await t.step('boom', async () => { await t.http.get('/die', { expect: 200 }); });");
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /server "old" exited with exit code 70 during scenario step "boom"/);
    assert.match(run.stderr, /dying late, as asked/);
  });

  // A capture without pages has no steps: the replay was under way all the same, and the crash's own words are in
  // the server's stderr, so the message names that log too.
  it('a server that dies during a replay of a capture without pages: exit 2, "during the replay", both logs named', async () => {
    const har = join(dir, 'no-pages.har');
    await writeFile(har, JSON.stringify(harOf(['/cwd', '/die', '/cwd'].map((path) => ({ url: `http://127.0.0.1:3001${path}`, body: {} })))));
    const cfg = await config('dies-in-replay.json', { servers: { old: fixtureServer('line'), new: fixtureServer('dies-late') }, scenario: 'unused.mjs' });
    const out = join(dir, 'dies-in-replay');
    const run = await runCompare(['compare', '--config', cfg, '--replay', har, '--out', out], env);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    const logs = `(logs: ${join(out, 'new.stdout.log')} and ${join(out, 'new.stderr.log')})`;
    assert.ok(run.stderr.includes(`bb: server "new" exited with exit code 70 during the replay of ${har} ${logs}; its log ends:\n`), run.stderr);
    assert.match(run.stderr, /dying late, as asked/);
  });

  it('a server that never gets ready: exit 2 within its boot timeout', async () => {
    const run = await compareWith('never', { old: fixtureServer('never', { bootTimeoutMs: 1500 }), new: fixtureServer('line') }, "await t.step('one', () => t.http.get('/cwd'));");
    // bb gave up by its boot timer: it exited by itself (2), runCompare's own bound did not kill it.
    assert.equal(run.timedOut, false);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /server "old" was not ready within 1500 ms \(waiting for a stdout line matching/);
    assert.match(run.stderr, /booting, slowly/);
  });

  it('a step that throws: exit 2 naming the step', async () => {
    const run = await compareWith('throws', { old: fixtureServer('line'), new: fixtureServer('line') }, "await t.step('check token', async () => { if (t.ready.token !== 'other') throw new Error('token mismatch'); });");
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /scenario step "check token" \(old\) failed: token mismatch/);
  });

  it('a scenario that sends nothing: exit 2, the capture is empty', async () => {
    const run = await compareWith('empty', { old: fixtureServer('line'), new: fixtureServer('line') }, "await t.step('idle', async () => {});");
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /the capture of server "old" is empty/);
  });

  it('a bad config: exit 2 naming the key', async () => {
    const cfg = await config('bad.json', { servers: { old: { args: [] }, new: fixtureServer('line') }, scenario: 'x.mjs' });
    const run = await runCompare(['compare', '--config', cfg], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /servers\.old\.command: must be a non-empty string/);
  });

  it('Ctrl-C mid-scenario: exit 130, the server and its grandchild are gone', async () => {
    const out = join(dir, 'sigint');
    const cfg = await config('sigint.json', {
      servers: { old: fixtureServer('grandchild'), new: fixtureServer('line') },
      scenario: await scenario('hang.mjs', "await t.step('wait', async () => { await t.http.get('/cwd'); await new Promise((r) => setTimeout(r, 30000)); }, { timeoutMs: 60000 });"),
    });
    let ready: { pid: number; grandchild: number } | undefined;
    const bb = startBb(['compare', '--config', cfg, '--out', out], env, { timeoutMs: COMPARE_TIMEOUT_MS });
    const poll = setInterval(() => {
      const log = join(out, 'old.stdout.log');
      const line = existsSync(log) ? readFileSync(log, 'utf8').split('\n').find((l) => l.startsWith('READY ')) : undefined;
      if (!line) return;
      clearInterval(poll);
      ready = JSON.parse(line.slice(6));
      // Give the scenario a moment to be inside its step, then interrupt.
      setTimeout(() => bb.child.kill('SIGINT'), 300);
    }, 50);
    const code = await bb.exited;
    clearInterval(poll);
    assert.ok(ready, `the server never printed READY: ${bb.stderr()}`);
    assert.equal(code, 130, bb.stdout() + bb.stderr());
    assert.match(bb.stderr(), /interrupted/);
    assert.equal(pidAlive(ready.pid), false, 'server still running');
    assert.equal(pidAlive(ready.grandchild), false, 'grandchild still running');
  });
});

// bb compare with a capture as the scenario: the bundled demo recorded once
// by its scenario module, then replayed against each server (--replay, or
// "scenario": "x.har" in the config) gives what the module gives.
describe('bb compare --replay on the bundled demo', () => {
  const dir = tempDir().dir;
  const env = { BB_HOME: join(dir, 'home') };
  let recorded: string;
  before(async () => {
    const run = await runCompare(['demo', '--out', join(dir, 'module')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    recorded = join(dir, 'module', 'old.har');
  });

  it('--replay CAPTURE.har: MATCH with 1 known, as the scenario module gives', async () => {
    const out = join(dir, 'replayed');
    const run = await runCompare(['compare', '--config', paths.demoConfig, '--replay', recorded, '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^MATCH with 1 known\b/);
    const [module, replayed] = await Promise.all([readFile(recorded, 'utf8'), readFile(join(out, 'old.har'), 'utf8')].map(async (p) => JSON.parse(await p)));
    assert.equal(replayed.log.entries.length, module.log.entries.length);
    assert.deepEqual(replayed.log.pages.map((p: { title: string }) => p.title), module.log.pages.map((p: { title: string }) => p.title));
    // The replay of the old build against the old build is the module's run again, ids and all.
    const self = await runBb(['diff', recorded, join(out, 'old.har'), '--config', paths.demoConfig], env);
    assert.equal(self.code, 0, self.stdout);
    assert.match(self.stdout, /^MATCH\b/);
  });

  it('the noise run and the self-check pair get the same replay', async () => {
    const noise = await runCompare(['compare', '--config', paths.demoConfig, '--replay', recorded, '--noise', '--out', join(dir, 'noise')], env);
    assert.equal(noise.code, 0, noise.stdout + noise.stderr);
    assert.match(noise.stdout, /^MATCH with 1 known\b/m);
    const noiseHar = JSON.parse(await readFile(join(dir, 'noise', 'old-noise.har'), 'utf8'));
    assert.equal(noiseHar.log.entries.length, 20);
    const self = await runCompare(['compare', '--config', paths.demoConfig, '--replay', recorded, '--trees', 'old,old', '--out', join(dir, 'self')], env);
    assert.equal(self.code, 0, self.stdout + self.stderr);
    assert.match(self.stdout, /^MATCH\b/m);
    // The demo's one known entry ratifies an old → new change: in old,old it is expected to match nothing.
    assert.match(self.stdout, /^1 known entry matched nothing, as expected: both captures are of one build/m);
    assert.doesNotMatch(self.stdout, /[Ss]tale/);
  });

  it('"scenario": "CAPTURE.har" in the config does the same', async () => {
    const config = await demoConfigWith(dir, 'har-scenario.json', { scenario: recorded });
    const run = await runCompare(['compare', '--config', config, '--out', join(dir, 'config-har')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^MATCH with 1 known\b/);
  });
});
