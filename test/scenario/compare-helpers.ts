// Shared by the bb compare tests: spawn the real CLI, write configs around the demo.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute paths the tests need. */
export const paths = {
  bin: fileURLToPath(new URL('../../bin/bb.js', import.meta.url)),
  repo: fileURLToPath(new URL('../../', import.meta.url)),
  demoDir: fileURLToPath(new URL('../../scenario/demo/', import.meta.url)),
  demoConfig: fileURLToPath(new URL('../../scenario/demo/bb.config.json', import.meta.url)),
  demoServer: fileURLToPath(new URL('../../dist/scenario/demo/server.js', import.meta.url)),
  demoScenario: fileURLToPath(new URL('../../scenario/demo/scenario.ts', import.meta.url)),
  fixtureServer: fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url)),
};

/** What a finished bb run printed. */
export interface BbRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Spawns `node bin/bb.js ...args`; `onSpawn` gets the child (e.g. to signal it). Killed by pid after timeoutMs. */
export function runBb(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 45_000, onSpawn?: (child: ChildProcess) => void): Promise<BbRun> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [paths.bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  onSpawn?.(child);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

/** The demo config with absolute paths, its servers' args changed by `edit`, written into dir. */
export async function demoConfigWith(
  dir: string,
  name: string,
  edit: { oldArgs?: string[]; newArgs?: string[]; scenario?: string; extra?: Record<string, unknown> } = {},
): Promise<string> {
  const doc = JSON.parse(await readFile(paths.demoConfig, 'utf8'));
  doc.servers.old.args = [paths.demoServer, '--variant', 'old', ...(edit.oldArgs ?? [])];
  doc.servers.new.args = [paths.demoServer, '--variant', 'new', ...(edit.newArgs ?? [])];
  doc.servers.old.cwd = doc.servers.new.cwd = paths.demoDir;
  doc.scenario = edit.scenario ?? paths.demoScenario;
  Object.assign(doc, edit.extra ?? {});
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(doc, null, 2));
  return file;
}
