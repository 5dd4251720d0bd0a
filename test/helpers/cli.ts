// Runs the real bb binary as a child process (node bin/bb.js, so signals
// reach bb itself): the one way the suite starts bb. Every bb it starts that
// is still running when the test file ends is killed then.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { atFileEnd } from './cleanups.js';

/** Absolute path of bin/bb.js. */
export const BB_BIN = fileURLToPath(new URL('../../bin/bb.js', import.meta.url));

/** How long runBb lets bb run before it kills it (a bb that hangs fails its test, not the whole run). */
export const RUN_TIMEOUT_MS = 30_000;

/** How to start bb, besides its arguments and environment. */
export interface BbOptions {
  /** The folder bb runs in. */
  cwd?: string;
  /** SIGKILL bb after this many ms (runBb: RUN_TIMEOUT_MS unless given; startBb: not unless given). */
  timeoutMs?: number;
  /**
   * A shell command to run first (`ulimit -f 768`, `umask 000`): sh runs it,
   * then execs bb in its place, so bb keeps the pid and gets the signals.
   */
  sh?: string;
  /** Flags for node itself, before bin/bb.js (`--stack-size=200`); not with `sh`. */
  nodeFlags?: string[];
}

/** A running bb with its output collected. */
export interface BbProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout match of `pattern` (waits up to timeoutMs; throws, with the output, if bb exits first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (or 128 + the signal's number; -1 when bb could not be started). */
  exited: Promise<number>;
  /** True when bb was killed for running past its timeoutMs. */
  timedOut(): boolean;
}

/**
 * Starts bb with args. `env` merges over process.env and NO_COLOR=1 (give a
 * variable `undefined` to leave it unset).
 */
export function startBb(args: string[], env: NodeJS.ProcessEnv = {}, opts: BbOptions = {}): BbProcess {
  const [command, argv] = opts.sh
    ? ['sh', ['-c', `${opts.sh} && exec "$0" "$@"`, process.execPath, BB_BIN, ...args]]
    : [process.execPath, [...(opts.nodeFlags ?? []), BB_BIN, ...args]];
  const child = spawn(command, argv, { env: { ...process.env, NO_COLOR: '1', ...env }, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, opts.timeoutMs);
}

/** Quotes one word for sh. */
const shellWord = (w: string): string => `'${w.replace(/'/g, `'\\''`)}'`;

/**
 * Starts bb on a pseudo-terminal (util-linux `script`), as a person at a
 * terminal runs it: stdout and stderr are a TTY, both arrive on stdout(), and
 * `type('\x03')` is a Ctrl-C (the terminal turns it into SIGINT for bb).
 */
export function startBbOnTty(args: string[], env: NodeJS.ProcessEnv = {}, opts: Omit<BbOptions, 'sh'> = {}): BbProcess & { type(text: string): void } {
  // `exec`: bb is the pty's foreground process itself. Under a shell that
  // stays in between (dash, /bin/sh where SHELL is unset), a Ctrl-C bb handles
  // would still end the shell with 130 once bb exits.
  const command = 'exec ' + [process.execPath, BB_BIN, ...args].map(shellWord).join(' ');
  const child = spawn('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return Object.assign(collect(child, opts.timeoutMs), { type: (text: string) => void child.stdin!.write(text) });
}

function collect(child: ChildProcess, timeoutMs?: number): BbProcess {
  let out = '';
  let err = '';
  let timedOut = false;
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const running = () => child.exitCode === null && child.signalCode === null;
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  atFileEnd(() => {
    if (running()) child.kill('SIGKILL');
  });
  const exited = new Promise<number>((resolve) => {
    child.on('error', (e) => {
      err += `could not start bb: ${e.message}\n`;
      clearTimeout(timer);
      resolve(-1);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    timedOut: () => timedOut,
    async waitFor(pattern, timeoutMs = 30_000) {
      const start = Date.now();
      for (;;) {
        const m = out.match(pattern);
        if (m) return m;
        if (!running() || Date.now() - start > timeoutMs) {
          throw new Error(`bb never printed ${pattern}; stdout: ${out}\nstderr: ${err}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** What a finished bb run gave. */
export interface BbRun {
  code: number;
  stdout: string;
  stderr: string;
  /** True when bb was killed for running past its timeout. */
  timedOut: boolean;
}

/** Runs bb to completion (killed after opts.timeoutMs, RUN_TIMEOUT_MS by default). */
export async function runBb(args: string[], env: NodeJS.ProcessEnv = {}, opts: BbOptions = {}): Promise<BbRun> {
  const p = startBb(args, env, { timeoutMs: RUN_TIMEOUT_MS, ...opts });
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr(), timedOut: p.timedOut() };
}
