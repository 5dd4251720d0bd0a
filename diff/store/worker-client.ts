// The bounded store's handle on one side (store/side-work.ts): in a worker
// thread, so the two sides are read and normalized at once (the normalize
// pass is most of a big diff's time, and each side's is independent), or in
// the calling thread when the run carries code a worker cannot get (custom
// body parsers) or `workers: false` says so (BB_DIFF_WORKERS=0 on the command line).
import { CaptureReadError, type CaptureErrorCode } from '../../capture/index.js';
import { BbError, isBbError, startModuleWorker, type BbCode } from '../../core/index.js';
import type { Worker } from 'node:worker_threads';
import { SideWork, type EntryTexts, type SideSpec, type SideSummaries } from './side-work.js';
import type { DiffContext, PairFacts, SideHeader, Summarized } from '../context.js';
import type { BoundSet } from '../bind/index.js';
import { allKept, unpackSummaries, type PackedSummaries } from './pack.js';

/** A side as the bounded store uses it, wherever it runs. */
export interface SideHandle {
  /** The side's log facts. */
  readonly header: SideHeader;
  /** Reads every entry once; the side's distinct hosts. `onProgress`: entries read so far, now and then. `replayOf`: as SideStore.summarize's. */
  summarize(labels: Map<string, string>, onProgress?: (done: number) => void, pair?: PairFacts): Promise<Summarized>;
  /** The side's bound values, read once (SideStore.bound). */
  bound(pair?: PairFacts, ids?: boolean): Promise<BoundSet>;
  /** Summaries in comparison order (hosts in keys or not), and the chunks their `kept` refs point into. */
  finish(hosts: boolean): Promise<SideSummaries>;
  /** Entry `index` in kept form, normalized again. */
  load(index: number): Promise<EntryTexts>;
  /** Closes the file (and ends the thread). */
  close(): Promise<void>;
}

/** Messages to the worker. */
export type Request =
  | { id: number; op: 'summarize'; labels: Array<[string, string]>; pair?: PairFacts }
  | { id: number; op: 'bound'; pair?: PairFacts; ids?: boolean }
  | { id: number; op: 'finish'; hosts: boolean }
  | { id: number; op: 'load'; index: number }
  | { id: number; op: 'close' };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Messages back: id 0 answers the opening. */
export type Reply = { id: number; result: unknown } | { id: number; error: ErrorData } | { id: number; progress: number };

/** An error as data: what the CLI and library callers look at. */
export interface ErrorData {
  name: string;
  message: string;
  /** Set for a BbError: its code. */
  code?: string;
  /** Set for a CaptureReadError: the file. */
  file?: string;
  stack?: string;
}

/** An error as data, to cross from the worker. */
export function errorData(err: unknown): ErrorData {
  const e = err instanceof Error ? err : new Error(String(err));
  return {
    name: e.name,
    message: e.message,
    ...(isBbError(e) ? { code: e.code } : {}),
    ...(e instanceof CaptureReadError ? { file: e.file } : {}),
    ...(e.stack ? { stack: e.stack } : {}),
  };
}

/** The error again, of its class (a BbError stays one, so the CLI maps its code). */
export function fromErrorData(d: ErrorData): Error {
  let e: Error;
  if (d.file !== undefined && d.code) e = new CaptureReadError(d.code as CaptureErrorCode, d.message, { file: d.file });
  else if (d.code) e = new BbError(d.code as BbCode, d.message);
  else e = new Error(d.message);
  e.name = d.name;
  if (d.stack) e.stack = d.stack;
  return e;
}

const YOUNG_GENERATION_MB = 48;

/** The error of a worker that reached its heap limit reading `path`. */
function outOfMemory(path: string): BbError {
  return new BbError(
    'BB_DIFF_OUT_OF_MEMORY',
    `reading ${path} took a diff thread to Node's heap limit (its entries' summaries are held until they are paired); give Node more heap (NODE_OPTIONS=--max-old-space-size=8192 bb diff ...) or diff smaller captures (bb capture --rotate writes segments).`,
  );
}

function startWorker(spec: SideSpec): Worker {
  // A young generation bigger than the default: each entry read leaves short-lived
  // garbage (its parsed JSON, the normalized copy); fewer scavenges measured ~4% faster
  // than the default. 48 MB rather than 96: the same CPU within the noise of a shared
  // machine (issue 39), ~20 MiB less peak RSS for the two workers together.
  return startModuleWorker(import.meta.url, 'worker', spec, { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB });
}

class WorkerSide implements SideHandle {
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private failed: Error | undefined;
  private onProgress: ((done: number) => void) | undefined;
  /** Ended after finish (every entry kept): close has nothing left to do. */
  private ended = false;
  header!: SideHeader;

  private constructor(
    private readonly worker: Worker,
    path: string,
  ) {
    worker.on('message', (r: Reply) => {
      if ('progress' in r) {
        this.onProgress?.(r.progress);
        return;
      }
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      this.settled();
      if ('error' in r) p.reject(fromErrorData(r.error));
      else p.resolve(r.result);
    });
    const fail = (err: Error) => {
      this.failed ??= err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    // A side too large for the thread's heap: one line saying what to do, not the worker's stack.
    worker.on('error', (err: Error & { code?: string }) => fail(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? outOfMemory(path) : err));
    worker.on('exit', (code) => fail(new Error(`bb diff: a diff worker stopped (exit code ${code}); run again with BB_DIFF_WORKERS=0 to diff in one thread`)));
    // Only a pending request keeps the process alive: a run that throws
    // between stages leaves no thread holding it open.
    worker.unref();
  }

  static async open(spec: SideSpec): Promise<WorkerSide> {
    const w = new WorkerSide(startWorker(spec), spec.path);
    w.header = (await w.call(0, undefined)) as SideHeader;
    return w;
  }

  private settled(): void {
    if (this.pending.size === 0) this.worker.unref();
  }

  private call(id: number, req: Request | undefined): Promise<unknown> {
    if (this.failed) return Promise.reject(this.failed);
    this.worker.ref();
    const done = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (req) this.worker.postMessage(req);
    return done;
  }

  private request(req: DistributiveOmit<Request, 'id'>): Promise<unknown> {
    const id = this.nextId++;
    return this.call(id, { ...req, id } as Request);
  }

  async summarize(labels: Map<string, string>, onProgress?: (done: number) => void, pair?: PairFacts): Promise<Summarized> {
    this.onProgress = onProgress;
    try {
      return (await this.request({ op: 'summarize', labels: [...labels], ...(pair ? { pair } : {}) })) as Summarized;
    } finally {
      this.onProgress = undefined;
    }
  }

  async bound(pair?: PairFacts, ids?: boolean): Promise<BoundSet> {
    return (await this.request({ op: 'bound', ...(pair ? { pair } : {}), ...(ids ? { ids } : {}) })) as BoundSet;
  }

  async finish(hosts: boolean): Promise<SideSummaries> {
    const r = (await this.request({ op: 'finish', hosts })) as { list: PackedSummaries; chunks: ArrayBuffer[]; markers: Uint32Array; shapes: string[]; keyed: number[]; issued: Array<[number, string]> };
    // A side that kept every entry will load none: its thread (heap and all) ends before this
    // thread's copy of the summaries and the compare loop grow (the run's peak memory was here).
    if (allKept(r.list)) {
      await this.close();
      this.ended = true;
    }
    return { ...unpackSummaries(r.list, r.markers), chunks: r.chunks.map((b) => Buffer.from(b)), markers: r.markers, shapes: r.shapes, keyed: r.keyed, issued: r.issued };
  }

  async load(index: number): Promise<EntryTexts> {
    if (this.ended) throw new Error('bb diff: an entry was asked of a side whose thread had ended');
    return (await this.request({ op: 'load', index })) as EntryTexts;
  }

  async close(): Promise<void> {
    if (this.failed || this.ended) return;
    await this.request({ op: 'close' });
    await this.worker.terminate();
  }
}

/** Whether the sides of this run go to worker threads. */
export function useWorkers(ctx: DiffContext): boolean {
  return !ctx.options.bodyParsers && ctx.options.workers !== false;
}

/** Opens one side, in a worker when `useWorkers` says so. */
export async function openSide(ctx: DiffContext, which: 'old' | 'new'): Promise<SideHandle> {
  const spec: SideSpec = {
    path: ctx[which].path,
    which,
    ...(ctx[which].mayBeEmpty ? { mayBeEmpty: true } : {}),
    options: { config: ctx.config, allowIncomplete: ctx.options.allowIncomplete, serverHome: ctx.options.serverHome, timing: ctx.options.timing },
  };
  if (useWorkers(ctx)) return WorkerSide.open(spec);
  return SideWork.open(spec, ctx);
}
