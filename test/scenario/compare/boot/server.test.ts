import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootServer, type BootedServer } from '../../../../scenario/compare/boot/server.js';
import { groupAlive } from '../../../../scenario/compare/boot/process-group.js';
import { freePort } from '../../../helpers/ports.js';
import { pidAlive } from '../../../helpers/processes.js';
import { tempDir } from '../../../helpers/tmp.js';
import { settlesWithin } from '../../../helpers/bounded.js';
import { isBbError } from '../../../../core/index.js';
import { exitStatusFor } from '../../../../cli/exit.js';

const fixture = fileURLToPath(new URL('../../fixtures/server.mjs', import.meta.url));

describe('bootServer', () => {
  const runDir = tempDir().dir;
  const started: BootedServer[] = [];
  const boot = async (args: string[], extra: Partial<Parameters<typeof bootServer>[0]> = {}, opts: Partial<Parameters<typeof bootServer>[1]> = {}) => {
    const s = await bootServer({ command: 'node', args: [fixture, ...args], ...extra }, { label: 'srv', runDir, hostEnv: process.env, graceMs: 500, ...opts });
    started.push(s);
    return s;
  };

  after(async () => {
    await Promise.all(started.map((s) => s.stop()));
  });

  it('is ready at a READY line and takes the JSON after it as the payload', async () => {
    const s = await boot(['line']);
    assert.equal(s.ready.token, 't0k');
    assert.equal(s.url, `http://127.0.0.1:${s.ready.port}`);
    const res = await fetch(`${s.url}/cwd`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  });

  it('is ready when a given port accepts connections', async () => {
    const port = await freePort();
    const s = await boot(['port', String(port)], { ready: { port } });
    assert.equal(s.url, `http://127.0.0.1:${port}`);
    assert.deepEqual(s.ready, { port });
  });

  it('is ready when the health URL answers 2xx, not before', async () => {
    const port = await freePort();
    const s = await boot(['health', String(port)], { ready: { health: `http://127.0.0.1:${port}/health` } });
    assert.equal(s.url, `http://127.0.0.1:${port}`);
    // The fixture answered 503 twice before 200: a third call was needed, so the next is the fourth (200 too).
    const res = await fetch(`${s.url}/health`);
    assert.equal(res.status, 200);
  });

  it('passes only allow-listed variables, a fresh HOME and TZ=UTC, plus what the config adds', async () => {
    const s = await boot(['line'], { env: { DEMO_FLAG: 'on' } }, {
      hostEnv: { ...process.env, SOME_API_KEY: 'sk-live-123', GITHUB_TOKEN: 'ghp_x', NODE_OPTIONS: '--inspect', LC_ALL: 'C.UTF-8' },
    });
    const env = (await (await fetch(`${s.url}/env`)).json()) as Record<string, string>;
    assert.equal(env.SOME_API_KEY, undefined);
    assert.equal(env.GITHUB_TOKEN, undefined);
    assert.equal(env.NODE_OPTIONS, undefined);
    assert.equal(env.LC_ALL, 'C.UTF-8');
    assert.equal(env.TZ, 'UTC');
    assert.equal(env.DEMO_FLAG, 'on');
    assert.equal(env.HOME, s.home);
    assert.notEqual(env.HOME, process.env.HOME);
    assert.ok(existsSync(s.home));
  });

  it('saves stdout and stderr to files in the run folder', async () => {
    const s = await boot(['line'], {}, { label: 'logged' });
    assert.ok((await readFile(s.logs.stdout, 'utf8')).includes('READY {'));
    assert.ok((await readdir(runDir)).includes('logged.stderr.log'));
  });

  it('fails with exit code 2 within its timeout when the server never gets ready', async () => {
    // boot gives up by its own timer: the server never gets ready nor exits.
    await assert.rejects(settlesWithin(boot(['never'], {}, { timeoutMs: 1200 }), 20_000, 'boot of a server that never gets ready'), (err: Error & { code?: string }) => {
      assert.ok(isBbError(err), String(err));
      assert.equal(exitStatusFor(err), 2);
      assert.equal(err.code, 'BB_SERVER_NOT_READY');
      assert.match(err.message, /server "srv" was not ready within 1200 ms \(waiting for a stdout line matching/);
      assert.match(err.message, /booting, slowly/);
      return true;
    });
  });

  it('fails with exit code 2, both logs named and their tail when the server exits before it is ready', async () => {
    await assert.rejects(boot(['early-exit']), (err: Error & { code?: string }) => {
      assert.ok(isBbError(err), String(err));
      assert.equal(exitStatusFor(err), 2);
      assert.equal(err.code, 'BB_SERVER_EXITED');
      // It wrote to stdout and to stderr (its complaint): the message sends the reader to both.
      assert.ok(err.message.startsWith(`server "srv" exited with exit code 3 before it was ready (logs: ${join(runDir, 'srv.stdout.log')} and ${join(runDir, 'srv.stderr.log')}); its log ends:\n`), err.message);
      assert.match(err.message, /fatal: config file missing/);
      return true;
    });
  });

  it('fails with exit code 2 when the command does not exist', async () => {
    await assert.rejects(
      bootServer({ command: '/nonexistent/bin/server', args: [] }, { label: 'ghost', runDir, hostEnv: process.env }),
      (err: Error) => isBbError(err) && exitStatusFor(err) === 2 && /server "ghost" could not be started/.test(err.message),
    );
  });

  it('stops the whole process group: a grandchild that ignores SIGTERM does not survive', async () => {
    const s = await boot(['grandchild']);
    const grandchild = s.ready.grandchild as number;
    assert.ok(pidAlive(grandchild));
    assert.ok(groupAlive(s.pid));
    await s.stop();
    assert.equal(pidAlive(s.pid), false);
    assert.equal(pidAlive(grandchild), false);
    assert.equal(groupAlive(s.pid), false);
    assert.equal(existsSync(s.home), false);
  });

  it('kills a server that ignores SIGTERM after the grace period', async () => {
    const s = await boot(['stubborn']);
    await s.stop();
    assert.equal(pidAlive(s.pid), false);
    // In that order: SIGTERM came and the server outlived it, then SIGKILL ended it.
    assert.match(await readFile(s.logs.stdout, 'utf8'), /ignoring SIGTERM\n/, 'SIGTERM came first');
    assert.equal((await s.exited).signal, 'SIGKILL');
  });

  it('runs a command without args through the shell', async () => {
    const s = await boot([], { command: `exec node ${JSON.stringify(fixture)} line`, args: undefined });
    assert.equal(s.ready.token, 't0k');
  });
});
