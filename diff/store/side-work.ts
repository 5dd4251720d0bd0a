// The work of one side of the bounded store (store/bounded.ts): index the
// file, read and normalize each entry once, keep a small summary per entry
// and, within a byte budget, the normalized entry as UTF-8 JSON; later hand
// any entry back in that same form. Pure of the other side, so it runs in a
// worker thread (store/worker.ts), one per side, both sides at once, or in
// the calling thread when the diff has code a worker cannot get (custom body
// parsers).
//
// The side has its own OrdinalTable. Markers then mean something only within
// their side, which is all the differ needs: numbering keys markers by side,
// classes are seeded from the rules (the same class numbers everywhere), and
// routes, keys and ids hold no markers.
import { claimedIndices, indexCapture, replaySkipsIn, type IndexedCapture } from '../../capture/index.js';
import type { HarEntry } from '../../capture/index.js';
import { createContext, normalizeContextFor, sideHeader, type DiffContext, type DiffOptions, type EntrySummary, type PairFacts, type SideHeader, type Summarized } from '../context.js';
import { unnumber, applyPathRulesNoting, bothErased, captureWindow, entryHost, keyedClassIndices, keyedSlotsIn, normalizeEntry, type NormalizeContext, ZipBodies } from '../normalize/index.js';
import { contentText, contentTexts, digestAndMarks, requestDigest, spanOf, tokenOf } from '../pair.js';
import { assignIds, comparisonSeq, shadowId, shadowLeftOut, sortForComparison } from '../order.js';
import { ShapeIndex } from '../findings.js';
import type { NormalizedEntry } from '../types.js';
import { timesOf } from '../timing.js';
import { boundExcept, IssuedTimeline, type BoundSet } from '../bind/index.js';

/**
 * Bytes of normalized entries kept per side between the two passes, so most
 * entries are read, parsed and normalized once (about half a file's size for
 * JSON APIs: a 50k-entry pair of 120 MB files fits). Past it, entries are
 * re-read as they are compared.
 */
export const KEPT_BYTES_PER_SIDE = 96 * 1024 * 1024;

/** Entries between two progress reports of a side. */
const PROGRESS_EVERY = 2000;

/** Size of the chunks kept JSON is written into. */
const KEPT_CHUNK = 4 * 1024 * 1024;

/** Where an entry's kept JSON is: chunk index, start, and the byte lengths of its two parts. */
export interface KeptRef {
  chunk: number;
  at: number;
  /** contentText (request, response, ws). */
  text: number;
  /** `[headerOrder, meta]`. */
  rest: number;
}

/** A side's summaries in comparison order, and what they and their kept forms point into. */
export interface SideSummaries {
  /** In comparison order; `marks` are views into `markers`. */
  summaries: EntrySummary[];
  /** Where each entry's kept JSON is, by place in comparison order (absent: past the budget, or not kept). */
  kept: Array<KeptRef | undefined>;
  /** What `kept` points into. */
  chunks: Buffer[];
  /** Every entry's marker sequence, one after another. */
  markers: Uint32Array;
  /** The side's shapes, each as its patterns joined by newlines (ShapeTable.addText). */
  shapes: string[];
  /** The keyed ordinals its compared entries hold, as slots (normalize/keyed.ts). */
  keyed: number[];
  /** The side's bound values its entries hold, each with its value number in this side's table (SideStore.issuedValue). */
  issued: Array<[number, string]>;
}

/** An entry in kept form: contentText and `[headerOrder, meta]`, both JSON (path rules not applied). */
export interface EntryTexts {
  text: string;
  rest: string;
}

/** What opening a side needs: only data, so it crosses into a worker. */
export interface SideSpec {
  path: string;
  which: 'old' | 'new';
  /** It may hold no entries (DiffSide.mayBeEmpty). */
  mayBeEmpty?: boolean;
  options: Pick<DiffOptions, 'config' | 'allowIncomplete' | 'serverHome' | 'timing'>;
}

/**
 * Kept JSON written one after another into big chunks. Small Buffers would
 * come from Node's shared 8 KiB pool, where each would pin the slab holding
 * the (garbage) raw entry bytes read just before it: 3× the memory, measured.
 * Each chunk owns its ArrayBuffer, so a worker can hand the chunks over
 * without copying.
 */
/** Marker sequences of all entries, one after another (growing as needed). */
class MarkerList {
  private data = new Uint32Array(1 << 16);
  private length = 0;

  add(m: number[]): [number, number] {
    if (this.length + m.length > this.data.length) {
      const next = new Uint32Array(Math.max(this.data.length * 2, this.length + m.length));
      next.set(this.data.subarray(0, this.length));
      this.data = next;
    }
    this.data.set(m, this.length);
    this.length += m.length;
    return [this.length - m.length, m.length];
  }

  /** The numbers written, in an ArrayBuffer of their own (to hand over). */
  take(): Uint32Array {
    return this.data.slice(0, this.length);
  }
}

class KeptBytes {
  readonly chunks: Buffer[] = [];
  private at = 0;

  /** Writes `text` then `rest` as UTF-8, side by side in one chunk; where they went. */
  put(text: string, rest: string): KeptRef {
    // A UTF-16 code unit takes at most 3 UTF-8 bytes: with that much room left
    // the texts are written without measuring them first (a pass less over each).
    const most = 3 * (text.length + rest.length);
    let chunk = this.chunks.at(-1);
    if (!chunk || most > chunk.length - this.at) {
      const need = Buffer.byteLength(text, 'utf8') + Buffer.byteLength(rest, 'utf8');
      if (!chunk || need > chunk.length - this.at) {
        chunk = Buffer.allocUnsafeSlow(Math.max(KEPT_CHUNK, need));
        this.chunks.push(chunk);
        this.at = 0;
      }
    }
    const at = this.at;
    const lt = chunk.write(text, at, 'utf8');
    const lr = chunk.write(rest, at + lt, 'utf8');
    this.at += lt + lr;
    return { chunk: this.chunks.length - 1, at, text: lt, rest: lr };
  }
}

// Kept JSON holds what normalizeEntry built from the built-in parsers, which
// is plain JSON (no undefined, no NaN, no class instances), so parsing it
// back gives the same entry. Custom parsers may build anything: not kept.
function restOf(n: Omit<NormalizedEntry, 'id'>): string {
  return `[${JSON.stringify(n.headerOrder ?? null)},${JSON.stringify(n.meta)}]`;
}

/** The normalized entry back from its kept form (the summary gives key and route). */
export function fromTexts(s: Pick<EntrySummary, 'key' | 'route'>, t: EntryTexts): Omit<NormalizedEntry, 'id'> {
  const content = JSON.parse(t.text) as Pick<NormalizedEntry, 'request' | 'response'> & { ws: NormalizedEntry['ws'] | null; grpc?: NormalizedEntry['grpc'] };
  const [headerOrder, meta] = JSON.parse(t.rest) as [NormalizedEntry['headerOrder'] | null, NormalizedEntry['meta']];
  const n: Omit<NormalizedEntry, 'id'> = { key: s.key, route: s.route, request: content.request, response: content.response, ...(headerOrder ? { headerOrder } : {}), meta };
  if (content.ws !== null) n.ws = content.ws;
  if (content.grpc) n.grpc = content.grpc;
  return n;
}

// An http(s) or ws(s) URL's scheme and authority: in these schemes the host
// part ends at the first slash, backslash, ? or # (WHATWG URL), so they alone decide the host.
const AUTHORITY = /^(?:https?|wss?):\/\/[^/?#\\]*/i;

/** What summarize read, by index in log.entries, until finish. */
interface Pending {
  /** Summaries in file order, not yet named. */
  list: EntrySummary[];
  /** startedDateTime (for the order), host (for the names) and content digest (for the token). */
  started: string[];
  /** What each entry is compared in order of (order.ts comparisonSeq: a shadow's shared id, else `_bb.seq`), by index. */
  order: Array<number | undefined>;
  hosts: string[];
  digests: string[];
  /** Where each entry's kept JSON and marker sequence went. */
  kept: Array<KeptRef | undefined>;
  markRefs: Array<[number, number] | undefined>;
  marks: MarkerList;
}

/** One side: opened (indexed), then summarized and finished once, then asked for entries. */
export class SideWork {
  private readonly kept = new KeptBytes();
  private labels = new Map<string, string>();
  /** Entries' shapes (field patterns), made on the side's first read. */
  private shapes: ShapeIndex | undefined;
  /** entryHost by a URL's scheme and authority (all that decides it), asked once per distinct one. */
  private readonly hostOfAuthority = new Map<string, string>();
  /** What summarize read, until finish. */
  private pending: Pending | undefined;

  private constructor(
    private readonly cap: IndexedCapture,
    /** The side's pages, size, home and time window. */
    readonly header: SideHeader,
    private readonly ctx: DiffContext,
    /** The side's normalize context; summarize makes it again with the side's bound values. */
    private nctx: NormalizeContext,
    private readonly which: 'old' | 'new',
    private readonly zips: ZipBodies,
    private readonly keeping: boolean,
  ) {}

  /**
   * Indexes the file. `ctx`: the run's context when the side runs in the
   * calling thread (its custom parsers apply); a worker makes its own from the spec.
   */
  static async open(spec: SideSpec, ctx?: DiffContext): Promise<SideWork> {
    const cap = await indexCapture(spec.path, { allowIncomplete: spec.options.allowIncomplete, allowEmpty: spec.mayBeEmpty === true });
    const c = ctx ?? createContext(spec.path, spec.path, spec.options);
    const zips = new ZipBodies();
    // The time window from the first and last entries (captureWindow): two reads, not a pass over the file.
    // One that does not read is left out here: summarize reports it, in file order.
    const n = cap.entryCount;
    const at = (i: number) => (i >= 0 ? cap.readEntry(i).catch(() => undefined) : undefined);
    const first = await at(n ? 0 : -1);
    const window = captureWindow(first, await at(n - 1), cap.header.pages);
    const header = sideHeader(cap.header, n, window, first);
    const nctx = normalizeContextFor(c, spec.which, header.serverHome, zips, window);
    // Kept texts parse back to the same entry only for the built-in parsers.
    return new SideWork(cap, header, c, nctx, spec.which, zips, nctx.pathRules.length === 0 && !c.options.bodyParsers);
  }

  /** Reads entry `index` and normalizes it (zip bodies decoded just for it). */
  private async normalized(index: number): Promise<{ entry: HarEntry; n: Omit<NormalizedEntry, 'id'>; page: string }> {
    const entry = await this.cap.readEntry(index);
    await this.zips.prepareEntry(entry, this.nctx.parsers);
    const page = entry.pageref ? this.labels.get(entry.pageref) ?? '' : '';
    const n = normalizeEntry(entry, index, page, this.nctx);
    this.zips.clear();
    return { entry, n, page };
  }

  /** entryHost, from the memo when the URL's scheme and authority parse on their own (else the Host header may decide). */
  private hostOf(entry: HarEntry): string {
    const authority = AUTHORITY.exec(entry.request.url)?.[0];
    if (authority === undefined) return entryHost(entry, this.nctx);
    let host = this.hostOfAuthority.get(authority);
    if (host === undefined) {
      host = entryHost(entry, this.nctx);
      if (URL.canParse(authority)) this.hostOfAuthority.set(authority, host);
    }
    return host;
  }

  /** Entry `index` in kept form, read and normalized again. */
  async load(index: number): Promise<EntryTexts> {
    const { n } = await this.normalized(index);
    return { text: contentText(n), rest: restOf(n) };
  }

  /** Bound values, read once (SideStore.bound). */
  private bindings: Promise<BoundSet> | undefined;

  /**
   * The side's bound values (diff/bind), known before its first entry is normalized: one more read of the
   * file, from its last entry back, as the in-memory store reads it. Once (SideStore.bound).
   */
  bound(pair: PairFacts = {}, ids = false): Promise<BoundSet> {
    return (this.bindings ??= (async () => {
      const timeline = new IssuedTimeline(pair.primarySends, ids);
      for (let i = this.cap.entryCount - 1; i >= 0; i--) timeline.addBefore(await this.cap.readEntry(i));
      const values = timeline.bound;
      return { values, ...(ids ? { ids: timeline.boundIds(values) } : {}) };
    })());
  }

  /**
   * Reads every entry once, keeping summaries, and answers the side's
   * distinct hosts: whether keys include hosts is decided for both sides
   * together (hostsInKeys) before `finish` orders and names the entries.
   * `labels`: page id → label (pairedPageLabels). `pair`: as SideStore.summarize's.
   */
  async summarize(labels: Map<string, string>, onProgress?: (done: number) => void, pair: PairFacts = {}): Promise<Summarized> {
    const { replayOf } = pair;
    this.labels = labels;
    // Entries a replay of this capture did not send: checked by reading the few it names, then never normalized.
    const claimed = new Map<number, HarEntry | undefined>();
    if (replayOf && replayOf.entries === this.cap.entryCount) {
      for (const i of claimedIndices(replayOf)) if (!claimed.has(i)) claimed.set(i, await this.cap.readEntry(i).catch(() => undefined));
    }
    const leftOut = replaySkipsIn(replayOf, this.cap.entryCount, (i) => claimed.get(i));
    const leave = new Set(leftOut?.map((s) => s.index));
    if (this.ctx.rules.issued) {
      this.nctx = normalizeContextFor(this.ctx, this.which, this.header.serverHome, this.zips, this.header.window, boundExcept((await this.bound(pair)).values, pair.unbound));
    }
    this.nctx = { ...this.nctx, bbChoseHost: pair.bbChoseHost === true, ...(pair.shadowPair ? { shadowPair: true } : {}), ...(pair.bbSetHeaders ? { bbSetHeaders: new Set(pair.bbSetHeaders) } : {}) };
    const un = (t: string) => unnumber(t, this.ctx.table);
    const noPathRules = this.nctx.pathRules.length === 0;
    const timed = this.ctx.options.timing !== undefined;
    let budget = KEPT_BYTES_PER_SIDE;
    const marks = new MarkerList();
    const shapes = (this.shapes = new ShapeIndex(un));
    // Equal un-numbered content is equal structure: one shape walk per distinct digest.
    const shapeOfDigest = new Map<string, number>();
    const shapeOf = (digest: string, n: Omit<NormalizedEntry, 'id'>): number => {
      let s = shapeOfDigest.get(digest);
      if (s === undefined) shapeOfDigest.set(digest, (s = shapes.add(n)));
      return s;
    };
    const p: Pending = { list: [], started: [], hosts: [], digests: [], kept: [], markRefs: [], marks, order: [] };
    const hosts = new Set<string>();
    const notMirrored: number[] = [];
    let unanswered = 0;
    for (let i = 0; i < this.cap.entryCount; i++) {
      if (leave.has(i)) {
        // Its slots in the parallel arrays stay (they are by index); no summary names it.
        p.started.push('');
        p.hosts.push('');
        p.digests.push('');
        continue;
      }
      const { entry, n, page } = await this.normalized(i);
      const host = this.hostOf(entry);
      hosts.add(host);
      if (onProgress && (i + 1) % PROGRESS_EVERY === 0) onProgress(i + 1);
      const texts = noPathRules ? contentTexts(n) : undefined;
      const text = texts?.text ?? '';
      // The token waits for the entry's name (finish): its key may gain the host.
      const { digest, marks: markers } = noPathRules ? digestAndMarks(text, this.ctx.table) : { digest: '', marks: [] };
      if (this.keeping && budget > 0) {
        const kept = this.kept.put(text, restOf(n));
        budget -= kept.text + kept.rest;
        p.kept[i] = kept;
      }
      // Left out (bb shadow did not mirror it): its slots in the parallel arrays stay, no summary names it.
      p.order[i] = comparisonSeq(entry);
      const shadow = shadowId(entry);
      const out = shadowLeftOut(entry, pair);
      if (out) {
        if (shadow !== undefined) notMirrored.push(shadow);
        if (out === 'unanswered') unanswered++;
      } else p.list.push({
        index: i,
        ...(shadow !== undefined ? { shadow } : {}),
        // The capture's own number (`#N` in bb inspect and frames), as the in-memory store gives it; a shadow's shared id only orders.
        ...(typeof entry._bb?.seq === 'number' ? { seq: entry._bb.seq } : {}),
        key: n.key,
        route: n.route,
        page,
        id: '',
        // Path rules need the id, known only once all entries are sorted: token and shape later then.
        token: '',
        ...(texts ? { request: requestDigest(texts.request, this.ctx.table) } : {}),
        shape: noPathRules ? shapeOf(digest, n) : -1,
        ...spanOf(entry),
        ...(timed ? { times: timesOf(entry) } : {}),
        // What the config's key rules and header masks erased (path rules add theirs in finish).
        ...(n.meta.erased ? { erased: n.meta.erased } : {}),
      });
      p.started.push(entry.startedDateTime);
      p.hosts.push(host);
      p.digests.push(digest);
      if (noPathRules) p.markRefs[i] = marks.add(markers);
    }
    this.pending = p;
    return { hosts: [...hosts], ...(leftOut ? { leftOut } : {}), ...(notMirrored.length ? { notCompared: notMirrored } : {}), ...(unanswered ? { unanswered } : {}) };
  }

  /**
   * Finishes what summarize began: the summaries in comparison order, named
   * by order.ts's assignIds (with `hosts`, routes and keys name the host),
   * tokens made, path rules applied, and the kept chunks the summaries point into.
   */
  async finish(hosts: boolean): Promise<SideSummaries> {
    const p = this.pending;
    if (!p) throw new Error('bb diff: finish before summarize');
    const shapes = this.shapes!;
    this.pending = undefined;
    const un = (t: string) => unnumber(t, this.ctx.table);
    const noPathRules = this.nctx.pathRules.length === 0;
    const list = sortForComparison(
      p.list.map((s) => ({ s, index: s.index, seq: p.order[s.index] })),
      (x) => p.started[x.index],
    ).map((x) => x.s);
    assignIds(list, (s) => s.page, hosts ? (s) => p.hosts[s.index]! : undefined);
    const markers = p.marks.take();
    // The compared entries' keyed ordinals, as the in-memory store finds them (after the path rules).
    const keyedClasses = keyedClassIndices(this.ctx.table, this.ctx.rules.keyedClasses);
    const keyed = new Set<number>();
    if (noPathRules) {
      for (const s of list) {
        s.token = tokenOf(s.key, p.digests[s.index]!);
        const m = p.markRefs[s.index];
        if (m) s.marks = markers.subarray(m[0], m[0] + m[1]);
        if (s.marks) keyedSlotsIn(s.marks, keyedClasses, keyed);
      }
    } else {
      for (const s of list) {
        // Read again for the path rules, which select by id; named as the summary is.
        const e: NormalizedEntry = { ...(await this.normalized(s.index)).n, id: s.id, key: s.key, route: s.route };
        const erased = bothErased(s.erased, applyPathRulesNoting(e, this.nctx.pathRules, un));
        if (erased) s.erased = erased;
        // One scan of its text for the digest and the markers (the keyed ones among them).
        const texts = contentTexts(e);
        const { digest, marks } = digestAndMarks(texts.text, this.ctx.table);
        s.token = tokenOf(s.key, digest);
        s.request = requestDigest(texts.request, this.ctx.table);
        s.shape = shapes.add(e);
        keyedSlotsIn(marks, keyedClasses, keyed);
      }
    }
    const issued: Array<[number, string]> = [];
    for (const v of this.nctx.walk.issued ?? []) {
      const n = this.ctx.table.numberOfValue(v);
      if (n !== undefined) issued.push([n, v]);
    }
    return { summaries: list, kept: list.map((s) => p.kept[s.index]), chunks: this.kept.chunks, markers, shapes: shapes.texts(), keyed: [...keyed], issued };
  }

  async close(): Promise<void> {
    await this.cap.close();
  }
}
