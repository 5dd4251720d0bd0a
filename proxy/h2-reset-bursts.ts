// Rapid reset (CVE-2023-44487): an h2 client opens streams and resets each
// at once, thousands a second. Each is a real stream the upstream saw, so bb
// keeps every one accounted for; but one full entry per stream made bb write
// ~200 MB/s of HAR. So a connection whose streams are reset before any
// response faster than FLOOD_RESETS per FLOOD_WINDOW_MS is "flooding": its
// new streams are held back (not yet an exchange) until they prove to be more
// than a reset, and those that are only reset are summed into one burst,
// recorded as one exchange (docs/capture-format.md "HTTP/2 and gRPC entries").
import type { Side, StreamsReset } from './events.js';

/** Streams reset before a response, within one window, that make a connection a flood. */
export const FLOOD_RESETS = 100;

/** The window those resets are counted in, ms. */
export const FLOOD_WINDOW_MS = 1_000;

/** Longest time one burst sums streams before it is recorded and a next one begins, ms. */
export const BURST_SPAN_MS = 1_000;

/** Most stream id ranges one burst holds before it is recorded (bounds the record's size). */
export const BURST_MAX_RANGES = 64;

/** Tells whether a connection's streams are being reset before any response faster than FLOOD_RESETS a window. */
export class ResetFloodGauge {
  private windowStart = -Infinity;
  private inWindow = 0;
  private flood = false;

  /** Counts one stream reset before any response, at `time` (epoch ms). */
  resetEarly(time: number): void {
    if (time - this.windowStart >= FLOOD_WINDOW_MS) {
      // A window ends: the flood goes on only if the window that ended was one, and the new one follows it.
      this.flood = this.flood && this.inWindow >= FLOOD_RESETS && time - this.windowStart < 2 * FLOOD_WINDOW_MS;
      this.windowStart = time;
      this.inWindow = 0;
    }
    if (++this.inWindow >= FLOOD_RESETS) this.flood = true;
  }

  /** True while the connection floods: within a window after one with FLOOD_RESETS early resets. */
  flooding(time: number): boolean {
    return this.flood && time - this.windowStart < 2 * FLOOD_WINDOW_MS;
  }
}

/** The request head of a held stream: what its exchange would have started with. */
export interface HeldHead {
  streamId: number;
  /** When its HEADERS arrived (epoch ms). */
  time: number;
  /** Decoded fields in wire order. */
  headers: Array<[string, string]>;
}

/** Streams reset before any response, summed until recorded as one `streams-reset` fact. */
export class ResetBurst {
  private readonly ranges: Array<[number, number]> = [];
  private readonly codes = new Map<string, { by: Side; code: string; count: number }>();
  private count = 0;
  private endTime: number;
  /** When its first stream was reset (its span is counted from there). */
  readonly began: number;

  /** Begins with `first`, reset at `time`, whose head stands for all the burst's streams. */
  constructor(readonly first: HeldHead, time: number) {
    this.endTime = time;
    this.began = time;
  }

  /** Adds one stream `by` reset with `code` at `time`. */
  add(streamId: number, by: Side, code: string, time: number): void {
    this.count++;
    this.endTime = Math.max(this.endTime, time);
    const last = this.ranges.at(-1);
    if (last && streamId === last[1] + 2) last[1] = streamId;
    else this.ranges.push([streamId, streamId]);
    const key = `${by} ${code}`;
    const seen = this.codes.get(key);
    if (seen) seen.count++;
    else this.codes.set(key, { by, code, count: 1 });
  }

  /** True when it holds as many id ranges as one record may. */
  get full(): boolean {
    return this.ranges.length >= BURST_MAX_RANGES;
  }

  /** What it sums: how many streams, their id ranges, the codes, and when the last was reset. */
  summary(): Pick<StreamsReset, 'count' | 'streams' | 'resets' | 'endTime'> {
    return { count: this.count, streams: this.ranges, resets: [...this.codes.values()].sort((a, b) => b.count - a.count), endTime: this.endTime };
  }
}
