// What bb diff's stages share (diff/stages.ts): the options, the run's
// compiled rules and ordinal table, and each side's store (diff/store/), the
// one thing that differs between a small and a big capture. The stages see a
// side only through SideStore: its summaries, then its entries one at a time.
import { replayOfShape, type HarEntry, type HarLog, type HarPage, type HarReplayOf, type HarReplaySkip } from '../capture/index.js';
import type { NotReplayed } from './not-replayed.js';
import { configProtoSchema, emptyDiffConfig, type DiffConfig } from './config.js';
import { compileRules, homesFor, type RuleSet, OrdinalTable, normalizeContext, type NormalizeContext, bodyParsers, type BodyParser, type ZipBodies, type ProtoSchema, compilePathRules, type PathRules, type CaptureWindow, type ErasedNote } from './normalize/index.js';
import type { Lineup } from './pair.js';
import type { PairShape } from './findings.js';
import type { DiffResult, Difference, Finding, NoiseHidden, RuleHidden, NormalizedEntry, Pair, PairView, StaleKnown } from './types.js';
import type { TimingOptions, TimingSample } from './timing.js';
import type { Pipe } from './pipe.js';
import type { BoundSet, PrimarySends } from './bind/index.js';

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
  /** Both captures are of one build (bb compare --trees old,old): known entries that match nothing are expected there, not stale. */
  sameBuild?: boolean;
  /** Server home directories per side, on top of log._bb.serverHome and the config's. */
  serverHome?: { old?: string; new?: string };
  /** Edits the stage pipe by name (e.g. `pipe.after('normalize', stage)`); an unknown name throws. */
  stages?: (pipe: Pipe<DiffStage>) => void;
  /** Edits the body parser list (e.g. insert "zip" before "binary"). */
  bodyParsers?: (defaults: BodyParser[]) => BodyParser[];
  /** Keep side-by-side views of differing pairs for the HTML report (result.views). */
  views?: boolean;
  /** Files bigger than this (either side) are kept in the bounded store (default BOUNDED_THRESHOLD; tests force it with 0). */
  boundedThreshold?: number;
  /** Where the run is: each stage as it starts, and entries done in the long ones (for a progress line). */
  onProgress?: (p: DiffProgress) => void;
  /** The bounded store's two sides run in worker threads (default true; false keeps them in this thread). */
  workers?: boolean;
  /** Called after each stage with its wall time in ms (what the diff benchmark profiles). */
  onStageTime?: (stage: string, ms: number) => void;
  /** bb diff --timing: per-route timing in the result (docs/timing.md). */
  timing?: TimingOptions;
}

/** One progress report: the stage, and for the long stages how many of how many. */
export interface DiffProgress {
  /** The stage's name. */
  stage: string;
  /** Entries (or line-ups) done so far. */
  done?: number;
  /** Of how many. */
  total?: number;
}

/**
 * An entry as the stages know it between the passes: what pairing, naming
 * and the compare loop's equal-pair shortcut need, without the entry itself.
 * Both stores make it; the bounded one sends it across from its worker.
 */
export interface EntrySummary {
  /** Index in log.entries. */
  index: number;
  /** bb's capture sequence number. */
  seq?: number;
  /** `bb shadow`'s shared id (`_bb.shadow.id`), in a shadow's capture. */
  shadow?: number;
  /** Pairing key: page and route. */
  key: string;
  /** "METHOD path" (with the host when hosts are in keys). */
  route: string;
  /** Its page's label ("" without a page). */
  page: string;
  /** `<page>/<route>#<n>`, markers in (order.ts assignIds). */
  id: string;
  /** Pairing token: key and un-numbered content digest (pair.ts tokenOf). */
  token: string;
  /** The un-numbered digest of its compared request alone (pair.ts requestDigest): which of one key's entries pair (pairByRequest). */
  request?: string;
  /** markersOf its content text, when kept (no path rule changed the entry after the text was taken). */
  marks?: ArrayLike<number>;
  /** Its shape (field patterns) as an index into its store's `shapes`. */
  shape: number;
  /** When it started and ended (epoch ms; a WebSocket at its last message or close: capture's exchangeEndMs), when its times parse: whether two entries were in order or at once (pair.ts settleReorders). */
  start?: number;
  end?: number;
  /** The same in bb's own event order (`_bb.seq`, `_bb.seqEnd`, a WebSocket's last message's seq), when the capture is bb's: exact where times have a millisecond's grain. */
  seqStart?: number;
  seqEnd?: number;
  /** The client connection it came on (HAR `connection`), when the capture names one: order counts within one. */
  connection?: string;
  /** Its times, taken on the one read, when the run asks for timing (bb diff --timing). */
  times?: Pick<TimingSample, 'ttfb' | 'total' | 'skip'>;
  /** What the config's erasing rules (paths without a pattern, keys, headers) replaced or dropped in it (normalize/erased.ts), when any did: rule-hidden.ts counts the rows they hid. */
  erased?: ErasedNote[];
}

/** Log-level facts of a side, known once it is open. */
export interface SideHeader {
  /** log.pages, for the page labels (pairedPageLabels needs both sides'). */
  pages: HarPage[] | undefined;
  /** How many entries the capture holds. */
  entryCount: number;
  /** log._bb.serverHome, for the page titles' normalizing. */
  serverHome: string | undefined;
  /** When the side was recorded, a day's slack each way (captureWindow): timestamps by value. */
  window: CaptureWindow | undefined;
  /** log._bb.replayOf when the side is a `bb replay` (capture's replay-of.ts), checked for shape. */
  replayOf?: HarReplayOf;
  /**
   * The side is one of a `bb shadow` run's captures: its log says so (log._bb.shadowRole), or, written before
   * that, its first entry carries bb shadow's tag.
   */
  shadow?: boolean;
  /** A `bb shadow` run's primary capture (its log's label): the one that holds the exchanges not mirrored. */
  shadowPrimary?: boolean;
  /** log._bb.setHeaders: request headers bb set on this capture's requests (`bb shadow --header`). */
  setHeaders?: string[];
}

/** The labels `bb shadow` gives its mirrors' captures: an empty one is a segment in which nothing was mirrored. */
const isMirrorLabel = (label: string | undefined): boolean => label === 'candidate' || label === 'secondary';

/** A side's header from its log (pages and `_bb`), its entry count, time window and first entry: the same for every store. */
export function sideHeader(log: Pick<HarLog, 'pages' | '_bb'>, entryCount: number, window: CaptureWindow | undefined, first: HarEntry | undefined): SideHeader {
  const replayOf = replayOfShape(log._bb?.replayOf);
  const role = log._bb?.shadowRole;
  const shadow = role !== undefined || first?._bb?.shadow !== undefined || (entryCount === 0 && isMirrorLabel(log._bb?.label));
  const primary = role !== undefined ? role === 'primary' : log._bb?.label === 'primary';
  return { pages: log.pages, entryCount, serverHome: log._bb?.serverHome, window, ...(replayOf ? { replayOf } : {}), ...(shadow ? { shadow: true, ...(primary ? { shadowPrimary: true } : {}) } : {}), ...(log._bb?.setHeaders?.length ? { setHeaders: log._bb.setHeaders.map((n) => n.toLowerCase()) } : {}) };
}

/**
 * Where one side's entries are kept between the passes: in memory
 * (store/memory.ts) or bounded, each entry read once and its normalized form
 * kept within a byte budget (store/bounded.ts). Opened by the read stage;
 * summarize, then finish, once each; then entries by place in comparison order.
 */
/** What the run's two sides say of each other, known from their headers before any entry is normalized. */
export interface PairFacts {
  /** The other side is a replay saying which entries it did not send; when this side is the capture it replayed, those are left out (`leftOut`). */
  replayOf?: HarReplayOf;
  /** A side is a `bb replay`: every request Host of the run is bb's choice (NormalizeContext.bbChoseHost). */
  bbChoseHost?: boolean;
  /**
   * Both sides are `bb shadow` captures: an exchange the shadow did not mirror (only the primary has it) is in
   * neither's comparison. Against any other capture (a replay of the primary's, say) it is compared like the rest.
   */
  shadowPair?: boolean;
  /**
   * With shadowPair: this side is one of the run's mirrors (the candidate, the secondary). An exchange it has no
   * answer for (bb's own error answer: a reset, a timeout, a target gone) is left out of both sides, as the live
   * comparison counts it an error and compares nothing of it (order.ts noAnswer).
   */
  shadowMirror?: boolean;
  /**
   * The other side is that run's primary and this one a mirror: what the client sent in the exchanges the shadow
   * did not mirror, read by this side's binding where they stood (IssuedTimeline).
   */
  primarySends?: PrimarySends;
  /** Request headers bb set on either side's requests (SideHeader.setHeaders of both): left out on both (NormalizeContext.bbSetHeaders). */
  bbSetHeaders?: string[];
  /**
   * Values both runs of the old build issued alike and their clients sent back (a price, a page size echoed in
   * a request): what the server did not make up. Never bound on either side, so they compare as they are
   * (stages.ts `noise`: found by the --noise run, the second old run, before this run normalizes).
   */
  unbound?: ReadonlySet<string>;
}

export interface SideStore {
  /** The side's log facts (read stage). */
  readonly header: SideHeader;
  /**
   * Reads and normalizes every entry once; the side's distinct hosts. `onProgress`: entries read so far, now and then.
   * `pair`: what the other side says of this one (PairFacts).
   */
  summarize(labels: Map<string, string>, onProgress?: (done: number) => void, pair?: PairFacts): Promise<Summarized>;
  /**
   * The values this side's server issued and its client sent back (diff/bind), as summarize binds them but for
   * `pair.unbound`: read before summarize when another run's bound values decide what is left unbound. Read
   * once; summarize reuses them. `pair`: the facts summarize will get; `ids`: also which of them are ids by where
   * they stood (BoundSet.ids; asked on the first call).
   */
  bound(pair?: PairFacts, ids?: boolean): Promise<BoundSet>;
  /** A `bb shadow` primary side: its shared ids in file order and its not-mirrored exchanges' client sides (PairFacts.primarySends), read before summarize. */
  primarySends(): Promise<PrimarySends>;
  /** Orders and names the entries (hosts in keys or not, decided for both sides) and makes their summaries. */
  finish(hosts: boolean): Promise<void>;
  /** Summaries in comparison order (after finish). */
  readonly summaries: readonly EntrySummary[];
  /** The side's shapes (field patterns), by a summary's `shape`. */
  readonly shapes: ReadonlyArray<Set<string>>;
  /** The keyed ordinals (redaction placeholders) its compared entries hold, as slots (normalize/keyed.ts), after finish. */
  readonly keyed: ReadonlySet<number>;
  /** The value a bound value's marker of this side stands for, by its value number (after finish). */
  issuedValue(v: number): string | undefined;
  /** The normalized entry at place `i` of comparison order, markers in, path rules applied. */
  entry(i: number): NormalizedEntry | Promise<NormalizedEntry>;
  /** The compare loop is done with every entry: only the summaries stay. */
  releaseAll(): void;
  /** Frees the side (files, threads); safe to call twice. */
  close(): Promise<void>;
}

/** What a side's summarize answers. */
export interface Summarized {
  /** The side's distinct hosts. */
  hosts: string[];
  /** The entries a replay of this side did not send, left out (SideStore.summarize's `replayOf`). */
  leftOut?: HarReplaySkip[];
  /** With PairFacts.shadowPair: the shared ids of the entries left out as not mirrored (order.ts shadowLeftOut): not mirrored, or, on a mirror, not answered. */
  notCompared?: number[];
  /** With PairFacts.shadowMirror: how many of those the mirror left out for want of an answer (order.ts shadowLeftOut). */
  unanswered?: number;
}

/** Which store the sides are kept in. */
export type StoreKind = 'memory' | 'bounded';

/** One side of the comparison as it moves through the stages. */
export interface DiffSide {
  /** The file. */
  path: string;
  /** Its store (read stage). */
  store?: SideStore;
  /** Each entry's times, named as the entries are (normalize stage, only with options.timing). */
  timing: TimingSample[];
  /** It may hold no entries: the other side is a `bb shadow` primary, so this is a mirror's segment in which nothing was mirrored (read stage). */
  mayBeEmpty?: boolean;
}

/** What the stages share. */
export interface DiffContext {
  /** The options. */
  options: DiffOptions;
  /** The config (defaults when none was given). */
  config: DiffConfig;
  /** Compiled rules. */
  rules: RuleSet;
  /** The config's per-path rules (normalize.paths), compiled once for the run. */
  pathRules: PathRules;
  /** The config's `.proto` files, parsed (absent without normalize.proto). */
  proto?: ProtoSchema;
  /** Ordinal markers for this run. */
  table: OrdinalTable;
  /** The store the sides go to: chosen by size in the read stage unless given (a sub-run takes its parent's). */
  storeKind?: StoreKind;
  /** Old and new. */
  old: DiffSide;
  new: DiffSide;
  /** Pairing (pair stage). */
  lineup: Lineup[];
  /** Two of a shadow's captures: each side's shared ids left out as not mirrored (normalize stage), for the pair stage. */
  shadowLeftOut?: [ReadonlySet<number>, ReadonlySet<number>];
  /** Two of a shadow's captures: the exchanges a mirror has no answer for, left out (PairFacts.shadowMirror). */
  shadowUnanswered?: number;
  /** Differences (compare stage), classified by the classify stage. */
  differences: Difference[];
  /** Per-pair counts. */
  pairs: Pair[];
  /** Known entries that matched nothing (classify stage). */
  staleKnown: StaleKnown[];
  /** With options.sameBuild: how many known entries matched nothing (expected there; classify stage). */
  knownUnmet: number;
  /** Noise differences between the two old runs (issue 7). */
  noise?: Difference[];
  /**
   * Values the two old runs' servers both issued, alike, and their clients sent back (PairFacts.unbound): set
   * by the noise run when it is the run's (`findsUnbound`), before this run normalizes.
   */
  unbound?: ReadonlySet<string>;
  /** This context is a run's --noise run, two runs of one build: its normalize stage finds `unbound` for both. */
  findsUnbound?: boolean;
  /** How many rows of this run noise hid (classify stage, with --noise). */
  noiseHidden?: NoiseHidden;
  /** Old entries the new side, a replay of the old, did not send (normalize stage). */
  notReplayed?: NotReplayed;
  /** Rows the config's erasing path rules hid, per rule (classify stage). */
  hiddenByRules: RuleHidden[];
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
  stages: readonly DiffStage[];
  /** The result (verdict stage). */
  result?: DiffResult;
}

/**
 * Which runs take a stage: `read` every run that reads a pair of captures
 * (the extra --timing runs stop there), `compare` every comparison (the
 * --noise run stops there), `judge` only the run whose verdict is asked.
 */
export type StagePart = 'read' | 'compare' | 'judge';

/** A named stage. */
export interface DiffStage {
  /** Name, for editing the pipe. */
  name: string;
  /** Does the work on the context. */
  run: (ctx: DiffContext) => void | Promise<void>;
  /** Which runs take it (default `compare`: the run and its --noise run). */
  part?: StagePart;
}

/** A fresh context for comparing two files; `storeKind` fixes the store (else the read stage chooses by size). */
export function createContext(oldPath: string, newPath: string, options: DiffOptions, storeKind?: StoreKind): DiffContext {
  const config = options.config ?? emptyDiffConfig();
  const rules = compileRules(config.normalize);
  const proto = configProtoSchema(config);
  return {
    options,
    config,
    rules,
    pathRules: compilePathRules(config.normalize.paths ?? []),
    ...(proto ? { proto } : {}),
    table: new OrdinalTable(rules.ordinalClasses),
    ...(storeKind ? { storeKind } : {}),
    old: { path: oldPath, timing: [] },
    new: { path: newPath, timing: [] },
    lineup: [],
    views: new Map(),
    findings: [],
    pairShapes: [],
    stages: [],
    differences: [],
    pairs: [],
    staleKnown: [],
    knownUnmet: 0,
    hiddenByRules: [],
  };
}

/** The body parsers of a run: the built-in list, edited by options.bodyParsers. */
export function parsersOf(options: DiffOptions): readonly BodyParser[] {
  return options.bodyParsers ? options.bodyParsers([...bodyParsers]) : bodyParsers;
}

/** What normalizing one side needs: the run's rules and table, that side's homes, time window (SideHeader.window) and bound values (diff/bind), the body parsers with zip support. */
export function normalizeContextFor(ctx: DiffContext, side: 'old' | 'new', captureHome: string | undefined, zips: ZipBodies, window?: CaptureWindow, issued?: ReadonlySet<string>): NormalizeContext {
  return normalizeContext({
    rules: ctx.rules,
    homes: homesFor(captureHome, ctx.options.serverHome?.[side] ? [ctx.options.serverHome[side]!] : [], ctx.rules),
    ...(window ? { window } : {}),
    ...(issued ? { issued } : {}),
    table: ctx.table,
    routeKeys: ctx.config.pairing.keys ?? [],
    disabledKeys: ctx.config.pairing.disable ?? [],
    pathRules: ctx.pathRules,
    parsers: zips.withParser(parsersOf(ctx.options)),
    ...(ctx.proto ? { proto: ctx.proto } : {}),
  });
}
