// The scenario API: `defineScenario(async (t) => { ... })`.
//
// A scenario drives one server through a base URL (bb's proxy in front of it)
// and marks steps through a callback (the capture's step: a HAR page). drive
// knows nothing of the proxy or the capture: it gets a URL and a function.
//
//     export default defineScenario(async (t) => {
//       await t.step('create session', async () => {
//         const res = await t.http.post('/v1/sessions', { title: 'a' }, { expect: 201 });
//       });
//     });
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHttpClient, type HttpClient } from './http-client.js';
import { openWs, type WsClient, type WsOptions } from './ws-client.js';
import { BbError, isBbError } from '../../core/index.js';

export type { HttpClient, HttpResponse, RequestOptions, SseEvent } from './http-client.js';
export type { WsClient, WsOptions, MessageMatch } from './ws-client.js';

/** What a scenario function receives. */
export interface ScenarioContext {
  /** The server's label ("old", "new"). */
  readonly label: string;
  /** The server's readiness payload (e.g. { port, token }). */
  readonly ready: Readonly<Record<string, unknown>>;
  /** The base URL traffic goes to (the proxy's). */
  readonly baseUrl: string;
  /** HTTP helpers bound to baseUrl. */
  readonly http: HttpClient;
  /** Opens a WebSocket to a path on baseUrl; closed for you at the end if you forget. */
  ws(path: string, opts?: WsOptions): Promise<WsClient>;
  /** Runs fn as a named step (a HAR page); a throw fails the run naming the step. */
  step<T>(name: string, fn: () => Promise<T> | T, opts?: { timeoutMs?: number }): Promise<T>;
}

/** A scenario function. */
export type ScenarioFn = (t: ScenarioContext) => Promise<void> | void;

/** A scenario as defineScenario makes it (recognized by shape, so two copies of this module agree). */
export interface Scenario {
  /** Marks the object as a scenario. */
  readonly kind: 'bb-scenario';
  /** The function to run. */
  readonly run: ScenarioFn;
  /** Default bound per step (30 s when absent). */
  readonly stepTimeoutMs?: number;
}

/** Declares a scenario; export it as the module's default. */
export function defineScenario(run: ScenarioFn, opts: { stepTimeoutMs?: number } = {}): Scenario {
  return Object.freeze({ kind: 'bb-scenario' as const, run, ...opts });
}

/** Options of driveScenario. */
export interface DriveOptions {
  /** Where traffic goes (the proxy's URL). */
  baseUrl: string;
  /** The server's label. */
  label: string;
  /** The readiness payload. */
  ready: Record<string, unknown>;
  /** Called when a step starts (the capture's step). */
  step: (name: string) => void;
  /** Default bound per step, overriding the scenario's. */
  stepTimeoutMs?: number;
  /** Aborts the run (Ctrl-C, or the server died). */
  signal?: AbortSignal;
}

/** What a finished drive reports. */
export interface DriveResult {
  /** Steps run, in order, with their durations. */
  steps: Array<{ name: string; ms: number }>;
}

/** Runs a scenario against baseUrl; throws a BbError naming the step that failed. */
export async function driveScenario(scenario: Scenario, opts: DriveOptions): Promise<DriveResult> {
  const http = await createHttpClient(opts.baseUrl);
  const sockets: WsClient[] = [];
  const steps: DriveResult['steps'] = [];
  const defaultTimeout = opts.stepTimeoutMs ?? scenario.stepTimeoutMs ?? 30_000;
  let current: string | undefined;
  const wsBase = opts.baseUrl.replace(/^http/, 'ws').replace(/\/$/, '');
  // One listener on the signal for the whole drive, shared by every race below.
  const abort = aborted(opts.signal);
  abort.catch(() => {});

  const t: ScenarioContext = {
    label: opts.label,
    ready: Object.freeze({ ...opts.ready }),
    baseUrl: http.baseUrl,
    http,
    async ws(path, wsOpts) {
      const client = await openWs(wsBase + (path.startsWith('/') ? path : `/${path}`), wsOpts);
      sockets.push(client);
      return client;
    },
    async step(name, fn, stepOpts) {
      if (current !== undefined) throw new Error(`step "${name}" starts inside step "${current}"; steps do not nest`);
      const timeoutMs = stepOpts?.timeoutMs ?? defaultTimeout;
      current = name;
      const t0 = Date.now();
      opts.step(name);
      let timer: NodeJS.Timeout | undefined;
      try {
        const timedOut = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`did not finish within ${timeoutMs} ms`)), timeoutMs);
        });
        return await Promise.race([Promise.resolve().then(fn), timedOut, abort]);
      } catch (err) {
        if (isBbError(err)) throw err;
        throw new BbError('BB_STEP_FAILED', `scenario step "${name}" (${opts.label}) failed: ${(err as Error)?.message ?? String(err)}`);
      } finally {
        clearTimeout(timer);
        steps.push({ name, ms: Date.now() - t0 });
        current = undefined;
      }
    },
  };

  let failed = true;
  try {
    await Promise.race([Promise.resolve().then(() => scenario.run(t)), abort]);
    failed = false;
  } catch (err) {
    if (isBbError(err)) throw err;
    throw new BbError('BB_SCENARIO_FAILED', `scenario (${opts.label}) failed outside any step: ${(err as Error)?.message ?? String(err)}`);
  } finally {
    await Promise.all(sockets.map((s) => s.close().catch(() => {})));
    // After a failure, requests still in flight are abandoned rather than awaited.
    await (failed ? http.destroy() : http.close()).catch(() => {});
  }
  return { steps };
}

/** Rejects when the signal aborts, with its reason (never settles without a signal). */
function aborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (!signal) return;
    const fire = () => reject(signal.reason instanceof Error ? signal.reason : new BbError('BB_INTERRUPTED', 'the run was interrupted'));
    if (signal.aborted) fire();
    else signal.addEventListener('abort', fire, { once: true });
  });
}

/** Loads a scenario module (.ts/.mts/.cts through tsx, else plain import); its default export is the scenario. */
export async function loadScenario(path: string): Promise<Scenario> {
  const file = resolve(path);
  const url = pathToFileURL(file).href;
  let mod: Record<string, unknown>;
  try {
    if (['.ts', '.mts', '.cts', '.tsx'].includes(extname(file))) {
      const { tsImport } = await import('tsx/esm/api');
      mod = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
    } else {
      mod = (await import(url)) as Record<string, unknown>;
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code === 'ERR_MODULE_NOT_FOUND' && e.message.includes(file)) {
      throw new BbError('BB_SCENARIO_MISSING', `scenario module ${file} does not exist.`);
    }
    throw new BbError('BB_SCENARIO_LOAD', `scenario module ${file} could not be loaded: ${e.message.split('\n')[0]}`);
  }
  let found = mod.default as unknown;
  // tsx may wrap a CommonJS-looking module's default once more.
  if (found && typeof found === 'object' && 'default' in found && (found as unknown as Scenario).kind !== 'bb-scenario') {
    found = (found as { default: unknown }).default;
  }
  if (typeof found === 'function') return defineScenario(found as ScenarioFn);
  if (found && typeof found === 'object' && (found as Scenario).kind === 'bb-scenario') return found as Scenario;
  throw new BbError('BB_SCENARIO_SHAPE', `scenario module ${file} has no default export: write \`export default defineScenario(async (t) => { ... })\`.`);
}
