// bb diff as a list of named stages over one context object (DESIGN.md
// "Comparing"): read → normalize → pair → number → compare → classify →
// verdict. Each stage is a function of the context; the list can be edited by
// name (insert a zip or streaming stage, replace the classifier) without
// touching the others.
import { readCapture } from '../capture/index.js';
import type { Har } from '../capture/index.js';
import { emptyDiffConfig, type DiffConfig } from './config.js';
import {
  applyPathRules, bodyParsers, compileRules, entryHost, homesFor, hostsInKeys, normalizeContext, normalizeEntry, OrdinalNumbering, OrdinalTable,
  pairedPageLabels, ProtoSchema, unnumber, ZipBodies, type BodyParser, type NormalizeContext, type RuleSet,
} from './normalize/index.js';
import { contentText, digestAndMarks, pairEntries, tokenOf, type Lineup } from './pair.js';
import { arrayRules, type ArrayRules } from './arrays.js';
import { assignIds, compareLineup, sortForComparison, type EntrySummary, type LoopSettings } from './engine.js';
import { buildFindings, ShapeIndex, type PairShape } from './findings.js';
import type { PairView } from './types.js';
import { classifyKnown, classifyNoise } from './classify.js';
import type { DiffResult, Difference, Finding, NormalizedEntry, Pair, StaleKnown } from './types.js';
import { budgetDifferences, timesOf, timingReport, type TimingOptions, type TimingSample } from './timing.js';
import { appendAll } from '../core/index.js';

/** Options of one comparison (flags already parsed by the CLI or the caller). */
export interface DiffOptions {
  /** Parsed, validated config (loadDiffConfig); default: built-in rules only. */
  config?: DiffConfig;
  /** Accept captures recovered after a crash. */
  allowIncomplete?: boolean;
  /** Also compare header order and case. */
  headerOrder?: boolean;
  /** A second capture of the old build: what differs between the two old runs is noise (issue 7). */
  noisePath?: string;
  /** Stale known entries fail the run (issue 7). */
  strictKnown?: boolean;
  /** Server home directories per side, on top of log._bb.serverHome and the config's. */
  serverHome?: { old?: string; new?: string };
  /** Edits the stage list (e.g. insert a stage after "normalize"). */
  stages?: (defaults: DiffStage[]) => DiffStage[];
  /** Edits the body parser list (e.g. insert "zip" before "binary"). */
  bodyParsers?: (defaults: BodyParser[]) => BodyParser[];
  /** Keep side-by-side views of differing pairs for the HTML report (result.views). */
  views?: boolean;
  /** Files bigger than this (either side) take the bounded path (default BOUNDED_THRESHOLD; tests force it with 0). */
  boundedThreshold?: number;
  /** Where the run is: each stage as it starts, and entries done in the long ones (for a progress line). */
  onProgress?: (p: DiffProgress) => void;
  /** The bounded path's two sides run in worker threads (default true; false keeps them in this thread). */
  workers?: boolean;
  /** Called after each stage with its wall time in ms (what the diff benchmark profiles). */
  onStageTime?: (stage: string, ms: number) => void;
  /** bb diff --timing: per-route timing in the result (DESIGN.md "Timing"). */
  timing?: TimingOptions;
}

/** One progress report: the stage, and for the long stages how many of how many. */
export interface DiffProgress {
  stage: string;
  done?: number;
  total?: number;
}

/** One side of the comparison as it moves through the stages. */
export interface DiffSide {
  /** The file. */
  path: string;
  /** The parsed capture (read stage). */
  har?: Har;
  /** Normalized entries in capture order (normalize stage), markers not yet numbered. */
  entries: NormalizedEntry[];
  /** Each entry's summary, in the same order (pair stage). */
  summaries: EntrySummary[];
  /** Each entry's times, named as the entries are (normalize stage, both paths, only with options.timing). */
  timing: TimingSample[];
}

/** What the stages share. */
export interface DiffContext {
  /** The options. */
  options: DiffOptions;
  /** The config (defaults when none was given). */
  config: DiffConfig;
  /** Compiled rules. */
  rules: RuleSet;
  /** The config's `.proto` files, parsed (absent without normalize.proto). */
  proto?: ProtoSchema;
  /** Ordinal markers for this run. */
  table: OrdinalTable;
  /** Both captures' zip bodies, decoded by the unzip stage for the "zip" parser (in-memory path). */
  zips: ZipBodies;
  /** Old and new. */
  old: DiffSide;
  new: DiffSide;
  /** Pairing (pair stage). */
  lineup: Lineup[];
  /** Differences (compare stage), classified by the classify stage. */
  differences: Difference[];
  /** Per-pair counts. */
  pairs: Pair[];
  /** Known entries that matched nothing (classify stage). */
  staleKnown: StaleKnown[];
  /** Noise differences between the two old runs (issue 7). */
  noise?: Difference[];
  /** The second old run's times, with --noise. */
  noiseTiming?: TimingSample[];
  /** The Timing section (timing stage, with options.timing). */
  timing?: DiffResult['timing'];
  /** Side-by-side views of differing pairs, by index in `pairs` (compare stage, with options.views). */
  views: Map<number, PairView>;
  /** Findings (findings stage). */
  findings: Finding[];
  /** Each line-up's route and side shapes (compare stage), for the findings' `of` counts. */
  pairShapes: PairShape[];
  /** The stage list this context runs (runStages). */
  stages: DiffStage[];
  /** The bounded path's open sides (bounded.ts's read stage), when it runs. */
  bounded?: unknown;
  /** The result (verdict stage). */
  result?: DiffResult;
}

/** A named stage. */
export interface DiffStage {
  /** Name, for editing the list. */
  name: string;
  /** Does the work on the context. */
  run: (ctx: DiffContext) => void | Promise<void>;
}

/** What normalizing one side needs: the run's rules and table, that side's homes, the body parsers with zip support. */
export function normalizeContextFor(ctx: DiffContext, side: 'old' | 'new', captureHome: string | undefined, zips: ZipBodies): NormalizeContext {
  return normalizeContext({
    rules: ctx.rules,
    homes: homesFor(captureHome, ctx.options.serverHome?.[side] ? [ctx.options.serverHome[side]!] : [], ctx.rules),
    table: ctx.table,
    routeKeys: ctx.config.pairing.keys ?? [],
    pathRules: ctx.config.normalize.paths ?? [],
    parsers: zips.withParser(ctx.options.bodyParsers ? ctx.options.bodyParsers([...bodyParsers]) : bodyParsers),
    ...(ctx.proto ? { proto: ctx.proto } : {}),
  });
}

/** Normalizes one side's entries, in comparison order, not yet named; and each one's host. */
function normalizeSide(har: Har, nctx: NormalizeContext, labels: Map<string, string>): { entries: NormalizedEntry[]; hosts: string[] } {
  const order = sortForComparison(har.log.entries.map((entry, index) => ({ entry, index, seq: entry._bb?.seq, started: entry.startedDateTime })));
  const entries: NormalizedEntry[] = [];
  const hosts: string[] = [];
  for (const { entry, index } of order) {
    const page = entry.pageref ? labels.get(entry.pageref) ?? '' : '';
    entries.push({ id: '', ...normalizeEntry(entry, index, page, nctx) });
    hosts.push(entryHost(entry, nctx));
  }
  return { entries, hosts };
}

/** The run's array rules (pairing.arrayKeys, normalize.unorderedArrays). */
export function arrayRulesOf(config: DiffConfig): ArrayRules {
  return arrayRules(config.pairing.arrayKeys, config.normalize.unorderedArrays);
}

/** What the compare loop needs of a run. */
export function loopSettings(ctx: DiffContext): LoopSettings {
  return {
    table: ctx.table,
    numbering: new OrdinalNumbering(ctx.table),
    arrays: arrayRulesOf(ctx.config),
    headerOrder: ctx.options.headerOrder,
    wsOrder: ctx.config.pairing.wsOrder,
    maxViews: ctx.options.views ? MAX_VIEWS : 0,
    ...(ctx.options.onProgress ? { progress: (done: number, total: number) => ctx.options.onProgress!({ stage: 'compare', done, total }) } : {}),
  };
}

/** Side-by-side views kept for the HTML report (the report shows at most this many pairs side by side). */
export const MAX_VIEWS = 300;

/** The "unzip" stage (after "read"): decodes both captures' zip bodies for the "zip" parser. */
export const unzipStage: DiffStage = {
  name: 'unzip',
  run: async (ctx) => {
    const zips = ctx.zips;
    const parsers = ctx.options.bodyParsers ? ctx.options.bodyParsers([...bodyParsers]) : bodyParsers;
    for (const side of [ctx.old, ctx.new]) if (side.har) await zips.prepareEntries(side.har.log.entries, parsers);
  },
};

/**
 * The times of more runs (bb compare --repeat): each old run i read and
 * normalized beside new run i by this run's own read and normalize stages
 * (bounded or not), so their entries are named as the compared pair's are.
 */
async function timesOfRuns(ctx: DiffContext, runs: { old: string[]; new: string[] }): Promise<{ old: TimingSample[]; new: TimingSample[] }> {
  const out = { old: [] as TimingSample[], new: [] as TimingSample[] };
  for (let i = 0; i < Math.max(runs.old.length, runs.new.length); i++) {
    const a = runs.old[i];
    const b = runs.new[i];
    // options.timing stays: it is what makes the read and normalize stages take times (the timing stage is not run here).
    const sub = createContext(a ?? b!, b ?? a!, { ...ctx.options, noisePath: undefined, views: false });
    for (const s of ctx.stages) if (s.name === 'read' || s.name === 'normalize' || s.name === 'bounded-done') await s.run(sub);
    if (a) appendAll(out.old, sub.old.timing);
    if (b) appendAll(out.new, sub.new.timing);
  }
  return out;
}

/** The "timing" stage (after "noise", before "classify", so a route over budget is classified like any difference). */
export const timingStage: DiffStage = {
  name: 'timing',
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
};

/** The built-in stages, in order. */
export const defaultStages: DiffStage[] = [
  {
    name: 'read',
    run: async (ctx) => {
      const allowIncomplete = ctx.options.allowIncomplete;
      [ctx.old.har, ctx.new.har] = await Promise.all([readCapture(ctx.old.path, { allowIncomplete }), readCapture(ctx.new.path, { allowIncomplete })]);
    },
  },
  unzipStage,
  {
    name: 'normalize',
    run: (ctx) => {
      const oldHar = ctx.old.har!;
      const newHar = ctx.new.har!;
      const oldCtx = normalizeContextFor(ctx, 'old', oldHar.log._bb?.serverHome, ctx.zips);
      const newCtx = normalizeContextFor(ctx, 'new', newHar.log._bb?.serverHome, ctx.zips);
      const labels = pairedPageLabels(oldHar.log.pages, newHar.log.pages, oldCtx, newCtx);
      const sides = [normalizeSide(oldHar, oldCtx, labels.old), normalizeSide(newHar, newCtx, labels.new)];
      // Hosts in keys is decided for both sides at once (DESIGN.md "Pair"); entries are named after.
      const withHosts = hostsInKeys(new Set(sides[0]!.hosts), new Set(sides[1]!.hosts));
      for (const [k, side] of [ctx.old, ctx.new].entries()) {
        const { entries, hosts } = sides[k]!;
        assignIds(entries, (e) => e.meta.page, withHosts ? (_e, i) => hosts[i]! : undefined);
        for (const e of entries) applyPathRules(e, ctx.config.normalize.paths ?? []);
        side.entries = entries;
        if (ctx.options.timing) {
          const har = k === 0 ? oldHar : newHar;
          side.timing = entries.map((e) => ({ id: e.id, route: e.route, ...timesOf(har.log.entries[e.meta.index]!) }));
        }
      }
    },
  },
  {
    name: 'pair',
    run: (ctx) => {
      const un = (t: string) => unnumber(t, ctx.table);
      const shapes = new ShapeIndex(un);
      const numbers = [ctx.old.entries.map((e) => shapes.add(e)), ctx.new.entries.map((e) => shapes.add(e))];
      const sets = shapes.sets();
      const summarize = (list: NormalizedEntry[], shape: number[]): EntrySummary[] =>
        list.map((e, i) => {
          const { digest, marks } = digestAndMarks(contentText(e), ctx.table);
          return { id: e.id, route: e.route, index: e.meta.index, ...(e.meta.seq !== undefined ? { seq: e.meta.seq } : {}), token: tokenOf(e.key, digest), marks, shape: sets[shape[i]!]! };
        });
      ctx.old.summaries = summarize(ctx.old.entries, numbers[0]!);
      ctx.new.summaries = summarize(ctx.new.entries, numbers[1]!);
      const keyed = (list: NormalizedEntry[], sums: EntrySummary[]) => list.map((e, i) => ({ key: e.key, route: e.route, page: e.meta.page, token: sums[i]!.token }));
      ctx.lineup = pairEntries(keyed(ctx.old.entries, ctx.old.summaries), keyed(ctx.new.entries, ctx.new.summaries), ctx.config.pairing.unordered ?? []);
    },
  },
  {
    name: 'compare',
    run: async (ctx) => {
      const sides = [ctx.old, ctx.new] as const;
      const found = await compareLineup(ctx.lineup, { summary: (side, i) => sides[side].summaries[i]!, entry: (side, i) => sides[side].entries[i]! }, loopSettings(ctx));
      appendAll(ctx.differences, found.differences);
      appendAll(ctx.pairs, found.pairs);
      ctx.views = found.views;
      ctx.pairShapes = found.shapes;
    },
  },
  {
    name: 'noise',
    run: async (ctx) => {
      // OLD vs OLD2 (two runs of one build), with the same rules but no known entries.
      if (!ctx.options.noisePath) return;
      const progress = ctx.options.onProgress;
      const sub = createContext(ctx.old.path, ctx.options.noisePath, {
        ...ctx.options,
        noisePath: undefined,
        strictKnown: false,
        config: { ...ctx.config, known: [] },
        ...(progress ? { onProgress: (p: DiffProgress) => progress({ ...p, stage: `noise run: ${p.stage}` }) } : {}),
      });
      // The same stage list as this run (bounded when this run is), so the noise run sees what this one does.
      const run = await runStages(sub, ctx.stages.filter((s) => s.name !== 'noise' && s.name !== 'timing' && s.name !== 'classify' && s.name !== 'findings'));
      ctx.noise = run.differences;
      ctx.noiseTiming = sub.new.timing;
    },
  },
  timingStage,
  {
    name: 'classify',
    run: (ctx) => {
      // Known first (a ratified difference stays ratified), then noise among what is left.
      // A `slower` entry can only match when a budget is judged: without one it is not stale, just not asked.
      const judged = ctx.options.timing?.budget !== undefined;
      ctx.staleKnown = classifyKnown(ctx.differences, ctx.config.known).filter((k) => judged || k.kind !== 'slower');
      if (ctx.noise) classifyNoise(ctx.differences, ctx.noise);
    },
  },
  {
    name: 'findings',
    run: (ctx) => {
      ctx.findings = buildFindings(ctx.differences, ctx.pairShapes);
    },
  },
  {
    name: 'verdict',
    run: (ctx) => {
      const count = (c: string) => ctx.differences.filter((d) => d.class === c).length;
      const findings = (c: string) => ctx.findings.filter((f) => f.class === c).length;
      const real = count('real');
      const failStale = !!ctx.options.strictKnown && ctx.staleKnown.length > 0;
      const diff = real > 0 || failStale;
      ctx.result = {
        verdict: diff ? 'diff' : 'match',
        exitCode: diff ? 1 : 0,
        old: { path: ctx.old.path, entries: ctx.old.har?.log.entries.length ?? 0 },
        new: { path: ctx.new.path, entries: ctx.new.har?.log.entries.length ?? 0 },
        counts: { real, known: count('known'), noise: count('noise'), pairs: ctx.pairs.length, findings: { real: findings('real'), known: findings('known'), noise: findings('noise') } },
        pairs: ctx.pairs,
        findings: ctx.findings,
        differences: ctx.differences,
        staleKnown: ctx.staleKnown,
        ...(ctx.noise && ctx.options.noisePath ? { noiseRun: { path: ctx.options.noisePath, differences: ctx.noise.length } } : {}),
        ...(ctx.timing ? { timing: ctx.timing } : {}),
        ...(ctx.options.views ? { views: ctx.views } : {}),
      };
    },
  },
];

/** A fresh context for comparing two files. */
export function createContext(oldPath: string, newPath: string, options: DiffOptions): DiffContext {
  const config = options.config ?? emptyDiffConfig();
  const rules = compileRules(config.normalize);
  const protoFiles = config.normalize.proto ?? [];
  return {
    options,
    config,
    rules,
    ...(protoFiles.length ? { proto: ProtoSchema.load(protoFiles, 'config normalize.proto') } : {}),
    table: new OrdinalTable(rules.ordinalClasses),
    zips: new ZipBodies(),
    old: { path: oldPath, entries: [], summaries: [], timing: [] },
    new: { path: newPath, entries: [], summaries: [], timing: [] },
    lineup: [],
    views: new Map(),
    findings: [],
    pairShapes: [],
    stages: [],
    differences: [],
    pairs: [],
    staleKnown: [],
  };
}

/** Runs the stages on a context and returns its result. */
export async function runStages(ctx: DiffContext, stages: DiffStage[]): Promise<DiffResult> {
  ctx.stages = stages;
  const timed = ctx.options.onStageTime;
  for (const s of stages) {
    ctx.options.onProgress?.({ stage: s.name });
    const t0 = timed ? performance.now() : 0;
    await s.run(ctx);
    timed?.(s.name, performance.now() - t0);
  }
  if (!ctx.result) throw new Error('bb diff: the stage list has no verdict stage');
  return ctx.result;
}
