// Starting a worker thread or a child process on one of bb's own modules,
// from dist/ (.js) or from source (.ts, the tests): a worker started on a
// .ts file does not get tsx's loader hooks from `--import tsx`, so it
// registers tsx itself first; a child process on a .ts file is started with
// `--import tsx` (resolved here, so the child's cwd does not matter).
import { fork, type ChildProcess } from 'node:child_process';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The module `name` (without extension) beside `from` (the caller's import.meta.url), and whether it is TypeScript source. */
function moduleBeside(from: string, name: string): { url: URL; fromSource: boolean } {
  const fromSource = extname(fileURLToPath(from)) === '.ts';
  return { url: new URL(`./${name}${fromSource ? '.ts' : '.js'}`, from), fromSource };
}

/** Starts a worker on the module `name` (without extension) beside `from` (the caller's import.meta.url). */
export function startModuleWorker(from: string, name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const { url, fromSource } = moduleBeside(from, name);
  const options = { workerData, ...(resourceLimits ? { resourceLimits } : {}) };
  if (!fromSource) return new Worker(url, options);
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { eval: true, ...options });
}

/**
 * Starts a child process (child_process.fork: an IPC channel, structured-clone
 * messages) on the module `name` beside `from`, with these V8 flags and none
 * of this process's own (an --inspect here must not open a second debugger
 * there). Its stdout is dropped and its stderr piped, for the caller to read.
 */
export function forkModule(from: string, name: string, v8Flags: string[] = []): ChildProcess {
  const { url, fromSource } = moduleBeside(from, name);
  const execArgv = [...(fromSource ? ['--import', import.meta.resolve('tsx')] : []), ...v8Flags];
  return fork(fileURLToPath(url), [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
}
