// Rotating captures of a `bb shadow` run (`--rotate 64MB|10m`, docs/shadow.md
// "Rotating captures"): the primary's capture is cut by its own size or age
// (capture/segments.ts); each mirror's capture follows it, segment for
// segment, by the shared id: a mirror's exchange goes to the segment whose
// range holds the primary's seq it mirrors, however late it came. Segment k
// of a mirror is finished once the primary's segment k has nothing in flight
// and every mirror of an id in its range has settled (answered, failed,
// timed out, or never sent), so `bb diff primary-000k.har candidate-000k.har
// --noise secondary-000k.har` pairs as the live comparison did. Before a
// segment's journal goes, the comparison worker reads its end (it follows
// each segment's journal: compare-worker.ts).
import type { CapturePaths, RotateSpec, SegmentedCapture, SegmentedCaptureOptions } from '../../capture/index.js';
import type { TargetName } from './live.js';
import type { MirrorTarget } from './mirror.js';
import type { ToWorker } from './compare-worker.js';

/** A finished segment of every target, with its HAR paths. */
export type SegmentFiles = Partial<Record<TargetName, string>>;

/** What the recordings of a rotating run are opened with, and what ties them to the mirrors and the worker. */
export class ShadowRotation {
  private primary?: SegmentedCapture;
  private readonly mirrors = new Map<TargetName, { target?: MirrorTarget; capture?: SegmentedCapture }>();
  private post?: (msg: ToWorker) => void;
  private readonly waiting = new Map<string, () => void>();
  private readonly finished = new Map<number, SegmentFiles>();
  /** Segments whose every target is finished. */
  segments = 0;

  constructor(
    private readonly rotate: RotateSpec,
    private readonly targets: TargetName[],
    /** Told each segment once every target's HAR of it is in place. */
    private readonly onSegment?: (index: number, files: SegmentFiles) => void,
  ) {}

  /** The `segments` option of a target's recording. */
  options(side: TargetName): NonNullable<Omit<SegmentedCaptureOptions, 'out' | 'label' | 'target' | 'listen' | 'bbHome'>> {
    const common = {
      attach: (capture: SegmentedCapture) => {
        if (side === 'primary') this.primary = capture;
        else this.mirrors.set(side, { ...this.mirrors.get(side), capture });
      },
      onOpen: (index: number, files: CapturePaths) => this.opened(side, index, files),
      beforeFinish: (index: number, entries: number) => this.unfollow(side, index, entries),
      onFinished: (index: number, out: string) => this.done(side, index, out),
    };
    if (side === 'primary') return { ...common, rotate: this.rotate };
    return {
      ...common,
      pick: (fact) => {
        const id = this.mirrors.get(side)?.target?.sharedIdOf(fact);
        return id === undefined ? undefined : this.primary?.segmentOfSeq(id);
      },
      mayFinish: (index) => {
        const last = this.primary?.lastSeq(index);
        const target = this.mirrors.get(side)?.target;
        return last !== undefined && this.primary!.drained(index) && (target?.settledThrough(last) ?? true);
      },
    };
  }

  /** The mirror targets, once made (a mirror's exchange is placed by the shared id its target knows). */
  mirrorTargets(mirrors: MirrorTarget[]): void {
    for (const m of mirrors) this.mirrors.set(m.name as TargetName, { ...this.mirrors.get(m.name as TargetName), target: m });
  }

  /** The comparison worker: later segments' journals are posted to it. */
  worker(post: (msg: ToWorker) => void): void {
    this.post = post;
  }

  /** The worker stopped following (the run drains): segments no longer wait for it. */
  workerGone(): void {
    this.post = undefined;
    for (const release of this.waiting.values()) release();
    this.waiting.clear();
  }

  /** The worker answered an unfollow. */
  unfollowed(key: string): void {
    this.waiting.get(key)?.();
    this.waiting.delete(key);
  }

  private opened(side: TargetName, index: number, files: CapturePaths): void {
    // Each mirror keeps pace with the primary, so every target has segment k, empty or not.
    if (side === 'primary') for (const m of this.mirrors.values()) m.capture?.ensure(index);
    // Segment 1 is in the worker's spec; later ones are posted.
    if (index > 1) this.post?.({ type: 'follow', key: `${side}:${index}`, side, journal: files.journal, bodies: files.bodies });
  }

  private unfollow(side: TargetName, index: number, entries: number): Promise<void> {
    const post = this.post;
    if (!post) return Promise.resolve();
    const key = `${side}:${index}`;
    return new Promise((resolve) => {
      this.waiting.set(key, resolve);
      post({ type: 'unfollow', key, entries });
    });
  }

  private done(side: TargetName, index: number, out: string): void {
    let files = this.finished.get(index);
    if (!files) this.finished.set(index, (files = {}));
    files[side] = out;
    if (this.targets.every((t) => files![t] !== undefined)) {
      this.finished.delete(index);
      this.segments = Math.max(this.segments, index);
      // In the targets' order (primary, candidate, secondary), whichever was written last.
      this.onSegment?.(index, Object.fromEntries(this.targets.map((t) => [t, files![t]])));
    }
  }
}
