// bb diff as a list of named stages over one context object (DESIGN.md
// "Comparing"): read → normalize → pair → number → compare → classify →
// verdict. Each stage is a function of the context; the list can be edited by
// name (insert a zip or streaming stage, replace the classifier) without
// touching the others.
import { readCapture } from '../capture/reader.js';
import type { Har } from '../capture/har.js';
import { emptyDiffConfig, type DiffConfig } from './config.js';
import { compileRules, homesFor, type RuleSet } from './normalize/rules.js';
import { OrdinalNumbering, OrdinalTable, unnumber } from './normalize/ordinals.js';
import { applyPathRules, hostsInKeys, hostsOf, normalizeEntry, pairedPageLabels, type NormalizeContext } from './normalize/entry.js';
import { bodyParsers, type BodyParser } from './normalize/bodies.js';
import { unzipStage, zipBodiesOf, type ZipBodies } from './normalize/zip.js';
import { entryToken, pairEntries, type Lineup } from './pair.js';
import { comparePair } from './compare.js';
import { classifyKnown, classifyNoise } from './classify.js';
import type { DiffResult, Difference, NormalizedEntry, Pair, StaleKnown } from './types.js';

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
}

/** One side of the comparison as it moves through the stages. */
export interface DiffSide {
  /** The file. */
  path: string;
  /** The parsed capture (read stage). */
  har?: Har;
  /** Normalized entries in capture order (normalize stage), markers not yet numbered. */
  entries: NormalizedEntry[];
  /** Entries with ordinal numbers rendered (number stage). */
  rendered: NormalizedEntry[];
}

/** What the stages share. */
export interface DiffContext {
  /** The options. */
  options: DiffOptions;
  /** The config (defaults when none was given). */
  config: DiffConfig;
  /** Compiled rules. */
  rules: RuleSet;
  /** Ordinal markers for this run. */
  table: OrdinalTable;
  /** Whether entry keys, routes and ids include the host (hostsInKeys: either capture has several); set before normalizing. */
  hostsInKeys?: boolean;
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

function sortedEntries(har: Har): Array<{ entry: Har['log']['entries'][number]; index: number }> {
  const list = har.log.entries.map((entry, index) => ({ entry, index }));
  const allSeq = list.every((x) => typeof x.entry._bb?.seq === 'number');
  // bb writes entries in completion order; seq is arrival order. Others: start time.
  if (allSeq) return list.sort((a, b) => a.entry._bb!.seq - b.entry._bb!.seq);
  return list.sort((a, b) => (a.entry.startedDateTime < b.entry.startedDateTime ? -1 : a.entry.startedDateTime > b.entry.startedDateTime ? 1 : a.index - b.index));
}

/** What normalizing one side needs: the run's rules and table, that side's homes, the body parsers with zip support. */
export function normalizeContextFor(ctx: DiffContext, side: 'old' | 'new', captureHome: string | undefined, zips: ZipBodies): NormalizeContext {
  return {
    rules: ctx.rules,
    homes: homesFor(captureHome, ctx.options.serverHome?.[side] ? [ctx.options.serverHome[side]!] : [], ctx.rules),
    table: ctx.table,
    routeKeys: ctx.config.pairing.keys ?? [],
    pathRules: ctx.config.normalize.paths ?? [],
    parsers: zips.withParser(ctx.options.bodyParsers ? ctx.options.bodyParsers([...bodyParsers]) : bodyParsers),
    hosts: ctx.hostsInKeys ?? false,
  };
}

/** Normalizes one side's entries (ids numbered per page + route). */
function normalizeSide(har: Har, nctx: NormalizeContext, labels: Map<string, string>): NormalizedEntry[] {
  const occurrences = new Map<string, number>();
  const out: NormalizedEntry[] = [];
  for (const { entry, index } of sortedEntries(har)) {
    const page = entry.pageref ? labels.get(entry.pageref) ?? '' : '';
    const n = normalizeEntry(entry, index, page, nctx);
    const count = (occurrences.get(n.key) ?? 0) + 1;
    occurrences.set(n.key, count);
    const e: NormalizedEntry = { id: `${page}/${n.route}#${count}`, ...n };
    applyPathRules(e, nctx.pathRules);
    out.push(e);
  }
  return out;
}

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
      ctx.hostsInKeys = hostsInKeys(hostsOf(oldHar.log.entries, ctx), hostsOf(newHar.log.entries, ctx));
      const oldCtx = normalizeContextFor(ctx, 'old', oldHar.log._bb?.serverHome, zipBodiesOf(ctx));
      const newCtx = normalizeContextFor(ctx, 'new', newHar.log._bb?.serverHome, zipBodiesOf(ctx));
      const labels = pairedPageLabels(oldHar.log.pages, newHar.log.pages, oldCtx, newCtx);
      ctx.old.entries = normalizeSide(oldHar, oldCtx, labels.old);
      ctx.new.entries = normalizeSide(newHar, newCtx, labels.new);
    },
  },
  {
    name: 'pair',
    run: (ctx) => {
      const un = (s: string) => unnumber(s, ctx.table);
      const keyed = (list: NormalizedEntry[]) => list.map((e) => ({ key: e.key, route: e.route, page: e.meta.page, token: entryToken(e, un) }));
      ctx.lineup = pairEntries(keyed(ctx.old.entries), keyed(ctx.new.entries), ctx.config.pairing.unordered ?? []);
    },
  },
  {
    name: 'number',
    run: (ctx) => {
      // Pairs first, in order, both sides in step; lone entries after, so they cannot shift the rest.
      const numbering = new OrdinalNumbering(ctx.table);
      const body = (e: NormalizedEntry) => ({ request: e.request, response: e.response, ws: e.ws });
      for (const l of ctx.lineup) if (l.old !== undefined && l.new !== undefined) numbering.numberPair(body(ctx.old.entries[l.old]!), body(ctx.new.entries[l.new]!));
      for (const l of ctx.lineup) {
        if (l.new === undefined) numbering.numberAlone(0, body(ctx.old.entries[l.old!]!));
        if (l.old === undefined) numbering.numberAlone(1, body(ctx.new.entries[l.new!]!));
      }
      const render = (side: 0 | 1, e: NormalizedEntry): NormalizedEntry => ({
        ...e,
        id: unnumber(e.id, ctx.table),
        ...(numbering.render(side, body(e)) as Pick<NormalizedEntry, 'request' | 'response' | 'ws'>),
      });
      ctx.old.rendered = ctx.old.entries.map((e) => render(0, e));
      ctx.new.rendered = ctx.new.entries.map((e) => render(1, e));
    },
  },
  {
    name: 'compare',
    run: (ctx) => {
      for (const l of ctx.lineup) {
        const a = l.old === undefined ? undefined : ctx.old.rendered[l.old];
        const b = l.new === undefined ? undefined : ctx.new.rendered[l.new];
        const diffs = comparePair(a, b, l.status, { headerOrder: ctx.options.headerOrder, wsOrder: ctx.config.pairing.wsOrder });
        ctx.differences.push(...diffs);
        ctx.pairs.push({
          id: (a ?? b)!.id,
          route: (a ?? b)!.route,
          ...(a ? { old: a.meta.index } : {}),
          ...(b ? { new: b.meta.index } : {}),
          status: l.status,
          differences: diffs.length,
        });
      }
    },
  },
  {
    name: 'noise',
    run: async (ctx) => {
      // OLD vs OLD2 (two runs of one build), with the same rules but no known entries.
      if (!ctx.options.noisePath) return;
      const sub = createContext(ctx.old.path, ctx.options.noisePath, { ...ctx.options, noisePath: undefined, strictKnown: false, config: { ...ctx.config, known: [] } });
      const run = await runStages(sub, defaultStages.filter((s) => s.name !== 'noise' && s.name !== 'classify'));
      ctx.noise = run.differences;
    },
  },
  {
    name: 'classify',
    run: (ctx) => {
      // Known first (a ratified difference stays ratified), then noise among what is left.
      ctx.staleKnown = classifyKnown(ctx.differences, ctx.config.known);
      if (ctx.noise) classifyNoise(ctx.differences, ctx.noise);
    },
  },
  {
    name: 'verdict',
    run: (ctx) => {
      const count = (c: string) => ctx.differences.filter((d) => d.class === c).length;
      const real = count('real');
      const failStale = !!ctx.options.strictKnown && ctx.staleKnown.length > 0;
      const diff = real > 0 || failStale;
      ctx.result = {
        verdict: diff ? 'diff' : 'match',
        exitCode: diff ? 1 : 0,
        old: { path: ctx.old.path, entries: ctx.old.har?.log.entries.length ?? 0 },
        new: { path: ctx.new.path, entries: ctx.new.har?.log.entries.length ?? 0 },
        counts: { real, known: count('known'), noise: count('noise'), pairs: ctx.pairs.length },
        pairs: ctx.pairs,
        differences: ctx.differences,
        staleKnown: ctx.staleKnown,
        ...(ctx.noise && ctx.options.noisePath ? { noiseRun: { path: ctx.options.noisePath, differences: ctx.noise.length } } : {}),
      };
    },
  },
];

/** A fresh context for comparing two files. */
export function createContext(oldPath: string, newPath: string, options: DiffOptions): DiffContext {
  const config = options.config ?? emptyDiffConfig();
  const rules = compileRules(config.normalize);
  return {
    options,
    config,
    rules,
    table: new OrdinalTable(rules.ordinalClasses),
    old: { path: oldPath, entries: [], rendered: [] },
    new: { path: newPath, entries: [], rendered: [] },
    lineup: [],
    differences: [],
    pairs: [],
    staleKnown: [],
  };
}

/** Runs the stages on a context and returns its result. */
export async function runStages(ctx: DiffContext, stages: DiffStage[]): Promise<DiffResult> {
  // BB_DIFF_STAGE_TIMES=1: each stage's wall time on stderr (what the diff benchmark profiles).
  const timed = process.env.BB_DIFF_STAGE_TIMES === '1';
  for (const s of stages) {
    const t0 = timed ? performance.now() : 0;
    await s.run(ctx);
    if (timed) process.stderr.write(`bb diff stage ${s.name}: ${(performance.now() - t0).toFixed(0)} ms (at ${performance.now().toFixed(0)} ms)\n`);
  }
  if (!ctx.result) throw new Error('bb diff: the stage list has no verdict stage');
  return ctx.result;
}
