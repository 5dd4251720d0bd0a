// The live comparison of a `bb shadow` run (docs/shadow.md "How answers are
// compared"): entries of the three captures arrive as their exchanges end
// (followed from the journals, built as the HARs will hold them), are grouped
// by their shared id, and once a group is whole it is compared in a batch
// with the diff's own engine (diffHars: diffCaptures' stages on the batch in
// memory, the same config, rules, keys and noise as
// `bb diff primary.har candidate.har --noise secondary.har`).
// Each exchange's differing fields are then regressions (real: the secondary
// agreed with the primary), noise (the secondary differed too, kind for
// kind) or unclassified (no secondary). A value issued in one batch and sent
// back in a later one binds as over the whole captures (batch-binding.ts).
// This runs in the comparison worker (compare-worker.ts), never on the
// proxy's thread.
import type { HarEntry, WholeEntry } from '../../capture/index.js';
import { diffHars, noAnswer, type DiffConfig, type Difference, type NamedHar } from '../../diff/index.js';
import { boundedSample, liveRows, ShadowLive, type Counted, type TargetName } from './live.js';
import { routeOf } from './route.js';
import { BatchBinding, mergeBound, type BoundBefore } from './batch-binding.js';
import { groupBytes, Revisables, signature } from './revise.js';

/** Exchanges compared per batch, at most. */
const BATCH = 400;
/** Stream messages (WebSocket, SSE, gRPC) per batch, at most: long conversations are compared a few at a time, not all at once at the end of a run. */
const BATCH_MESSAGES = 20_000;
/** How long (of the traffic, or of the clock) a differing exchange whose answers issued values differently waits for their use before its verdict. */
export const SETTLE_MS = 5_000;
/** Exchanges waiting so, at most (past it the oldest is given its verdict at once). */
const MAX_DEFERRED = 1_000;
/** A primary entry whose mirror entries have not come after this long counts as a mirror error. */
export const MIRROR_WAIT_MS = 120_000;

export interface Group {
  primary?: HarEntry;
  candidate?: HarEntry;
  secondary?: HarEntry;
  /** Long WebSocket conversations handed over with their first messages only: built whole when their batch is compared. */
  whole?: Partial<Record<TargetName, WholeEntry>>;
  /** When the primary entry arrived (ms). */
  since: number;
  /** Its place among the primary's entries as they arrived (the order its exchanges ended: BatchBinding.noteSent). */
  at?: number;
}


/** When an exchange's primary entry started (ms), its place in the traffic. */
function startedMs(g: Group): number {
  const t = Date.parse(g.primary!.startedDateTime);
  return Number.isFinite(t) ? t : 0;
}

/** How many groups from the head of `list` make one batch: up to BATCH, and up to BATCH_MESSAGES stream messages (at least one group). */
export function batchLength(list: ReadonlyArray<[number, Group]>): number {
  let messages = 0;
  for (let i = 0; i < Math.min(list.length, BATCH); i++) {
    const g = list[i]![1];
    messages += messageCount(g, 'primary') + messageCount(g, 'candidate') + messageCount(g, 'secondary');
    if (i > 0 && messages > BATCH_MESSAGES) return i;
  }
  return Math.min(list.length, BATCH);
}

function messageCount(g: Group, side: TargetName): number {
  const e = g[side];
  return g.whole?.[side]?.messages ?? (e?._webSocketMessages?.length ?? 0) + (e?._eventSourceMessages?.length ?? 0) + (e?._grpcMessages?.length ?? 0);
}

/** How a compared exchange counts: equal, noise, or with a real difference a regression (unclassified without a secondary). */
function verdictOf(diffs: readonly Difference[], secondary: boolean): Counted['verdict'] {
  if (diffs.some((d) => d.class === 'real')) return secondary ? 'regressions' : 'unclassified';
  return diffs.length > 0 ? 'noise' : 'equal';
}

/** How many of the latest skipped primary exchanges the comparison remembers (to drop a target's entry that comes after). */
const SKIPPED_KEPT = 4096;

/** Compares the three captures' entries as they come. */
export class ShadowComparer {
  private readonly groups = new Map<number, Group>();
  /** The latest primary exchanges counted as skipped (SKIPPED_KEPT at most): a target's entry of one that comes later is not held. */
  private readonly skipped = new Set<number>();
  readonly live: ShadowLive;
  private readonly binding: BatchBinding;
  /** Compared exchanges whose verdict waits for the use of the values they issued (settle). */
  private readonly deferred: Array<{ g: Group; diffs: Difference[]; values: ReadonlySet<string>; bound?: BoundBefore; started: number; since: number }> = [];
  /** Exchanges given a differing verdict before every value they issued was sent back (revise). */
  private readonly revisable = new Revisables<Group>();
  /** Primary entries taken in so far. */
  private arrived = 0;

  constructor(
    private readonly opts: {
      secondary: boolean;
      config?: DiffConfig;
      targets: Partial<Record<TargetName, string>>;
      mirrorWaitMs?: number;
      /** When the run began (default: now). */
      startedDateTime?: string;
      /** Request headers --header sets on each mirror target's copies: named in its batches' logs, as in its capture, so they are not compared. */
      setHeaders?: Partial<Record<'candidate' | 'secondary', string[]>>;
    },
  ) {
    this.live = new ShadowLive(opts.targets, opts.startedDateTime);
    this.binding = new BatchBinding(opts.secondary);
  }

  /** Groups held: entries waiting for their other sides, for their batch, or (compared) for their verdict. */
  get waiting(): number {
    return this.groups.size + this.deferred.length;
  }

  /** Compares later batches with this config (the live view wrote a known entry or a rule into the file). */
  useConfig(config: DiffConfig): void {
    this.opts.config = config;
  }

  /** Counterparts the relay learned from a target's stream messages (batch-binding.ts StreamCounterparts). */
  teach(side: 'candidate' | 'secondary', pairs: ReadonlyArray<readonly [string, string]>): void {
    this.binding.teach(side, pairs);
  }

  /**
   * One entry of one capture (with `whole`, a long conversation's first
   * messages: built whole when compared). Primary entries without a shadow id
   * (none are expected) are ignored.
   */
  add(side: TargetName, entry: HarEntry, whole?: WholeEntry): void {
    const id = entry._bb?.shadow?.id;
    if (typeof id !== 'number') return;
    if (side === 'primary') {
      // Every exchange's sends count toward what the client sent first, mirrored or not (as in bb diff of the captures).
      const at = ++this.arrived;
      this.binding.noteSent(entry, at);
      const route = routeOf(entry);
      const counts = this.live.route(route);
      counts.requests++;
      if (entry.time >= 0) this.live.time(route, 'primary', entry.time);
      const skipped = entry._bb?.shadow?.skipped;
      if (skipped) {
        this.live.skip(route, skipped);
        this.groups.delete(id);
        this.skipped.add(id);
        if (this.skipped.size > SKIPPED_KEPT) this.skipped.delete(this.skipped.values().next().value!);
        return;
      }
      counts.mirrored++;
    } else if (entry._bb?.shadow?.skipped || this.skipped.has(id)) {
      // A conversation or stream whose mirrors were dropped part-way (tee.ts dropMirrors): its primary counts it as
      // skipped. A target's entry that was not tagged so (its side had ended first) and comes after the primary's
      // would otherwise wait for a primary entry that never comes, for the rest of the run.
      return;
    }
    let g = this.groups.get(id);
    if (!g) this.groups.set(id, (g = { since: Date.now() }));
    g[side] = entry;
    if (whole) (g.whole ??= {})[side] = whole;
    if (side === 'primary') {
      g.since = Date.now();
      g.at = this.arrived;
    }
  }

  /** Groups whose every answer is in (or, with `all`, every group with its primary). */
  private ready(all: boolean): Array<[number, Group]> {
    const out: Array<[number, Group]> = [];
    const wait = this.opts.mirrorWaitMs ?? MIRROR_WAIT_MS;
    const now = Date.now();
    for (const [id, g] of this.groups) {
      if (!g.primary) continue;
      const whole = g.candidate && (!this.opts.secondary || g.secondary);
      if (whole || all || now - g.since > wait) out.push([id, g]);
    }
    return out.sort((a, b) => a[0] - b[0]);
  }

  /** Compares what is ready (with `all`: everything, the end of the run); resolves to how many exchanges were compared. */
  async compareReady(all = false): Promise<number> {
    let done = 0;
    for (let list = this.ready(all); list.length > 0; ) {
      const n = batchLength(list);
      const batch = list.slice(0, n);
      list = list.slice(n);
      for (const [id] of batch) this.groups.delete(id);
      await this.compareBatch(batch.map(([, g]) => g));
      done += batch.length;
    }
    // Verdicts that waited: due on the clock when the traffic stops, or all of them at the end.
    await this.settle(all);
    return done;
  }

  private async compareBatch(groups: Group[]): Promise<void> {
    const whole: Group[] = [];
    for (const g of groups) {
      // Conversations are read back whole only now, a batch at a time (the rest of the run's wait as a few bytes a message).
      for (const [side, w] of Object.entries(g.whole ?? {}) as Array<[TargetName, WholeEntry]>) g[side] = w.build();
      delete g.whole;
      const p = g.primary!;
      const route = routeOf(p);
      if (g.candidate && g.candidate.time >= 0) this.live.time(route, 'candidate', g.candidate.time);
      if (g.secondary && g.secondary.time >= 0) this.live.time(route, 'secondary', g.secondary.time);
      // No answer from a mirror target, bb's own error answer for it, or the target hung up: an error.
      const candidateFailed = !g.candidate || noAnswer(g.candidate);
      if (candidateFailed || (this.opts.secondary && (!g.secondary || noAnswer(g.secondary)))) {
        const counts = this.live.route(route);
        counts.errors++;
        // The new build failed where the primary answered: the gate counts it (live.ts rateOf).
        if (candidateFailed && !noAnswer(p)) counts.candidateErrors = (counts.candidateErrors ?? 0) + 1;
      }
      // One the candidate failed is never compared. One only the secondary failed is compared as `bb diff
      // primary.har candidate.har --noise secondary.har` compares it: the candidate's answer with the primary's,
      // no noise evidence for it (the diff leaves the secondary's failed entry out of the noise run).
      if (!candidateFailed) whole.push(g);
    }
    // Every answer a side gave teaches its counterparts, whoever else failed (a flaky secondary's
    // failed creation leaves the candidate's order bound, as `bb diff` of the candidate's capture binds it).
    const answered = (g: Group) => ({ primary: g.primary!, ...(g.at !== undefined ? { at: g.at } : {}), ...(g.candidate && !noAnswer(g.candidate) ? { candidate: g.candidate } : {}), ...(g.secondary && !noAnswer(g.secondary) ? { secondary: g.secondary } : {}) });
    // An exchange left out of the comparison (an error) teaches at once: the diff's own binding does not see its
    // answer, so a read of what it created in this same batch binds only through its counterparts.
    const compared = new Set(whole);
    this.binding.learn(groups.filter((g) => !compared.has(g)).map(answered));
    const { bound, sent } = this.binding.boundBefore(whole);
    const perGroup = whole.length > 0 ? await this.diffGroups(whole, bound) : new Map<number, Difference[]>();
    const taught = this.binding.learn(whole.map(answered));
    const taughtBy = new Map(whole.map((g, i) => [g, taught[i]]));
    let latest = 0;
    for (const [at, diffs] of perGroup) {
      const g = whole[at]!;
      const started = startedMs(g);
      latest = Math.max(latest, started);
      // It differs, and its answers issued values differently per target: its verdict waits for their use (settle).
      const values = taughtBy.get(g);
      if (diffs.length > 0 && values) this.deferred.push({ g, diffs, values, ...(bound ? { bound } : {}), started, since: Date.now() });
      else this.record(g, diffs);
    }
    await this.revise(sent);
    await this.settle(false, latest);
  }

  /**
   * Gives the verdicts that waited: each once the traffic has gone SETTLE_MS past its exchange (or
   * as long on the clock, or at the end with `all`). One whose issued values a later request sent
   * back is compared again with them bound, as `bb diff` of the captures binds them; the others keep
   * their first comparison.
   */
  private async settle(all: boolean, latest?: number): Promise<void> {
    const now = Date.now();
    while (this.deferred.length > 0) {
      const d = this.deferred[0]!;
      const due = all || this.deferred.length > MAX_DEFERRED || (latest !== undefined && latest - d.started >= SETTLE_MS) || now - d.since >= SETTLE_MS;
      if (!due) return;
      this.deferred.shift();
      const sentBack = this.binding.boundFor(d.values);
      // Alone now: what its first batch bound for it, what its own requests send back, and its values sent back since.
      const diffs = sentBack ? ((await this.diffGroups([d.g], this.boundAlone(d, sentBack))).get(0) ?? []) : d.diffs;
      const counted = this.record(d.g, diffs);
      // Still differing with values not yet sent back: a later use may bind them (revise).
      if (diffs.length > 0 && (sentBack?.primary.size ?? 0) < d.values.size) this.revisable.keep({ g: d.g, values: d.values, ...(d.bound ? { bound: d.bound } : {}), diffs, counted, used: new Set(sentBack?.primary), bytes: groupBytes(d.g) });
    }
  }

  // What an exchange compared alone binds: what its first batch bound for it, what its own requests send back,
  // and the values it issued that were sent back since (`sentBack`).
  private boundAlone(d: { g: Group; values: ReadonlySet<string>; bound?: BoundBefore }, sentBack: BoundBefore): BoundBefore | undefined {
    return mergeBound(mergeBound(d.bound, this.binding.boundAgain(d.g, d.values)), sentBack);
  }

  /**
   * Verdicts given before a use (settle), compared again once a later request sent one of their values back
   * (`sent`: this batch's), with it bound, as `bb diff` of the captures binds a value sent back however late:
   * where the comparison changed, the first verdict and its findings are taken back and the new one counted.
   */
  private async revise(sent: readonly string[]): Promise<void> {
    for (const r of this.revisable.due(sent)) {
      const sentBack = this.binding.boundFor(r.values);
      if (!sentBack) continue;
      for (const v of sentBack.primary) r.used.add(v);
      const diffs = (await this.diffGroups([r.g], this.boundAlone(r, sentBack))).get(0) ?? [];
      if (signature(diffs) !== signature(r.diffs)) {
        this.live.forget(r.counted);
        r.counted = this.record(r.g, diffs);
      }
      r.diffs = diffs;
      if (diffs.length === 0 || r.used.size >= r.values.size) this.revisable.drop(r);
    }
  }

  /** Diffs the groups' entries with the diff's engine; each group's differences (but ratified ones), by its index. */
  private async diffGroups(list: Group[], bound: BoundBefore | undefined): Promise<Map<number, Difference[]>> {
    // The batch stays in memory: the diff's engine reads it as it would read these three files (no temp HAR written and parsed back).
    const result = await diffHars(this.har('primary', list.map((g) => g.primary!), bound), this.har('candidate', list.map((g) => g.candidate!), bound), {
      ...(this.opts.config ? { config: this.opts.config } : {}),
      // A secondary that gave no entry in time (still in flight) has none in the noise run.
      ...(this.opts.secondary ? { noise: this.har('secondary', list.flatMap((g) => (g.secondary ? [g.secondary] : [])), bound) } : {}),
      workers: false,
    });
    // Differences by pair id, and each pair's old index in this batch.
    const byPair = new Map<string, Difference[]>();
    for (const d of result.differences) {
      const l = byPair.get(d.entry);
      if (l) l.push(d);
      else byPair.set(d.entry, [d]);
    }
    // Each exchange's differences: its primary entry's pair's, and its mirror entry's when that paired with
    // nothing (an `extra`, as bb diff of the captures lists it beside the primary's `missing`).
    const perGroup = new Map<number, Difference[]>();
    for (const pair of result.pairs) {
      const at = pair.old ?? pair.new;
      if (at === undefined) continue;
      const diffs = (byPair.get(pair.id) ?? []).filter((d) => d.class !== 'known');
      const l = perGroup.get(at);
      if (l) l.push(...diffs);
      else perGroup.set(at, diffs);
    }
    return perGroup;
  }

  /** Counts one compared exchange under its route, and its differing fields as findings; what it counted. */
  private record(g: Group, diffs: Difference[]): Counted {
    const route = routeOf(g.primary!);
    const verdict = verdictOf(diffs, this.opts.secondary);
    this.live.route(route)[verdict]++;
    const id = g.primary!._bb!.shadow!.id;
    const counted: Counted = { route, verdict, id, findings: [] };
    const seqs = Object.fromEntries((['primary', 'candidate', 'secondary'] as const).flatMap((t) => (g[t]?._bb?.seq !== undefined ? [[t, g[t]!._bb!.seq]] : [])));
    // Grouped as bb diff groups the captures' rows; a field that follows from the exchange's status change (a
    // 500's body) is told as its consequence, as bb diff folds it.
    for (const row of liveRows(diffs, (d) => (d.class === 'noise' ? 'noise' : this.opts.secondary ? 'regression' : 'unclassified'))) {
      const d = row.d;
      const sample = { id, request: d.request, ...(d.old !== undefined ? { primary: d.old } : {}), ...(d.new !== undefined ? { candidate: d.new } : {}), entry: d.entry, path: d.path, seqs };
      counted.findings.push(this.live.find(row, d.route, boundedSample(sample)));
    }
    return counted;
  }

  // One side of a batch as a small finished HAR, in the primary's order.
  private har(label: TargetName, entries: HarEntry[], bound: BoundBefore | undefined): NamedHar {
    const at = new Date().toISOString();
    const setHeaders = label === 'primary' ? undefined : this.opts.setHeaders?.[label];
    return {
      name: `${label}.har`,
      ...(bound ? { bound: bound[label], ids: this.binding.ids } : {}),
      har: {
        log: {
          version: '1.2',
          creator: { name: 'bb', version: 'shadow' },
          entries,
          pages: [],
          _bb: { format: 1, label, target: this.opts.targets[label] ?? '', listen: '', startedDateTime: at, endedDateTime: at, complete: true, counts: { entries: entries.length, webSocketMessages: 0 }, redacted: true, shadowRole: label, ...(setHeaders?.length ? { setHeaders } : {}) },
        },
      },
    };
  }
}
