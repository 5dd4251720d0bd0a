// A side's summaries as columns for the trip from its worker thread
// (store/worker.ts → store/worker-client.ts). Cloning 50k small objects, each
// property written and rebuilt by name, took ~250 ms of the calling
// thread's time at the end of the normalize pass (measured); as columns the
// numbers cross in one transferred buffer, and the keys, routes and pages
// that repeat across entries cross once each.
import type { EntrySummary } from '../context.js';
import type { KeptRef } from './side-work.js';

/** Numbers per entry in PackedSummaries.numbers. */
const STRIDE = 18;

/** Summaries as columns. */
export interface PackedSummaries {
  /** How many summaries. */
  count: number;
  /** The distinct keys, routes and pages, by number. */
  names: string[];
  /** Per entry, STRIDE numbers: index, key, route, page (into names), shape, seq, kept (chunk, at, text, rest), marks (start, length in the side's markers), start and end, seqStart and seqEnd, connection (into names), shadow; -1 or NaN where absent. */
  numbers: Float64Array;
  /** Each entry's id. */
  ids: string[];
  /** Each entry's pairing token. */
  tokens: string[];
  /** Per entry, when the run asked for timing. */
  times?: Array<EntrySummary['times']>;
  /** Each summary's request digest ('' when it has none). */
  requests: string[];
  /** Per entry, when an erasing path rule masked something in any (EntrySummary.erased). */
  erased?: Array<EntrySummary['erased']>;
}

/**
 * The summaries and where their kept forms are, as columns; each summary's
 * `marks` must be a view into the side's one marker list. `numbers.buffer`
 * is the side's to transfer.
 */
export function packSummaries(list: readonly EntrySummary[], kept: ReadonlyArray<KeptRef | undefined>): PackedSummaries {
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
  const requests = new Array<string>(list.length);
  const timed = list.some((s) => s.times !== undefined);
  const times = timed ? new Array<EntrySummary['times']>(list.length) : undefined;
  const erased = list.some((s) => s.erased !== undefined) ? list.map((s) => s.erased) : undefined;
  for (let i = 0; i < list.length; i++) {
    const s = list[i]!;
    const k = kept[i];
    const m = s.marks as Uint32Array | undefined;
    const o = i * STRIDE;
    numbers[o] = s.index;
    numbers[o + 1] = name(s.key);
    numbers[o + 2] = name(s.route);
    numbers[o + 3] = name(s.page);
    numbers[o + 4] = s.shape;
    numbers[o + 5] = s.seq ?? NaN;
    numbers[o + 6] = k ? k.chunk : -1;
    numbers[o + 7] = k?.at ?? 0;
    numbers[o + 8] = k?.text ?? 0;
    numbers[o + 9] = k?.rest ?? 0;
    numbers[o + 10] = m ? m.byteOffset / Uint32Array.BYTES_PER_ELEMENT : -1;
    numbers[o + 11] = m?.length ?? 0;
    numbers[o + 12] = s.start ?? NaN;
    numbers[o + 13] = s.end ?? NaN;
    numbers[o + 14] = s.seqStart ?? NaN;
    numbers[o + 15] = s.seqEnd ?? NaN;
    numbers[o + 16] = s.connection !== undefined ? name(s.connection) : -1;
    numbers[o + 17] = s.shadow ?? NaN;
    ids[i] = s.id;
    tokens[i] = s.token;
    requests[i] = s.request ?? '';
    if (times) times[i] = s.times;
  }
  return { count: list.length, names, numbers, ids, tokens, requests, ...(times ? { times } : {}), ...(erased ? { erased } : {}) };
}

/** The summaries and kept refs again, as packSummaries was given them; `marks` become views into `markers`. */
export function unpackSummaries(p: PackedSummaries, markers: Uint32Array): { summaries: EntrySummary[]; kept: Array<KeptRef | undefined> } {
  const summaries = new Array<EntrySummary>(p.count);
  const kept = new Array<KeptRef | undefined>(p.count);
  const n = p.numbers;
  for (let i = 0; i < p.count; i++) {
    const o = i * STRIDE;
    const s: EntrySummary = {
      index: n[o]!,
      key: p.names[n[o + 1]!]!,
      route: p.names[n[o + 2]!]!,
      page: p.names[n[o + 3]!]!,
      id: p.ids[i]!,
      token: p.tokens[i]!,
      shape: n[o + 4]!,
    };
    if (!Number.isNaN(n[o + 5]!)) s.seq = n[o + 5]!;
    if (p.requests[i]) s.request = p.requests[i];
    if (!Number.isNaN(n[o + 12]!)) s.start = n[o + 12]!;
    if (!Number.isNaN(n[o + 13]!)) s.end = n[o + 13]!;
    if (!Number.isNaN(n[o + 14]!)) s.seqStart = n[o + 14]!;
    if (!Number.isNaN(n[o + 15]!)) s.seqEnd = n[o + 15]!;
    if (n[o + 16]! >= 0) s.connection = p.names[n[o + 16]!]!;
    if (!Number.isNaN(n[o + 17]!)) s.shadow = n[o + 17]!;
    if (n[o + 10]! >= 0) s.marks = markers.subarray(n[o + 10]!, n[o + 10]! + n[o + 11]!);
    const t = p.times?.[i];
    if (t) s.times = t;
    const e = p.erased?.[i];
    if (e) s.erased = e;
    summaries[i] = s;
    kept[i] = n[o + 6]! >= 0 ? { chunk: n[o + 6]!, at: n[o + 7]!, text: n[o + 8]!, rest: n[o + 9]! } : undefined;
  }
  return { summaries, kept };
}

/** True when every summary's kept form is in the chunks: its side will load no entry again. */
export function allKept(p: PackedSummaries): boolean {
  for (let i = 0; i < p.count; i++) if (p.numbers[i * STRIDE + 6]! < 0) return false;
  return true;
}
