// Runs the real bb binary as a child process (node bin/bb.js, so signals reach bb itself).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Absolute path of bin/bb.js. */
export const BB_BIN = fileURLToPath(new URL('../../bin/bb.js', import.meta.url));

/** A running bb with its output collected. */
export interface BbProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout match of `pattern` (waits up to timeoutMs). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (or 128+signal). */
  exited: Promise<number>;
}

/** Starts bb with args; env merges over process.env (NO_COLOR set). */
export function startBb(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): BbProcess {
  const child = spawn(process.execPath, [BB_BIN, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child);
}

/** Quotes one word for sh. */
const shellWord = (w: string): string => `'${w.replace(/'/g, `'\\''`)}'`;

/**
 * Starts bb on a pseudo-terminal (util-linux `script`), as a person at a
 * terminal runs it: stdout and stderr are a TTY, both arrive on stdout(), and
 * `type('\x03')` is a Ctrl-C (the terminal turns it into SIGINT for bb).
 */
export function startBbOnTty(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): BbProcess & { type(text: string): void } {
  // `exec`: bb is the pty's foreground process itself. Under a shell that
  // stays in between (dash, /bin/sh where SHELL is unset), a Ctrl-C bb handles
  // would still end the shell with 130 once bb exits.
  const command = 'exec ' + [process.execPath, BB_BIN, ...args].map(shellWord).join(' ');
  const child = spawn('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return Object.assign(collect(child), { type: (text: string) => void child.stdin!.write(text) });
}

function collect(child: ChildProcess): BbProcess {
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const exited = new Promise<number>((r) => child.on('close', (code, signal) => r(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15))));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitFor(pattern, timeoutMs = 10_000) {
      const start = Date.now();
      for (;;) {
        const m = out.match(pattern);
        if (m) return m;
        if (child.exitCode !== null || Date.now() - start > timeoutMs) {
          throw new Error(`bb never printed ${pattern}; stdout: ${out}\nstderr: ${err}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** Runs bb to completion. */
export async function runBb(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = startBb(args, env, cwd);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}
