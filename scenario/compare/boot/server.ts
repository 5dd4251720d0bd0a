// Boots a server under test hermetically, waits until it is ready, and stops
// it so that nothing it started survives.
//
// Hermetic means: a fresh temporary HOME per server, the allow-list
// environment of env.ts, stdout and stderr saved to files. The server runs in
// its own process group (process-group.ts); readiness.ts says when it is ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logsNamed, logTail } from '../log-tail.js';
import { prepareWorktree } from '../worktree.js';
import { BbError, type BbCode } from '../../../core/index.js';
import { hermeticEnv } from './env.js';
import { stopGroup, type ExitInfo, type RunningServers } from './process-group.js';
import { waitReady } from './readiness.js';
import { DEFAULT_READINESS, type ServerSpec } from './spec.js';

/** Options of bootServer. */
export interface BootOptions {
  /** Server label ("old", "new"), used in messages and log names. */
  label: string;
  /** Folder where <label>.stdout.log and <label>.stderr.log are written. */
  runDir: string;
  /** Bound on boot time; overrides the spec's bootTimeoutMs. */
  timeoutMs?: number;
  /** The environment bb runs in; only allow-listed names pass (the CLI passes process.env). */
  hostEnv: NodeJS.ProcessEnv;
  /** bb's home (worktrees go under <bbHome>/cache); required for git-ref servers. */
  bbHome?: string;
  /** Grace period between SIGTERM and SIGKILL at stop (default 3 s). */
  graceMs?: number;
  /** Bound on the install command of git-ref servers (default 10 min). */
  installTimeoutMs?: number;
  /** The run's set of servers: the server is in it from its spawn until its process group is gone. */
  servers?: RunningServers;
}

/** A running, ready server. */
export interface BootedServer {
  /** Its label. */
  readonly label: string;
  /** Pid of the spawned process (also its process group id). */
  readonly pid: number;
  /** Origin to send traffic to, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  /** The readiness payload (the JSON of the READY line, else { port }). */
  readonly ready: Record<string, unknown>;
  /** The temporary HOME it runs with (real path). */
  readonly home: string;
  /** The worktree it runs from, for git-ref servers. */
  readonly worktree?: string;
  /** Paths of its stdout and stderr logs. */
  readonly logs: { stdout: string; stderr: string };
  /** Settles when the spawned process exits. */
  readonly exited: Promise<ExitInfo>;
  /** How it exited, once it has. */
  exitInfo(): ExitInfo | undefined;
  /** The last lines of its output (stdout and stderr interleaved). */
  tail(): string[];
  /** The paths of the logs it wrote to (both when it wrote to neither): where a message sends the reader. */
  logsWithOutput(): string[];
  /** Stops the whole process group (SIGTERM, then SIGKILL after the grace period) and removes HOME. Idempotent. */
  stop(): Promise<void>;
}

const TAIL_LINES = 15;

/** Boots a server and resolves once it is ready; throws a BbError naming it otherwise. */
export async function bootServer(spec: ServerSpec, opts: BootOptions): Promise<BootedServer> {
  const { label } = opts;
  const timeoutMs = opts.timeoutMs ?? spec.bootTimeoutMs ?? 30_000;
  let cwd = spec.cwd;
  let worktree: string | undefined;
  if ('repo' in spec) {
    if (!opts.bbHome) throw new BbError('BB_CONFIG_INVALID', `server "${label}" is a git ref, which needs bb's home for its worktree.`);
    const gitEnv = { ...hermeticEnv(opts.hostEnv, opts.hostEnv.HOME ?? tmpdir()), GIT_TERMINAL_PROMPT: '0' };
    const tree = await prepareWorktree({
      repo: spec.repo,
      ref: spec.ref,
      install: spec.install,
      bbHome: opts.bbHome,
      label,
      runDir: opts.runDir,
      env: gitEnv,
      installTimeoutMs: opts.installTimeoutMs ?? 600_000,
    });
    worktree = tree.dir;
    cwd = spec.cwd ? join(tree.dir, spec.cwd) : tree.dir;
  }

  const home = await realpath(await mkdtemp(join(tmpdir(), `bb-home-${label.replace(/[^\w.-]/g, '_')}-`)));
  const env = hermeticEnv(opts.hostEnv, home, spec.env);
  const logs = { stdout: join(opts.runDir, `${label}.stdout.log`), stderr: join(opts.runDir, `${label}.stderr.log`) };
  const out = createWriteStream(logs.stdout, { mode: 0o600 });
  const err = createWriteStream(logs.stderr, { mode: 0o600 });
  const [file, args] = spec.args ? [spec.command === 'node' ? process.execPath : spec.command, spec.args] : ['/bin/sh', ['-c', spec.command]];

  const child = spawn(file, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const server = new RunningServer(label, child, home, logs, out, err, worktree, opts.graceMs ?? 3000, opts.servers);
  opts.servers?.add(server);
  try {
    const { url, ready } = await waitReady(server, spec.ready ?? DEFAULT_READINESS, timeoutMs);
    server.url = url;
    server.ready = ready;
    // What the server printed up to its readiness is in the log files when boot returns.
    await server.logsWritten();
  } catch (e) {
    await server.stop();
    throw e;
  }
  return server;
}

/** A spawned server: its output split into lines (logged, tailed, watched for readiness) and its stop. */
class RunningServer implements BootedServer {
  readonly pid: number;
  url = '';
  ready: Record<string, unknown> = {};
  readonly exited: Promise<ExitInfo>;
  private exit?: ExitInfo;
  private spawnFailure?: Error;
  private readonly lines: string[] = [];
  private readonly lineWatchers = new Set<(line: string) => void>();
  private stopping?: Promise<void>;
  /** Whether each stream had output. */
  private readonly wrote = { stdout: false, stderr: false };

  constructor(
    readonly label: string,
    child: ChildProcess,
    readonly home: string,
    readonly logs: { stdout: string; stderr: string },
    private readonly out: WriteStream,
    private readonly err: WriteStream,
    readonly worktree: string | undefined,
    private readonly graceMs: number,
    private readonly servers: RunningServers | undefined,
  ) {
    this.pid = child.pid ?? -1;
    this.exited = new Promise((resolve) => {
      child.on('error', (e) => {
        this.spawnFailure = e;
        this.exit = { code: 127, signal: null };
        resolve(this.exit);
      });
      child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
    this.split(child.stdout!, out, true);
    this.split(child.stderr!, err, false);
  }

  /** Resolves once every chunk written to the log files so far is on disk. */
  logsWritten(): Promise<void> {
    const written = (log: WriteStream) => new Promise<void>((resolve) => (log.writableEnded ? resolve() : log.write(Buffer.alloc(0), () => resolve())));
    return Promise.all([written(this.out), written(this.err)]).then(() => undefined);
  }

  exitInfo(): ExitInfo | undefined {
    return this.exit;
  }

  spawnError(): Error | undefined {
    return this.spawnFailure;
  }

  tail(): string[] {
    return [...this.lines];
  }

  logsWithOutput(): string[] {
    const some = (['stdout', 'stderr'] as const).filter((s) => this.wrote[s]).map((s) => this.logs[s]);
    return some.length ? some : [this.logs.stdout, this.logs.stderr];
  }

  onStdoutLine(fn: (line: string) => void): () => void {
    this.lineWatchers.add(fn);
    return () => this.lineWatchers.delete(fn);
  }

  private split(stream: NodeJS.ReadableStream, log: WriteStream, isStdout: boolean): void {
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      if (chunk.length) this.wrote[isStdout ? 'stdout' : 'stderr'] = true;
      log.write(chunk);
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop()!;
      for (const line of parts) this.onLine(line.replace(/\r$/, ''), isStdout);
    });
    stream.on('end', () => {
      if (partial) this.onLine(partial, isStdout);
      partial = '';
    });
  }

  private onLine(line: string, isStdout: boolean): void {
    if (line.trim()) {
      this.lines.push(line);
      if (this.lines.length > TAIL_LINES) this.lines.shift();
    }
    if (isStdout) for (const w of this.lineWatchers) w(line);
  }

  /** A BbError naming this server, its log and its last lines. */
  failure(what: string, code: BbCode): BbError {
    return new BbError(code, `server "${this.label}" ${what} ${logsNamed(this.logsWithOutput())}${logTail(this.tail())}`);
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    if (this.pid > 0) await stopGroup(this.pid, this.graceMs, this.exited);
    this.servers?.release(this);
    await Promise.all([new Promise((r) => this.out.end(r)), new Promise((r) => this.err.end(r))]);
    await rm(this.home, { recursive: true, force: true });
  }
}
