// bb diff for captures of any size (DESIGN.md "Comparing": align on small
// keys first, then compare pair by pair, re-reading bodies as needed; never
// hold two parsed 600 MB captures).
//
// The same stages by name as pipeline.ts, with read / unzip / normalize /
// pair / number / compare replaced:
//   read       index both files by entry offsets (capture/reader-index.ts)
//   normalize  read each entry once, normalize it, keep only a small
//              summary (sort key, pairing key, route, content token) and,
//              within a byte budget, the normalized entry as UTF-8 JSON
//   pair       the same pairing, over the summaries
//   compare    take each pair's kept JSON (or re-read and re-normalize the
//              entry past the budget), number its ordinals in step (pairs in
//              order first, lone entries after, as the number stage does),
//              compare, drop it
// The other stages (noise, classify, verdict...) are kept as they are.
// Memory: the summaries, the kept JSON (capped), the ordinal table, the
// differences, and a few side-by-side views for the HTML report; never a
// whole capture.
import { stat } from 'node:fs/promises';
import { indexCapture, type IndexedCapture } from '../capture/reader.js';
import type { HarEntry } from '../capture/har.js';
import { normalizeContextFor, type DiffContext, type DiffStage } from './pipeline.js';
import { OrdinalNumbering, unnumber } from './normalize/ordinals.js';
import { applyPathRules, normalizeEntry, pairedPageLabels, type NormalizeContext } from './normalize/entry.js';
import { ZipBodies } from './normalize/zip.js';
import { contentText, entryToken, pairEntries, tokenOfText } from './pair.js';
import { comparePair } from './compare.js';
import { attachPairViews } from './report/html-views.js';
import type { PairView } from './report/html-pair.js';
import type { Difference, NormalizedEntry, Pair } from './types.js';

/** Files bigger than this (either side) are compared by the bounded stages. */
export const BOUNDED_THRESHOLD = 64 * 1024 * 1024;

/** Side-by-side views kept for the HTML report. */
const MAX_VIEWS = 100;

/**
 * Bytes of normalized entries kept per side between the two passes, so most
 * entries are read, parsed and normalized once (about half a file's size for
 * JSON APIs: a 50k-entry pair of 120 MB files fits). Past it, entries are
 * re-read as they are compared.
 */
const KEPT_BYTES_PER_SIDE = 96 * 1024 * 1024;

/** Size of the chunks kept JSON is written into. */
const KEPT_CHUNK = 4 * 1024 * 1024;

/**
 * Kept JSON written one after another into big chunks. Small Buffers would
 * come from Node's shared 8 KiB pool, where each would pin the slab holding
 * the (garbage) raw entry bytes read just before it: 3× the memory, measured.
 */
class KeptBytes {
  private chunk = Buffer.allocUnsafeSlow(0);
  private at = 0;

  /** `text` as UTF-8, in a chunk. */
  put(text: string): Buffer {
    const length = Buffer.byteLength(text, 'utf8');
    if (length > this.chunk.length - this.at) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(KEPT_CHUNK, length));
      this.at = 0;
    }
    const out = this.chunk.subarray(this.at, this.at + this.chunk.write(text, this.at, 'utf8'));
    this.at += out.length;
    return out;
  }
}

/** True when either file is past the threshold (missing files: false, the read stage reports them). */
export async function needsBounded(oldPath: string, newPath: string, threshold = BOUNDED_THRESHOLD): Promise<boolean> {
  const size = async (p: string) => (await stat(p).catch(() => undefined))?.size ?? 0;
  return (await size(oldPath)) > threshold || (await size(newPath)) > threshold;
}

interface Summary {
  /** Index in log.entries. */
  index: number;
  seq?: number;
  started: string;
  key: string;
  route: string;
  page: string;
  id: string;
  token: string;
  /** The normalized entry's contentText as UTF-8 (see keep), until compare takes it. */
  kept?: Buffer;
  /** With `kept`: `[headerOrder, meta]` as JSON. */
  keptRest?: Buffer;
}

interface Side {
  cap: IndexedCapture;
  nctx: NormalizeContext;
  labels: Map<string, string>;
  zips: ZipBodies;
  /** Summaries in comparison order (seq, else start time). */
  list: Summary[];
  /** Bytes of kept JSON left for this side. */
  keepBudget: number;
  /** Where kept JSON is written. */
  kept: KeptBytes;
}

const sides = new WeakMap<DiffContext, { old: Side; new: Side }>();

function state(ctx: DiffContext): { old: Side; new: Side } {
  const s = sides.get(ctx);
  if (!s) throw new Error('bb diff: bounded stages need the bounded read stage first');
  return s;
}

async function openSide(ctx: DiffContext, path: string, which: 'old' | 'new'): Promise<Side> {
  const cap = await indexCapture(path, { allowIncomplete: ctx.options.allowIncomplete });
  const zips = new ZipBodies();
  const nctx = normalizeContextFor(ctx, which, cap.header._bb?.serverHome, zips);
  return { cap, nctx, labels: new Map(), zips, list: [], keepBudget: KEPT_BYTES_PER_SIDE, kept: new KeptBytes() };
}

/** Reads entry `index` of a side and normalizes it (zip bodies decoded just for it). */
async function load(side: Side, index: number): Promise<{ entry: HarEntry; n: Omit<NormalizedEntry, 'id'>; page: string }> {
  const entry = await side.cap.readEntry(index);
  await side.zips.prepareEntry(entry, side.nctx.parsers);
  const page = entry.pageref ? side.labels.get(entry.pageref) ?? '' : '';
  const n = normalizeEntry(entry, index, page, side.nctx);
  side.zips.clear();
  return { entry, n, page };
}

// Kept JSON holds what normalizeEntry built from the built-in parsers, which
// is plain JSON (no undefined, no NaN, no class instances), so parsing it
// back gives the same entry. Custom parsers may build anything: not kept.
function keep(side: Side, n: Omit<NormalizedEntry, 'id'>, text: string): { kept: Buffer; keptRest: Buffer } {
  return { kept: side.kept.put(text), keptRest: side.kept.put(`[${JSON.stringify(n.headerOrder ?? null)},${JSON.stringify(n.meta)}]`) };
}

function unkeep(s: Summary, kept: Buffer, keptRest: Buffer): Omit<NormalizedEntry, 'id'> {
  const content = JSON.parse(kept.toString('utf8')) as Pick<NormalizedEntry, 'request' | 'response'> & { ws: NormalizedEntry['ws'] | null };
  const [headerOrder, meta] = JSON.parse(keptRest.toString('utf8')) as [NormalizedEntry['headerOrder'] | null, NormalizedEntry['meta']];
  const n: Omit<NormalizedEntry, 'id'> = { key: s.key, route: s.route, request: content.request, response: content.response, ...(headerOrder ? { headerOrder } : {}), meta };
  if (content.ws !== null) n.ws = content.ws;
  return n;
}

async function loadFull(side: Side, s: Summary): Promise<NormalizedEntry> {
  let n: Omit<NormalizedEntry, 'id'>;
  if (s.kept && s.keptRest) {
    n = unkeep(s, s.kept, s.keptRest);
    s.kept = s.keptRest = undefined;
  } else n = (await load(side, s.index)).n;
  const e: NormalizedEntry = { id: s.id, ...n };
  applyPathRules(e, side.nctx.pathRules);
  return e;
}

async function summarize(ctx: DiffContext, side: Side): Promise<void> {
  const un = (t: string) => unnumber(t, ctx.table);
  const noPathRules = side.nctx.pathRules.length === 0;
  const keeping = noPathRules && !ctx.options.bodyParsers;
  const list: Summary[] = [];
  for (let i = 0; i < side.cap.entryCount; i++) {
    const { entry, n, page } = await load(side, i);
    const text = noPathRules ? contentText(n) : '';
    let kept: ReturnType<typeof keep> | undefined;
    if (keeping && side.keepBudget > 0) {
      kept = keep(side, n, text);
      side.keepBudget -= kept.kept.length + kept.keptRest.length;
    }
    list.push({
      index: i,
      ...(typeof entry._bb?.seq === 'number' ? { seq: entry._bb.seq } : {}),
      started: entry.startedDateTime,
      key: n.key,
      route: n.route,
      page,
      id: '',
      // Path rules need the id, known only once all entries are sorted: token later then.
      token: noPathRules ? tokenOfText(n.key, text, un) : '',
      ...kept,
    });
  }
  // The same order as pipeline.ts: seq when every entry has one, else start time.
  if (list.every((s) => s.seq !== undefined)) list.sort((a, b) => a.seq! - b.seq!);
  else list.sort((a, b) => (a.started < b.started ? -1 : a.started > b.started ? 1 : a.index - b.index));
  const occurrences = new Map<string, number>();
  for (const s of list) {
    const count = (occurrences.get(s.key) ?? 0) + 1;
    occurrences.set(s.key, count);
    s.id = `${s.page}/${s.route}#${count}`;
  }
  if (!noPathRules) for (const s of list) s.token = entryToken(await loadFull(side, s), un);
  side.list = list;
}

const body = (e: NormalizedEntry) => ({ request: e.request, response: e.response, ws: e.ws });

/** The bounded replacements, by stage name. */
export const boundedReplacements: Partial<Record<string, DiffStage['run']>> = {
  read: async (ctx) => {
    const [o, n] = await Promise.all([openSide(ctx, ctx.old.path, 'old'), openSide(ctx, ctx.new.path, 'new')]);
    const labels = pairedPageLabels(o.cap.header.pages, n.cap.header.pages, o.nctx, n.nctx);
    o.labels = labels.old;
    n.labels = labels.new;
    sides.set(ctx, { old: o, new: n });
  },
  unzip: () => {
    // Zip bodies are decoded entry by entry as they are read (see load).
  },
  normalize: async (ctx) => {
    const s = state(ctx);
    await summarize(ctx, s.old);
    await summarize(ctx, s.new);
  },
  pair: (ctx) => {
    const s = state(ctx);
    const keyed = (list: Summary[]) => list.map((x) => ({ key: x.key, route: x.route, page: x.page, token: x.token }));
    ctx.lineup = pairEntries(keyed(s.old.list), keyed(s.new.list), ctx.config.pairing.unordered ?? []);
  },
  number: () => {
    // Numbering happens pair by pair inside compare (same order as the number stage).
  },
  compare: async (ctx) => {
    const s = state(ctx);
    const numbering = new OrdinalNumbering(ctx.table);
    const render = (side: 0 | 1, e: NormalizedEntry): NormalizedEntry => ({
      ...e,
      id: unnumber(e.id, ctx.table),
      ...(numbering.render(side, body(e)) as Pick<NormalizedEntry, 'request' | 'response' | 'ws'>),
    });
    const found: Array<{ diffs: Difference[]; pair: Pair } | undefined> = new Array(ctx.lineup.length);
    const views = new Map<number, PairView>();
    const finish = (k: number, a: NormalizedEntry | undefined, b: NormalizedEntry | undefined) => {
      const l = ctx.lineup[k]!;
      const diffs = comparePair(a, b, l.status, { headerOrder: ctx.options.headerOrder });
      const e = (a ?? b)!;
      found[k] = {
        diffs,
        pair: { id: e.id, route: e.route, ...(a ? { old: a.meta.index } : {}), ...(b ? { new: b.meta.index } : {}), status: l.status, differences: diffs.length },
      };
      if (diffs.length && views.size < MAX_VIEWS) views.set(k, { ...(a ? { old: body(a) } : {}), ...(b ? { new: body(b) } : {}) });
    };
    // Pairs first, in order, both sides in step; lone entries after, so they cannot shift the rest.
    for (let k = 0; k < ctx.lineup.length; k++) {
      const l = ctx.lineup[k]!;
      if (l.old === undefined || l.new === undefined) continue;
      const so = s.old.list[l.old]!;
      const sn = s.new.list[l.new]!;
      // Most pairs are equal once numbered. Equal un-numbered content (the
      // tokens) and the same number in every slot, found on the kept texts,
      // is what comparePair's own shortcut would conclude: no parsing back.
      if (l.status === 'paired' && !ctx.options.headerOrder && so.kept && sn.kept && so.token === sn.token && numbering.numberPairText(so.kept.toString('utf8'), sn.kept.toString('utf8'))) {
          found[k] = { diffs: [], pair: { id: unnumber(so.id, ctx.table), route: so.route, old: so.index, new: sn.index, status: l.status, differences: 0 } };
        so.kept = so.keptRest = sn.kept = sn.keptRest = undefined;
        continue;
      }
      const a = await loadFull(s.old, so);
      const b = await loadFull(s.new, sn);
      numbering.numberPair(body(a), body(b));
      finish(k, render(0, a), render(1, b));
    }
    for (let k = 0; k < ctx.lineup.length; k++) {
      const l = ctx.lineup[k]!;
      if (l.new === undefined) {
        const a = await loadFull(s.old, s.old.list[l.old!]!);
        numbering.numberAlone(0, body(a));
        finish(k, render(0, a), undefined);
      } else if (l.old === undefined) {
        const b = await loadFull(s.new, s.new.list[l.new]!);
        numbering.numberAlone(1, body(b));
        finish(k, undefined, render(1, b));
      }
    }
    for (const f of found) {
      ctx.differences.push(...f!.diffs);
      ctx.pairs.push(f!.pair);
    }
    attachPairViews(ctx, views);
  },
};

/** Runs after verdict: entry counts from the indexes (no Har is held), files closed. */
const boundedDone: DiffStage = {
  name: 'bounded-done',
  run: async (ctx) => {
    const s = state(ctx);
    if (ctx.result) {
      ctx.result.old.entries = s.old.cap.entryCount;
      ctx.result.new.entries = s.new.cap.entryCount;
    }
    await Promise.all([s.old.cap.close(), s.new.cap.close()]);
  },
};

/** A stage list with the bounded replacements swapped in by name (others kept), and "bounded-done" after "verdict". */
export function boundedStages(defaults: readonly DiffStage[]): DiffStage[] {
  const out: DiffStage[] = [];
  for (const st of defaults) {
    const run = boundedReplacements[st.name];
    out.push(run ? { name: st.name, run } : st);
    if (st.name === 'verdict') out.push(boundedDone);
  }
  return out;
}
