// The rows of a live capture (live.ts) as columns: one typed array per
// number, one array per string, and each row's journal lines as a linked list
// in typed arrays. A row kept for the capture's life costs ~150 bytes and one
// string (its URL), not five objects: a long capture's rows are no work for
// the garbage collector, whose marking of a row object per exchange cost
// `bb capture --ui` more CPU than following the records did
// (docs/performance.md "ui"). LiveRow objects are made when asked for (a page
// opening, a row event told to a page).
import { LineRanges } from './entry-assembly.js';
import { indexInAscending } from '../core/index.js';

/** Where an exchange is: under way (sending, waiting, receiving, open for an upgraded connection) or how it ended. */
export type LiveState = 'sending' | 'waiting' | 'receiving' | 'open' | 'done' | 'failed' | 'aborted' | 'refused' | 'closed' | 'reset';

/** One exchange as a list shows it. */
export interface LiveRow {
  /** Its `_bb.seq`: the `#<seq>` of the live log, bb show and bb frames. */
  seq: number;
  /** Request method ('' for bytes that never became a request). */
  method: string;
  /** request.url as the HAR will hold it (query secrets redacted). */
  url: string;
  /** The response status, 0 while none (or none came). */
  status: number;
  /** Where it is. */
  state: LiveState;
  /** What kind of conversation it is. */
  kind: 'http' | 'websocket' | 'sse' | 'grpc';
  /** Response media type ('' when none). */
  mime: string;
  /** When its request head arrived, epoch ms. */
  startedAt: number;
  /** When it ended, epoch ms (absent while under way). */
  endedAt?: number;
  /** Request body bytes that crossed so far. */
  requestBytes: number;
  /** Response body bytes that crossed so far. */
  responseBytes: number;
  /** WebSocket messages (and error rows) and gRPC messages so far. */
  messages: number;
  /** The step (HAR page id) it began in. */
  page?: string;
}

const STATES: readonly LiveState[] = ['sending', 'waiting', 'receiving', 'open', 'done', 'failed', 'aborted', 'refused', 'closed', 'reset'];
const KINDS: readonly LiveRow['kind'][] = ['http', 'websocket', 'sse', 'grpc'];
const STATE_CODE = new Map(STATES.map((s, i) => [s, i]));
const KIND_CODE = new Map(KINDS.map((k, i) => [k, i]));

/** A row's numbers, by column. */
type Column = 'status' | 'startedAt' | 'endedAt' | 'requestBytes' | 'responseBytes' | 'messages' | 'listed';

/** Rows in seq order (appended as exchanges start, which is seq order), and where each one's journal lines are. */
export class LiveRowTable {
  /** Rows held. */
  length = 0;
  private seqs = new Float64Array(1024);
  private numbers: Record<Column, Float64Array> = {
    status: new Float64Array(1024), startedAt: new Float64Array(1024), endedAt: new Float64Array(1024),
    requestBytes: new Float64Array(1024), responseBytes: new Float64Array(1024), messages: new Float64Array(1024),
    // A conversation's messages (and error rows) its entry lists, each with its journal line: not a LiveRow field.
    listed: new Float64Array(1024),
  };
  private states = new Uint8Array(1024);
  private kinds = new Uint8Array(1024);
  private methods: string[] = [];
  private urls: string[] = [];
  private mimes: string[] = [];
  private pages: Array<string | undefined> = [];
  /** Per row: its first and last line (-1: none). */
  private firstLine = new Int32Array(1024);
  private lastLine = new Int32Array(1024);
  /** Per line: byte offset in the journal, length, and the next and the previous line of the same row (-1: none). */
  private lineAt = new Float64Array(2048);
  private lineBytes = new Int32Array(2048);
  private lineNext = new Int32Array(2048);
  private linePrev = new Int32Array(2048);
  private lines = 0;

  /** Adds a row (its seq above every other's); returns its index. */
  add(row: LiveRow): number {
    const i = this.length;
    if (i === this.seqs.length) this.growRows();
    this.length++;
    this.seqs[i] = row.seq;
    this.methods.push(row.method);
    this.urls.push(row.url);
    this.mimes.push(row.mime);
    this.pages.push(row.page);
    this.states[i] = STATE_CODE.get(row.state)!;
    this.kinds[i] = KIND_CODE.get(row.kind)!;
    const n = this.numbers;
    n.status[i] = row.status;
    n.startedAt[i] = row.startedAt;
    n.endedAt[i] = row.endedAt ?? NaN;
    n.requestBytes[i] = row.requestBytes;
    n.responseBytes[i] = row.responseBytes;
    n.messages[i] = row.messages;
    n.listed[i] = 0;
    this.firstLine[i] = this.lastLine[i] = -1;
    return i;
  }

  /** The index of the row of exchange `seq`, or -1. */
  find(seq: number): number {
    return indexInAscending(this.seqs, seq, 0, this.length);
  }

  /** Row `i`'s seq. */
  seq(i: number): number {
    return this.seqs[i]!;
  }

  /** Row `i` as an object of its own. */
  row(i: number): LiveRow {
    const n = this.numbers;
    const ended = n.endedAt[i]!;
    // One shape for every row (endedAt and page undefined when absent, as JSON leaves them out): no spread, no
    // property added later; 200,000 rows took 120 ms made with a spread, the Exchanges tab's snapshot makes them all.
    return {
      seq: this.seqs[i]!, method: this.methods[i]!, url: this.urls[i]!, status: n.status[i]!, state: STATES[this.states[i]!]!,
      kind: KINDS[this.kinds[i]!]!, mime: this.mimes[i]!, startedAt: n.startedAt[i]!, endedAt: Number.isNaN(ended) ? undefined : ended,
      requestBytes: n.requestBytes[i]!, responseBytes: n.responseBytes[i]!, messages: n.messages[i]!, page: this.pages[i],
    };
  }

  /** The seqs of the latest `limit` rows and of the open ones before them, in order: what a list shows. */
  listed(limit: number): number[] {
    const from = Math.max(0, this.length - limit);
    const out: number[] = [];
    const ended = this.numbers.endedAt;
    for (let i = 0; i < from; i++) if (Number.isNaN(ended[i]!)) out.push(this.seqs[i]!);
    for (let i = from; i < this.length; i++) out.push(this.seqs[i]!);
    return out;
  }

  /** A number of row `i`. */
  get(i: number, c: Column): number {
    return this.numbers[c][i]!;
  }

  /** Sets a number of row `i`. */
  set(i: number, c: Column, v: number): void {
    this.numbers[c][i] = v;
  }

  /** Row `i`'s state. */
  state(i: number): LiveState {
    return STATES[this.states[i]!]!;
  }

  /** Sets row `i`'s state. */
  setState(i: number, s: LiveState): void {
    this.states[i] = STATE_CODE.get(s)!;
  }

  /** Row `i`'s kind. */
  kind(i: number): LiveRow['kind'] {
    return KINDS[this.kinds[i]!]!;
  }

  /** Sets row `i`'s kind. */
  setKind(i: number, k: LiveRow['kind']): void {
    this.kinds[i] = KIND_CODE.get(k)!;
  }

  /** Sets row `i`'s response media type. */
  setMime(i: number, mime: string): void {
    this.mimes[i] = mime;
  }

  /** Notes a journal line of row `i` (a folded line's records share one: noted once). */
  addLine(i: number, at: number, bytes: number): void {
    const last = this.lastLine[i]!;
    if (at < 0 || (last >= 0 && this.lineAt[last] === at)) return;
    const l = this.lines;
    if (l === this.lineAt.length) this.growLines();
    this.lines++;
    this.lineAt[l] = at;
    this.lineBytes[l] = bytes;
    this.lineNext[l] = -1;
    this.linePrev[l] = last;
    if (last >= 0) this.lineNext[last] = l;
    else this.firstLine[i] = l;
    this.lastLine[i] = l;
  }

  /** Journal lines placed so far, all rows. */
  get lineCount(): number {
    return this.lines;
  }

  /** Row `i`'s journal lines, in order. */
  linesOf(i: number): LineRanges {
    const out = new LineRanges();
    for (let l = this.firstLine[i]!; l >= 0; l = this.lineNext[l]!) {
      out.at.push(this.lineAt[l]!);
      out.bytes.push(this.lineBytes[l]!);
    }
    return out;
  }

  /**
   * Row `i`'s first `head` and last `tail` journal lines, in order (all of them when they are no more): the ends of a
   * long conversation without a walk over its middle. `apart` says whether lines were left out between the two.
   */
  edgeLines(i: number, head: number, tail: number): { head: LineRanges; tail: LineRanges; apart: boolean } {
    const first = new LineRanges();
    const lastBack: number[] = [];
    let l = this.firstLine[i]!;
    for (let k = 0; k < head && l >= 0; k++, l = this.lineNext[l]!) {
      first.at.push(this.lineAt[l]!);
      first.bytes.push(this.lineBytes[l]!);
    }
    // `l` is the first line not taken: the tail walks back to it at most.
    const stop = l;
    let back = this.lastLine[i]!;
    if (stop >= 0) {
      for (let k = 0; k < tail; k++) {
        lastBack.push(back);
        if (back === stop) break;
        back = this.linePrev[back]!;
      }
    }
    const last = new LineRanges();
    for (let k = lastBack.length - 1; k >= 0; k--) {
      last.at.push(this.lineAt[lastBack[k]!]!);
      last.bytes.push(this.lineBytes[lastBack[k]!]!);
    }
    return { head: first, tail: last, apart: stop >= 0 && lastBack.at(-1) !== stop };
  }

  /**
   * The last `n` journal lines of these rows together (the latest by their place in the journal, which is the order
   * they were written in), per row in journal order. Walks back from each row's last line, always the latest one
   * left: about n steps, whatever the rows' lengths.
   */
  latestLines(rows: readonly number[], n: number): Map<number, LineRanges> {
    // A max-heap of each row's next line back (by its place), as [line, row] pairs.
    const heap: Array<[number, number]> = [];
    const above = (a: [number, number], b: [number, number]): boolean => this.lineAt[a[0]]! > this.lineAt[b[0]]!;
    const push = (item: [number, number]): void => {
      heap.push(item);
      for (let k = heap.length - 1; k > 0; ) {
        const parent = (k - 1) >> 1;
        if (!above(heap[k]!, heap[parent]!)) break;
        [heap[k], heap[parent]] = [heap[parent]!, heap[k]!];
        k = parent;
      }
    };
    const pop = (): [number, number] => {
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        for (let k = 0; ; ) {
          const l = 2 * k + 1;
          const r = l + 1;
          let m = k;
          if (l < heap.length && above(heap[l]!, heap[m]!)) m = l;
          if (r < heap.length && above(heap[r]!, heap[m]!)) m = r;
          if (m === k) break;
          [heap[k], heap[m]] = [heap[m]!, heap[k]!];
          k = m;
        }
      }
      return top;
    };
    for (const i of rows) if (this.lastLine[i]! >= 0) push([this.lastLine[i]!, i]);
    const picked = new Map<number, number[]>();
    for (let taken = 0; taken < n && heap.length > 0; taken++) {
      const [l, i] = pop();
      let lines = picked.get(i);
      if (!lines) picked.set(i, (lines = []));
      lines.push(l);
      const prev = this.linePrev[l]!;
      if (prev >= 0) push([prev, i]);
    }
    const out = new Map<number, LineRanges>();
    for (const [i, lines] of picked) {
      const ranges = new LineRanges();
      for (let k = lines.length - 1; k >= 0; k--) {
        ranges.at.push(this.lineAt[lines[k]!]!);
        ranges.bytes.push(this.lineBytes[lines[k]!]!);
      }
      out.set(i, ranges);
    }
    return out;
  }

  /**
   * Keeps the rows `keep` passes (in order) with their lines and lets the others go; returns each old index's new
   * one (-1: gone). Everything is copied into arrays sized for what is kept.
   */
  compact(keep: (i: number) => boolean): Int32Array {
    const remap = new Int32Array(this.length).fill(-1);
    let n = 0;
    let lineCount = 0;
    for (let i = 0; i < this.length; i++) {
      if (!keep(i)) continue;
      remap[i] = n++;
      for (let l = this.firstLine[i]!; l >= 0; l = this.lineNext[l]!) lineCount++;
    }
    const rows = Math.max(1024, n * 2);
    const take = <T extends Float64Array | Int32Array | Uint8Array>(from: T, to: T): T => {
      for (let i = 0; i < this.length; i++) if (remap[i]! >= 0) to[remap[i]!] = from[i]!;
      return to;
    };
    const takeList = <T>(from: T[]): T[] => from.filter((_, i) => remap[i]! >= 0);
    const seqs = take(this.seqs, new Float64Array(rows));
    for (const c of Object.keys(this.numbers) as Column[]) this.numbers[c] = take(this.numbers[c], new Float64Array(rows));
    const states = take(this.states, new Uint8Array(rows));
    const kinds = take(this.kinds, new Uint8Array(rows));
    const methods = takeList(this.methods);
    const urls = takeList(this.urls);
    const mimes = takeList(this.mimes);
    const pages = takeList(this.pages);
    const lines = Math.max(2048, lineCount * 2);
    const lineAt = new Float64Array(lines);
    const lineBytes = new Int32Array(lines);
    const lineNext = new Int32Array(lines);
    const linePrev = new Int32Array(lines);
    const firstLine = new Int32Array(rows).fill(-1);
    const lastLine = new Int32Array(rows).fill(-1);
    let l2 = 0;
    for (let i = 0; i < this.length; i++) {
      const r = remap[i]!;
      if (r < 0) continue;
      for (let l = this.firstLine[i]!; l >= 0; l = this.lineNext[l]!, l2++) {
        lineAt[l2] = this.lineAt[l]!;
        lineBytes[l2] = this.lineBytes[l]!;
        lineNext[l2] = -1;
        linePrev[l2] = lastLine[r]!;
        if (lastLine[r]! >= 0) lineNext[lastLine[r]!] = l2;
        else firstLine[r] = l2;
        lastLine[r] = l2;
      }
    }
    this.seqs = seqs;
    this.states = states;
    this.kinds = kinds;
    this.methods = methods;
    this.urls = urls;
    this.mimes = mimes;
    this.pages = pages;
    this.firstLine = firstLine;
    this.lastLine = lastLine;
    this.lineAt = lineAt;
    this.lineBytes = lineBytes;
    this.lineNext = lineNext;
    this.linePrev = linePrev;
    this.lines = l2;
    this.length = n;
    return remap;
  }

  private growRows(): void {
    const size = this.seqs.length * 2;
    this.seqs = grown(this.seqs, new Float64Array(size));
    for (const c of Object.keys(this.numbers) as Column[]) this.numbers[c] = grown(this.numbers[c], new Float64Array(size));
    this.states = grown(this.states, new Uint8Array(size));
    this.kinds = grown(this.kinds, new Uint8Array(size));
    this.firstLine = grown(this.firstLine, new Int32Array(size));
    this.lastLine = grown(this.lastLine, new Int32Array(size));
  }

  private growLines(): void {
    const size = this.lineAt.length * 2;
    this.lineAt = grown(this.lineAt, new Float64Array(size));
    this.lineBytes = grown(this.lineBytes, new Int32Array(size));
    this.lineNext = grown(this.lineNext, new Int32Array(size));
    this.linePrev = grown(this.linePrev, new Int32Array(size));
  }
}

// `to` with `from`'s values at its start.
function grown<T extends Float64Array | Int32Array | Uint8Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}
