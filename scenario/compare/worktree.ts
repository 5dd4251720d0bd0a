// Git-ref servers: a worktree of one commit under bb's cache, installed once.
//
// The worktree lives at <bbHome>/cache/worktrees/<hash>, where the hash covers
// the repository's real path and the commit, so two refs naming the same commit
// share one tree and a moved branch gets a fresh one. The install command runs
// once per tree; a marker file beside the tree (not inside it, so the tree stays
// clean) records that it finished and with which command.
import { spawn, execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { logTail } from './log-tail.js';
import { BbError, makeDirsSync } from '../../core/index.js';

const execFileAsync = promisify(execFile);

/** A prepared worktree. */
export interface PreparedTree {
  /** Absolute path of the worktree. */
  dir: string;
  /** The full commit id the ref resolved to. */
  commit: string;
  /** True when the install command ran now (false: skipped, already installed or none). */
  installed: boolean;
}

/** What prepareWorktree needs. */
export interface WorktreeRequest {
  /** Path of the repository (absolute). */
  repo: string;
  /** Any ref git understands: a branch, a tag, a commit. */
  ref: string;
  /** Shell command run once in the fresh tree (e.g. "npm ci"), or undefined for none. */
  install?: string;
  /** bb's home; the tree goes under <bbHome>/cache/worktrees. */
  bbHome: string;
  /** Server label, for messages and the install log name. */
  label: string;
  /** Folder for the install log. */
  runDir: string;
  /** Environment for git and the install command. */
  env: NodeJS.ProcessEnv;
  /** Bound on the install command. */
  installTimeoutMs: number;
}

async function git(args: string[], env: NodeJS.ProcessEnv, label: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync('git', args, { env, maxBuffer: 16 * 1024 * 1024 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    const why = (e.stderr || e.message).trim().split('\n').pop();
    throw new BbError('BB_GIT_FAILED', `server "${label}": git ${args.join(' ')} failed: ${why}`);
  }
}

/** Makes (or reuses) the worktree of `ref` and runs the install command once. */
export async function prepareWorktree(req: WorktreeRequest): Promise<PreparedTree> {
  const repo = await realpath(req.repo).catch(() => {
    throw new BbError('BB_GIT_FAILED', `server "${req.label}": repository ${req.repo} does not exist.`);
  });
  const commit = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `${req.ref}^{commit}`], req.env, req.label).catch(
    () => {
      throw new BbError('BB_GIT_BAD_REF', `server "${req.label}": ref "${req.ref}" is not a commit in ${repo}; give a branch, tag or commit id.`);
    },
  );
  const hash = createHash('sha256').update(`${repo}\0${commit}`).digest('hex').slice(0, 16);
  const root = join(req.bbHome, 'cache', 'worktrees');
  const dir = join(root, hash);
  makeDirsSync(root, 0o700);

  const head = existsSync(join(dir, '.git'))
    ? await git(['-C', dir, 'rev-parse', 'HEAD'], req.env, req.label).catch(() => '')
    : '';
  if (head !== commit) {
    // A tree removed by hand leaves metadata behind that blocks `worktree add`.
    await git(['-C', repo, 'worktree', 'prune'], req.env, req.label);
    await git(['-C', repo, 'worktree', 'add', '--force', '--detach', dir, commit], req.env, req.label);
  }

  const marker = `${dir}.installed`;
  if (!req.install) return { dir, commit, installed: false };
  const done = await readFile(marker, 'utf8').catch(() => null);
  if (done === req.install) return { dir, commit, installed: false };
  await runInstall(req, dir);
  await writeFile(marker, req.install, { mode: 0o600 });
  return { dir, commit, installed: true };
}

async function runInstall(req: WorktreeRequest, dir: string): Promise<void> {
  const logPath = join(req.runDir, `${req.label}.install.log`);
  const log = createWriteStream(logPath, { mode: 0o600 });
  const tail: string[] = [];
  const child = spawn('/bin/sh', ['-c', req.install!], { cwd: dir, env: req.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) tail.push(line);
    if (tail.length > 20) tail.splice(0, tail.length - 20);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const result = await new Promise<{ code: number | null; signal: string | null; timedOut: boolean }>((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      resolve({ code: null, signal: 'SIGKILL', timedOut: true });
    }, req.installTimeoutMs);
    child.on('error', () => {
      clearTimeout(timer);
      resolve({ code: 127, signal: null, timedOut: false });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut: false });
    });
  });
  await new Promise<void>((resolve) => log.end(resolve));
  if (result.timedOut) {
    throw new BbError('BB_INSTALL_FAILED', `server "${req.label}": install "${req.install}" did not finish within ${req.installTimeoutMs} ms (log: ${logPath})${logTail(tail)}`);
  }
  if (result.code !== 0) {
    throw new BbError('BB_INSTALL_FAILED', `server "${req.label}": install "${req.install}" failed with ${result.signal ?? `exit code ${result.code}`} (log: ${logPath})${logTail(tail)}`);
  }
}
