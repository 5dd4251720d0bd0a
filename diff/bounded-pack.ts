// A side's summaries as columns for the trip from its worker thread
// (bounded-worker.ts → bounded-remote.ts). Cloning 50k small objects, each
// property written and rebuilt by name, took ~250 ms of the calling
// thread's time at the end of the normalize pass (measured); as columns the
// numbers cross in one transferred buffer, and the keys, routes and pages
// that repeat across entries cross once each.
import type { Summary } from './bounded-side.js';

/** Numbers per entry in PackedSummaries.numbers. */
const STRIDE = 12;

/** Summaries as columns. */
export interface PackedSummaries {
  count: number;
  /** The distinct keys, routes and pages, by number. */
  names: string[];
  /** Per entry, STRIDE numbers: index, key, route, page (into names), shape, seq, kept (chunk, at, text, rest) and marks (start, length); -1 or NaN where absent. */
  numbers: Float64Array;
  ids: string[];
  tokens: string[];
  /** Per entry, when the run asked for timing. */
  times?: Array<Summary['times']>;
}

/** The summaries as columns; `numbers.buffer` is the side's to transfer. */
export function packSummaries(list: readonly Summary[]): PackedSummaries {
  const names: string[] = [];
  const nameIndex = new Map<string, number>();
  const name = (s: string): number => {
    let n = nameIndex.get(s);
    if (n === undefined) nameIndex.set(s, (n = names.push(s) - 1));
    return n;
  };
  const numbers = new Float64Array(list.length * STRIDE);
  const ids = new Array<string>(list.length);
  const tokens = new Array<string>(list.length);
  const timed = list.some((s) => s.times !== undefined);
  const times = timed ? new Array<Summary['times']>(list.length) : undefined;
  for (let i = 0; i < list.length; i++) {
    const s = list[i]!;
    const o = i * STRIDE;
    numbers[o] = s.index;
    numbers[o + 1] = name(s.key);
    numbers[o + 2] = name(s.route);
    numbers[o + 3] = name(s.page);
    numbers[o + 4] = s.shape;
    numbers[o + 5] = s.seq ?? NaN;
    numbers[o + 6] = s.kept ? s.kept.chunk : -1;
    numbers[o + 7] = s.kept?.at ?? 0;
    numbers[o + 8] = s.kept?.text ?? 0;
    numbers[o + 9] = s.kept?.rest ?? 0;
    numbers[o + 10] = s.marks ? s.marks[0] : -1;
    numbers[o + 11] = s.marks?.[1] ?? 0;
    ids[i] = s.id;
    tokens[i] = s.token;
    if (times) times[i] = s.times;
  }
  return { count: list.length, names, numbers, ids, tokens, ...(times ? { times } : {}) };
}

/** The summaries again, as packSummaries was given them. */
export function unpackSummaries(p: PackedSummaries): Summary[] {
  const out = new Array<Summary>(p.count);
  const n = p.numbers;
  for (let i = 0; i < p.count; i++) {
    const o = i * STRIDE;
    const s: Summary = {
      index: n[o]!,
      key: p.names[n[o + 1]!]!,
      route: p.names[n[o + 2]!]!,
      page: p.names[n[o + 3]!]!,
      id: p.ids[i]!,
      token: p.tokens[i]!,
      shape: n[o + 4]!,
    };
    if (!Number.isNaN(n[o + 5]!)) s.seq = n[o + 5]!;
    if (n[o + 6]! >= 0) s.kept = { chunk: n[o + 6]!, at: n[o + 7]!, text: n[o + 8]!, rest: n[o + 9]! };
    if (n[o + 10]! >= 0) s.marks = [n[o + 10]!, n[o + 11]!];
    const t = p.times?.[i];
    if (t) s.times = t;
    out[i] = s;
  }
  return out;
}
