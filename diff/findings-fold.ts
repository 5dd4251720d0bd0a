// Consequences fold under their cause (docs/diff.md "Findings"): a response
// whose status changed (200 → 404, or 0 → 500 where the client got no answer)
// differs in its body, content-type, content-length and headers as a matter
// of course; listed as findings of their own they bury the one change among
// ten lines. A finding of the response (its headers, cookies, body, events,
// trailers, WebSocket or gRPC messages) whose every entry had one status
// change, of its own class, is listed under that status finding as one of its
// `consequences`. A finding that also holds on other entries (a header that
// changed on every response) is a change of its own and stays one. A gRPC
// call's status is a cause the same way (its HTTP status says 200 whatever
// happened): a call that starts failing no longer sends its response message,
// its message and headers change with it. Where an entry's HTTP status and
// gRPC status both changed, the HTTP status is the cause. Pure.
import type { Difference, DifferenceClass, Finding } from './types.js';

/** The HTTP status: the field whose change is a cause first. */
export const STATUS_PATTERN = 'response.status';

/** The gRPC status: a cause where the HTTP status did not change. */
export const GRPC_STATUS_PATTERN = 'grpc.status';

// The status fields whose change is a cause, in the order an entry's cause is chosen (the HTTP status first).
const CAUSE_PATTERNS = [STATUS_PATTERN, GRPC_STATUS_PATTERN] as const;

/** True for a status field, whose change is a cause. */
export function isStatusPattern(pattern: string): boolean {
  return (CAUSE_PATTERNS as readonly string[]).includes(pattern);
}

/** True for a field pattern a status change accounts for: everything the response carries but its statuses. */
export function followsFromStatus(pattern: string): boolean {
  return !isStatusPattern(pattern) && /^(response|ws|grpc)\./.test(pattern);
}

/** True for a status finding where one side got no response at all (status 0: the client gave up, or the upstream never answered). */
export function noResponse(f: Pick<Finding, 'pattern' | 'kind' | 'old' | 'new'>): 'old' | 'new' | undefined {
  if (f.pattern !== STATUS_PATTERN || f.kind !== 'changed') return undefined;
  return f.old === 0 ? 'old' : f.new === 0 ? 'new' : undefined;
}

/**
 * Each entry's status change, by class and entry (`200 → 404`): what a
 * consequence's rows are split by, so that the part on each cause's entries
 * folds under it.
 */
export function statusChanges(differences: readonly Difference[]): Map<string, string> {
  return firstStatusChanges(differences, (d) => statusKey(d.class, d.entry), statusChangeText);
}

/** A status row's change as statusChanges tells it (`200 → 404`; a gRPC status's with `grpc ` before). */
export function statusChangeText(d: Difference): string {
  return `${d.pattern === STATUS_PATTERN ? '' : 'grpc '}${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`;
}

/** The status row that changed on one entry's differences, per class (the HTTP status first): the cause its other response fields fold under (bb shadow folds its live findings so). */
export function statusRows(differences: readonly Difference[]): Map<DifferenceClass, Difference> {
  return firstStatusChanges(differences, (d) => d.class, (d) => d);
}

// The first status change under each key, the HTTP status before gRPC's (CAUSE_PATTERNS' order).
function firstStatusChanges<K, V>(differences: readonly Difference[], keyOf: (d: Difference) => K, valueOf: (d: Difference) => V): Map<K, V> {
  const out = new Map<K, V>();
  for (const pattern of CAUSE_PATTERNS) {
    for (const d of differences) {
      const key = keyOf(d);
      if (d.pattern === pattern && d.kind === 'changed' && !out.has(key)) out.set(key, valueOf(d));
    }
  }
  return out;
}

/** The key statusChanges uses for an entry of a class. */
export function statusKey(cls: DifferenceClass, entry: string): string {
  return `${cls}\n${entry}`;
}

/** A finding with the rows it holds, as the findings stage builds it. */
export interface BuiltFinding {
  finding: Finding;
  rows: Difference[];
}

/**
 * Folds consequences under their causes: returns the findings the report
 * lists (causes carry `consequences`, sorted by pattern), and points every row
 * of a consequence at its cause (`finding`), so a row's finding is always one
 * the report lists.
 */
export function foldConsequences(built: BuiltFinding[]): Finding[] {
  const causeOf = new Map<string, BuiltFinding>();
  for (const pattern of CAUSE_PATTERNS) {
    for (const b of built) {
      if (b.finding.pattern !== pattern || b.finding.kind !== 'changed') continue;
      for (const r of b.rows) {
        const key = statusKey(r.class, r.entry);
        if (!causeOf.has(key)) causeOf.set(key, b);
      }
    }
  }
  if (!causeOf.size) return built.map((b) => b.finding);
  const top: Finding[] = [];
  const folded = new Map<BuiltFinding, BuiltFinding[]>();
  for (const b of built) {
    const cause = followsFromStatus(b.finding.pattern) ? soleCause(b.rows, causeOf) : undefined;
    if (!cause) {
      top.push(b.finding);
      continue;
    }
    const list = folded.get(cause);
    if (list) list.push(b);
    else folded.set(cause, [b]);
  }
  for (const [cause, list] of folded) {
    list.sort((x, y) => (x.finding.pattern < y.finding.pattern ? -1 : x.finding.pattern > y.finding.pattern ? 1 : x.finding.kind < y.finding.kind ? -1 : x.finding.kind > y.finding.kind ? 1 : 0));
    cause.finding.consequences = list.map((c) => c.finding);
    for (const c of list) for (const r of c.rows) r.finding = cause.finding.id;
  }
  return top;
}

// The one status finding every row's entry belongs to, if there is one.
function soleCause(rows: Difference[], causeOf: Map<string, BuiltFinding>): BuiltFinding | undefined {
  let cause: BuiltFinding | undefined;
  for (const r of rows) {
    const c = causeOf.get(statusKey(r.class, r.entry));
    if (!c || (cause && c !== cause)) return undefined;
    cause = c;
  }
  return cause;
}
