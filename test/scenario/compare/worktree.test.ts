import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile, copyFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootServer, type BootedServer } from '../../../scenario/compare/boot/server.js';
import { prepareWorktree } from '../../../scenario/compare/worktree.js';
import { tempDir } from '../../helpers/tmp.js';
import { isBbError } from '../../../core/index.js';
import { exitStatusFor } from '../../../cli/exit.js';

const fixture = fileURLToPath(new URL('../fixtures/server.mjs', import.meta.url));

describe('git-ref servers', () => {
  let dir: string;
  let repo: string;
  let bbHome: string;
  let runDir: string;
  let first: string;
  const started: BootedServer[] = [];
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=bb test', '-c', 'user.email=bb@example.invalid', ...args], {
      encoding: 'utf8',
    }).trim();

  before(async () => {
    dir = await realpath(tempDir().dir);
    repo = join(dir, 'repo');
    bbHome = join(dir, 'bbhome');
    runDir = join(dir, 'run');
    execFileSync('mkdir', ['-p', repo, runDir]);
    git('init', '-q', '-b', 'main');
    await copyFile(fixture, join(repo, 'server.mjs'));
    await writeFile(join(repo, 'VERSION'), 'one\n');
    git('add', '.');
    git('commit', '-q', '-m', 'one');
    first = git('rev-parse', 'HEAD');
    await writeFile(join(repo, 'VERSION'), 'two\n');
    git('commit', '-q', '-am', 'two');
  });
  after(async () => {
    await Promise.all(started.map((s) => s.stop()));
  });

  it('boots the server from a worktree of the commit, under bb home cache', async () => {
    const s = await bootServer(
      { repo, ref: 'main~1', install: 'echo run >> install.count', command: 'node', args: ['server.mjs', 'line'] },
      { label: 'old', runDir, hostEnv: process.env, bbHome, graceMs: 500 },
    );
    started.push(s);
    assert.ok(s.worktree?.startsWith(join(bbHome, 'cache', 'worktrees')), s.worktree);
    assert.equal(s.ready.cwd, s.worktree);
    assert.equal(await readFile(join(s.worktree!, 'VERSION'), 'utf8'), 'one\n');
    assert.equal(execFileSync('git', ['-C', s.worktree!, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim(), first);
    assert.equal(await readFile(join(s.worktree!, 'install.count'), 'utf8'), 'run\n');
  });

  it('reuses the worktree and skips the install the second time', async () => {
    const prepare = () => prepareWorktree({
      repo, ref: first, install: 'echo run >> install.count', bbHome, label: 'old', runDir, env: process.env, installTimeoutMs: 10_000,
    });
    // The first time here, unless the boot test above made the tree already: either way the install has run once.
    await prepare();
    const again = await prepare();
    assert.equal(again.installed, false);
    assert.equal(await readFile(join(again.dir, 'install.count'), 'utf8'), 'run\n');
  });

  it('gives another commit its own tree', async () => {
    const tip = await prepareWorktree({ repo, ref: 'main', bbHome, label: 'new', runDir, env: process.env, installTimeoutMs: 10_000 });
    assert.equal(await readFile(join(tip.dir, 'VERSION'), 'utf8'), 'two\n');
  });

  it('refuses an unknown ref with exit code 2', async () => {
    await assert.rejects(
      bootServer({ repo, ref: 'no-such-branch', command: 'node', args: ['server.mjs', 'line'] }, { label: 'old', runDir, hostEnv: process.env, bbHome }),
      (err: Error & { code?: string }) =>
        isBbError(err) && exitStatusFor(err) === 2 && err.code === 'BB_GIT_BAD_REF' && /ref "no-such-branch" is not a commit/.test(err.message),
    );
  });

  it('reports a failing install with exit code 2 and its output', async () => {
    await assert.rejects(
      prepareWorktree({ repo, ref: 'main', install: 'echo cannot fetch >&2; exit 7', bbHome, label: 'new', runDir, env: process.env, installTimeoutMs: 10_000 }),
      (err: Error) => isBbError(err) && exitStatusFor(err) === 2 && /exit code 7/.test(err.message) && /cannot fetch/.test(err.message),
    );
  });
});
