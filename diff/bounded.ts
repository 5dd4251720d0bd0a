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
//   compare    take each pair's kept JSON (or have its side normalize the
//              entry again past the budget), number its ordinals in step
//              (pairs in order first, lone entries after, as the number stage
//              does), compare, drop it
// The other stages (noise, classify, verdict...) are kept as they are.
// Memory: the summaries, the kept JSON (capped), the ordinal table, the
// differences, and a few side-by-side views for the HTML report; never a
// whole capture.
import { stat } from 'node:fs/promises';
import { normalizeContextFor, type DiffContext, type DiffStage } from './pipeline.js';
import { OrdinalNumbering, unnumber } from './normalize/ordinals.js';
import { applyPathRules, pairedPageLabels } from './normalize/entry.js';
import { ZipBodies } from './normalize/zip.js';
import { pairEntries } from './pair.js';
import { comparePair } from './compare.js';
import { attachPairViews } from './report/html-views.js';
import type { PairView } from './report/html-pair.js';
import { fromTexts, type EntryTexts, type Summary } from './bounded-side.js';
import { openSide, type SideHandle } from './bounded-remote.js';
import type { Difference, NormalizedEntry, Pair } from './types.js';

/** Files bigger than this (either side) are compared by the bounded stages. */
export const BOUNDED_THRESHOLD = 64 * 1024 * 1024;

/** Side-by-side views kept for the HTML report. */
const MAX_VIEWS = 100;

/** True when either file is past the threshold (missing files: false, the read stage reports them). */
export async function needsBounded(oldPath: string, newPath: string, threshold = BOUNDED_THRESHOLD): Promise<boolean> {
  const size = async (p: string) => (await stat(p).catch(() => undefined))?.size ?? 0;
  return (await size(oldPath)) > threshold || (await size(newPath)) > threshold;
}

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
}

const sides = new WeakMap<DiffContext, { old: Side; new: Side }>();

function state(ctx: DiffContext): { old: Side; new: Side } {
  const s = sides.get(ctx);
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

function full(ctx: DiffContext, s: Summary, t: EntryTexts): NormalizedEntry {
  const e: NormalizedEntry = { id: s.id, ...fromTexts(s, t) };
  applyPathRules(e, ctx.config.normalize.paths ?? []);
  return e;
}

const body = (e: NormalizedEntry) => ({ request: e.request, response: e.response, ws: e.ws });

async function closeAll(handles: Array<SideHandle | undefined>): Promise<void> {
  await Promise.all(handles.map((h) => h?.close().catch(() => undefined)));
}

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
    const zips = new ZipBodies();
    const labels = pairedPageLabels(o.header.pages, n.header.pages, normalizeContextFor(ctx, 'old', o.header.serverHome, zips), normalizeContextFor(ctx, 'new', n.header.serverHome, zips));
    sides.set(ctx, { old: { handle: o, labels: labels.old, list: [], chunks: [], markers: new Uint32Array() }, new: { handle: n, labels: labels.new, list: [], chunks: [], markers: new Uint32Array() } });
  },
  unzip: () => {
    // Zip bodies are decoded entry by entry as they are read (bounded-side.ts).
  },
  normalize: async (ctx) => {
    const s = state(ctx);
    try {
      const [o, n] = await Promise.all([s.old.handle.summarize(s.old.labels), s.new.handle.summarize(s.new.labels)]);
      Object.assign(s.old, o);
      Object.assign(s.new, n);
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
  number: () => {
    // Numbering happens pair by pair inside compare (same order as the number stage).
  },
  compare: async (ctx) => {
    const s = state(ctx);
    const numbering = new OrdinalNumbering(ctx.table);
    const textShortcut = !ctx.options.headerOrder && !(ctx.config.normalize.paths ?? []).length;
    const render = (side: 0 | 1, e: NormalizedEntry): NormalizedEntry => ({
      ...e,
      id: unnumber(e.id, ctx.table),
      ...(numbering.render(side, body(e)) as Pick<NormalizedEntry, 'request' | 'response' | 'ws'>),
    });
    const found: Array<{ diffs: Difference[]; pair: Pair } | undefined> = new Array(ctx.lineup.length);
    const views = new Map<number, PairView>();
    const finish = (k: number, a: NormalizedEntry | undefined, b: NormalizedEntry | undefined) => {
      const l = ctx.lineup[k]!;
      const diffs = comparePair(a, b, l.status, { headerOrder: ctx.options.headerOrder, wsOrder: ctx.config.pairing.wsOrder });
      const e = (a ?? b)!;
      found[k] = {
        diffs,
        pair: { id: e.id, route: e.route, ...(a ? { old: a.meta.index } : {}), ...(b ? { new: b.meta.index } : {}), status: l.status, differences: diffs.length },
      };
      if (diffs.length && views.size < MAX_VIEWS) views.set(k, { ...(a ? { old: body(a) } : {}), ...(b ? { new: body(b) } : {}) });
    };
    try {
      // Pairs first, in order, both sides in step; lone entries after, so they cannot shift the rest.
      for (let k = 0; k < ctx.lineup.length; k++) {
        const l = ctx.lineup[k]!;
        if (l.old === undefined || l.new === undefined) continue;
        const so = s.old.list[l.old]!;
        const sn = s.new.list[l.new]!;
        // Most pairs are equal once numbered. Equal un-numbered content (the
        // tokens) and the same number in every slot, found on the marker
        // sequences the sides kept, is what comparePair's own shortcut would
        // conclude: nothing read again, nothing parsed.
        if (textShortcut && l.status === 'paired' && so.token === sn.token && so.marks && sn.marks) {
          const ma = s.old.markers.subarray(so.marks[0], so.marks[0] + so.marks[1]);
          const mb = s.new.markers.subarray(sn.marks[0], sn.marks[0] + sn.marks[1]);
          if (numbering.numberPairMarkers(ma, mb)) {
            so.kept = sn.kept = undefined;
            found[k] = { diffs: [], pair: { id: unnumber(so.id, ctx.table), route: so.route, old: so.index, new: sn.index, status: l.status, differences: 0 } };
            continue;
          }
        }
        const [ta, tb] = await Promise.all([texts(s.old, so), texts(s.new, sn)]);
        const a = full(ctx, so, ta);
        const b = full(ctx, sn, tb);
        numbering.numberPair(body(a), body(b));
        finish(k, render(0, a), render(1, b));
      }
      for (let k = 0; k < ctx.lineup.length; k++) {
        const l = ctx.lineup[k]!;
        if (l.new === undefined) {
          const so = s.old.list[l.old!]!;
          const a = full(ctx, so, await texts(s.old, so));
          numbering.numberAlone(0, body(a));
          finish(k, render(0, a), undefined);
        } else if (l.old === undefined) {
          const sn = s.new.list[l.new]!;
          const b = full(ctx, sn, await texts(s.new, sn));
          numbering.numberAlone(1, body(b));
          finish(k, undefined, render(1, b));
        }
      }
    } catch (err) {
      await closeAll([s.old.handle, s.new.handle]);
      throw err;
    }
    s.old.chunks = s.new.chunks = [];
    s.old.markers = s.new.markers = new Uint32Array();
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
