// The comparison worker of a `bb shadow` run: follows the three captures'
// journals (capture's followEntries: entries as the HARs will hold them),
// compares whole groups with the diff's engine (compare.ts), and posts the
// run's report to the main thread every `everyMs`. Nothing here is on the
// proxy's path: a slow comparison delays only its own report.
// With `whole`, it is the end of a run whose live worker was starved
// (drain-watch.ts): it reads the journals from their start to their end at
// the process's priority, comparing as it reads, and posts the final report.
import { existsSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { followEntries, redactorFor } from '../../capture/index.js';
import { loadDiffConfig, type DiffConfig } from '../../diff/index.js';
import { ShadowComparer } from './compare.js';
import type { TargetName } from './live.js';
import { threadMemory, type ThreadMemory } from './thread-memory.js';
import { COMPARE_NICE, lowerThreadPriority, threadId } from './low-priority.js';

/** What the worker is started with. */
export interface CompareWorkerSpec {
  /** Journal and bodies file of each capture. */
  journals: Partial<Record<TargetName, { journal: string; bodies: string }>>;
  /** The targets' URLs, for the report. */
  targets: Partial<Record<TargetName, string>>;
  /** Request headers --header sets on each mirror target's copies (never compared, as `bb diff` reads them from the captures). */
  setHeaders?: Partial<Record<'candidate' | 'secondary', string[]>>;
  /** The diff config file, as `bb diff --config`. */
  configPath?: string;
  /** The file may not exist yet (`--ui` creates it when a finding is ratified): absent means no config. */
  configMayBeAbsent?: boolean;
  /** bb's home (the redaction key the journals name). */
  bbHome: string;
  /** How often to compare and report, ms. */
  everyMs: number;
  /** How often to read the journals, ms. */
  pollMs: number;
  /** When the run began (its report says so, whichever worker writes it). */
  startedDateTime: string;
  /** The run has ended: compare the journals whole, at the process's priority, and post the final report (no 'drain' comes). */
  whole?: boolean;
  /** With `whole`: the counterparts the relay learned from stream messages during the run (the live worker got them as 'counterparts'). */
  counterparts?: Partial<Record<'candidate' | 'secondary', Array<[string, string]>>>;
}

/**
 * Messages to the worker: end the run, or read the config file again (the
 * live view wrote to it); with rotating captures (rotation.ts), follow a
 * segment's journal too, or read the rest of one about to go, up to its
 * `entries` (answered with 'unfollowed'). Segment 1 of each target is the spec's `journals`, key `<side>:1`.
 */
export type ToWorker =
  | { type: 'drain' }
  | { type: 'counterparts'; side: 'candidate' | 'secondary'; pairs: Array<[string, string]> }
  | { type: 'config' }
  | { type: 'follow'; key: string; side: TargetName; journal: string; bodies: string }
  | { type: 'unfollow'; key: string; entries: number };
/** Messages from the worker. */
export type FromWorker =
  | { type: 'thread'; tid: number }
  | { type: 'report'; report: ReturnType<ShadowComparer['live']['report']>; final: boolean; memory: ThreadMemory }
  | { type: 'unfollowed'; key: string }
  | { type: 'error'; message: string };

const spec = workerData as CompareWorkerSpec;
/** How long a rotating capture's finished segment waits, at most, for its follower to read its last entries. */
const UNFOLLOW_WAIT_MS = 10_000;
/** How often that wait looks at the follower's count. */
const UNFOLLOW_CHECK_MS = 20;
/** Reading journals whole, the followers stop to compare what is ready each time the groups held grow by this many. */
const WHOLE_HELD_GROUPS = 2_000;

/** The config as the file now stands (none when there is no file yet and that is allowed). */
async function readConfig(): Promise<DiffConfig | undefined> {
  if (!spec.configPath || (spec.configMayBeAbsent && !existsSync(spec.configPath))) return undefined;
  return loadDiffConfig(spec.configPath);
}

async function main(): Promise<void> {
  // Off the relay's way: the worker runs on what the relay leaves of the cores (low-priority.ts). Its thread id
  // lets the main thread see, at the end of the run, whether it gets a core at all (drain-watch.ts).
  if (!spec.whole) {
    lowerThreadPriority(COMPARE_NICE);
    const tid = threadId();
    if (tid !== undefined) parentPort!.postMessage({ type: 'thread', tid } satisfies FromWorker);
  }
  const config = await readConfig();
  const comparer = new ShadowComparer({ secondary: spec.journals.secondary !== undefined, targets: spec.targets, startedDateTime: spec.startedDateTime, ...(spec.setHeaders ? { setHeaders: spec.setHeaders } : {}), ...(config ? { config } : {}) });
  for (const [side, pairs] of Object.entries(spec.counterparts ?? {}) as Array<['candidate' | 'secondary', Array<[string, string]>]>) comparer.teach(side, pairs);
  // One comparison at a time: a batch's groups leave the map only as it is compared.
  let comparing: Promise<number> | undefined;
  // Groups held after the last comparison of a whole reading.
  let heldFloor = 0;
  const compareNow = (): Promise<number> => (comparing ??= comparer.compareReady().finally(() => (comparing = undefined)));
  const stop = new AbortController();
  // A journal stays open after following ends until the long conversations it handed over have been read back
  // whole (followEntries closes it then: a rotated segment's as soon as they are), at the end of the run at the latest.
  let releaseFiles!: () => void;
  const filesHeld = new Promise<void>((r) => (releaseFiles = r));
  const followers = new Map<string, { finish: AbortController; done: Promise<unknown>; entries: number }>();
  const follow = (key: string, side: TargetName, files: { journal: string; bodies: string }): void => {
    const f = { finish: new AbortController(), done: Promise.resolve() as Promise<unknown>, entries: 0 };
    f.done = followEntries({
      journalPath: files.journal,
      bodiesPath: files.bodies,
      onEntry: (entry, whole) => {
        f.entries++;
        comparer.add(side, entry, whole);
      },
      redactorFor: (header) => redactorFor(header, spec.bbHome),
      pollMs: spec.pollMs,
      signal: stop.signal,
      finish: f.finish.signal,
      holdFilesUntil: filesHeld,
      // Read whole, a journal is compared as it is read: each time the groups held grow by a bound, what is ready
      // is compared first (groups that stay, a mirror's answer that never came, wait for the end).
      ...(spec.whole ? { pace: () => (comparer.waiting >= heldFloor + WHOLE_HELD_GROUPS ? compareNow().then(() => (heldFloor = comparer.waiting)) : undefined) } : {}),
    });
    if (spec.whole) f.finish.abort();
    followers.set(key, f);
  };
  for (const [side, files] of Object.entries(spec.journals) as Array<[TargetName, { journal: string; bodies: string }]>) follow(`${side}:1`, side, files);
  if (spec.whole) {
    // Samples the heap as it reads and compares, as the live worker does, so the reported peak is this reading's
    // (sampled only at the end, it was the heap after the last batch).
    const sampler = setInterval(threadMemory, 100);
    try {
      await Promise.all([...followers.values()].map((f) => f.done));
      while (comparing) await comparing;
      await comparer.compareReady(true);
    } finally {
      releaseFiles();
      clearInterval(sampler);
    }
    parentPort!.postMessage({ type: 'report', report: comparer.live.report(), final: true, memory: threadMemory() } satisfies FromWorker);
    return;
  }
  let busy = false;
  const tick = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      await comparer.compareReady();
      parentPort!.postMessage({ type: 'report', report: comparer.live.report(), final: false, memory: threadMemory() } satisfies FromWorker);
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick().catch(fail), spec.everyMs);
  // Samples the heap between batches too, so the reported peak sees the end of the run's comparisons.
  const sampler = setInterval(threadMemory, 100);
  parentPort!.on('message', (msg: ToWorker) => {
    if (msg.type === 'counterparts') {
      comparer.teach(msg.side, msg.pairs);
      return;
    }
    if (msg.type === 'config') {
      void readConfig().then((c) => c && comparer.useConfig(c), fail);
      return;
    }
    if (msg.type === 'follow') {
      follow(msg.key, msg.side, msg);
      return;
    }
    if (msg.type === 'unfollow') {
      const f = followers.get(msg.key);
      followers.delete(msg.key);
      // The segment has nothing in flight: once its last entry is read (its end may still be in the turn's
      // journal buffer when this comes; a follower behind on a busy machine gets up to UNFOLLOW_WAIT_MS),
      // the follower reads the rest to the end and stops.
      void (async () => {
        for (const until = Date.now() + UNFOLLOW_WAIT_MS; f && f.entries < msg.entries && Date.now() < until; ) await new Promise((r) => setTimeout(r, UNFOLLOW_CHECK_MS));
        f?.finish.abort();
        await f?.done;
        parentPort!.postMessage({ type: 'unfollowed', key: msg.key } satisfies FromWorker);
      })().catch(fail);
      return;
    }
    void (async () => {
      // The proxies are closed and the journals flushed: each follower reads its journal to the end, then stops.
      for (const f of followers.values()) f.finish.abort();
      await Promise.all([...followers.values()].map((f) => f.done));
      stop.abort();
      clearInterval(timer);
      while (busy) await new Promise((r) => setTimeout(r, 10));
      try {
        await comparer.compareReady(true);
      } finally {
        releaseFiles();
      }
      clearInterval(sampler);
      parentPort!.postMessage({ type: 'report', report: comparer.live.report(), final: true, memory: threadMemory() } satisfies FromWorker);
    })().catch(fail);
  });
}

function fail(err: unknown): void {
  parentPort!.postMessage({ type: 'error', message: (err as Error).message } satisfies FromWorker);
}

main().catch(fail);
