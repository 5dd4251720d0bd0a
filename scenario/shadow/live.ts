// What a `bb shadow` run knows as it goes (docs/shadow.md "The report and merging reports"): per
// route, how many requests came, were mirrored, compared equal, showed a
// regression or noise, failed on a target or were skipped (by reason);
// latency histograms per target; findings with a bounded number of sample
// exchanges. The same shape is the JSON report, and reports of several
// shadows merge (`bb shadow --merge`): counts add, histograms add, samples
// fill up to the cap. Nothing here touches the network or the disk.

import type { ShadowRole } from '../../capture/index.js';
import { byStatusPattern, elidePair, findingHash, findingPattern, followsFromStatus, groupsAlone, idOfHash, rowSignature, splitsByStatus, statusChangeText, statusRows, varyingPart, varyingSignature, withStatus, type Difference } from '../../diff/index.js';

/** The targets a run talks to. */
/** One of a run's three targets: the role its capture names (log._bb.shadowRole). */
export type TargetName = ShadowRole;

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
  /**
   * Of `errors`, the exchanges the candidate failed where the primary answered: a failure of the new build, which
   * the gate counts with the regressions (rateOf). Absent in reports written before it was counted.
   */
  candidateErrors?: number;
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
  /** Its id: `bb diff`'s for the same finding of the captures (`bb known add` takes it). */
  id: string;
  /** regression | noise | unclassified. */
  class: 'regression' | 'noise' | 'unclassified';
  /** What happened to the field (the diff's kind: changed, added, removed, missing, …). */
  kind: string;
  /** Its routes as the diff names them (at most MAX_ROUTES_PER_FINDING). */
  routes: string[];
  /** It had more routes than MAX_ROUTES_PER_FINDING: `routes` lists the first ones only. */
  routesCut?: true;
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
  /** The values were longer than SAMPLE_VALUE_MAX: each is its text elided around the change (boundedSample). */
  elided?: true;
}

/** The longest sample value kept as it is (its JSON text, in characters). */
export const SAMPLE_VALUE_MAX = 4096;

/**
 * A sample whose values are long (a 20 MiB text body compared whole) with both elided around their first and last
 * differing characters, as `bb diff` shows them, and marked `elided`. Kept whole, a report held and wrote every
 * sample's values: 42 MB of report.json and of terminal lines for one changed 20 MiB body.
 */
export function boundedSample(sample: LiveSample): LiveSample {
  const long = (v: unknown) => v !== undefined && (typeof v === 'string' ? v.length > SAMPLE_VALUE_MAX : (JSON.stringify(v)?.length ?? 0) > SAMPLE_VALUE_MAX);
  if (!long(sample.primary) && !long(sample.candidate)) return sample;
  const [primary, candidate] = elidePair(sample.primary ?? null, sample.candidate ?? null, SAMPLE_VALUE_MAX, sample.path ?? '');
  return { ...sample, ...(sample.primary !== undefined ? { primary } : {}), ...(sample.candidate !== undefined ? { candidate } : {}), elided: true };
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
  /**
   * (regressions + unclassified + exchanges the candidate failed) / (compared exchanges + those it failed), 0 when
   * none: what --fail-on gates.
   */
  regressionRate: number;
  /** Reports this one was merged from (absent for one run). */
  merged?: number;
}

/** A finding's key in a merge of reports: its class and id (a report without ids: class, kind and pattern). */
function findingKey(f: Pick<LiveFinding, 'class' | 'kind' | 'pattern'> & { id?: string }): string {
  return f.id !== undefined ? `${f.class}\n${f.id}` : `${f.class}\n${f.kind}\n${f.pattern}`;
}

/**
 * One differing field of a compared exchange as the live findings take it: grouped as `bb diff` groups its
 * rows (diff/findings.ts buildFindings), so the live findings and `bb diff` of the captures list the same
 * findings with the same ids: a changed field by its values where more than one exchange had them, values
 * that vary per route (and kinds of values), a field that came or went whatever it held.
 */
export interface LiveRow {
  class: LiveFinding['class'];
  kind: string;
  /** Its field pattern, ordinal numbers dropped. */
  pattern: string;
  /** What it groups by within class, kind and pattern (rowSignature), and the hash a finding id is cut from (findingHash of kind, pattern and sig). */
  sig: string;
  hash: string;
  /** Its exchange's status change, where the pattern's groups are told apart by it (byStatusPattern). */
  change?: string;
  /** The part of its route it joins as a value no other exchange had (varyingPart). */
  part: string;
  /** On a field that follows from a status change: that status row's place (statusRef). */
  cause?: string;
}

/** One exchange's differences as rows, one per group they fall in; `classOf` gives a difference's live class. */
export function liveRows(diffs: readonly Difference[], classOf: (d: Difference) => LiveFinding['class']): Array<LiveRow & { d: Difference }> {
  const status = statusRows(diffs);
  // Each class's status row's place, made once for the rows that follow from it.
  const causes = new Map<Difference, string>();
  const rowOf = (d: Difference): LiveRow => {
    const pattern = findingPattern(d.pattern);
    const cause = status.get(d.class);
    const change = cause && byStatusPattern(pattern) ? statusChangeText(cause) : undefined;
    const sig = rowSignature(d);
    let causeRef: string | undefined;
    if (cause && followsFromStatus(pattern)) {
      causeRef = causes.get(cause);
      if (causeRef === undefined) causes.set(cause, (causeRef = statusRef(rowOf(cause))));
    }
    return {
      class: classOf(d),
      kind: d.kind,
      pattern,
      sig,
      hash: findingHash([d.kind, pattern, sig]),
      ...(change !== undefined ? { change } : {}),
      part: varyingPart(d.old, d.new, change),
      ...(causeRef !== undefined ? { cause: causeRef } : {}),
    };
  };
  const out: Array<LiveRow & { d: Difference }> = [];
  const seen = new Set<string>();
  for (const d of diffs) {
    const row = rowOf(d);
    const key = statusRef(row);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ ...row, d });
  }
  return out;
}

// Where a row counts: its bucket (class, kind, pattern), its signature's hash and its status part.
const bucketOf = (r: Pick<LiveRow, 'class' | 'kind' | 'pattern'>) => `${r.class}\n${r.kind}\n${r.pattern}`;
function statusRef(r: LiveRow): string {
  return `${bucketOf(r)}\n${r.hash}\n${r.change ?? ''}`;
}

/** What one exchange counted in a finding (`forget` takes it back). */
export interface CountedRow {
  bucket: string;
  /** Its signature's hash, or the route's part it went to past MAX_SIGNATURES (`overflow`). */
  sig: string;
  sub: string;
  overflow?: boolean;
  route: string;
  cause: string;
}

// An exchange that had a row: what a value seen once joins by, and its sample (a value seen once keeps one only
// while its route's part holds fewer than HELD_PER_PART: thousands of values that vary hold ten samples).
interface Fact {
  id: number;
  route: string;
  part: string;
  cause: string;
  sample?: LiveSample;
  /** Its sample counts in its bucket's `held`. */
  held?: boolean;
}

// The exchanges of one signature and status part.
interface Part {
  n: number;
  /** The finding id when the part is a finding of its own (a status split). */
  id?: string;
  routes: Map<string, number>;
  causes: Map<string, number>;
  /** The first exchanges (SAMPLES_PER_FINDING at most). */
  facts: Fact[];
}

interface Signature {
  n: number;
  alone: boolean;
  parts: Map<string, Part>;
}

interface Bucket {
  class: LiveFinding['class'];
  kind: string;
  pattern: string;
  sigs: Map<string, Signature>;
  /** Past MAX_SIGNATURES: rows counted as values seen once, by route and part. */
  overflow: Map<string, Part & { route: string; part: string }>;
  /** Samples kept by values seen once (a signature's only exchange, a value past the cap), by route and part. */
  held: Map<string, number>;
}

/** Signatures kept over every finding; past it a new one counts as a value no other exchange had (its route's finding). */
export const MAX_SIGNATURES = 20_000;
/** Routes listed per finding. */
export const MAX_ROUTES_PER_FINDING = 20;
/**
 * Routes a run counts apart; later new ones are counted together as OTHER_ROUTES. A route is a method and a path
 * with its id-like segments folded, and real traffic has paths no rule folds (article slugs, a scanner's guesses):
 * 100,000 of them held ~1.7 KB each and made each report 44 MB, every half second.
 */
export const MAX_ROUTES = 1000;
/** The row of the routes past MAX_ROUTES. */
export const OTHER_ROUTES = '(other routes)';
/**
 * Fields (a class, kind and pattern: what a finding is of) a run keeps apart; past it a new field's rows count as
 * values seen once of OTHER_FIELDS, in its class and kind, per route. A candidate that names a header or a JSON key
 * anew in every answer (`x-trace-<id>`, a map keyed by generated names no rule knows) made a finding each.
 */
export const MAX_FIELDS = 2000;
/** The pattern of the fields past MAX_FIELDS. */
export const OTHER_FIELDS = '(other fields)';
/** Samples kept per finding. */
export const SAMPLES_PER_FINDING = 5;
/**
 * Samples the values seen once of one route and part keep (their finding shows SAMPLES_PER_FINDING). Twice the
 * shown five: a value seen once that is seen again becomes a finding of its own and leaves its route's finding,
 * and a later value's sample fills its place; with five, the one that came while the five were held had been
 * refused, and a finding of five exchanges showed four.
 */
export const HELD_PER_PART = 2 * SAMPLES_PER_FINDING;
const BUCKETS = 96;

/** An empty count set. */
export function emptyCounts(): RouteCounts {
  return { requests: 0, mirrored: 0, equal: 0, regressions: 0, noise: 0, unclassified: 0, errors: 0, candidateErrors: 0, skipped: {} };
}

/** Adds b into a. */
export function addCounts(a: RouteCounts, b: RouteCounts): void {
  for (const k of ['requests', 'mirrored', 'equal', 'regressions', 'noise', 'unclassified', 'errors'] as const) a[k] += b[k];
  if (a.candidateErrors !== undefined || b.candidateErrors !== undefined) a.candidateErrors = (a.candidateErrors ?? 0) + (b.candidateErrors ?? 0);
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
  /** What it counted in each finding. */
  findings: CountedRow[];
}

/** The live aggregate of one run. */
export class ShadowLive {
  private readonly routes = new Map<string, RouteCounts>();
  private readonly latency = new Map<string, Partial<Record<TargetName, Histogram>>>();
  private readonly buckets = new Map<string, Bucket>();
  private signatures = 0;
  /** Rows counted past MAX_SIGNATURES (as values seen once). */
  overflowed = 0;
  /** Rows of fields past MAX_FIELDS (counted in OTHER_FIELDS). */
  otherFields = 0;
  constructor(
    private readonly targets: Partial<Record<TargetName, string>>,
    /** When the run began (a worker that compares a run whole at its end reports the run's start). */
    private readonly started = new Date().toISOString(),
  ) {}

  /** The counts of a route (made on first use; past MAX_ROUTES routes a new one's are OTHER_ROUTES'). */
  route(route: string): RouteCounts {
    const key = this.routeKey(route);
    let c = this.routes.get(key);
    if (!c) this.routes.set(key, (c = emptyCounts()));
    return c;
  }

  /** Counts a skipped mirror. */
  skip(route: string, why: string): void {
    const c = this.route(route);
    c.skipped[why] = (c.skipped[why] ?? 0) + 1;
  }

  /** Records a target's latency on a route. */
  time(route: string, target: TargetName, ms: number): void {
    const key = this.routeKey(route);
    let per = this.latency.get(key);
    if (!per) this.latency.set(key, (per = {}));
    observe((per[target] ??= { buckets: [], count: 0 }), ms);
  }

  // The row a route is counted in: its own while it has one or there is room, else OTHER_ROUTES.
  private routeKey(route: string): string {
    return this.routes.has(route) || this.routes.size < MAX_ROUTES ? route : OTHER_ROUTES;
  }

  /** Counts one row of an exchange (liveRows), with the exchange's sample; what it counted, for `forget`. */
  find(row: LiveRow, route: string, sample: LiveSample): CountedRow {
    let bucket = bucketOf(row);
    let b = this.buckets.get(bucket);
    // Past MAX_FIELDS a new field is one of its class and kind's other fields, its values each seen once.
    const other = !b && this.buckets.size >= MAX_FIELDS;
    const pattern = other ? OTHER_FIELDS : row.pattern;
    if (other) b = this.buckets.get((bucket = bucketOf({ class: row.class, kind: row.kind, pattern })));
    if (!b) this.buckets.set(bucket, (b = { class: row.class, kind: row.kind, pattern, sigs: new Map(), overflow: new Map(), held: new Map() }));
    const hash = row.hash;
    let sig = other ? undefined : b.sigs.get(hash);
    if (!sig && (other || this.signatures >= MAX_SIGNATURES)) {
      if (other) this.otherFields++;
      else this.overflowed++;
      const key = `${route}\n${row.part}`;
      let o = b.overflow.get(key);
      if (!o) b.overflow.set(key, (o = { ...emptyPart(), route, part: row.part }));
      addTo(o, route, row, sample, b.held);
      return { bucket, sig: key, sub: '', overflow: true, route, cause: row.cause ?? '' };
    }
    if (!sig) {
      b.sigs.set(hash, (sig = { n: 0, alone: groupsAlone(row.sig), parts: new Map() }));
      this.signatures++;
    }
    const sub = row.change ?? '';
    let part = sig.parts.get(sub);
    if (!part) sig.parts.set(sub, (part = { ...emptyPart(), ...(row.change !== undefined ? { id: idOfHash(findingHash([row.kind, row.pattern, withStatus(row.sig, row.change)])) } : {}) }));
    // Seen again, a value seen once is a finding of its own: its sample no longer counts in its route's part.
    if (sig.n === 1 && !sig.alone) hold(sig, b.held, false);
    addTo(part, route, row, sample, sig.n++ === 0 && !sig.alone ? b.held : undefined);
    return { bucket, sig: hash, sub, route, cause: row.cause ?? '' };
  }

  /** Takes back what one exchange added (`Counted`): its verdict, and its share of each finding (a finding no exchange has any more is gone; its sample leaves room for the next one's). */
  forget(c: Counted): void {
    this.route(c.route)[c.verdict]--;
    for (const r of c.findings) {
      const b = this.buckets.get(r.bucket);
      if (!b) continue;
      if (r.overflow) {
        const o = b.overflow.get(r.sig);
        if (o && takeFrom(o, c.id, r, b.held) === 0) b.overflow.delete(r.sig);
      } else {
        const sig = b.sigs.get(r.sig);
        const part = sig?.parts.get(r.sub);
        if (!sig || !part) continue;
        sig.n--;
        if (takeFrom(part, c.id, r, b.held) === 0) sig.parts.delete(r.sub);
        // Its one exchange left, the signature is a value seen once again: its sample counts in its route's part.
        if (sig.n === 1 && !sig.alone) hold(sig, b.held, true);
        if (sig.n <= 0) {
          b.sigs.delete(r.sig);
          this.signatures--;
        }
      }
      if (b.sigs.size === 0 && b.overflow.size === 0) this.buckets.delete(r.bucket);
    }
  }

  /**
   * The findings as `bb diff` groups the same rows (diff/findings.ts buildFindings): a signature more than one
   * exchange had (or one that groups alone: a whole exchange, a field that came or went) is a finding, split by
   * its exchanges' status changes where each had one and they differ; the values seen once group per route and
   * part. A finding whose every exchange followed from one status finding folds under it.
   */
  private grouped(): LiveFinding[] {
    // Each signature part's place (statusRef) → the finding it went to, for the causes.
    const placed = new Map<string, string>();
    const built: Array<{ f: LiveFinding; causes: Map<string, number> }> = [];
    const add = (b: Bucket, id: string, parts: Part[], count: number, refs: string[]) => {
      const routes = new Map<string, number>();
      const causes = new Map<string, number>();
      const samples: LiveSample[] = [];
      for (const p of parts) {
        for (const [r, n] of p.routes) bump1(routes, r, n);
        for (const [c, n] of p.causes) bump1(causes, c, n);
        for (const f of p.facts) if (f.sample && samples.length < SAMPLES_PER_FINDING) samples.push(f.sample);
      }
      for (const ref of refs) placed.set(ref, id);
      const cut = routes.size > MAX_ROUTES_PER_FINDING ? { routesCut: true as const } : {};
      built.push({ f: { id, class: b.class, kind: b.kind, pattern: b.pattern, routes: [...routes.keys()].slice(0, MAX_ROUTES_PER_FINDING), ...cut, count, samples }, causes });
    };
    for (const [bucket, b] of this.buckets) {
      // A route's values seen once, by part: the exchanges (distinct), their facts and their places.
      const varying = new Map<string, Map<string, { ids: Set<number>; extra: number; parts: Part[]; refs: string[] }>>();
      const vary = (route: string, part: string) => {
        let per = varying.get(route);
        if (!per) varying.set(route, (per = new Map()));
        let v = per.get(part);
        if (!v) per.set(part, (v = { ids: new Set(), extra: 0, parts: [], refs: [] }));
        return v;
      };
      for (const [hash, sig] of b.sigs) {
        const parts = [...sig.parts];
        const fact = parts[0]?.[1].facts[0];
        if (sig.alone || sig.n > 1 || !fact) {
          if (splitsByStatus(parts.map(([k]) => (k === '' ? undefined : k)))) for (const [k, p] of parts) add(b, p.id!, [p], p.n, [`${bucket}\n${hash}\n${k}`]);
          else add(b, idOfHash(hash), parts.map(([, p]) => p), sig.n, parts.map(([k]) => `${bucket}\n${hash}\n${k}`));
        } else {
          const v = vary(fact.route, fact.part);
          v.ids.add(fact.id);
          v.parts.push(parts[0]![1]);
          v.refs.push(`${bucket}\n${hash}\n${parts[0]![0]}`);
        }
      }
      for (const o of b.overflow.values()) {
        const v = vary(o.route, o.part);
        v.extra += o.n;
        v.parts.push(o);
      }
      for (const [route, per] of varying) {
        for (const [part, v] of per) add(b, idOfHash(findingHash([b.kind, b.pattern, varyingSignature(route, part, per.size)])), v.parts, v.ids.size + v.extra, v.refs);
      }
    }
    return foldUnderCauses(built.map(({ f, causes }) => ({ f, cause: soleCause(causes, placed, f.class) })));
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
      findings: this.grouped(),
      regressionRate: rateOf(totals),
    };
  }
}

// Adds `by` to a count (gone at zero); the count after.
function bump1(m: Map<string, number>, key: string, by: number): number {
  const n = (m.get(key) ?? 0) + by;
  if (n > 0) m.set(key, n);
  else m.delete(key);
  return n;
}

function emptyPart(): Part {
  return { n: 0, routes: new Map(), causes: new Map(), facts: [] };
}

// Counts one exchange's row in a part; `held`: the part is a signature's first (or a value past the cap), whose
// sample is kept only while its route's part holds fewer than HELD_PER_PART. A part keeps the facts of its first
// SAMPLES_PER_FINDING samples, and its first fact even without one (a value seen once joins its route's finding by it).
function addTo(p: Part, route: string, row: LiveRow, sample: LiveSample, held?: Map<string, number>): void {
  p.n++;
  bump1(p.routes, route, 1);
  bump1(p.causes, row.cause ?? '', 1);
  if (sampledFacts(p) >= SAMPLES_PER_FINDING) return;
  const fact: Fact = { id: sample.id, route, part: row.part, cause: row.cause ?? '' };
  const key = `${route}\n${row.part}`;
  if (!held) fact.sample = sample;
  else if ((held.get(key) ?? 0) < HELD_PER_PART) {
    fact.sample = sample;
    fact.held = true;
    bump1(held, key, 1);
  } else if (p.facts.length > 0) return;
  p.facts.push(fact);
}

// How many of a part's facts keep a sample (a few at most: counted, not filtered, on every row added).
function sampledFacts(p: Part): number {
  let n = 0;
  for (const f of p.facts) if (f.sample) n++;
  return n;
}

// Counts a signature's kept samples in its bucket's `held` (it is a value seen once) or takes them out (it is not).
function hold(sig: Signature, held: Map<string, number>, on: boolean): void {
  for (const p of sig.parts.values()) {
    for (const f of p.facts) {
      if (!f.sample || Boolean(f.held) === on) continue;
      if (on) f.held = true;
      else delete f.held;
      bump1(held, `${f.route}\n${f.part}`, on ? 1 : -1);
    }
  }
}

// Takes one exchange's row back from a part (and its fact, where kept); the part's count after.
function takeFrom(p: Part, id: number, r: CountedRow, held: Map<string, number>): number {
  p.n--;
  bump1(p.routes, r.route, -1);
  bump1(p.causes, r.cause, -1);
  const at = p.facts.findIndex((f) => f.id === id);
  if (at >= 0) {
    const [f] = p.facts.splice(at, 1);
    if (f!.held) bump1(held, `${f!.route}\n${f!.part}`, -1);
  }
  return p.n;
}

// The one status finding (its key) every exchange of a finding followed from, if there is one.
function soleCause(causes: Map<string, number>, placed: Map<string, string>, cls: LiveFinding['class']): string | null {
  let id: string | undefined;
  for (const ref of causes.keys()) {
    const at = ref === '' ? undefined : placed.get(ref);
    if (at === undefined || (id !== undefined && at !== id)) return null;
    id = at;
  }
  return id === undefined ? null : `${cls}\n${id}`;
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
  const failed = c.candidateErrors ?? 0;
  const gated = c.equal + c.regressions + c.noise + c.unclassified + failed;
  return gated === 0 ? 0 : (c.regressions + c.unclassified + failed) / gated;
}

const CLASS_ORDER = { regression: 0, unclassified: 1, noise: 2 } as const;

function sortFindings(list: LiveFinding[]): LiveFinding[] {
  return list.sort((a, b) => CLASS_ORDER[a.class] - CLASS_ORDER[b.class] || b.count - a.count || (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0));
}

/** Merges the reports of several shadows (a fleet fed by a mesh's mirroring) into one. */
/**
 * Where a parsed --json file is not a ShadowReport as mergeReports reads it, or undefined: the first wrong
 * field's path and what it should be ("routes.GET /a.requests: a count"). A report is input a user hands over
 * (edited, truncated, of another tool): merged unchecked, a count that is a string added up as text and a route
 * list that is an array was dropped.
 */
export function reportShapeError(doc: unknown): string | undefined {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const count = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  if (!isObj(doc) || doc.format !== 1) return 'format: 1';
  for (const k of ['startedDateTime', 'endedDateTime'] as const) if (typeof doc[k] !== 'string') return `${k}: a date`;
  if (!isObj(doc.targets)) return 'targets: an object';
  if (doc.merged !== undefined && !count(doc.merged)) return 'merged: a count';
  const countsError = (c: unknown, at: string): string | undefined => {
    if (!isObj(c)) return `${at}: the counts of a route`;
    for (const k of ['requests', 'mirrored', 'equal', 'regressions', 'noise', 'unclassified', 'errors'] as const) if (!count(c[k])) return `${at}.${k}: a count`;
    if (c.candidateErrors !== undefined && !count(c.candidateErrors)) return `${at}.candidateErrors: a count`;
    if (!isObj(c.skipped)) return `${at}.skipped: counts by reason`;
    for (const [why, n] of Object.entries(c.skipped)) if (!count(n)) return `${at}.skipped.${why}: a count`;
    return undefined;
  };
  if (!isObj(doc.routes)) return 'routes: counts by route';
  for (const [route, c] of Object.entries(doc.routes)) {
    const e = countsError(c, `routes.${route}`);
    if (e) return e;
  }
  const totals = countsError(doc.totals, 'totals');
  if (totals) return totals;
  if (!isObj(doc.latency)) return 'latency: histograms by route';
  for (const [route, per] of Object.entries(doc.latency)) {
    if (!isObj(per)) return `latency.${route}: histograms by target`;
    for (const [t, h] of Object.entries(per)) {
      if (t !== 'primary' && t !== 'candidate' && t !== 'secondary') return `latency.${route}.${t}: primary, candidate or secondary`;
      if (!isObj(h) || !count(h.count) || !Array.isArray(h.buckets) || !h.buckets.every(count)) return `latency.${route}.${t}: a histogram (buckets, count)`;
    }
  }
  const findingError = (f: unknown, at: string): string | undefined => {
    if (!isObj(f)) return `${at}: a finding`;
    if (f.class !== 'regression' && f.class !== 'noise' && f.class !== 'unclassified') return `${at}.class: regression, noise or unclassified`;
    for (const k of ['kind', 'pattern'] as const) if (typeof f[k] !== 'string') return `${at}.${k}: text`;
    if (f.id !== undefined && typeof f.id !== 'string') return `${at}.id: text`;
    if (!count(f.count)) return `${at}.count: a count`;
    if (!Array.isArray(f.routes) || !f.routes.every((r) => typeof r === 'string')) return `${at}.routes: a list of routes`;
    if (!Array.isArray(f.samples) || !f.samples.every((s) => isObj(s) && typeof s.id === 'number' && typeof s.request === 'string')) return `${at}.samples: a list of samples`;
    if (f.consequences !== undefined) {
      if (!Array.isArray(f.consequences)) return `${at}.consequences: a list of findings`;
      for (const [i, c] of f.consequences.entries()) {
        const e = findingError(c, `${at}.consequences[${i}]`);
        if (e) return e;
      }
    }
    return undefined;
  };
  if (!Array.isArray(doc.findings)) return 'findings: a list';
  for (const [i, f] of doc.findings.entries()) {
    const e = findingError(f, `findings[${i}]`);
    if (e) return e;
  }
  return undefined;
}

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
        if (f.routesCut) into.routesCut = true;
        for (const r of f.routes) {
          if (into.routes.includes(r)) continue;
          if (into.routes.length < MAX_ROUTES_PER_FINDING) into.routes.push(r);
          else into.routesCut = true;
        }
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
