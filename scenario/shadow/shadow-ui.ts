// `bb shadow --ui`: the live view of a shadow run. The Shadow tab
// (ui/assets/views/shadow.js) draws the run's report as it comes (the route
// table, findings with their samples) and opens a sample's three answers
// side by side, the entries of the three captures as they stand (by each
// capture's `_bb.seq` of the exchange, which the comparison put in the
// sample); the capture tabs show the three captures' exchanges and frames.
//
//   shadow                {type:"run", config, targets}, then {type:"report", report, latency} per report
//                         (latency: {route: {target: [p50, p99]}} ms, from the report's histograms)
//   shadow-sample?key=ID  {type:"answers", id, answers: {primary, candidate, secondary}} (HAR entries, null when absent)
//   POST /action/known    {class, id, kind, pattern, reason}: the finding (by class and id, or by class, kind
//                         and pattern) as a known entry (`bb known add`'s entry)
//   POST /action/noise    {class, id, kind, pattern}: the finding as noise rules (`bb noise`'s rules), on its routes
//
// Both actions write the run's --config file (diff/config-edit.ts, as
// `bb known add` does), and the comparison reads it again, so later exchanges
// are compared with the entry. Without --config they refuse with a sentence
// that says so: the file a later `bb diff --config` reads must be one the
// user named.
import { addToConfigFile, configProtoSchema, knownForFinding, noiseRules, type DiffConfig, type Difference } from '../../diff/index.js';
import { BbError } from '../../core/index.js';
import type { HarEntry } from '../../capture/index.js';
import { CAPTURE_VIEWS, captureFeeds, startUi, type UiAction, type UiFeed, type UiServer } from '../../ui/index.js';
import type { Recording } from '../record/index.js';
import { MAX_ROUTES_PER_FINDING, quantile, SAMPLE_VALUE_MAX, type LiveFinding, type ShadowReport, type TargetName } from './live.js';

/** What the live view of a shadow run reads and does. */
export interface ShadowUiSource {
  /** The three recordings (the secondary's when there is one). */
  recordings: Partial<Record<TargetName, Recording>>;
  /** The report as of the last comparison. */
  report(): ShadowReport | undefined;
  /** Calls `listener` with each new report; returns how to stop. */
  onReport(listener: (report: ShadowReport) => void): () => void;
  /** The run's --config file: where the actions write (none: they refuse). */
  configPath?: string;
  /** That file as startShadow read it (none when it does not exist yet): its .proto files name the gRPC fields in the capture tabs. */
  config?: DiffConfig;
  /** Called after the actions wrote the config file. */
  configChanged(): void;
}

const TARGETS: TargetName[] = ['primary', 'candidate', 'secondary'];

/** Starts the live view of a shadow run on loopback. */
export async function startShadowUi(listen: { host?: string; port?: number }, source: ShadowUiSource): Promise<UiServer> {
  // The config's .proto files name the gRPC fields in the capture tabs (a config the page will create names none).
  const proto = source.config ? configProtoSchema(source.config) : undefined;
  const captures = TARGETS.flatMap((label) => {
    const rec = source.recordings[label];
    return rec ? [{ label, live: rec.live(), ...(proto ? { proto } : {}) }] : [];
  });
  return startUi({
    listen,
    title: 'bb shadow',
    views: [{ name: 'shadow', title: 'Shadow' }, ...CAPTURE_VIEWS],
    feeds: [runFeed(source), sampleFeed(source), ...captureFeeds(captures)],
    actions: ratifyActions(source),
  });
}

function runFeed(source: ShadowUiSource): UiFeed {
  return {
    name: 'shadow',
    open(_key, send) {
      send({ type: 'run', config: source.configPath ?? null, targets: TARGETS.filter((t) => source.recordings[t]) });
      const now = source.report();
      if (now) send({ type: 'report', report: now, latency: quantiles(now) });
      return source.onReport((report) => send({ type: 'report', report, latency: quantiles(report) }));
    },
  };
}

/** p50 and p99 per route and target, ms (the terminal's live lines use the same quantile). */
function quantiles(report: ShadowReport): Record<string, Partial<Record<TargetName, [number, number]>>> {
  const out: Record<string, Partial<Record<TargetName, [number, number]>>> = {};
  for (const [route, per] of Object.entries(report.latency)) {
    out[route] = {};
    for (const t of TARGETS) {
      const h = per[t];
      if (h && h.count > 0) out[route]![t] = [quantile(h, 0.5)!, quantile(h, 0.99)!];
    }
  }
  return out;
}

/** The report's findings with the consequences folded under status changes. */
function allFindings(report: ShadowReport | undefined): LiveFinding[] {
  return (report?.findings ?? []).flatMap((f) => [f, ...(f.consequences ?? [])]);
}

/** The sample with shared id `id` in the report, if any finding kept it. */
function sampleById(report: ShadowReport | undefined, id: number): LiveFinding['samples'][number] | undefined {
  for (const f of allFindings(report)) for (const s of f.samples) if (s.id === id) return s;
  return undefined;
}

function sampleFeed(source: ShadowUiSource): UiFeed {
  return {
    name: 'shadow-sample',
    open(key, send) {
      const id = Number(key);
      if (!/^\d+$/.test(key ?? '')) return undefined;
      // The shared id is the primary's seq; the mirrors' seqs come with the sample.
      const seqs = { primary: id, ...sampleById(source.report(), id)?.seqs };
      const answers: Partial<Record<TargetName, HarEntry | null>> = {};
      for (const t of TARGETS) {
        const rec = source.recordings[t];
        if (!rec) continue;
        const seq = seqs[t];
        answers[t] = (seq !== undefined ? rec.live().entry(seq) : undefined) ?? null;
      }
      send({ type: 'answers', id, answers });
      return () => {};
    },
  };
}

/** The finding a page's request names (by class and id, as the report keys it; or by class, kind and pattern). */
function findingOf(source: ShadowUiSource, body: unknown): LiveFinding & { kind: Difference['kind'] } {
  const b = (body ?? {}) as Record<string, unknown>;
  const f = allFindings(source.report()).find((x) => x.class === b.class && (b.id !== undefined ? x.id === b.id : x.kind === b.kind && x.pattern === b.pattern));
  if (!f) throw new BbError('BB_USAGE', `the run has no ${String(b.class)} finding ${JSON.stringify(b.pattern)} ${String(b.kind)}: reload the page`);
  // The live finding's kind is the diff's (compare.ts copies it).
  return f as LiveFinding & { kind: Difference['kind'] };
}

function configOf(source: ShadowUiSource): string {
  if (source.configPath === undefined) {
    throw new BbError('BB_USAGE', 'this run has no config file to write: start bb shadow with --config FILE (created when absent) to ratify findings from the page');
  }
  return source.configPath;
}

/**
 * A finding the page may ratify: one whose routes and values the run kept whole. Past MAX_ROUTES_PER_FINDING routes
 * or SAMPLE_VALUE_MAX characters a value, the live finding holds only part of them, and an entry written from that
 * part would name routes short or values that never occur (live.ts): the captures hold them all.
 */
function wholeFinding(f: LiveFinding): void {
  const how = 'ratify it from the run\'s captures: bb diff PRIMARY.har CANDIDATE.har --json report.json, then bb known add FINDING-ID --from report.json';
  if (f.routesCut) throw new BbError('BB_USAGE', `this finding is on more than ${MAX_ROUTES_PER_FINDING} routes and the live view keeps the first ${MAX_ROUTES_PER_FINDING}: ${how}`);
  if (f.samples.some((s) => s.elided)) throw new BbError('BB_USAGE', `this finding's values are longer than the live view keeps (${SAMPLE_VALUE_MAX} characters): ${how}`);
}

/** `list` without repeats (rules equal as JSON). */
function unique<T>(list: T[]): T[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(JSON.stringify(x)) && Boolean(seen.add(JSON.stringify(x))));
}

function ratifyActions(source: ShadowUiSource): UiAction[] {
  return [
    {
      name: 'known',
      async run(body) {
        const config = configOf(source);
        const f = findingOf(source, body);
        wholeFinding(f);
        const reason = String((body as { reason?: unknown }).reason ?? '').trim();
        if (!reason) throw new BbError('BB_KNOWN_NO_REASON', 'a known entry needs a reason: say why the difference is accepted');
        // As `bb known add` does for a finding: its routes, and the values its rows had (here: its samples').
        const entry = knownForFinding(f, f.samples.map((s) => ({ old: s.primary, new: s.candidate })), reason);
        const added = await addToConfigFile(config, { known: [entry] });
        source.configChanged();
        return { config, written: added.known[0], known: [entry] };
      },
    },
    {
      name: 'noise',
      async run(body) {
        const config = configOf(source);
        const f = findingOf(source, body);
        wholeFinding(f);
        const rules = noiseRules(f.samples.map((s) => ({ entry: s.entry ?? s.request, path: s.path ?? f.pattern, pattern: f.pattern, kind: f.kind, old: s.primary, new: s.candidate })));
        // `bb noise` sees every exchange and scopes each rule to its entry; a run's finding keeps a few samples of
        // many exchanges, so its rules cover the finding's routes, as its known entry does (same where).
        const { where } = knownForFinding(f, [], '');
        const known = unique(rules.known.map((k) => ({ ...k, where })));
        const paths = unique(rules.normalize.paths.flatMap((p) => [where].flat().map((w) => ({ ...p, where: w }))));
        const added = await addToConfigFile(config, { known, paths });
        source.configChanged();
        return { config, written: [...added.known, ...added.paths].some(Boolean), known, paths };
      },
    },
  ];
}
