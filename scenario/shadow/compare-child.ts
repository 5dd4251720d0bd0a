// The run's side of the comparison process (compare-process.ts): starts it
// with child_process.fork at the lowest priority, carries the messages both
// ways, and turns its death into one line. The comparison's work and its
// garbage collection then run on V8 helper threads of its own process, all at
// nice 19, instead of the relay's process's (docs/performance.md "shadow").
// The child exits when its IPC channel closes, so a SIGKILLed run leaves no
// orphan; a child that dies mid-run costs the live comparison only: the
// proxies go on recording and the captures are written.
import { setPriority } from 'node:os';
import { BbError, forkModule, oneLine } from '../../core/index.js';
import type { CompareSpec, FromCompare, ToCompare } from './compare-process.js';
import { COMPARE_NICE } from './low-priority.js';
import type { ShadowReport } from './live.js';
import type { ThreadMemory } from './thread-memory.js';

/**
 * The comparison process's semi-space, MiB (its young generation is about
 * three of them). V8's default lets the young generation grow to 48 MiB of
 * mostly garbage (each batch's parsed entries and normalized copies): capped,
 * the long run's RSS is ~35 MiB lower (docs/performance.md "shadow") and the
 * comparison still keeps up.
 */
const COMPARE_SEMI_SPACE_MB = 3;
/** Bytes of the child's stderr kept for the line that says why it died. */
const STDERR_KEPT = 4096;
/** How long a drained child gets to exit before it is killed, ms. */
const EXIT_WAIT_MS = 2_000;

/** What the run hears from the comparison process. */
export interface CompareEvents {
  /** A report (every `everyMs`, and the final one after 'drain'). */
  report(report: ShadowReport, final: boolean): void;
  /** A rotation's segment is read to its end (the answer to 'unfollow'). */
  unfollowed(key: string): void;
  /** The comparison failed or its process died: no more reports come. */
  failed(err: BbError): void;
}

/** A running comparison process. */
export interface CompareChild {
  /** Its process id (its CPU and memory count with the run's: the benchmark sums them). */
  pid: number | undefined;
  /** Its heap as of its last report. */
  memory(): ThreadMemory | undefined;
  /** Sends a message (nothing once it is gone). */
  send(msg: ToCompare): void;
  /** Ends it: closes its channel (it exits on that) and waits for it to go. */
  stop(): Promise<void>;
}

/** Starts the comparison process on `spec`. */
export function startCompareChild(spec: CompareSpec, on: CompareEvents): CompareChild {
  const child = forkModule(import.meta.url, 'compare-process', [`--max-semi-space-size=${COMPARE_SEMI_SPACE_MB}`]);
  // Lowered at once from here (every OS), and every thread of it by itself as it starts (Linux: per thread).
  try {
    if (child.pid !== undefined) setPriority(child.pid, COMPARE_NICE);
  } catch {
    // Refused (a sandbox): the child still lowers what it can itself.
  }
  let memory: ThreadMemory | undefined;
  let stopping = false;
  let gone = false;
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_KEPT)));
  const fail = (why: string): void => {
    if (gone) return;
    gone = true;
    on.failed(new BbError('BB_SHADOW_COMPARE', `the live comparison failed: ${why}; the captures are still written, and bb diff compares them offline`));
  };
  child.on('message', (msg: FromCompare) => {
    if (msg.type === 'unfollowed') on.unfollowed(msg.key);
    else if (msg.type === 'error') fail(oneLine(msg.message));
    else if (!gone) {
      memory = msg.memory;
      on.report(msg.report, msg.final);
    }
  });
  // Gone once it has exited and its stderr is read to the end (not 'close': with the IPC channel closed by
  // disconnect() it does not come).
  const stderrRead = child.stderr ? new Promise<void>((res) => child.stderr!.once('close', () => res())) : Promise.resolve();
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((res) => child.once('exit', (code, signal) => res([code, signal])));
  const ended = Promise.all([exited, stderrRead]).then(([[code, signal]]) => {
    if (stopping) return;
    // The last line it wrote (an uncaught error's message), if any: the cause in its own words.
    const last = stderr.trim().split('\n').filter((l) => l.trim() && !/^\s+at /.test(l)).pop();
    fail(`its process ${signal ? `was killed by ${signal}` : `exited with code ${code}`}${last ? ` (${oneLine(last).slice(0, 200)})` : ''}`);
  });
  child.on('error', (err) => fail(`its process could not run (${oneLine(err.message)})`));
  child.send({ type: 'start', spec } satisfies ToCompare);
  return {
    pid: child.pid,
    memory: () => memory,
    send(msg) {
      if (!gone && child.connected) child.send(msg);
    },
    async stop() {
      stopping = true;
      gone = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WAIT_MS);
      await ended;
      clearTimeout(timer);
    },
  };
}
