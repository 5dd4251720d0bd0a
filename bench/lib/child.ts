// Benchmark helper processes: the upstream and each proxy run in their own
// process, so the proxy's CPU and memory can be read alone from /proc. They
// are TypeScript files, compiled to plain JavaScript first (compile.ts: no
// tsx inside a measured process), and speak over Node's IPC channel:
//
//   child → parent  { type: 'ready', port }            once it listens
//   parent → child  { type: 'ask', id, what }           e.g. what = 'stats' or 'close'
//   child → parent  { type: 'answer', id, value }       the answer to one ask
//
// Every child the benchmark starts is stopped by its own pid (never by name).
// The child side is serve.ts (kept apart: a helper must not load the compiler).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileForNode } from './compile.js';

import type { ChildMessage } from './serve.js';

/** A running helper process. */
export interface Helper {
  /** Its pid (for /proc). */
  pid: number;
  /** The port it listens on. */
  port: number;
  /** Asks it something; resolves to its answer. */
  ask<T = unknown>(what: string, timeoutMs?: number): Promise<T>;
  /** Ends it: asks it to close (bounded), then SIGKILLs its pid if it is still there. */
  stop(): Promise<void>;
  /** The process itself. */
  process: ChildProcess;
}

/** The absolute path of a file beside bench/ (e.g. helperPath('proxy-peer.ts')). */
export function benchPath(name: string): string {
  return fileURLToPath(new URL(`../${name}`, import.meta.url));
}

let compiledDir: string | undefined;
const compiled = new Map<string, string>();

/** Starts `node [nodeFlags] <script compiled to JS> ...args` (no tsx in the measured process) and waits for its ready message. */
export async function startHelper(script: string, args: string[], nodeFlags: string[] = [], readyTimeoutMs = 30_000): Promise<Helper> {
  if (!compiledDir) {
    compiledDir = mkdtempSync(join(tmpdir(), 'bb-bench-js-'));
    process.once('exit', () => rmSync(compiledDir!, { recursive: true, force: true }));
  }
  const entry = compileForNode(script, compiledDir, compiled);
  const child = spawn(process.execPath, [...nodeFlags, entry, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', (code, signal) => {
    exited = true;
    for (const w of waiting.values()) w.reject(new Error(`${script} exited (${code ?? signal}) before answering`));
    waiting.clear();
  });
  child.on('message', (msg: ChildMessage) => {
    if (msg.type !== 'answer') return;
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error) w.reject(new Error(msg.error));
    else w.resolve(msg.value);
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} was not ready after ${readyTimeoutMs} ms`)), readyTimeoutMs);
    child.on('message', (msg: ChildMessage) => {
      if (msg.type === 'ready') {
        clearTimeout(timer);
        resolve(msg.port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before it was ready`));
    });
  }).catch((err: Error) => {
    if (!exited) child.kill('SIGKILL');
    throw err;
  });
  const ask = <T>(what: string, timeoutMs = 120_000): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) {
        reject(new Error(`${script} is not running`));
        return;
      }
      const id = ++nextId;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`${script} did not answer '${what}' within ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      // A child whose channel has just closed (its exit not yet seen) fails the send: that rejects this ask, not the run.
      child.send({ type: 'ask', id, what } satisfies ChildMessage, (err) => {
        if (!err) return;
        waiting.delete(id);
        clearTimeout(timer);
        reject(new Error(`${script} could not be asked '${what}': ${err.message}`));
      });
    });
  return {
    pid: child.pid!,
    port,
    process: child,
    ask,
    async stop() {
      if (exited) return;
      await Promise.race([ask('close', 180_000).catch(() => undefined), exitedPromise]);
      await Promise.race([exitedPromise, new Promise((r) => setTimeout(r, 5_000))]);
      if (!exited) child.kill('SIGKILL');
      await exitedPromise;
    },
  };
}
