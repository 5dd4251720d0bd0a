// bb diff for captures of any size (DESIGN.md "Comparing": align on small
// keys first, then compare pair by pair, re-reading bodies as needed; never
// hold two parsed 600 MB captures).
//
// The same stages by name as pipeline.ts, with read / unzip / normalize /
// pair / number / compare replaced:
//   read       open both sides (diff/bounded-remote.ts: a worker thread
//              each, so both files are indexed and normalized at once)
//   normalize  each side reads each entry once, normalizes it, keeps only a
//              small summary (sort key, pairing key, route, content token)
//              and, within a byte budget, the normalized entry as UTF-8 JSON
//              (diff/bounded-side.ts)
//   pair       the same pairing, over the summaries
//   compare    the same compare loop (engine.ts), handed an EntrySource that
//              takes each entry's kept JSON (or has its side normalize the
//              entry again past the budget) and drops it once compared
// Ordering, ids, numbering, array alignment, findings and the rest of the
// stages are the in-memory path's own: a fix lands once.
// Memory: the summaries, the kept JSON (capped), the ordinal table, the
// differences, and a few side-by-side views for the HTML report; never a
// whole capture.
import { stat } from 'node:fs/promises';
import { loopSettings, normalizeContextFor, type DiffContext, type DiffStage } from './pipeline.js';
import { applyPathRules, hostsInKeys, pairedPageLabels } from './normalize/index.js';
import { pairEntries } from './pair.js';
import { compareLineup, type EntrySource, type EntrySummary } from './engine.js';
import { ShapeTable } from './findings.js';
import { fromTexts, type EntryTexts, type Summary } from './bounded-side.js';
import { openSide, type SideHandle } from './bounded-remote.js';
import type { NormalizedEntry } from './types.js';
import { appendAll } from '../core/index.js';

/** Files bigger than this (either side) are compared by the bounded stages. */
export const BOUNDED_THRESHOLD = 64 * 1024 * 1024;

/** True when either file is past the threshold (missing files: false, the read stage reports them). */
export async function needsBounded(oldPath: string, newPath: string, threshold = BOUNDED_THRESHOLD): Promise<boolean> {
  const size = async (p: string) => (await stat(p).catch(() => undefined))?.size ?? 0;
  return (await size(oldPath)) > threshold || (await size(newPath)) > threshold;
}

/** One open side of a bounded run: what ctx.bounded holds. */
interface Side {
  handle: SideHandle;
  /** Page id → label. */
  labels: Map<string, string>;
  /** Summaries in comparison order. */
  list: Summary[];
  /** What the summaries' kept refs point into. */
  chunks: Buffer[];
  /** What the summaries' marks point into. */
  markers: Uint32Array;
  /** The side's shapes (field patterns), by a summary's `shape`. */
  shapes: Array<Set<string>>;
}

/** The bounded run's state, in the context's declared `bounded` field. */
interface BoundedState {
  old: Side;
  new: Side;
}

function state(ctx: DiffContext): BoundedState {
  const s = ctx.bounded as BoundedState | undefined;
  if (!s) throw new Error('bb diff: bounded stages need the bounded read stage first');
  return s;
}

/** An entry's kept form: from the kept chunk (then dropped), else normalized again by its side. */
async function texts(side: Side, s: Summary): Promise<EntryTexts> {
  const k = s.kept;
  if (!k) return side.handle.load(s.index);
  s.kept = undefined;
  const c = side.chunks[k.chunk]!;
  return { text: c.toString('utf8', k.at, k.at + k.text), rest: c.toString('utf8', k.at + k.text, k.at + k.text + k.rest) };
}

async function closeAll(handles: Array<SideHandle | undefined>): Promise<void> {
  await Promise.all(handles.map((h) => h?.close().catch(() => undefined)));
}

const side = (handle: SideHandle, labels: Map<string, string>): Side => ({ handle, labels, list: [], chunks: [], markers: new Uint32Array(), shapes: [] });

/** The bounded replacements, by stage name. */
export const boundedReplacements: Partial<Record<string, DiffStage['run']>> = {
  read: async (ctx) => {
    const opened = await Promise.allSettled([openSide(ctx, 'old'), openSide(ctx, 'new')]);
    const [o, n] = opened.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed || !o || !n) {
      await closeAll([o, n]);
      throw failed?.reason;
    }
    // Page titles normalize to labels without markers: this thread's table names the classes alike.
    const labels = pairedPageLabels(o.header.pages, n.header.pages, normalizeContextFor(ctx, 'old', o.header.serverHome, ctx.zips), normalizeContextFor(ctx, 'new', n.header.serverHome, ctx.zips));
    ctx.bounded = { old: side(o, labels.old), new: side(n, labels.new) } satisfies BoundedState;
  },
  unzip: () => {
    // Zip bodies are decoded entry by entry as they are read (bounded-side.ts).
  },
  normalize: async (ctx) => {
    const s = state(ctx);
    try {
      const total = s.old.handle.header.entryCount + s.new.handle.header.entryCount;
      const read = [0, 0];
      const report = (k: 0 | 1) => (done: number) => {
        read[k] = done;
        ctx.options.onProgress?.({ stage: 'normalize', done: read[0]! + read[1]!, total });
      };
      const [ho, hn] = await Promise.all([s.old.handle.summarize(s.old.labels, report(0)), s.new.handle.summarize(s.new.labels, report(1))]);
      // Hosts in keys or not is decided for both sides at once, as the in-memory normalize stage does.
      const withHosts = hostsInKeys(new Set(ho.hosts), new Set(hn.hosts));
      const [o, n] = await Promise.all([s.old.handle.finish(withHosts), s.new.handle.finish(withHosts)]);
      const shapes = new ShapeTable();
      for (const [to, from] of [[s.old, o], [s.new, n]] as const) {
        to.list = from.list;
        to.chunks = from.chunks;
        to.markers = from.markers;
        to.shapes = from.shapes.map((t) => shapes.shapes[shapes.addText(t)]!);
      }
      if (ctx.options.timing) {
        ctx.old.timing = o.list.map((x) => ({ id: x.id, route: x.route, ...x.times! }));
        ctx.new.timing = n.list.map((x) => ({ id: x.id, route: x.route, ...x.times! }));
      }
    } catch (err) {
      await closeAll([s.old.handle, s.new.handle]);
      throw err;
    }
  },
  pair: (ctx) => {
    const s = state(ctx);
    const keyed = (list: Summary[]) => list.map((x) => ({ key: x.key, route: x.route, page: x.page, token: x.token }));
    ctx.lineup = pairEntries(keyed(s.old.list), keyed(s.new.list), ctx.config.pairing.unordered ?? []);
  },
  compare: async (ctx) => {
    const s = state(ctx);
    const sides = [s.old, s.new] as const;
    // Kept marker sequences hold the content as it was before path rules: the shortcut only without them.
    const marksKept = !(ctx.config.normalize.paths ?? []).length;
    // Each summary once, as the loop reads it (it asks for one several times).
    const summaries = sides.map((side) =>
      side.list.map((x): EntrySummary => ({
        id: x.id,
        route: x.route,
        index: x.index,
        ...(x.seq !== undefined ? { seq: x.seq } : {}),
        token: x.token,
        shape: side.shapes[x.shape]!,
        ...(marksKept && x.marks ? { marks: side.markers.subarray(x.marks[0], x.marks[0] + x.marks[1]) } : {}),
      })),
    );
    const source: EntrySource = {
      summary: (k, i) => summaries[k]![i]!,
      entry: async (k, i) => {
        const x = sides[k].list[i]!;
        const e: NormalizedEntry = { id: x.id, ...fromTexts(x, await texts(sides[k], x)) };
        applyPathRules(e, ctx.config.normalize.paths ?? []);
        return e;
      },
      release: (k, i) => {
        sides[k].list[i]!.kept = undefined;
      },
    };
    try {
      const found = await compareLineup(ctx.lineup, source, loopSettings(ctx));
      appendAll(ctx.differences, found.differences);
      appendAll(ctx.pairs, found.pairs);
      ctx.views = found.views;
      ctx.pairShapes = found.shapes;
    } catch (err) {
      await closeAll([s.old.handle, s.new.handle]);
      throw err;
    }
    s.old.chunks = s.new.chunks = [];
    s.old.markers = s.new.markers = new Uint32Array();
  },
};

/** Runs after verdict: entry counts from the indexes (no Har is held), files closed. */
const boundedDone: DiffStage = {
  name: 'bounded-done',
  run: async (ctx) => {
    const s = state(ctx);
    if (ctx.result) {
      ctx.result.old.entries = s.old.handle.header.entryCount;
      ctx.result.new.entries = s.new.handle.header.entryCount;
    }
    await Promise.all([s.old.handle.close(), s.new.handle.close()]);
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
