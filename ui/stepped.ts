// A feed's snapshot made in steps on the proxy's thread: a few ms a turn of
// the loop, so the relay keeps serving while a page opens on a long capture.
// What the captures tell meanwhile waits, in order, and is told once the
// snapshot's last event is sent; a feed may drop a waiting event the
// snapshot will send fresher anyway (the exchanges feed: a row not listed
// yet). Past `waitingMax` waiting events (a busy capture) the rest of the
// snapshot is made at once: the wait stays bounded. Used by the frames feed
// (its window) and the exchanges feed (its rows).
import { LiveCaptureClosed } from '../capture/index.js';

/** How long a turn of the loop makes a snapshot, at most (then the next turn goes on: the relay shares the thread). */
export const SNAPSHOT_TURN_MS = 4;
/** The captures' events that wait for a snapshot being made, at most (then it is finished at once). */
export const WAITING_MAX = 20_000;

/** A snapshot under way: the captures' events go through `tell`; `stop` ends it (the page left). */
export interface SteppedSnapshot<E> {
  /** An event of the captures: told now once the snapshot is out, else kept (unless the feed drops it) and told after. */
  tell(event: E): void;
  stop(): void;
}

/**
 * Runs `steps` (each `yield` may end a turn) a few ms a turn when the page's stream lets the snapshot go on past
 * open (`snapshotGoesOn`), else all at once. `told` gets the captures' events once the snapshot is out; `keeps`
 * says whether an event that came meanwhile is still told after it (default: all are). `what` names the snapshot
 * in the one line bb says if making it fails for another cause than the capture closing under it.
 */
export function steppedSnapshot<E>(options: {
  steps: Generator<void>;
  snapshotGoesOn: (() => () => void) | undefined;
  told: (event: E) => void;
  keeps?: (event: E) => boolean;
  waitingMax?: number;
  /** SNAPSHOT_TURN_MS (a test makes it 0: a step a turn). */
  turnMs?: number;
  what: string;
}): SteppedSnapshot<E> {
  const { steps, told, keeps } = options;
  const waitingMax = options.waitingMax ?? WAITING_MAX;
  const turnMs = options.turnMs ?? SNAPSHOT_TURN_MS;
  let waiting: E[] | undefined = [];
  let hurry = false;
  let stopped = false;
  const done = options.snapshotGoesOn?.();
  const step = (): void => {
    if (stopped) return;
    const started = performance.now();
    do {
      let last: boolean | undefined;
      try {
        last = steps.next().done;
      } catch (err) {
        // The capture closed under it (bb is ending): the page gets what was sent. Anything else is bb's fault, said
        // once; the page keeps what it got and the recording goes on (this runs on the proxy's thread).
        stopped = true;
        done?.();
        if (!(err instanceof LiveCaptureClosed)) console.error(`bb: ui: ${options.what} could not be made: ${(err as Error).message}`);
        return;
      }
      if (!last) continue;
      const kept = waiting!;
      waiting = undefined;
      done?.();
      for (const event of kept) told(event);
      return;
    } while (!done || hurry || performance.now() - started < turnMs);
    setImmediate(step);
  };
  step();
  return {
    tell(event) {
      if (!waiting) return told(event);
      if (keeps && !keeps(event)) return;
      if (waiting.push(event) > waitingMax) hurry = true;
    },
    stop() {
      stopped = true;
    },
  };
}
