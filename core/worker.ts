// Starting a worker thread on one of bb's own modules, from dist/ (.js) or
// from source (.ts, the tests): a worker started on a .ts file does not get
// tsx's loader hooks from `--import tsx`, so it registers tsx itself first.
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Starts a worker on the module `name` (without extension) beside `from` (the caller's import.meta.url). */
export function startModuleWorker(from: string, name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const fromSource = extname(fileURLToPath(from)) === '.ts';
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, from);
  const options = { workerData, ...(resourceLimits ? { resourceLimits } : {}) };
  if (!fromSource) return new Worker(url, options);
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { eval: true, ...options });
}
