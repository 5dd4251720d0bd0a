// A capture cut into segments (`bb capture --rotate 64MB|10m`, and
// `bb shadow --rotate`: docs/shadow.md "Rotating captures"): each segment is a capture of its own (capture.ts: its
// own journal and bodies, finished into its own HAR by writer.ts, recoverable
// with `bb recover` while it is written), and an exchange belongs to the
// segment it started in, however long it lasts. The segments share one seq
// counter, so `_bb.seq` runs on across files and segment k holds exactly
// the exchanges whose seq lies in its range. A segment is cut (closed to new
// exchanges) once its files pass the size or its age passes the time, and
// finished into `<name>-000k.har` once its last exchange has ended (and
// whatever else the owner waits for: a shadow's mirrors, scenario/shadow/rotation.ts).
// Only the segments still open are in memory (their per-exchange state, as
// any capture's); their entries are on disk until the HAR is written.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Fact } from '../proxy/index.js';
import { BbError, escapeRegExp } from '../core/index.js';
import { openCaptureNow, type Capture, type CaptureOptions, type CaptureStats, type SecretsCarried } from './capture.js';
import { journalPaths, type CapturePaths } from './options.js';

/** When a segment is cut: past this many bytes (journal and bodies), or this long after it opened. */
export interface RotateSpec {
  /** Bytes of the segment's journal and bodies files. */
  bytes?: number;
  /** Age of the segment, ms. */
  ms?: number;
}

/** How often the segment in progress is measured and finished segments are written, ms. */
const TICK_MS = 100;

/** The HAR path of segment `index` (1, 2, …) of a capture named `out`: captures/primary.har → captures/primary-0001.har. */
export function segmentPath(out: string, index: number): string {
  const stem = out.endsWith('.har') ? out.slice(0, -4) : out;
  return `${stem}-${String(index).padStart(4, '0')}.har`;
}

/** The exchange-started fact, which decides an exchange's segment. */
export type StartFact = Extract<Fact, { type: 'exchange-started' }>;

/** How to cut a capture into segments. */
export interface SegmentedCaptureOptions extends CaptureOptions {
  /** When the segment in progress is cut. Absent: `pick` alone places exchanges (a shadow's mirror follows its primary's segments). */
  rotate?: RotateSpec;
  /** The segment an exchange belongs to, decided elsewhere (undefined: the newest); segments are then never cut by size or age, so give `mayFinish` too. */
  pick?: (fact: StartFact) => number | undefined;
  /** Whether a segment with nothing in flight may be finished now (default: once it is cut). */
  mayFinish?: (index: number) => boolean;
  /** Told each segment's files when it opens. */
  onOpen?: (index: number, files: CapturePaths) => void;
  /** Awaited before a segment's HAR is written, with its entry count (its journal is still in place: a follower reads its end). */
  beforeFinish?: (index: number, entries: number) => Promise<void>;
  /** Told each segment's HAR once it is in place. */
  onFinished?: (index: number, out: string) => void;
  /** Given the capture as soon as it exists, before its first segment opens (its owner ties it to others: a shadow's mirrors to its primary). */
  attach?: (capture: SegmentedCapture) => void;
}

/** A capture written as finished segments. */
export interface SegmentedCapture extends Capture {
  /** Opens every segment up to `index` (a mirror's segments keep pace with its primary's, empty ones too). */
  ensure(index: number): void;
  /** The segment whose seq range holds `seq` (the newest when past every cut). */
  segmentOfSeq(seq: number): number | undefined;
  /** The last seq of a cut segment (undefined while it takes exchanges). */
  lastSeq(index: number): number | undefined;
  /** A segment is cut and nothing of it is in flight (its HAR is written or being written). */
  drained(index: number): boolean;
}

interface Segment {
  index: number;
  capture: Capture;
  files: CapturePaths;
  /** The first seq it may hold (the counter + 1 when it opened). */
  first: number;
  /** The last, once cut. */
  last?: number;
  openedAt: number;
  /** Exchanges started in it. */
  started: number;
  /** Its HAR is being written: it takes no more exchanges. */
  finishing?: boolean;
}

/** Opens a capture that writes `<out stem>-0001.har`, `-0002.har`, …; refuses segments or journals of an earlier run in the way (segments without force). */
export function openSegmentedCapture(opts: SegmentedCaptureOptions): SegmentedCapture {
  const out = resolve(opts.out);
  const r = opts.rotate;
  if (r && !((r.bytes ?? 0) >= 1 || (r.ms ?? 0) >= 1)) throw new BbError('BB_BAD_ROTATE', `rotate needs bytes or ms above 0 (a segment's size or age), got ${JSON.stringify(r)}`);
  checkNoSegments(out, opts.force === true);
  const seqs = { n: 0 };
  // The newest segment's secrets remembered by value: the next one starts knowing them (a session cookie set before a cut).
  const secrets: SecretsCarried = {};
  const open = new Map<number, Segment>();
  const owner = new Map<number, Segment>();
  let newest: Segment | undefined;
  // Each segment's seq range, by index - 1 (two numbers a segment: a mirror places late answers by them).
  const ranges: Array<{ first: number; last?: number }> = [];
  const totals: CaptureStats = { entries: 0, webSocketMessages: 0, inFlight: 0, recordingErrors: 0, pages: 0 };
  let lastOut = segmentPath(out, 1);
  let stopped = false;

  const openSegment = (index: number): Segment => {
    const path = segmentPath(out, index);
    const capture = openCaptureNow({ ...opts, out: path, seqs }, secrets);
    const seg: Segment = { index, capture, files: journalPaths(path), first: seqs.n + 1, openedAt: Date.now(), started: 0 };
    ranges[index - 1] = { first: seg.first };
    open.set(index, seg);
    newest = seg;
    opts.onOpen?.(index, seg.files);
    return seg;
  };
  const ensure = (index: number): void => {
    for (let i = (newest?.index ?? 0) + 1; i <= index; i++) openSegment(i);
  };
  const cut = (seg: Segment): void => {
    if (seg.last !== undefined) return;
    seg.last = seqs.n;
    ranges[seg.index - 1]!.last = seg.last;
  };
  // The segment a new exchange goes to: the one `pick` names (when still open), else the newest one taking exchanges.
  const place = (fact: StartFact): Segment => {
    const want = opts.pick?.(fact);
    if (want !== undefined) {
      ensure(want);
      const seg = open.get(want);
      if (seg && !seg.finishing) return seg;
    }
    if (newest && newest.last === undefined && !newest.finishing) return newest;
    return openSegment((newest?.index ?? 0) + 1);
  };
  const current = (): Segment => (newest && !newest.finishing && (newest.last === undefined || opts.pick) ? newest : openSegment((newest?.index ?? 0) + 1));

  const listener = (fact: Fact): void => {
    if (stopped) return;
    try {
      switch (fact.type) {
        case 'exchange-started': {
          const seg = place(fact);
          seg.started++;
          owner.set(fact.exchangeId, seg);
          seg.capture.listener(fact);
          return;
        }
        case 'client-error':
        case 'streams-reset':
          current().capture.listener(fact);
          return;
        case 'flush':
          for (const seg of open.values()) seg.capture.listener(fact);
          return;
        case 'connection-opened':
        case 'connection-closed':
          return;
        default: {
          const seg = owner.get(fact.exchangeId) ?? newest;
          seg?.capture.listener(fact);
          if (fact.type === 'exchange-completed' || fact.type === 'exchange-failed' || fact.type === 'exchange-aborted' || fact.type === 'upgrade-closed') owner.delete(fact.exchangeId);
        }
      }
    } catch (err) {
      // A segment that could not open (disk full): counted, never thrown into traffic.
      totals.recordingErrors++;
      opts.onError?.(err as Error);
    }
  };

  const inFlight = (seg: Segment): number => seg.capture.stats().inFlight;
  const drained = (index: number): boolean => {
    const seg = open.get(index);
    // Not open any more: finished (or never opened, then nothing of it can be in flight either).
    if (!seg) return true;
    return seg.finishing || ((seg.last !== undefined || opts.pick !== undefined) && inFlight(seg) === 0);
  };

  // Segments are written one at a time, each as soon as it is drained (a long WebSocket in one holds up no other);
  // `force` (the end) writes them all, in order, whatever the owner waits for.
  let finishing: Promise<void> = Promise.resolve();
  let busy = false;
  const finishReady = async (force: boolean): Promise<void> => {
    const ready = [...open.values()].filter((seg) => force || (drained(seg.index) && (opts.mayFinish?.(seg.index) ?? true)));
    for (const seg of ready.sort((a, b) => a.index - b.index)) {
      cut(seg);
      // Taking no exchange from here on (a mirror's answer for it would be lost in a closed capture).
      seg.finishing = true;
      const s = seg.capture.stats();
      await opts.beforeFinish?.(seg.index, s.entries);
      try {
        lastOut = await seg.capture.close();
      } catch (err) {
        // Its journal stays for `bb recover` (the error says so); the other segments go on.
        open.delete(seg.index);
        failure ??= err as Error;
        opts.onError?.(err as Error);
        continue;
      }
      totals.entries += s.entries;
      totals.webSocketMessages += s.webSocketMessages;
      totals.recordingErrors += s.recordingErrors;
      totals.pages += s.pages;
      open.delete(seg.index);
      opts.onFinished?.(seg.index, lastOut);
    }
  };
  // The first segment that could not be written: thrown from close(), after the others are written.
  let failure: Error | undefined;
  const step = (force: boolean): Promise<void> => {
    // Never left rejected: a later step (the end's) still runs.
    finishing = finishing.then(() => finishReady(force)).catch((err: Error) => {
      failure ??= err;
      opts.onError?.(err);
    });
    return finishing;
  };

  // Measures the segment in progress: past the size or the age (and holding an exchange), it is cut.
  let measuring = false;
  const tick = async (): Promise<void> => {
    const seg = newest;
    if (opts.rotate && seg && seg.last === undefined && seg.started > 0 && !measuring) {
      measuring = true;
      try {
        const { bytes = 0, ms = 0 } = opts.rotate;
        if ((ms >= 1 && Date.now() - seg.openedAt >= ms) || (bytes >= 1 && (await sizeOf(seg.files.journal)) + (await sizeOf(seg.files.bodies)) >= bytes)) cut(seg);
      } finally {
        measuring = false;
      }
    }
    if (!busy) {
      busy = true;
      await step(false).finally(() => (busy = false));
    }
  };
  let closing: Promise<string> | undefined;
  const capture: SegmentedCapture = {
    out,
    listener,
    ensure,
    drained,
    lastSeq: (index) => ranges[index - 1]?.last,
    segmentOfSeq: (seq) => {
      // Ranges are contiguous: the newest segment whose first seq is at or below it (recent ids are found at once).
      for (let i = ranges.length - 1; i >= 0; i--) if (ranges[i]!.first <= seq) return i + 1;
      return undefined;
    },
    step: (name) => current().capture.step(name),
    stats: () => {
      const s = { ...totals };
      for (const seg of open.values()) {
        const o = seg.capture.stats();
        s.entries += o.entries;
        s.webSocketMessages += o.webSocketMessages;
        s.inFlight += o.inFlight;
        s.recordingErrors += o.recordingErrors;
        s.pages += o.pages;
      }
      return s;
    },
    seqOf: (exchangeId) => (owner.get(exchangeId) ?? newest)?.capture.seqOf(exchangeId),
    tag: (exchangeId, shadow) => owner.get(exchangeId)?.capture.tag(exchangeId, shadow) ?? false,
    live: () => {
      throw new BbError('BB_ROTATE_LIVE', 'a rotating capture has no single live view: leave out --ui, or --rotate');
    },
    discard: () => {
      stopped = true;
      clearInterval(timer);
      for (const seg of open.values()) seg.capture.discard();
      open.clear();
    },
    close: () =>
      (closing ??= (async () => {
        stopped = true;
        clearInterval(timer);
        for (const seg of open.values()) cut(seg);
        await step(true);
        if (failure) throw failure;
        return lastOut;
      })()),
  };
  opts.attach?.(capture);
  // The first segment opens now, so a bad folder or key stops the run before traffic (as openCapture does).
  openSegment(1);
  const timer = setInterval(() => void tick().catch((err: Error) => opts.onError?.(err)), TICK_MS);
  timer.unref();
  return capture;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/** Segments of an earlier run in the folder: their journals always stop the start (`bb recover` them), their HARs unless force. */
function checkNoSegments(out: string, force: boolean): void {
  const dir = dirname(out);
  const stem = basename(out.endsWith('.har') ? out.slice(0, -4) : out);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const mine = new RegExp(`^${escapeRegExp(stem)}-\\d{4}\\.har(\\.journal)?$`);
  for (const name of names) {
    if (!mine.test(name)) continue;
    if (name.endsWith('.journal')) {
      throw new BbError('BB_JOURNAL_LEFTOVER', `a journal from an earlier capture is left at ${join(dir, name)}: run \`bb recover ${join(dir, name.slice(0, -8))}\` to keep it (or remove it).`);
    }
    if (!force) throw new BbError('BB_OUT_EXISTS', `${join(dir, name)} already exists (a segment of an earlier run): choose another --out or pass --force to overwrite it.`);
    // Overwriting a run: its later segments go too, so the folder holds this run's segments only.
    if (statSync(join(dir, name)).isFile()) rmSync(join(dir, name));
  }
}
