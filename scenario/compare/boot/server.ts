// Boots a server under test hermetically, waits until it is ready, and stops
// it so that nothing it started survives.
//
// Hermetic means: a fresh temporary HOME per server, an allow-list environment
// (PATH, locale, TERM, TMPDIR, TZ=UTC, plus what the config adds; no ambient
// tokens or keys), stdout and stderr saved to files. The server runs in its
// own process group (spawned detached), so shutdown can signal the whole group:
// npm and shell wrappers leave grandchildren that a signal to one pid misses.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logTail } from '../log-tail.js';
import { prepareWorktree } from '../worktree.js';
import { BbError, type BbCode } from '../../../core/index.js';

/** How bb knows a server is ready. Several may be given: line first, then port, then health. */
export interface ReadinessSpec {
  /** A regex matched against each stdout line; JSON after the match is the readiness payload. */
  line?: string;
  /** A TCP port to probe on 127.0.0.1 (also the target when no payload gives one). */
  port?: number;
  /** A health URL (absolute, or a path on the target) that must answer 2xx. */
  health?: string;
}

/** Fields shared by both kinds of server. */
interface ServerSpecBase {
  /** Program to run; "node" means the Node running bb. Without args it runs through /bin/sh -c. */
  command: string;
  /** Arguments; when given, the command runs directly (no shell). */
  args?: string[];
  /** Extra environment, merged last over the hermetic base. */
  env?: Record<string, string>;
  /** Readiness; default: a stdout line starting with READY. */
  ready?: ReadinessSpec;
  /** Bound on boot time (default 30 s). */
  bootTimeoutMs?: number;
}

/** A server started from a command. */
export interface CommandServerSpec extends ServerSpecBase {
  /** Working directory (absolute; default bb's working directory). */
  cwd?: string;
}

/** A server started from a git ref: a worktree of that commit, installed once. */
export interface GitServerSpec extends ServerSpecBase {
  /** Repository path (absolute). */
  repo: string;
  /** Branch, tag or commit. */
  ref: string;
  /** Shell command run once in a fresh worktree, e.g. "npm ci". */
  install?: string;
  /** Working directory inside the worktree (relative; default its root). */
  cwd?: string;
}

/** Either kind of server. */
export type ServerSpec = CommandServerSpec | GitServerSpec;

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
}

/** How a server process ended. */
export interface ExitInfo {
  /** Exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it, or null. */
  signal: NodeJS.Signals | null;
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
  /** Stops the whole process group (SIGTERM, then SIGKILL after the grace period) and removes HOME. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_READY_LINE = '^READY\\b';
const TAIL_LINES = 15;
const live = new Set<BootedServer>();
const liveGroups = new Set<number>();

/** Names from bb's environment that reach servers; LC_* too. Everything else is dropped. */
export const PASSED_ENV = ['PATH', 'LANG', 'LANGUAGE', 'TERM', 'TMPDIR', 'TMP', 'TEMP'] as const;

/** The hermetic environment: allow-listed names from `host`, HOME, TZ=UTC, then `extra` last. */
export function hermeticEnv(host: NodeJS.ProcessEnv, home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(host)) {
    if (value === undefined) continue;
    if ((PASSED_ENV as readonly string[]).includes(name) || name.startsWith('LC_')) env[name] = value;
  }
  env.HOME = home;
  env.TZ = 'UTC';
  return { ...env, ...extra };
}

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
  const server = new RunningServer(label, child, home, logs, out, err, worktree, opts.graceMs ?? 3000);
  live.add(server);
  if (child.pid) liveGroups.add(child.pid);
  try {
    await server.waitReady(spec.ready ?? { line: DEFAULT_READY_LINE }, timeoutMs);
  } catch (e) {
    await server.stop();
    throw e;
  }
  return server;
}

/** Stops every server still running (for SIGINT handlers in the CLI). */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...live].map((s) => s.stop()));
}

/** Last resort at process exit: SIGKILL every process group still known. Synchronous. */
export function killAllServersSync(): void {
  for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * True while some process of the group is alive. Zombies do not count: an
 * orphaned grandchild may wait for a reaper that is slow or absent (in some
 * containers pid 1 does not reap), and a zombie runs nothing.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command (which may hold spaces and parentheses): state ppid pgrp ...
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(rest[2]) === pgid && rest[0] !== 'Z') return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

class RunningServer implements BootedServer {
  readonly pid: number;
  url = '';
  ready: Record<string, unknown> = {};
  readonly exited: Promise<ExitInfo>;
  private exit?: ExitInfo;
  private spawnError?: Error;
  private readonly lines: string[] = [];
  private readonly lineWaiters = new Set<(line: string) => void>();
  private stopping?: Promise<void>;

  constructor(
    readonly label: string,
    private readonly child: ChildProcess,
    readonly home: string,
    readonly logs: { stdout: string; stderr: string },
    private readonly out: WriteStream,
    private readonly err: WriteStream,
    readonly worktree: string | undefined,
    private readonly graceMs: number,
  ) {
    this.pid = child.pid ?? -1;
    this.exited = new Promise((resolve) => {
      child.on('error', (e) => {
        this.spawnError = e;
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

  exitInfo(): ExitInfo | undefined {
    return this.exit;
  }

  tail(): string[] {
    return [...this.lines];
  }

  private split(stream: NodeJS.ReadableStream, log: WriteStream, isStdout: boolean): void {
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
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
    if (isStdout) for (const w of this.lineWaiters) w(line);
  }

  /** Resolves when every readiness condition holds; throws naming the server otherwise. */
  async waitReady(spec: ReadinessSpec, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let awaiting = '';
    const attempt = async () => {
      let port = spec.port;
      if (spec.line !== undefined) {
        awaiting = `a stdout line matching /${spec.line}/`;
        this.ready = await this.waitLine(spec.line, deadline);
        if (typeof this.ready.port === 'number') port = this.ready.port;
      }
      if (port !== undefined && spec.line === undefined) {
        awaiting = `port ${port} to accept connections`;
        await this.probePort(port, deadline);
        this.ready = { port };
      }
      let origin = port !== undefined ? `http://127.0.0.1:${port}` : '';
      if (spec.health !== undefined) {
        const health = /^https?:/.test(spec.health) ? spec.health : origin + spec.health;
        if (!/^https?:/.test(health)) throw new BbError('BB_CONFIG_INVALID', `server "${this.label}": health path ${spec.health} needs a port (ready.port or a READY payload with "port").`);
        awaiting = `${health} to answer 2xx`;
        await this.probeHealth(health, deadline);
        if (!origin) origin = new URL(health).origin;
        if (!('port' in this.ready)) this.ready = { ...this.ready, port: Number(new URL(health).port) };
      }
      if (!origin) {
        throw new BbError('BB_SERVER_NO_PORT', `server "${this.label}" gave no port: print READY {"port": N}, or set ready.port or ready.health in the config.`);
      }
      this.url = origin;
    };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(this.failure(`was not ready within ${timeoutMs} ms (waiting for ${awaiting})`, 'BB_SERVER_NOT_READY')),
        Math.max(0, deadline - Date.now()),
      );
    });
    const died = this.exited.then((exit) => {
      // Let the last output arrive so the tail shows why.
      return sleep(50).then(() => {
        if (this.spawnError) throw this.failure(`could not be started: ${this.spawnError.message}`, 'BB_SERVER_SPAWN');
        throw this.failure(`exited with ${describeExit(exit)} before it was ready`, 'BB_SERVER_EXITED');
      });
    });
    try {
      await Promise.race([attempt(), timedOut, died]);
    } finally {
      clearTimeout(timer);
      died.catch(() => {});
    }
  }

  /** A BbError naming this server, its log and its last lines. */
  failure(what: string, code: BbCode): BbError {
    return new BbError(code, `server "${this.label}" ${what} (log: ${this.logs.stdout})${logTail(this.tail())}`);
  }

  private waitLine(pattern: string, deadline: number): Promise<Record<string, unknown>> {
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch (e) {
      return Promise.reject(new BbError('BB_CONFIG_INVALID', `server "${this.label}": ready.line /${pattern}/ is not a valid regex: ${(e as Error).message}.`));
    }
    return new Promise((resolve, reject) => {
      const waiter = (line: string) => {
        const m = re.exec(line);
        if (!m) return;
        const rest = line.slice(m.index + m[0].length).trim();
        let payload: Record<string, unknown> = {};
        if (rest.startsWith('{')) {
          try {
            payload = JSON.parse(rest) as Record<string, unknown>;
          } catch {
            this.lineWaiters.delete(waiter);
            reject(this.failure(`printed a READY line whose payload is not JSON: ${rest.slice(0, 200)}`, 'BB_SERVER_BAD_READY'));
            return;
          }
        }
        this.lineWaiters.delete(waiter);
        resolve(payload);
      };
      this.lineWaiters.add(waiter);
      setTimeout(() => this.lineWaiters.delete(waiter), Math.max(0, deadline - Date.now())).unref();
    });
  }

  private async probePort(port: number, deadline: number): Promise<void> {
    while (Date.now() < deadline && !this.exit) {
      const ok = await new Promise<boolean>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port });
        socket.setTimeout(500);
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('timeout', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', () => resolve(false));
      });
      if (ok) return;
      await sleep(50);
    }
    await new Promise(() => {}); // the timeout or the exit watcher reports it
  }

  private async probeHealth(url: string, deadline: number): Promise<void> {
    while (Date.now() < deadline && !this.exit) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer().catch(() => {});
        if (res.status >= 200 && res.status < 300) return;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    await new Promise(() => {});
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    if (this.pid > 0) {
      signalGroup(this.pid, 'SIGTERM');
      const graceEnd = Date.now() + this.graceMs;
      while (groupAlive(this.pid) && Date.now() < graceEnd) await sleep(25);
      if (groupAlive(this.pid)) {
        signalGroup(this.pid, 'SIGKILL');
        const killEnd = Date.now() + 2000;
        while (groupAlive(this.pid) && Date.now() < killEnd) await sleep(25);
      }
      await Promise.race([this.exited, sleep(1000)]);
      liveGroups.delete(this.pid);
    }
    live.delete(this);
    await Promise.all([new Promise((r) => this.out.end(r)), new Promise((r) => this.err.end(r))]);
    await rm(this.home, { recursive: true, force: true });
  }
}

/** "exit code 1" or "signal SIGKILL". */
export function describeExit(exit: ExitInfo): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}
