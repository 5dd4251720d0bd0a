// Pairing: which old entry goes with which new entry of two captures
// (pairByKeys: by key sequence). Messages of two connections line up like
// array items instead (diff/streams.ts).
import { hash } from 'node:crypto';
import { alignSequences, longestIncreasing } from './align.js';
import { globMatcher } from '../core/index.js';
import { routeWithoutHost, routeWithoutKey, unnumber, type OrdinalTable } from './normalize/index.js';
import { shapesItCouldBe } from './normalize/shapes.js';
import type { NormalizedEntry } from './types.js';
import { exchangeEndMs, type HarEntry } from '../capture/index.js';

/** One line-up of an old and/or new item, by index. */
export interface Lineup {
  /** Index in the old list. */
  old?: number;
  /** Index in the new list. */
  new?: number;
  /** How they were paired. */
  status: 'paired' | 'reordered' | 'missing' | 'extra';
}

/** Old-side order; extras after the old item they follow in the new sequence. */
export function lineupOrder(x: Pick<Lineup, 'old' | 'new'>, y: Pick<Lineup, 'old' | 'new'>): number {
  const kx = x.old ?? Infinity;
  const ky = y.old ?? Infinity;
  if (kx !== ky) return kx - ky;
  return (x.new ?? 0) - (y.new ?? 0);
}

/** Pairs items left free with equal tokens anywhere: the first free new item for each free old item, in order. */
export function leftoversByToken(a: readonly string[], b: readonly string[], aTaken: boolean[], bTaken: boolean[], take: (i: number, j: number) => void): void {
  const free = new Map<string, number[]>();
  for (let j = 0; j < b.length; j++) {
    if (bTaken[j]) continue;
    const list = free.get(b[j]!) ?? [];
    list.push(j);
    free.set(b[j]!, list);
  }
  for (let i = 0; i < a.length; i++) {
    if (aTaken[i]) continue;
    const list = free.get(a[i]!);
    if (list?.length) take(i, list.shift()!);
  }
}

/** The compared content of an entry as JSON text, markers still in: what its pairing token digests. */
export function contentText(e: Pick<NormalizedEntry, 'request' | 'response' | 'ws' | 'grpc'>): string {
  return contentTexts(e).text;
}

/**
 * contentText and the JSON of its request alone (requestDigest's), written once: the text is the same as
 * JSON.stringify of `{ request, response, ws, grpc }` (keys in that order, `ws` null when absent).
 */
export function contentTexts(e: Pick<NormalizedEntry, 'request' | 'response' | 'ws' | 'grpc'>): { text: string; request: string } {
  const request = JSON.stringify(e.request);
  const text = `{"request":${request},"response":${JSON.stringify(e.response)},"ws":${JSON.stringify(e.ws ?? null)}${e.grpc ? `,"grpc":${JSON.stringify(e.grpc)}` : ''}}`;
  return { text, request };
}

/** The digest of an entry's contentText with markers un-numbered: its token without the key. */
export function contentDigest(text: string, unnumberText: (s: string) => string): string {
  // Markers survive JSON.stringify unescaped, so un-numbering the text equals un-numbering the value.
  // One-shot hash: no Hash object per entry (measurable at 50k entries a side).
  return hash('sha1', unnumberText(text), 'base64');
}

/**
 * An entry's contentDigest and its markersOf sequence, from one scan of its
 * contentText (both paths keep the sequence for the equal-pair shortcut).
 */
export function digestAndMarks(text: string, table: OrdinalTable): { digest: string; marks: number[] } {
  const marks: number[] = [];
  return { digest: contentDigest(text, (t) => unnumber(t, table, marks)), marks };
}

/** When two entries ran, as settleReorders reads it. */
export interface Span {
  start?: number;
  end?: number;
  seqStart?: number;
  seqEnd?: number;
  connection?: string;
}

/**
 * An entry's start and end for its summary: epoch ms (a WebSocket's end is its conversation's), and in bb's own
 * event order when the capture is bb's (`_bb.seq`, `_bb.seqEnd`, a WebSocket's messages' seq); what does not
 * parse is left out.
 */
export function spanOf(e: HarEntry): Span {
  const out: Span = typeof e.connection === 'string' && e.connection ? { connection: e.connection } : {};
  const start = Date.parse(e.startedDateTime);
  if (Number.isFinite(start)) {
    out.start = start;
    const end = exchangeEndMs(e, start);
    if (Number.isFinite(end)) out.end = end;
  }
  const bb = e._bb;
  if (typeof bb?.seq === 'number' && typeof bb.seqEnd === 'number') {
    out.seqStart = bb.seq;
    let end = bb.seqEnd;
    for (const m of e._webSocketMessages ?? []) if (typeof m._bb?.seq === 'number' && m._bb.seq > end) end = m._bb.seq;
    out.seqEnd = end;
  }
  return out;
}

/** Reordered line-ups compared with the others, at most (a pair of line-ups is a few comparisons). */
const MAX_ORDER_CHECKS = 50_000_000;

/**
 * Settles the `reordered` line-ups that only moved among exchanges they ran beside (docs/diff.md "Pairing"): an
 * entry is reordered when it and another paired entry came in one order in the old capture and in the other
 * order in the new one, each time the first ending before the second started. Two exchanges that ran at once,
 * on either side (two clients' requests, a page's parallel fetches, a replay of them), are in no order: one
 * that came before the other in one capture and after it in the other is paired, not reordered. An entry
 * without times stays reordered.
 */
export function settleReorders(lineup: Lineup[], old: readonly Span[], cur: readonly Span[]): void {
  const moved = lineup.filter((l) => l.status === 'reordered');
  if (moved.length === 0) return;
  const both = lineup.filter((l) => l.old !== undefined && l.new !== undefined);
  if (moved.length * both.length > MAX_ORDER_CHECKS) return;
  const [seqOld, seqNew] = [inSeqOrder(old), inSeqOrder(cur)];
  const beforeOld = orderOf(seqOld);
  const beforeNew = orderOf(seqNew);
  // Where exchanges ran at once (several clients, or one client's parallel connections) and the captures name
  // their connections, an order counts between two exchanges of one connection on each side: independent
  // clients have none between them, however their requests fell. A capture of one exchange after the other
  // (a script, each call on its own connection) keeps the order of its times.
  // A connection that carried exchanges at once (h2 streams: grpc-js shares one connection among every client
  // of a target) is no client's sequence either: its exchanges are in no order among themselves.
  const named = old.every((s) => s.connection !== undefined) && cur.every((s) => s.connection !== undefined);
  const byConnection = named && (concurrent(old, seqOld, beforeOld) || concurrent(cur, seqNew, beforeNew));
  const [sharedOld, sharedNew] = byConnection ? [multiplexed(old, seqOld, beforeOld), multiplexed(cur, seqNew, beforeNew)] : [new Set<string>(), new Set<string>()];
  const together = (a: Span, b: Span, shared: Set<string>) => !byConnection || (a.connection === b.connection && !shared.has(a.connection!));
  for (const l of moved) {
    const o = old[l.old!]!;
    const n = cur[l.new!]!;
    if (o.start === undefined || n.start === undefined) continue;
    const inverted = both.some((m) => {
      if (m === l) return false;
      const mo = old[m.old!]!;
      const mn = cur[m.new!]!;
      if (!together(o, mo, sharedOld) || !together(n, mn, sharedNew)) return false;
      return (beforeOld(o, mo) && beforeNew(mn, n)) || (beforeOld(mo, o) && beforeNew(n, mn));
    });
    if (!inverted) l.status = 'paired';
  }
}

/** Whether every entry of a capture has bb's event order (a bb capture's do): exact where times have a millisecond's grain. */
function inSeqOrder(side: readonly Span[]): boolean {
  return side.every((s) => s.seqStart !== undefined && s.seqEnd !== undefined);
}

/** Whether some exchange of a capture started before every exchange that started before it had ended. */
function concurrent(side: readonly Span[], bySeq: boolean, before: (a: Span, b: Span) => boolean): boolean {
  const startOf = (s: Span) => (bySeq ? s.seqStart : s.start);
  const endOf = (s: Span) => (bySeq ? s.seqEnd : s.end);
  const sorted = side.filter((s) => startOf(s) !== undefined).sort((a, b) => startOf(a)! - startOf(b)!);
  let last: Span | undefined;
  for (const s of sorted) {
    if (last && !before(last, s)) return true;
    if (!last || (endOf(s) ?? Infinity) > (endOf(last) ?? Infinity)) last = s;
  }
  return false;
}

/** The connections of a capture that carried exchanges at once (concurrent among their own exchanges). */
function multiplexed(side: readonly Span[], bySeq: boolean, before: (a: Span, b: Span) => boolean): Set<string> {
  const by = new Map<string, Span[]>();
  for (const s of side) {
    const list = by.get(s.connection!);
    if (list) list.push(s);
    else by.set(s.connection!, [s]);
  }
  const out = new Set<string>();
  for (const [c, spans] of by) if (spans.length > 1 && concurrent(spans, bySeq, before)) out.add(c);
  return out;
}

/**
 * Whether one entry of a capture ended before another started: in bb's event order when the capture has it
 * (`bySeq`: inSeqOrder, exact), else by the times, which a HAR gives to the millisecond (startedDateTime): sure only a millisecond clear.
 */
function orderOf(bySeq: boolean): (a: Span, b: Span) => boolean {
  if (bySeq) return (a, b) => a.seqEnd! < b.seqStart!;
  return (a, b) => a.end !== undefined && b.start !== undefined && a.end + 1 <= b.start;
}

/** The digest of an entry's compared request (its JSON: contentTexts) with markers un-numbered: what its client sent, ids aside. */
export function requestDigest(requestText: string, table: OrdinalTable): string {
  return contentDigest(requestText, (t) => unnumber(t, table));
}

/**
 * Re-pairs the entries of one key by what their clients sent (docs/diff.md "Pairing"): two clients that each
 * call `GET /me` (each its own header, body or query) at about the same time do so in either order from run
 * to run, and pairing by place alone paired one client's call with the other's (every header, cookie and
 * answer of theirs a change). Within each key, each entry pairs with the first free entry of that key whose
 * request is its own, in order; the rest by place, as before. Where that crosses, the fewest entries are
 * `reordered` (the rest keep their order), until settleReorders finds they ran beside the entries they moved
 * past.
 */
export function pairByRequest(lineup: Lineup[], old: ReadonlyArray<{ key: string; request?: string }>, cur: ReadonlyArray<{ request?: string }>): void {
  const groups = new Map<string, Lineup[]>();
  for (const l of lineup) {
    if (l.old === undefined || l.new === undefined) continue;
    const key = old[l.old]!.key;
    const g = groups.get(key);
    if (g) g.push(l);
    else groups.set(key, [l]);
  }
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    const olds = g.map((l) => l.old!).sort((a, b) => a - b);
    const news = g.map((l) => l.new!).sort((a, b) => a - b);
    // Each old entry, in order, takes the first free new one that sent the same (so equal requests pair in order).
    const queues = new Map<string | undefined, number[]>();
    for (const j of news) {
      const q = queues.get(cur[j]!.request);
      if (q) q.push(j);
      else queues.set(cur[j]!.request, [j]);
    }
    const next = new Map<string | undefined, number>();
    const partner = new Map<number, number>();
    const taken = new Set<number>();
    for (const i of olds) {
      const r = old[i]!.request;
      const q = queues.get(r);
      const k = next.get(r) ?? 0;
      if (q && k < q.length) {
        partner.set(i, q[k]!);
        taken.add(q[k]!);
        next.set(r, k + 1);
      }
    }
    const rest = news.filter((n) => !taken.has(n));
    for (const i of olds) if (!partner.has(i)) partner.set(i, rest.shift()!);
    const changed = new Set<Lineup>();
    for (const l of g) {
      const j = partner.get(l.old!)!;
      if (j !== l.new) {
        l.new = j;
        changed.add(l);
      }
    }
    if (changed.size === 0) continue;
    // The fewest moves: the entries outside a longest run whose new places keep the old order are the reordered ones.
    g.sort((a, b) => a.old! - b.old!);
    const inOrder = new Set(longestIncreasing(g.map((l) => l.new!)));
    g.forEach((l, k) => {
      if (!inOrder.has(k)) l.status = 'reordered';
      else if (changed.has(l)) l.status = 'paired';
    });
  }
  lineup.sort(lineupOrder);
}

/** A pairing token: the key and the content digest. */
export function tokenOf(key: string, digest: string): string {
  return `${key}\n${digest}`;
}

/**
 * Pairs entries as sequences of keys (docs/diff.md "Pairing"): entries whose
 * keys come in the same order pair position by position, whatever their bodies.
 * Content (the tokens) decides only where the key sequence cannot: in a run of
 * one key that has more entries on one side (which of five `GET /posts` is the
 * extra one), equal content pairs first and the rest by place. An entry is
 * `reordered` only when its key sits elsewhere in the other sequence.
 */
export function pairByKeys(oldKeys: string[], newKeys: string[], oldTokens: string[], newTokens: string[]): Lineup[] {
  const oldTaken = new Array<boolean>(oldKeys.length).fill(false);
  const newTaken = new Array<boolean>(newKeys.length).fill(false);
  const out: Lineup[] = [];
  const take = (i: number, j: number, status: Lineup['status']) => {
    oldTaken[i] = newTaken[j] = true;
    out.push({ old: i, new: j, status });
  };
  const anchors = alignSequences(oldKeys, newKeys);
  const runOf = (keys: string[], from: number, to: number, k: string) => {
    for (let x = from; x < to; x++) if (keys[x] !== k) return false;
    return true;
  };
  for (let p = 0; p < anchors.length; ) {
    const key = oldKeys[anchors[p]![0]]!;
    // A block: anchors of one key with nothing but that key between them, and the same key's free neighbours.
    let q = p;
    while (q + 1 < anchors.length && oldKeys[anchors[q + 1]![0]] === key && runOf(oldKeys, anchors[q]![0] + 1, anchors[q + 1]![0], key) && runOf(newKeys, anchors[q]![1] + 1, anchors[q + 1]![1], key)) q++;
    let i0 = anchors[p]![0];
    let j0 = anchors[p]![1];
    const prevI = p > 0 ? anchors[p - 1]![0] : -1;
    const prevJ = p > 0 ? anchors[p - 1]![1] : -1;
    // (Not into entries the block before took: its forward reach ends at this block's anchor, not before.)
    while (i0 - 1 > prevI && oldKeys[i0 - 1] === key && !oldTaken[i0 - 1]) i0--;
    while (j0 - 1 > prevJ && newKeys[j0 - 1] === key && !newTaken[j0 - 1]) j0--;
    let i1 = anchors[q]![0] + 1;
    let j1 = anchors[q]![1] + 1;
    const nextI = q + 1 < anchors.length ? anchors[q + 1]![0] : oldKeys.length;
    const nextJ = q + 1 < anchors.length ? anchors[q + 1]![1] : newKeys.length;
    while (i1 < nextI && oldKeys[i1] === key) i1++;
    while (j1 < nextJ && newKeys[j1] === key) j1++;
    if (i1 - i0 === j1 - j0 && q - p + 1 === i1 - i0) {
      for (let k = p; k <= q; k++) take(anchors[k]![0], anchors[k]![1], 'paired');
    } else {
      // Counts differ: equal content pairs first, the rest by place between those.
      const inner = alignSequences(oldTokens.slice(i0, i1), newTokens.slice(j0, j1));
      const bounds: Array<[number, number]> = [[-1, -1], ...inner, [i1 - i0, j1 - j0]];
      for (let g = 0; g + 1 < bounds.length; g++) {
        if (g > 0) take(i0 + bounds[g]![0], j0 + bounds[g]![1], 'paired');
        const n = Math.min(bounds[g + 1]![0] - bounds[g]![0], bounds[g + 1]![1] - bounds[g]![1]) - 1;
        for (let k = 1; k <= n; k++) take(i0 + bounds[g]![0] + k, j0 + bounds[g]![1] + k, 'paired');
      }
    }
    p = q + 1;
  }
  // Keys left over that sit elsewhere: the same content first, then any entry of the key.
  leftoversByToken(oldTokens, newTokens, oldTaken, newTaken, (i, j) => take(i, j, 'reordered'));
  leftoversByToken(oldKeys, newKeys, oldTaken, newTaken, (i, j) => take(i, j, 'reordered'));
  for (let i = 0; i < oldKeys.length; i++) if (!oldTaken[i]) out.push({ old: i, status: 'missing' });
  for (let j = 0; j < newKeys.length; j++) if (!newTaken[j]) out.push({ new: j, status: 'extra' });
  return out.sort(lineupOrder);
}

// A run of token characters in a key long enough to be an id (the shortest shape is 12 hex digits); its parts
// between `_` and `-`, as the generated-ids rule cuts them.
const KEY_RUN = /[A-Za-z0-9_-]{12}[A-Za-z0-9_-]*/g;
const RUN_PART = /[A-Za-z0-9]{12}[A-Za-z0-9]*/g;
/** Spellings of one key tried, at most (its runs' shapes multiply). */
const MAX_SPELLINGS = 64;

/**
 * Keys as they pair (docs/diff.md "Generated values"): a key that the other capture does not hold, in which a
 * random id kept its text because its letters read as words (shapes.ts looksGenerated: one 16-character base62
 * id in ~300), is taken as the other capture's key where that key is this one with
 * such runs as markers of a shape they could have (`GET /users/eirRkug19Har2Icu` beside `GET /users/<B64_16>`).
 * Without it the two entries were a `missing` and an `extra`; paired, their paths compare as ids of that shape
 * (correspond.ts). A key the other capture holds as it is stays as it is.
 */
export function keysWithMisreadIds(keys: readonly string[], other: ReadonlySet<string>): string[] {
  const seen = new Map<string, string>();
  return keys.map((key) => {
    if (other.has(key)) return key;
    let as = seen.get(key);
    if (as === undefined) seen.set(key, (as = spellings(key).find((k) => other.has(k)) ?? key));
    return as;
  });
}

// The key with each run of token characters as it is or as a marker of a shape it could have (whole, or part by
// part), every combination but the key itself, up to MAX_SPELLINGS.
function spellings(key: string): string[] {
  const runs = [...key.matchAll(KEY_RUN)];
  if (runs.length === 0) return [];
  const choices = runs.map((m) => {
    const run = m[0];
    const out = [run, ...shapesItCouldBe(run).map((c) => `<${c}>`)];
    if (/[_-]/.test(run)) {
      const parts = run.replace(RUN_PART, (p) => {
        const [cls] = shapesItCouldBe(p);
        return cls ? `<${cls}>` : p;
      });
      if (!out.includes(parts)) out.push(parts);
    }
    return out;
  });
  let keys = [''];
  let from = 0;
  runs.forEach((m, r) => {
    const before = key.slice(from, m.index);
    keys = keys.flatMap((k) => choices[r]!.map((c) => k + before + c)).slice(0, MAX_SPELLINGS + 1);
    from = m.index + m[0].length;
  });
  return keys.map((k) => k + key.slice(from)).filter((k) => k !== key);
}

/**
 * Pairs two captures' entries: in sequence (by key, then within a key by what
 * each client sent: pairByRequest), except entries whose route matches an
 * `unordered` glob, which pair as a multiset within their page.
 */
export function pairEntries(
  oldEntries: ReadonlyArray<{ key: string; route: string; token: string; page: string; request?: string }>,
  newEntries: ReadonlyArray<{ key: string; route: string; token: string; page: string; request?: string }>,
  unordered: string[],
  /** false: one key's entries pair by place alone (a shadow's captures: the shared ids already say which pair). */
  byRequest = true,
): Lineup[] {
  // A glob matches the route as it is, without its host (`GET //a.test/x` → `GET /x`), as route keys do, or without its key (`POST /graphql[A]` → `POST /graphql`).
  const unorderedRoutes = unordered.map((g) => globMatcher(g));
  const isUnordered = (r: string): boolean => unorderedRoutes.some((f) => f(r) || f(routeWithoutHost(r)) || f(routeWithoutKey(r)) || f(routeWithoutKey(routeWithoutHost(r))));
  // Each side's keys, a random id that read as words on one side only taken as the other's marker.
  const oldKeys = keysWithMisreadIds(oldEntries.map((e) => e.key), new Set(newEntries.map((e) => e.key)));
  const newKeys = keysWithMisreadIds(newEntries.map((e) => e.key), new Set(oldEntries.map((e) => e.key)));
  const oi = oldEntries.map((_, i) => i).filter((i) => !isUnordered(oldEntries[i]!.route));
  const ni = newEntries.map((_, i) => i).filter((j) => !isUnordered(newEntries[j]!.route));
  const seq = pairByKeys(oi.map((i) => oldKeys[i]!), ni.map((j) => newKeys[j]!), oi.map((i) => oldEntries[i]!.token), ni.map((j) => newEntries[j]!.token));
  const out: Lineup[] = seq.map((l) => ({ ...l, old: l.old === undefined ? undefined : oi[l.old], new: l.new === undefined ? undefined : ni[l.new] }));
  // In sequence, one key's entries pair by what their clients sent (an unordered route's never report an order).
  if (byRequest) pairByRequest(out, oldEntries, newEntries);
  if (unordered.length) {
    // Multiset: identical first, then same key in order; order never reported.
    const uo = oldEntries.map((_, i) => i).filter((i) => isUnordered(oldEntries[i]!.route));
    const un = newEntries.map((_, j) => j).filter((j) => isUnordered(newEntries[j]!.route));
    const oT = new Array<boolean>(uo.length).fill(false);
    const nT = new Array<boolean>(un.length).fill(false);
    const take = (x: number, y: number) => {
      oT[x] = true;
      nT[y] = true;
      out.push({ old: uo[x], new: un[y], status: 'paired' });
    };
    leftoversByToken(uo.map((i) => oldEntries[i]!.token), un.map((j) => newEntries[j]!.token), oT, nT, take);
    leftoversByToken(uo.map((i) => oldKeys[i]!), un.map((j) => newKeys[j]!), oT, nT, take);
    uo.forEach((i, x) => { if (!oT[x]) out.push({ old: i, status: 'missing' }); });
    un.forEach((j, y) => { if (!nT[y]) out.push({ new: j, status: 'extra' }); });
  }
  return out.sort(lineupOrder);
}
