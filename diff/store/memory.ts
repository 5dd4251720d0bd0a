// The in-memory store: a side small enough to parse whole. The read stage
// parses the capture and decodes its zip bodies; the normalize pass
// normalizes every entry in comparison order and keeps them all, so the
// compare loop takes each one as it is.
import { readCapture, replaySkipsIn, type Har } from '../../capture/index.js';
import { normalizeContextFor, parsersOf, sideHeader, type DiffContext, type EntrySummary, type PairFacts, type SideHeader, type SideStore, type Summarized } from '../context.js';
import { applyPathRulesNoting, bothErased, captureWindow, entryHost, keyedClassIndices, keyedSlotsIn, normalizeEntry, unnumber, ZipBodies } from '../normalize/index.js';
import { contentTexts, digestAndMarks, requestDigest, spanOf, tokenOf } from '../pair.js';
import { assignIds, comparisonSeq, shadowId, shadowLeftOut, sortForComparison } from '../order.js';
import { ShapeIndex } from '../findings.js';
import { timesOf } from '../timing.js';
import { boundExcept, boundSet, readPrimarySends, type BoundSet, type PrimarySends } from '../bind/index.js';
import type { NormalizedEntry } from '../types.js';

/** One side parsed whole, its entries normalized and kept until compared. */
export class MemoryStore implements SideStore {
  readonly header: SideHeader;
  summaries: EntrySummary[] = [];
  shapes: Array<Set<string>> = [];
  keyed = new Set<number>();
  /** Normalized entries in comparison order (summarize), named and path-ruled by finish. */
  private entries: NormalizedEntry[] = [];
  /** Each entry's host, in the same order. */
  private hosts: string[] = [];

  private constructor(
    private readonly ctx: DiffContext,
    private readonly which: 'old' | 'new',
    private har: Har | undefined,
    private readonly zips: ZipBodies,
    private readonly boundBefore?: ReadonlySet<string>,
    private readonly idsBefore?: { has(value: string): boolean },
  ) {
    const { pages, entries } = har!.log;
    this.header = sideHeader(har!.log, entries.length, captureWindow(entries[0], entries.at(-1), pages), entries[0]);
  }

  /** Reads and parses one side of the run, and decodes its zip bodies for the "zip" parser. */
  static async open(ctx: DiffContext, which: 'old' | 'new'): Promise<MemoryStore> {
    return MemoryStore.of(ctx, which, await readCapture(ctx[which].path, { allowIncomplete: ctx.options.allowIncomplete, allowEmpty: ctx[which].mayBeEmpty === true }));
  }

  /**
   * One side of the run from a capture already in memory and checked
   * (diff/in-memory.ts), its zip bodies decoded; `boundBefore`: values bound
   * before its first entry, when it is one part of a longer timeline.
   */
  static async of(ctx: DiffContext, which: 'old' | 'new', har: Har, boundBefore?: ReadonlySet<string>, idsBefore?: { has(value: string): boolean }): Promise<MemoryStore> {
    const zips = new ZipBodies();
    await zips.prepareEntries(har.log.entries, parsersOf(ctx.options));
    return new MemoryStore(ctx, which, har, zips, boundBefore, idsBefore);
  }

  async primarySends(): Promise<PrimarySends> {
    return readPrimarySends(() => this.har!.log.entries);
  }

  /** Bound values, read once (SideStore.bound). */
  private bindings: BoundSet | undefined;

  async bound(pair: PairFacts = {}, ids = false): Promise<BoundSet> {
    return this.boundNow(pair, ids);
  }

  private boundNow(pair: PairFacts, ids = false): BoundSet {
    if (!this.bindings) {
      const found = boundSet(this.har!.log.entries, pair.primarySends, ids);
      // Values bound before this part of a longer timeline count as ids when they were ones where they stood earlier.
      if (found.ids && this.idsBefore) for (const v of this.boundBefore ?? []) if (this.idsBefore.has(v)) (found.ids as Set<string>).add(v);
      this.bindings = { ...found, values: withBefore(found.values as Set<string>, this.boundBefore) };
    }
    return this.bindings;
  }

  // No await in summarize and finish: each side runs whole when called, old
  // before new, so the run's ordinal table meets values in one fixed order.
  async summarize(labels: Map<string, string>, _onProgress?: unknown, pair: PairFacts = {}): Promise<Summarized> {
    const { replayOf } = pair;
    const har = this.har!;
    // Entries a replay of this capture did not send: never normalized, so they name no host and take no marker.
    const leftOut = replaySkipsIn(replayOf, har.log.entries.length, (i) => har.log.entries[i]);
    const leave = new Set(leftOut?.map((s) => s.index));
    // The values this side's server issued and its client sent back, known before any entry is normalized (diff/bind).
    const issued = this.ctx.rules.issued ? boundExcept(this.boundNow(pair).values, pair.unbound) : undefined;
    const nctx = { ...normalizeContextFor(this.ctx, this.which, this.header.serverHome, this.zips, this.header.window, issued), bbChoseHost: pair.bbChoseHost === true, ...(pair.shadowPair ? { shadowPair: true } : {}), ...(pair.bbSetHeaders ? { bbSetHeaders: new Set(pair.bbSetHeaders) } : {}) };
    const order = sortForComparison(har.log.entries.map((entry, index) => ({ entry, index, seq: comparisonSeq(entry), started: entry.startedDateTime })));
    const notMirrored: number[] = [];
    let unanswered = 0;
    for (const { entry, index } of order) {
      const out = shadowLeftOut(entry, pair);
      if (out) {
        const id = shadowId(entry);
        if (id !== undefined) notMirrored.push(id);
        if (out === 'unanswered') unanswered++;
        continue;
      }
      if (leave.has(index)) continue;
      const page = entry.pageref ? labels.get(entry.pageref) ?? '' : '';
      this.entries.push({ id: '', ...normalizeEntry(entry, index, page, nctx) });
      this.hosts.push(entryHost(entry, nctx));
    }
    return { hosts: [...new Set(this.hosts)], ...(leftOut ? { leftOut } : {}), ...(notMirrored.length ? { notCompared: notMirrored } : {}), ...(unanswered ? { unanswered } : {}) };
  }

  async finish(withHosts: boolean): Promise<void> {
    const { table, pathRules, options } = this.ctx;
    const entries = this.entries;
    assignIds(entries, (e) => e.meta.page, withHosts ? (_e, i) => this.hosts[i]! : undefined);
    const un = (t: string) => unnumber(t, table);
    // What the config's erasing rules found: key rules and header masks as the entry was normalized, path rules now.
    const erased = entries.map((e) => bothErased(e.meta.erased, applyPathRulesNoting(e, pathRules, un)));
    const shapes = new ShapeIndex((t) => unnumber(t, table));
    const logEntries = this.har!.log.entries;
    const keyedClasses = keyedClassIndices(table, this.ctx.rules.keyedClasses);
    this.summaries = entries.map((e, i) => {
      const texts = contentTexts(e);
      const { digest, marks } = digestAndMarks(texts.text, table);
      keyedSlotsIn(marks, keyedClasses, this.keyed);
      const shadow = shadowId(logEntries[e.meta.index]!);
      return {
        index: e.meta.index,
        ...(e.meta.seq !== undefined ? { seq: e.meta.seq } : {}),
        ...(shadow !== undefined ? { shadow } : {}),
        key: e.key,
        route: e.route,
        page: e.meta.page,
        id: e.id,
        token: tokenOf(e.key, digest),
        request: requestDigest(texts.request, table),
        marks,
        shape: shapes.add(e),
        ...spanOf(logEntries[e.meta.index]!),
        ...(options.timing ? { times: timesOf(logEntries[e.meta.index]!) } : {}),
        ...(erased[i] ? { erased: erased[i] } : {}),
      };
    });
    this.shapes = shapes.sets();
    // The entries are all that is needed from here on.
    this.har = undefined;
    this.hosts = [];
    this.zips.clear();
  }

  entry(i: number): NormalizedEntry {
    return this.entries[i]!;
  }

  issuedValue(v: number): string | undefined {
    // Both sides in memory mark with the run's one table.
    return this.ctx.table.valueOf(v);
  }

  releaseAll(): void {
    this.entries = [];
  }

  async close(): Promise<void> {
    this.releaseAll();
    this.har = undefined;
  }
}

/** A part's bound values and those its timeline bound before it. */
function withBefore(bound: Set<string>, before: ReadonlySet<string> | undefined): Set<string> {
  if (before) for (const v of before) bound.add(v);
  return bound;
}
