// bb diff as one list of named stages over one context (docs/diff.md "Captures
// of any size"): noise → read → normalize → pair → compare → timing → classify
// → findings → verdict. A small capture and a big one go through the same
// stages; only the store each side is kept in differs (in memory, or bounded:
// store/), chosen by the read stage. The list lives in a named pipe (pipe.ts),
// edited by name without touching the others.
import { arrayRules, type ArrayRules } from './arrays.js';
import type { DiffConfig } from './config.js';
import { createContext, normalizeContextFor, type DiffContext, type DiffProgress, type DiffStage, type EntrySummary, type PairFacts, type SideHeader, type SideStore, type StagePart } from './context.js';
import { boundAlike } from './bind/index.js';
import { hostsInKeys, pairedPageLabels, KeyedSlots, keyedClassIndices, OrdinalNumbering, ZipBodies } from './normalize/index.js';
import { pairEntries, settleReorders } from './pair.js';
import { compareLineup, type LoopSettings } from './compare-loop.js';
import { buildFindings } from './findings.js';
import { classifyKnown, classifyNoise } from './classify.js';
import { rowsHiddenByRules } from './rule-hidden.js';
import { budgetDifferences, timingReport, type TimingSample } from './timing.js';
import { Pipe } from './pipe.js';
import { notReplayedOf } from './not-replayed.js';
import { MemoryStore } from './store/memory.js';
import { BoundedStore, needsBounded } from './store/bounded.js';
import type { DiffResult } from './types.js';
import { appendAll } from '../core/index.js';

/** The run's array rules (pairing.arrayKeys, normalize.unorderedArrays). */
export function arrayRulesOf(config: DiffConfig): ArrayRules {
  return arrayRules(config.pairing.arrayKeys, config.normalize.unorderedArrays);
}

/** Side-by-side views kept for the HTML report (the report shows at most this many pairs side by side). */
export const MAX_VIEWS = 300;

/** What the compare loop needs of a run. */
function loopSettings(ctx: DiffContext): LoopSettings {
  const [o, n] = storesOf(ctx);
  return {
    table: ctx.table,
    // Redaction placeholders number by what both sides hold (normalize/keyed.ts).
    numbering: new OrdinalNumbering(ctx.table, new KeyedSlots(keyedClassIndices(ctx.table, ctx.rules.keyedClasses), o.keyed, n.keyed)),
    arrays: arrayRulesOf(ctx.config),
    headerOrder: ctx.options.headerOrder,
    wsOrder: ctx.config.pairing.wsOrder,
    maxViews: ctx.options.views ? MAX_VIEWS : 0,
    ...referenceSide(o.header, n.header),
    ...(ctx.options.onProgress ? { progress: (done: number, total: number) => ctx.options.onProgress!({ stage: 'compare', done, total }) } : {}),
  };
}

/**
 * The side whose client decided how far a stream was read, where the other side followed it: a `bb shadow` run's
 * primary against one of its mirrors, an original against its replay (compare-loop.ts asFarAs).
 */
function referenceSide(a: SideHeader, b: SideHeader): { reference?: 'old' | 'new' } {
  if (isShadowPair(a, b) && a.shadowPrimary !== b.shadowPrimary) return { reference: a.shadowPrimary ? 'old' : 'new' };
  if (b.replayOf !== undefined && a.replayOf === undefined) return { reference: 'old' };
  if (a.replayOf !== undefined && b.replayOf === undefined) return { reference: 'new' };
  return {};
}

/** Two of one `bb shadow` run's captures: unmirrored entries left out, shared ids say which pair. */
function isShadowPair(a: SideHeader, b: SideHeader): boolean {
  return a.shadow === true && b.shadow === true;
}

/** Both sides' stores, once the read stage opened them. */
function storesOf(ctx: DiffContext): [SideStore, SideStore] {
  if (!ctx.old.store || !ctx.new.store) throw new Error('bb diff: the stages need the read stage first');
  return [ctx.old.store, ctx.new.store];
}

/** Closes both sides' stores (after the run, or when it failed: then quietly). */
async function closeStores(ctx: DiffContext, quietly: boolean): Promise<void> {
  const closing = [ctx.old.store?.close(), ctx.new.store?.close()];
  if (quietly) await Promise.all(closing.map((c) => c?.catch(() => undefined)));
  else await Promise.all(closing);
}

/** Opens both sides in the store the run is kept in; when one cannot open, the other is closed and the first failure thrown. */
async function openStores(ctx: DiffContext): Promise<void> {
  ctx.storeKind ??= (await needsBounded(ctx.old.path, ctx.new.path, ctx.options.boundedThreshold)) ? 'bounded' : 'memory';
  const open = ctx.storeKind === 'bounded' ? BoundedStore.open : MemoryStore.open;
  const opened = await Promise.allSettled([open(ctx, 'old'), open(ctx, 'new')]);
  // A `bb shadow` mirror's segment in which nothing was mirrored (its primary's exchanges were all left to the
  // primary) holds no entries: against its primary that is a comparison of what was mirrored, nothing; against
  // anything else an empty capture is still refused (an empty comparison is never a match).
  for (const [k, which] of [[0, 'old'], [1, 'new']] as const) {
    const self = opened[k]!;
    const other = opened[1 - k]!;
    const empty = self.status === 'rejected' && (self.reason as { code?: string })?.code === 'BB_CAPTURE_EMPTY';
    if (empty && other.status === 'fulfilled' && other.value.header.shadowPrimary) {
      ctx[which].mayBeEmpty = true;
      opened[k] = await Promise.allSettled([open(ctx, which)]).then((r) => r[0]!);
    }
  }
  const [o, n] = opened.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed || !o || !n) {
    await Promise.all([o?.close().catch(() => undefined), n?.close().catch(() => undefined)]);
    throw failed?.reason;
  }
  ctx.old.store = o;
  ctx.new.store = n;
}

/**
 * The times of more runs (bb compare --repeat): each old run i read and
 * normalized beside new run i by this run's own `read` stages, in this run's
 * store, so their entries are named as the compared pair's are.
 */
async function timesOfRuns(ctx: DiffContext, runs: { old: string[]; new: string[] }): Promise<{ old: TimingSample[]; new: TimingSample[] }> {
  const out = { old: [] as TimingSample[], new: [] as TimingSample[] };
  for (let i = 0; i < Math.max(runs.old.length, runs.new.length); i++) {
    const a = runs.old[i];
    const b = runs.new[i];
    // options.timing stays: it is what makes the read stages take times (the timing stage is not run here).
    const sub = createContext(a ?? b!, b ?? a!, { ...ctx.options, noisePath: undefined, views: false }, ctx.storeKind);
    await runParts(sub, ctx.stages, ['read']);
    if (a) appendAll(out.old, sub.old.timing);
    if (b) appendAll(out.new, sub.new.timing);
  }
  return out;
}

/** The built-in stages, in order. */
export const defaultStages: readonly DiffStage[] = [
  {
    name: 'noise',
    part: 'judge',
    run: async (ctx) => {
      // OLD vs OLD2 (two runs of one build), with the same rules but no known entries.
      if (!ctx.options.noisePath) return;
      const progress = ctx.options.onProgress;
      const sub = createContext(
        ctx.old.path,
        ctx.options.noisePath,
        {
          ...ctx.options,
          noisePath: undefined,
          strictKnown: false,
          config: { ...ctx.config, known: [] },
          ...(progress ? { onProgress: (p: DiffProgress) => progress({ ...p, stage: `noise run: ${p.stage}` }) } : {}),
        },
        ctx.storeKind,
      );
      // This run's own stages up to the comparison, so the noise run sees what this one does. It runs first: the
      // values both old runs issued alike and sent back are then left unbound in this run too (PairFacts.unbound).
      sub.findsUnbound = true;
      await runParts(sub, ctx.stages, ['read', 'compare']);
      ctx.noise = sub.differences;
      ctx.noiseTiming = sub.new.timing;
      if (sub.unbound) ctx.unbound = sub.unbound;
    },
  },
  {
    name: 'read',
    part: 'read',
    run: openStores,
  },
  {
    name: 'normalize',
    part: 'read',
    run: async (ctx) => {
      const [o, n] = storesOf(ctx);
      // Page titles normalize to labels without markers: this thread's table names the classes alike.
      const zips = new ZipBodies();
      const labels = pairedPageLabels(o.header.pages, n.header.pages, normalizeContextFor(ctx, 'old', o.header.serverHome, zips, o.header.window), normalizeContextFor(ctx, 'new', n.header.serverHome, zips, n.header.window));
      const total = o.header.entryCount + n.header.entryCount;
      const read = [0, 0];
      const report = (k: 0 | 1) => (done: number) => {
        read[k] = done;
        ctx.options.onProgress?.({ stage: 'normalize', done: read[0]! + read[1]!, total });
      };
      // A new side that is a replay of the old names the old entries it did not send: the old store leaves them out when it is that capture.
      // A replay names its target in Host, whatever the original named: with one in the run, no side's request Host is compared.
      const bbChoseHost = o.header.replayOf !== undefined || n.header.replayOf !== undefined;
      const shadowPair = isShadowPair(o.header, n.header);
      // A shadow's primary against one of its mirrors: the mirror's binding reads what the client sent in the exchanges not mirrored.
      const primary = !shadowPair || !ctx.rules.issued || o.header.shadowPrimary === n.header.shadowPrimary ? undefined : o.header.shadowPrimary ? o : n;
      // Bounded sides run in their own threads: the primary's starts while this thread reads its not-mirrored
      // exchanges. In memory they run whole, old then new (one ordinal table meets values in that order).
      const sendsRead = primary?.primarySends();
      const primarySends = ctx.storeKind === 'bounded' ? undefined : await sendsRead;
      const setHeaders = [...new Set([...(o.header.setHeaders ?? []), ...(n.header.setHeaders ?? [])])];
      const bbSet = setHeaders.length ? { bbSetHeaders: setHeaders } : {};
      const factsOf = async (side: SideStore, facts: PairFacts): Promise<PairFacts> => (sendsRead && side !== primary ? { ...facts, primarySends: primarySends ?? (await sendsRead) } : facts);
      const facts = await Promise.all([
        factsOf(o, { ...(n.header.replayOf ? { replayOf: n.header.replayOf } : {}), bbChoseHost, shadowPair, ...(shadowPair && !o.header.shadowPrimary ? { shadowMirror: true } : {}), ...bbSet }),
        factsOf(n, { bbChoseHost, shadowPair, ...(shadowPair && !n.header.shadowPrimary ? { shadowMirror: true } : {}), ...bbSet }),
      ]);
      // Two runs of one build (this is a run's --noise run): what both servers issued alike and their clients sent
      // back is the build's answer, not a value it made up (a price, a page size), for this run and the one it serves.
      if (ctx.findsUnbound && ctx.rules.issued) {
        const [bo, bn] = await Promise.all([o.bound(facts[0], true), n.bound(facts[1], true)]);
        ctx.unbound = boundAlike(bo, bn);
      }
      const unbound = ctx.unbound?.size ? { unbound: ctx.unbound } : {};
      const [ho, hn] = await Promise.all([o.summarize(labels.old, report(0), { ...facts[0], ...unbound }), n.summarize(labels.new, report(1), { ...facts[1], ...unbound })]);
      const unanswered = (ho.unanswered ?? 0) + (hn.unanswered ?? 0);
      if (unanswered) ctx.shadowUnanswered = unanswered;
      const notReplayed = notReplayedOf(ho.leftOut);
      if (notReplayed) ctx.notReplayed = notReplayed;
      if (ho.notCompared || hn.notCompared) ctx.shadowLeftOut = [new Set(ho.notCompared), new Set(hn.notCompared)];
      // Hosts in keys or not is decided for both sides at once (docs/diff.md "What is compared"); entries are named after.
      const withHosts = hostsInKeys(new Set(ho.hosts), new Set(hn.hosts));
      // One side after the other: a bounded side's worker ends once it handed its summaries over
      // (store/worker-client.ts), so the two finishes' allocations do not add up (the run's peak memory).
      await o.finish(withHosts);
      await n.finish(withHosts);
      if (ctx.options.timing) {
        for (const side of [ctx.old, ctx.new]) side.timing = side.store!.summaries.map((x) => ({ id: x.id, route: x.route, ...x.times! }));
      }
    },
  },
  {
    name: 'pair',
    run: (ctx) => {
      const [o, n] = storesOf(ctx);
      // Two of a shadow's captures hold each exchange under its shared id, in one order: place says which pair.
      const shadowPair = isShadowPair(o.header, n.header);
      ctx.lineup = pairEntries(o.summaries, n.summaries, ctx.config.pairing.unordered ?? [], !shadowPair);
      // An exchange one side left out as not mirrored is left out of the other too: a stream whose mirrors bb shadow
      // dropped part-way after a target's side had ended keeps that side's entry untagged (the live comparison
      // leaves it as well: scenario/shadow/compare.ts).
      const left = ctx.shadowLeftOut;
      if (shadowPair && left) {
        const leftOut = (set: ReadonlySet<number>, s: EntrySummary | undefined) => s?.shadow !== undefined && set.has(s.shadow);
        ctx.lineup = ctx.lineup.filter((l) => !(l.old === undefined && leftOut(left[0], n.summaries[l.new!])) && !(l.new === undefined && leftOut(left[1], o.summaries[l.old!])));
      }
      settleReorders(ctx.lineup, o.summaries, n.summaries);
    },
  },
  {
    name: 'compare',
    run: async (ctx) => {
      const stores = storesOf(ctx);
      const found = await compareLineup(ctx.lineup, stores, loopSettings(ctx));
      appendAll(ctx.differences, found.differences);
      appendAll(ctx.pairs, found.pairs);
      ctx.views = found.views;
      ctx.pairShapes = found.shapes;
      for (const s of stores) s.releaseAll();
    },
  },
  {
    // After "noise", before "classify", so a route over budget is classified like any difference.
    name: 'timing',
    part: 'judge',
    run: async (ctx) => {
      const t = ctx.options.timing;
      if (!t) return;
      const more = t.runs ? await timesOfRuns(ctx, t.runs) : { old: [], new: [] };
      const oldS = [...ctx.old.timing, ...more.old];
      const newS = [...ctx.new.timing, ...more.new];
      const noise = ctx.noiseTiming && ctx.options.noisePath ? { samples: ctx.noiseTiming, path: ctx.options.noisePath } : undefined;
      ctx.timing = timingReport(oldS, newS, t, noise, { old: 1 + (t.runs?.old.length ?? 0), new: 1 + (t.runs?.new.length ?? 0) });
      appendAll(ctx.differences, budgetDifferences(ctx.timing, oldS, newS));
    },
  },
  {
    name: 'classify',
    part: 'judge',
    run: (ctx) => {
      // Known first (a ratified difference stays ratified), then noise among what is left.
      // A `slower` entry can only match when a budget is judged: without one it is not stale, just not asked.
      const judged = ctx.options.timing?.budget !== undefined;
      const unmet = classifyKnown(ctx.differences, ctx.config.known).filter((k) => judged || k.kind !== 'slower');
      // The same build twice has none of the ratified changes: their entries matching nothing is the expected outcome.
      if (ctx.options.sameBuild) ctx.knownUnmet = unmet.length;
      else ctx.staleKnown = unmet;
      if (ctx.noise) ctx.noiseHidden = classifyNoise(ctx.differences, ctx.noise);
      // A rule that erases a field hides whatever differed there: counted, never silent.
      const [o, n] = storesOf(ctx);
      ctx.hiddenByRules = rowsHiddenByRules(ctx.lineup, [o.summaries, n.summaries], ctx.config.normalize);
    },
  },
  {
    name: 'findings',
    part: 'judge',
    run: (ctx) => {
      ctx.findings = buildFindings(ctx.differences, ctx.pairShapes);
    },
  },
  {
    name: 'verdict',
    part: 'judge',
    run: (ctx) => {
      const count = (c: string) => ctx.differences.filter((d) => d.class === c).length;
      const findings = (c: string) => ctx.findings.filter((f) => f.class === c).length;
      const real = count('real');
      const failStale = !!ctx.options.strictKnown && ctx.staleKnown.length > 0;
      const diff = real > 0 || failStale;
      ctx.result = {
        verdict: diff ? 'diff' : 'match',
        exitCode: diff ? 1 : 0,
        old: { path: ctx.old.path, entries: ctx.old.store?.header.entryCount ?? 0 },
        new: { path: ctx.new.path, entries: ctx.new.store?.header.entryCount ?? 0 },
        counts: { real, known: count('known'), noise: count('noise'), pairs: ctx.pairs.length, findings: { real: findings('real'), known: findings('known'), noise: findings('noise') } },
        pairs: ctx.pairs,
        findings: ctx.findings,
        differences: ctx.differences,
        staleKnown: ctx.staleKnown,
        ...(ctx.options.sameBuild ? { sameBuild: { knownUnmet: ctx.knownUnmet } } : {}),
        ...(ctx.noise && ctx.options.noisePath ? { noiseRun: { path: ctx.options.noisePath, differences: ctx.noise.length, hidden: ctx.noiseHidden ?? { rows: 0, byKind: {} } } } : {}),
        ...(ctx.hiddenByRules.length ? { hiddenByRules: ctx.hiddenByRules } : {}),
        ...(ctx.notReplayed ? { notReplayed: ctx.notReplayed } : {}),
        ...(ctx.shadowUnanswered ? { shadowUnanswered: ctx.shadowUnanswered } : {}),
        ...(ctx.timing ? { timing: ctx.timing } : {}),
        ...(ctx.options.views ? { views: ctx.views } : {}),
      };
    },
  },
];

/** A fresh pipe of the built-in stages, to edit by name. */
export function diffPipe(): Pipe<DiffStage> {
  return new Pipe('bb diff stages', defaultStages);
}

/**
 * Runs the stages of the given parts on a context (all stages when `parts`
 * is absent), then closes its stores, also when a stage throws.
 */
async function runParts(ctx: DiffContext, stages: readonly DiffStage[], parts?: readonly StagePart[]): Promise<void> {
  ctx.stages = stages;
  const timed = ctx.options.onStageTime;
  try {
    for (const s of stages) {
      if (parts && !parts.includes(s.part ?? 'compare')) continue;
      ctx.options.onProgress?.({ stage: s.name });
      const t0 = timed ? performance.now() : 0;
      await s.run(ctx);
      timed?.(s.name, performance.now() - t0);
    }
  } catch (err) {
    await closeStores(ctx, true);
    throw err;
  }
  await closeStores(ctx, false);
}

/** Runs the stages on a context and returns its result. */
export async function runStages(ctx: DiffContext, stages: readonly DiffStage[]): Promise<DiffResult> {
  await runParts(ctx, stages);
  if (!ctx.result) throw new Error('bb diff: the stage list has no verdict stage');
  return ctx.result;
}
