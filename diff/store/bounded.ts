// The bounded store: a side of any size (docs/diff.md "Captures of any size":
// align on small keys first, then compare pair by pair, re-reading bodies as
// needed; never hold two parsed 600 MB captures).
//
// Each side is read by its SideWork (store/side-work.ts), in a worker thread
// (store/worker-client.ts) so both files are indexed and normalized at once,
// or in this thread. The normalize pass reads each entry once and keeps its
// summary and, within a byte budget, its normalized form as UTF-8 JSON; the
// compare loop takes an entry from that kept JSON (or has its side normalize
// it again past the budget); the chunks go when the loop is done. A worker
// whose side kept every entry ends once it handed them over (worker-client.ts).
// Memory: the summaries, the kept JSON (capped), the ordinal table, the
// differences, and a few side-by-side views for the HTML report; never a
// whole capture.
import { stat } from 'node:fs/promises';
import type { DiffContext, EntrySummary, PairFacts, SideHeader, SideStore, Summarized } from '../context.js';
import { applyPathRules, type PathRules } from '../normalize/index.js';
import { ShapeTable } from '../findings.js';
import type { NormalizedEntry } from '../types.js';
import { fromTexts, type EntryTexts, type KeptRef } from './side-work.js';
import { openSide, type SideHandle } from './worker-client.js';
import { indexCapture } from '../../capture/index.js';
import { readPrimarySends, type BoundSet, type PrimarySends } from '../bind/index.js';

/** Files bigger than this (either side) go to the bounded store. */
export const BOUNDED_THRESHOLD = 64 * 1024 * 1024;

/** True when either file is past the threshold (missing files: false, the read stage reports them). */
export async function needsBounded(oldPath: string, newPath: string, threshold = BOUNDED_THRESHOLD): Promise<boolean> {
  const size = async (p: string) => (await stat(p).catch(() => undefined))?.size ?? 0;
  return (await size(oldPath)) > threshold || (await size(newPath)) > threshold;
}

/** One side kept bounded: summaries here, entries in kept chunks or read again by the side. */
export class BoundedStore implements SideStore {
  summaries: EntrySummary[] = [];
  shapes: Array<Set<string>> = [];
  keyed: ReadonlySet<number> = new Set();
  /** Where each entry's kept JSON is, by place in comparison order (until releaseAll: the chunks hold it anyway). */
  private kept: Array<KeptRef | undefined> = [];
  /** What `kept` points into. */
  private chunks: Buffer[] = [];
  private closed = false;
  /** The side's bound values by their value numbers in its thread's table (finish). */
  private issued = new Map<number, string>();

  private constructor(
    private readonly handle: SideHandle,
    private readonly pathRules: PathRules,
    private readonly path: string,
    private readonly allowIncomplete: boolean | undefined,
  ) {}

  /** Opens (indexes) one side of the run, in a worker when the run allows it. */
  static async open(ctx: DiffContext, which: 'old' | 'new'): Promise<BoundedStore> {
    return new BoundedStore(await openSide(ctx, which), ctx.pathRules, ctx[which].path, ctx.options.allowIncomplete);
  }

  /** Read on this thread, one or two passes over the file (a shadow's primary, before the mirror side's summarize: readPrimarySends). */
  async primarySends(): Promise<PrimarySends> {
    const cap = await indexCapture(this.path, { allowIncomplete: this.allowIncomplete });
    try {
      return await readPrimarySends(() => cap.entries());
    } finally {
      await cap.close();
    }
  }

  get header(): SideHeader {
    return this.handle.header;
  }

  summarize(labels: Map<string, string>, onProgress?: (done: number) => void, pair?: PairFacts): Promise<Summarized> {
    return this.handle.summarize(labels, onProgress, pair);
  }

  bound(pair?: PairFacts, ids?: boolean): Promise<BoundSet> {
    return this.handle.bound(pair, ids);
  }

  async finish(hosts: boolean): Promise<void> {
    const r = await this.handle.finish(hosts);
    this.summaries = r.summaries;
    this.kept = r.kept;
    this.chunks = r.chunks;
    this.keyed = new Set(r.keyed);
    this.issued = new Map(r.issued);
    const table = new ShapeTable();
    this.shapes = r.shapes.map((t) => table.shapes[table.addText(t)]!);
  }

  /** Entry `i` from its kept JSON, else normalized again by its side; path rules applied. */
  async entry(i: number): Promise<NormalizedEntry> {
    const x = this.summaries[i]!;
    const k = this.kept[i];
    let texts: EntryTexts;
    if (!k) texts = await this.handle.load(x.index);
    else {
      const c = this.chunks[k.chunk]!;
      texts = { text: c.toString('utf8', k.at, k.at + k.text), rest: c.toString('utf8', k.at + k.text, k.at + k.text + k.rest) };
    }
    const e: NormalizedEntry = { id: x.id, ...fromTexts(x, texts) };
    applyPathRules(e, this.pathRules);
    return e;
  }

  issuedValue(v: number): string | undefined {
    return this.issued.get(v);
  }

  releaseAll(): void {
    this.kept = [];
    this.chunks = [];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.releaseAll();
    await this.handle.close();
  }
}
