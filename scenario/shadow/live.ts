// What a `bb shadow` run knows as it goes (docs/shadow.md "The report and merging reports"): per
// route, how many requests came, were mirrored, compared equal, showed a
// regression or noise, failed on a target or were skipped (by reason);
// latency histograms per target; findings with a bounded number of sample
// exchanges. The same shape is the JSON report, and reports of several
// shadows merge (`bb shadow --merge`): counts add, histograms add, samples
// fill up to the cap. Nothing here touches the network or the disk.

/** The targets a run talks to. */
export type TargetName = 'primary' | 'candidate' | 'secondary';

/** Per-route counts. */
export interface RouteCounts {
  /** Requests the primary answered (every one the client sent). */
  requests: number;
  /** Sent to the mirror targets. */
  mirrored: number;
  /** Mirrored and compared with no differing field. */
  equal: number;
  /** Compared with at least one regression (candidate ≠ primary while secondary = primary). */
  regressions: number;
  /** Compared with differences that are all noise (the secondary differs too). */
  noise: number;
  /** Compared with differences and no secondary to classify them. */
  unclassified: number;
  /** A mirror target failed (refused, reset, timed out): bb's own error answer. */
  errors: number;
  /** Not mirrored, by reason ("unsafe", "sampled out", "too large", "queue full"). */
  skipped: Record<string, number>;
}

/** Latency of one target as a log-scale histogram (bucket i holds [2^(i/4), 2^((i+1)/4)) ms). */
export interface Histogram {
  /** Counts per bucket. */
  buckets: number[];
  /** How many values. */
  count: number;
}

/** One finding as the run aggregates it. */
export interface LiveFinding {
  /** regression | noise | unclassified. */
  class: 'regression' | 'noise' | 'unclassified';
  /** What happened to the field (the diff's kind: changed, added, removed, missing, …). */
  kind: string;
  /** Its routes as the diff names them (at most MAX_ROUTES_PER_FINDING). */
  routes: string[];
  /** The field pattern ("response.body.total"; "" for a whole entry). */
  pattern: string;
  /** Exchanges that had it. */
  count: number;
  /** A few of them: the shared id and the values on each side. */
  samples: LiveSample[];
  /** On a status finding: the findings that followed from it on every exchange that had them (a 500's changed body), folded under it as `bb diff` folds them (docs/diff.md "Findings"). */
  consequences?: LiveFinding[];
}

/** One exchange that had a finding. */
export interface LiveSample {
  /** The shared id (`_bb.shadow.id`). */
  id: number;
  /** Its request line ("GET /items"). */
  request: string;
  /** The field's value in the primary's answer, as compared (normalized). */
  primary?: unknown;
  /** The field's value in the candidate's answer, as compared. */
  candidate?: unknown;
  secondary?: unknown;
  /** The diff's entry id and the field's exact path (`bb noise` writes rules from them). */
  entry?: string;
  path?: string;
  /** Each capture's `_bb.seq` of the exchange (the live view opens the three answers by it). */
  seqs?: Partial<Record<TargetName, number>>;
}

/** The whole report (`--json`): also what `--merge` reads. */
export interface ShadowReport {
  /** Report format version. */
  format: 1;
  /** The targets' URLs (merged reports: the first's). */
  targets: Partial<Record<TargetName, string>>;
  /** Run start and end (ISO). */
  startedDateTime: string;
  endedDateTime: string;
  /** The sums of every route's counts. */
  totals: RouteCounts;
  /** Per route. */
  routes: Record<string, RouteCounts>;
  /** Latency per target, per route. */
  latency: Record<string, Partial<Record<TargetName, Histogram>>>;
  /** Findings, regressions first, most frequent first. */
  findings: LiveFinding[];
  /** (regressions + unclassified) / compared exchanges (0 when none were compared): what --fail-on gates. */
  regressionRate: number;
  /** Reports this one was merged from (absent for one run). */
  merged?: number;
}

/** One finding per class, kind and field pattern, over every route (as `bb diff` groups rows). */
function findingKey(f: Pick<LiveFinding, 'class' | 'kind' | 'pattern'>): string {
  return `${f.class}\n${f.kind}\n${f.pattern}`;
}

/** Routes listed per finding. */
export const MAX_ROUTES_PER_FINDING = 20;
/** Samples kept per finding. */
export const SAMPLES_PER_FINDING = 5;
/** Findings kept; past it new ones only count in their route. */
export const MAX_FINDINGS = 2000;
const BUCKETS = 96;

/** An empty count set. */
export function emptyCounts(): RouteCounts {
  return { requests: 0, mirrored: 0, equal: 0, regressions: 0, noise: 0, unclassified: 0, errors: 0, skipped: {} };
}

/** Adds b into a. */
export function addCounts(a: RouteCounts, b: RouteCounts): void {
  for (const k of ['requests', 'mirrored', 'equal', 'regressions', 'noise', 'unclassified', 'errors'] as const) a[k] += b[k];
  for (const [why, n] of Object.entries(b.skipped)) a.skipped[why] = (a.skipped[why] ?? 0) + n;
}

/** Records one latency value (ms). */
export function observe(h: Histogram, ms: number): void {
  const i = Math.max(0, Math.min(BUCKETS - 1, Math.floor(Math.log2(Math.max(ms, 1)) * 4)));
  while (h.buckets.length <= i) h.buckets.push(0);
  h.buckets[i]!++;
  h.count++;
}

/** The value under which a share q (0..1) of the histogram lies, ms (the bucket's upper bound). */
export function quantile(h: Histogram | undefined, q: number): number | undefined {
  if (!h || h.count === 0) return undefined;
  const want = Math.ceil(q * h.count);
  let seen = 0;
  for (let i = 0; i < h.buckets.length; i++) {
    seen += h.buckets[i]!;
    if (seen >= want) return Math.round(2 ** ((i + 1) / 4));
  }
  return Math.round(2 ** (h.buckets.length / 4));
}

function addHistogram(a: Histogram, b: Histogram): void {
  while (a.buckets.length < b.buckets.length) a.buckets.push(0);
  b.buckets.forEach((n, i) => (a.buckets[i]! += n));
  a.count += b.count;
}

/** The verdicts a compared exchange counts under (RouteCounts' names). */
export type Verdict = 'equal' | 'regressions' | 'noise' | 'unclassified';

/**
 * What one compared exchange added to the aggregate (its verdict, and each finding it counted in), so that a
 * verdict given before a later request bound its values can be taken back and given again (`forget`).
 */
export interface Counted {
  route: string;
  verdict: Verdict;
  /** The shared id (its samples carry it). */
  id: number;
  /** The findings it counted in: their keys, its route where the finding lists it (else ""), and its cause's key ("" for none). */
  findings: Array<{ key: string; route: string; cause: string }>;
}

/** The live aggregate of one run. */
export class ShadowLive {
  private readonly routes = new Map<string, RouteCounts>();
  private readonly latency = new Map<string, Partial<Record<TargetName, Histogram>>>();
  private readonly findings = new Map<string, LiveFinding>();
  // Per finding, how many of its exchanges had each cause (a status finding's key; "" for none): the finding
  // folds under a cause while every exchange that had it had that one (counts, so that `forget` can take one back).
  private readonly causes = new Map<string, Map<string, number>>();
  // Per finding, how many of its exchanges came on each route it lists.
  private readonly routeUses = new Map<string, Map<string, number>>();
  /** Findings not kept (past MAX_FINDINGS). */
  dropped = 0;
  constructor(
    private readonly targets: Partial<Record<TargetName, string>>,
    /** When the run began (a worker that compares a run whole at its end reports the run's start). */
    private readonly started = new Date().toISOString(),
  ) {}

  /** The counts of a route (made on first use). */
  route(route: string): RouteCounts {
    let c = this.routes.get(route);
    if (!c) this.routes.set(route, (c = emptyCounts()));
    return c;
  }

  /** Counts a skipped mirror. */
  skip(route: string, why: string): void {
    const c = this.route(route);
    c.skipped[why] = (c.skipped[why] ?? 0) + 1;
  }

  /** Records a target's latency on a route. */
  time(route: string, target: TargetName, ms: number): void {
    let per = this.latency.get(route);
    if (!per) this.latency.set(route, (per = {}));
    observe((per[target] ??= { buckets: [], count: 0 }), ms);
  }

  /**
   * Adds one occurrence of a finding (with its sample); `cause` is the status field that changed on its exchange
   * in its class, when the finding follows from it. What it counted (for `forget`), or undefined past MAX_FINDINGS.
   */
  find(f: Omit<LiveFinding, 'count' | 'samples' | 'routes'>, route: string, sample: LiveFinding['samples'][number], cause?: string): Counted['findings'][number] | undefined {
    const key = findingKey(f);
    let found = this.findings.get(key);
    if (!found) {
      if (this.findings.size >= MAX_FINDINGS) {
        this.dropped++;
        return undefined;
      }
      this.findings.set(key, (found = { ...f, routes: [], count: 0, samples: [] }));
    }
    const causeKey = cause === undefined ? '' : findingKey({ class: f.class, kind: 'changed', pattern: cause });
    bump(this.causes, key, causeKey, 1);
    found.count++;
    if (!found.routes.includes(route) && found.routes.length < MAX_ROUTES_PER_FINDING) found.routes.push(route);
    const listed = found.routes.includes(route);
    if (listed) bump(this.routeUses, key, route, 1);
    if (found.samples.length < SAMPLES_PER_FINDING) found.samples.push(sample);
    return { key, route: listed ? route : '', cause: causeKey };
  }

  /**
   * Takes back what one exchange added (`Counted`): its verdict, and its share of each finding (a finding no
   * exchange has any more is gone; its sample leaves room for the next one's).
   */
  forget(c: Counted): void {
    this.route(c.route)[c.verdict]--;
    for (const { key, route, cause } of c.findings) {
      const f = this.findings.get(key);
      if (!f) continue;
      f.count--;
      const at = f.samples.findIndex((s) => s.id === c.id);
      if (at >= 0) f.samples.splice(at, 1);
      if (route !== '' && bump(this.routeUses, key, route, -1) === 0) f.routes.splice(f.routes.indexOf(route), 1);
      bump(this.causes, key, cause, -1);
      if (f.count <= 0) {
        this.findings.delete(key);
        this.causes.delete(key);
        this.routeUses.delete(key);
      }
    }
  }

  // The status finding a finding folds under: the one cause every exchange that had it had (none: null).
  private causeOf(key: string): string | null {
    const per = this.causes.get(key);
    if (!per || per.size !== 1) return null;
    const [only] = per.keys();
    return only || null;
  }

  /** Totals over every route. */
  totals(): RouteCounts {
    const t = emptyCounts();
    for (const c of this.routes.values()) addCounts(t, c);
    return t;
  }

  /** The report as it stands. */
  report(): ShadowReport {
    const totals = this.totals();
    const routes = Object.fromEntries([...this.routes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return {
      format: 1,
      targets: this.targets,
      startedDateTime: this.started,
      endedDateTime: new Date().toISOString(),
      totals,
      routes,
      latency: Object.fromEntries(this.latency),
      findings: foldUnderCauses([...this.findings].map(([key, f]) => ({ f, cause: this.causeOf(key) }))),
      regressionRate: rateOf(totals),
    };
  }
}

// Adds `by` to the count of `inner` under `outer` (gone at zero); the count after.
function bump(m: Map<string, Map<string, number>>, outer: string, inner: string, by: number): number {
  let per = m.get(outer);
  if (!per) m.set(outer, (per = new Map()));
  const n = (per.get(inner) ?? 0) + by;
  if (n > 0) per.set(inner, n);
  else per.delete(inner);
  return n;
}

/**
 * The findings a report lists: each whose every exchange had one status change (its cause, of its class)
 * listed under that status finding's `consequences`, the rest on their own, sorted (diff/findings-fold.ts
 * folds `bb diff`'s findings the same way, so the live report and `bb diff` of the captures list the same).
 */
function foldUnderCauses(list: Array<{ f: LiveFinding; cause: string | null }>): LiveFinding[] {
  const top = new Map<string, LiveFinding>();
  for (const { f, cause } of list) if (cause === null) top.set(findingKey(f), { ...f, consequences: undefined });
  for (const { f, cause } of list) {
    if (cause === null) continue;
    const under = top.get(cause);
    if (!under) top.set(findingKey(f), { ...f, consequences: undefined });
    else (under.consequences ??= []).push({ ...f, consequences: undefined });
  }
  const out = [...top.values()];
  for (const f of out) {
    if (!f.consequences) delete f.consequences;
    else f.consequences.sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
  }
  return sortFindings(out);
}

/**
 * The share of compared exchanges that fail the run: regressions, and
 * without a secondary the unclassified ones (nothing says they are noise).
 */
export function rateOf(c: RouteCounts): number {
  const compared = c.equal + c.regressions + c.noise + c.unclassified;
  return compared === 0 ? 0 : (c.regressions + c.unclassified) / compared;
}

const CLASS_ORDER = { regression: 0, unclassified: 1, noise: 2 } as const;

function sortFindings(list: LiveFinding[]): LiveFinding[] {
  return list.sort((a, b) => CLASS_ORDER[a.class] - CLASS_ORDER[b.class] || b.count - a.count || (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0));
}

/** Merges the reports of several shadows (a fleet fed by a mesh's mirroring) into one. */
export function mergeReports(reports: ShadowReport[]): ShadowReport {
  const routes = new Map<string, RouteCounts>();
  const latency = new Map<string, Partial<Record<TargetName, Histogram>>>();
  const findings = new Map<string, LiveFinding>();
  // A consequence stays one only where it was one in every report that had it (under the same cause).
  const causes = new Map<string, string | null>();
  for (const r of reports) {
    for (const [route, c] of Object.entries(r.routes)) {
      let into = routes.get(route);
      if (!into) routes.set(route, (into = emptyCounts()));
      addCounts(into, c);
    }
    for (const [route, per] of Object.entries(r.latency)) {
      let into = latency.get(route);
      if (!into) latency.set(route, (into = {}));
      for (const [t, h] of Object.entries(per) as Array<[TargetName, Histogram]>) addHistogram((into[t] ??= { buckets: [], count: 0 }), h);
    }
    for (const [f, cause] of r.findings.flatMap((t) => [[t, null] as const, ...(t.consequences ?? []).map((c) => [c, findingKey(t)] as const)])) {
      const key = findingKey(f);
      const had = causes.get(key);
      causes.set(key, had === undefined || had === cause ? cause : null);
      const into = findings.get(key);
      if (!into) findings.set(key, { ...f, routes: f.routes.slice(0, MAX_ROUTES_PER_FINDING), samples: f.samples.slice(0, SAMPLES_PER_FINDING) });
      else {
        into.count += f.count;
        for (const r of f.routes) if (!into.routes.includes(r) && into.routes.length < MAX_ROUTES_PER_FINDING) into.routes.push(r);
        for (const s of f.samples) if (into.samples.length < SAMPLES_PER_FINDING) into.samples.push(s);
      }
    }
  }
  const totals = emptyCounts();
  for (const c of routes.values()) addCounts(totals, c);
  const times = reports.map((r) => r.startedDateTime).sort();
  const ends = reports.map((r) => r.endedDateTime).sort();
  return {
    format: 1,
    targets: reports[0]?.targets ?? {},
    startedDateTime: times[0] ?? new Date().toISOString(),
    endedDateTime: ends[ends.length - 1] ?? new Date().toISOString(),
    totals,
    routes: Object.fromEntries([...routes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    latency: Object.fromEntries(latency),
    findings: foldUnderCauses([...findings].map(([key, f]) => ({ f, cause: causes.get(key) ?? null }))),
    regressionRate: rateOf(totals),
    merged: reports.reduce((n, r) => n + (r.merged ?? 1), 0),
  };
}
