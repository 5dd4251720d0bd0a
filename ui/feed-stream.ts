// A feed (UiFeed: a source of typed events a view subscribes to; server.ts
// re-exports it) and one page's subscription to it, as a server-sent event
// stream whose queue is bounded: a page that stops reading (a background
// tab, a socket nobody reads) never makes bb hold more than `max` bytes of
// its updates.
//
// States:
//   live    events are queued and written out once per turn of the event loop
//   behind  the page's queue passed `max`: the feed is stopped and what was
//           not written is dropped; when the response drains, the page gets
//           {type:"resync"} and then a fresh snapshot (the feed opened again),
//           never the updates it missed
//
// An update that would take the page's queue past `max` makes it fall
// behind, unless nothing is queued: a lone event bigger than the cap (an
// exchange's entry with a big body) still goes out, so the bound is the cap
// or that one event. What counts is what was queued after the last snapshot:
// the snapshot itself (what the feed knows now, e.g. 100,000 rows) goes out
// whole, its size that of the state bb holds anyway, once per (re)sync.
// Counting it would make a page whose snapshot is bigger than the cap resync
// for ever.
// The socket's queue is first in, first out, so the updates still queued are
// min(writableLength, bytes written since the snapshot ended).
//
// A snapshot is written a slice at a time, SLICE_MS of the loop's turn each:
// the feed hands over its events at once (cheap objects: the state as it is),
// their text is made and written over the next turns, so the proxy on the
// same thread keeps serving (100,000 rows at once stalled it 0.7 s:
// docs/performance.md "ui"). Updates sent meanwhile wait behind the snapshot
// and are not held against the cap until it is out: a few turns' worth.
//
// A page that reconnects (EventSource does by itself) is a new subscription
// and gets a snapshot too; the page's shell (assets/app.js) treats that as a
// resync.
import type http from 'node:http';

/** One event of a feed: `type` says which; the rest is the feed's own JSON. */
export interface UiEvent {
  /** What happened ("row", "entry", "message"...): the view dispatches on it. */
  type: string;
  [field: string]: unknown;
}

/** A source of events the page subscribes to at /feed/<name>. */
export interface UiFeed {
  /** Its name in /feed/<name>: letters, digits, '-'. */
  name: string;
  /**
   * Starts one subscriber: sends what is known now, then each new event,
   * through `send`; returns how to stop, or undefined when `key` names
   * nothing (the page gets 404). A feed whose snapshot takes more than a
   * turn of the loop to make (frames-feed.ts) calls `snapshotGoesOn` before
   * it returns, and the function that gives back once the snapshot's last
   * event is sent: until then every event it sends is the snapshot's.
   */
  open(key: string | undefined, send: (event: UiEvent) => void, snapshotGoesOn?: () => () => void): (() => void) | undefined;
}

/** The default cap on one page's queued updates, in bytes. */
export const FEED_QUEUE_MAX = 1024 * 1024;

/** The stream's first line, a comment. */
const HELLO = ': bb live view\n\n';
/** How often an idle stream gets a comment, so nothing between cuts it. */
const PING_EVERY_MS = 15_000;
/** How long a turn of the event loop writes a snapshot's events, at most (then the next turn goes on). */
const SLICE_MS = 4;
/** Events made into text between looks at the clock. */
const SLICE_CHECK = 64;

/** What /api/feeds says of one open page subscription. */
export interface FeedStat {
  /** The feed's name. */
  feed: string;
  /** Its ?key=, or null. */
  key: string | null;
  /** "live" or "behind" (the page stopped reading; updates are not written). */
  state: 'live' | 'behind';
  /** Bytes of updates queued now (in bb and the response), the snapshot not counted. */
  queued: number;
  /** The most `queued` has been. */
  most: number;
  /** Bytes of the last snapshot. */
  snapshot: number;
  /** Times the page fell behind and was sent a fresh snapshot. */
  resyncs: number;
}

/** One page reading one feed. */
export class FeedStream {
  private state: FeedStat['state'] = 'live';
  /** Updates' text, written once per turn after the snapshot. */
  private queue: string[] = [];
  /** Bytes of `queue`. */
  private pending = 0;
  /** The snapshot's events, the first `snapshotAt` already written. */
  private snapshot: UiEvent[] = [];
  private snapshotAt = 0;
  /** The feed is still making its snapshot (snapshotGoesOn): what it sends belongs to it. */
  private making = false;
  private scheduled = false;
  private ended = false;
  private stopFeed: (() => void) | undefined;
  // Each (re)open of the feed gets its own send; a stale one's events are dropped.
  private generation = 0;
  // True while the feed's open() sends its snapshot: that is never cut.
  private opening = false;
  private written = 0;
  // Where the last snapshot ended in the bytes written (infinite while it is being written).
  private snapshotEnd = 0;
  private snapshotBytes = 0;
  private most = 0;
  private resyncs = 0;
  private ping: NodeJS.Timeout | undefined;

  /**
   * @param max bytes of updates the page may have queued before it falls behind
   * @param onEnd called once when the stream ends (the page left, or close())
   */
  constructor(
    private readonly feed: UiFeed,
    private readonly key: string | undefined,
    private readonly res: http.ServerResponse,
    private readonly max: number,
    private readonly onEnd: () => void,
  ) {}

  /** Opens the feed and answers the page; false when the key names nothing (then the page got 404 already). */
  start(): boolean {
    if (!this.open()) {
      this.ended = true;
      const body = `feed ${this.feed.name} has nothing named ${JSON.stringify(this.key ?? '')}\n`;
      this.res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      this.res.end(body);
      return false;
    }
    this.res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    // The opening comment and the snapshot's first slice go out at once.
    this.snapshotBytes += this.write(HELLO);
    this.flush();
    this.ping = setInterval(() => {
      // Only an idle stream needs one: bytes still queued say the same, and a stalled page must not collect pings.
      if (this.state === 'live' && this.res.writableLength === 0) this.write(': ping\n\n');
    }, PING_EVERY_MS);
    this.ping.unref();
    this.res.on('close', () => this.close());
    return true;
  }

  /** Ends the stream: the feed stopped, the response ended. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.ping);
    this.stopFeed?.();
    this.stopFeed = undefined;
    this.queue = [];
    this.snapshot = [];
    this.making = false;
    this.res.end();
    this.onEnd();
  }

  /** The figures /api/feeds shows. */
  stat(): FeedStat {
    return { feed: this.feed.name, key: this.key ?? null, state: this.state, queued: this.updatesQueued(), most: this.most, snapshot: this.snapshotBytes, resyncs: this.resyncs };
  }

  // Opens (again) the feed; what it sends at once is the snapshot, written by the caller's flush, a slice a turn.
  private open(): boolean {
    const generation = ++this.generation;
    const send = (event: UiEvent): void => {
      if (generation === this.generation) this.send(event);
    };
    const goesOn = (): (() => void) => {
      this.making = true;
      return () => {
        if (generation !== this.generation || !this.making) return;
        this.making = false;
        this.schedule();
      };
    };
    this.making = false;
    this.opening = true;
    const stop = this.feed.open(this.key, send, goesOn);
    this.opening = false;
    this.stopFeed = stop;
    this.snapshotBytes = 0;
    this.snapshotEnd = Number.POSITIVE_INFINITY;
    return stop !== undefined;
  }

  // JSON.stringify writes no CR or LF, so each event is one `data:` line.
  private send(event: UiEvent): void {
    if (this.ended || this.state === 'behind') return;
    if (this.opening || this.making) {
      this.snapshot.push(event);
      // Made over turns: written as it comes (start() and resync() write what open() sent).
      if (this.making && !this.opening) this.schedule();
      return;
    }
    const line = `data: ${JSON.stringify(event)}\n\n`;
    const bytes = Buffer.byteLength(line);
    // One event bigger than the cap (an exchange's entry with a big body) still goes to a page that has nothing queued.
    const before = this.updatesQueued();
    if (before > 0 && before + bytes > this.max) return this.fallBehind();
    this.queue.push(line);
    this.pending += bytes;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  // Once a turn: the snapshot's next slice, or (once it is out) the updates sent since, in one write.
  private flush(): void {
    this.scheduled = false;
    if (this.ended) return;
    if (this.snapshotAt < this.snapshot.length) {
      this.snapshotBytes += this.write(this.snapshotSlice());
      if (this.snapshotAt < this.snapshot.length) return this.schedule();
      this.snapshot = [];
      this.snapshotAt = 0;
    }
    // The feed is still making it: its next events come in a later turn.
    if (this.making) return;
    if (this.snapshotEnd === Number.POSITIVE_INFINITY) this.snapshotEnd = this.written;
    if (this.queue.length === 0) return;
    const text = this.queue.join('');
    this.queue = [];
    this.pending = 0;
    this.write(text);
  }

  // The snapshot's events from where the last slice stopped, as text, for SLICE_MS at most (at least SLICE_CHECK events).
  private snapshotSlice(): string {
    const started = performance.now();
    const lines: string[] = [];
    const events = this.snapshot;
    let at = this.snapshotAt;
    do {
      for (const end = Math.min(events.length, at + SLICE_CHECK); at < end; at++) lines.push(`data: ${JSON.stringify(events[at])}\n\n`);
    } while (at < events.length && performance.now() - started < SLICE_MS);
    this.snapshotAt = at;
    return lines.join('');
  }

  // Writes text to the page; its bytes.
  private write(text: string): number {
    const bytes = Buffer.byteLength(text);
    this.written += bytes;
    this.res.write(text);
    this.most = Math.max(this.most, this.updatesQueued());
    return bytes;
  }

  /**
   * Bytes queued after the last snapshot: not yet written, and written but not yet taken by the socket. While a
   * snapshot is being written, none: the updates wait behind it for a few turns.
   */
  private updatesQueued(): number {
    if (this.snapshotEnd === Number.POSITIVE_INFINITY) return 0;
    return Math.max(0, Math.min(this.res.writableLength, this.written - this.snapshotEnd)) + this.pending;
  }

  // The page is not keeping up: stop the feed and drop what it missed; a snapshot follows when it drains.
  private fallBehind(): void {
    this.state = 'behind';
    this.queue = [];
    this.pending = 0;
    this.making = false;
    this.stopFeed?.();
    this.stopFeed = undefined;
    // A burst of one turn may pass the cap with nothing stuck in the socket: then no drain comes.
    if (this.res.writableNeedDrain) this.res.once('drain', () => this.resync());
    else setImmediate(() => this.resync());
  }

  private resync(): void {
    if (this.ended) return;
    this.state = 'live';
    this.resyncs++;
    this.snapshot = [{ type: 'resync' }];
    this.snapshotAt = 0;
    // A feed that names nothing any more (an exchange gone) ends the stream; the page sees it close.
    if (!this.open()) this.close();
    else this.flush();
  }
}
