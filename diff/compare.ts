// Comparing one pair: field-by-field differences with paths, and WebSocket
// messages as a sequence (missing / extra / reordered / changed).
//
// The structural walk is bounded: arrays of different lengths are aligned
// with the same bounded aligner as entries (identical items anchor, the rest
// pair inside their gap), so one inserted array item is one `added` row, and
// no array costs more than the aligner's cell cap. Rows per pair are capped.
import { createHash } from 'node:crypto';
import { alignItems, identityOf, DEFAULT_ARRAY_RULES, DEFAULT_IDENTITY_KEYS, type ArrayRules } from './arrays.js';
import { lineupOrder, type Lineup } from './pair.js';
import { alignMessages, eventIdentity, isEventStream } from './streams.js';
import { joinPath, pathPattern } from './selector.js';
import type { Difference, DifferenceKind, Move, NormalizedEntry, NormalizedWsMessage } from './types.js';
import { keyedRequestLine } from './normalize/index.js';
import { comparablePastCap, comparableUnlisted, pastCapRows, unlistedRows } from './past-cap.js';
import { appendAll, canonical, setOwn } from '../core/index.js';

/** Rows kept per entry pair; past it one row says how many more were cut. */
export const MAX_ROWS_PER_PAIR = 1000;


/** Stable id of a difference: the same entry, path and kind give the same id in every run. */
export function differenceId(entry: string, path: string, kind: DifferenceKind): string {
  return createHash('sha256').update(`${entry}\n${path}\n${kind}`).digest('hex').slice(0, 10);
}

type Row = { kind: DifferenceKind; path: string; old?: unknown; new?: unknown; move?: Move };

/** A reordered row: the move as data, and each side's "at N: <summary>" (what --json shows). */
function movedRow(path: string, from: number, to: number, oldItem: string, newItem: string): Row {
  return { kind: 'reordered', path, old: `at ${from}: ${oldItem}`, new: `at ${to}: ${newItem}`, move: { from, to, ...(oldItem === newItem ? { item: oldItem } : {}) } };
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * True when diffValues would find nothing between `a` and `b`: the same JSON,
 * object key order aside. Conservative: false also where unsure (NaN), so the
 * caller then compares field by field.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const k of keys) if (!Object.hasOwn(y, k) || !sameValue(x[k], y[k])) return false;
  return true;
}

/**
 * Field differences between two JSON values, appended to `out`. Arrays line
 * up by identity first (diff/arrays.ts): a moved item is one `reordered` row,
 * an inserted one one `added` row.
 */
export function diffValues(a: unknown, b: unknown, path: string, out: Row[], rules: ArrayRules = DEFAULT_ARRAY_RULES): void {
  if (out.length > MAX_ROWS_PER_PAIR) return;
  if (a === b) return;
  if (isPlain(a) && isPlain(b)) {
    for (const k of Object.keys(a)) {
      const p = joinPath(path, k);
      if (!Object.hasOwn(b, k)) out.push({ kind: 'removed', path: p, old: a[k] });
      else diffValues(a[k], b[k], p, out, rules);
    }
    for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) out.push({ kind: 'added', path: joinPath(path, k), new: b[k] });
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (sameValue(a, b)) return;
    const keys = rules.keysFor(path);
    const ta = a.map(canonical);
    const tb = b.map(canonical);
    const identity = isEventStream(path) ? eventIdentity : identityOf;
    const lineup = alignItems(ta, tb, a.map((v) => identity(v, keys, canonical)), b.map((v) => identity(v, keys, canonical)), rules.unordered(path), { old: a, new: b });
    for (const l of lineup) {
      if (l.status === 'removed') out.push({ kind: 'removed', path: joinPath(path, l.old!), old: a[l.old!] });
      else if (l.status === 'added') out.push({ kind: 'added', path: joinPath(path, l.new!), new: b[l.new!] });
      else {
        const p = joinPath(path, l.old!);
        if (l.status === 'moved') out.push(movedRow(p, l.old!, l.new!, itemSummary(a[l.old!]), itemSummary(b[l.new!])));
        if (l.status !== 'same') diffValues(a[l.old!], b[l.new!], p, out, rules);
      }
    }
    return;
  }
  if (canonical(a) !== canonical(b)) out.push({ kind: 'changed', path, old: a, new: b });
}

/** An array item in a reordered row: its JSON, cut at 60 characters. */
function itemSummary(v: unknown): string {
  const s = canonical(v);
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

const OPCODES: Record<number, string> = { 1: 'text', 2: 'binary', 8: 'close', 9: 'ping', 10: 'pong', [-1]: 'error' };

/** "receive text {"type":"event",...}": which message a reordered row is about (payload cut at 60 characters). */
function messageSummary(m: NormalizedWsMessage): string {
  const data = typeof m.data === 'string' ? m.data : JSON.stringify(m.data) ?? '';
  return `${m.type} ${OPCODES[m.opcode] ?? m.opcode} ${data.length > 60 ? data.slice(0, 59) + '…' : data}`;
}

/** How lineUpMessages tells equal messages: `same` for the common start and end, `token` (per side) and `value` (what similarity reads) for the rest. */
export interface MessageEquality {
  same: (x: NormalizedWsMessage, y: NormalizedWsMessage) => boolean;
  token: (side: 0 | 1, v: unknown) => string;
  value: (side: 0 | 1, v: unknown) => unknown;
}

/** Rendered (numbered) messages: equal when their JSON is. */
const RENDERED: MessageEquality = { same: sameValue, token: (_side, v) => canonical(v), value: (_side, v) => v };

/** One line of two connections' messages, by place in each connection; `same`: known equal without looking (the common start and end). */
export type MessageLineup = Lineup & { same?: boolean };

/**
 * How two connections' messages line up. `order` "direction" (the default)
 * lines up what each side sent as its own sequence: across directions, which
 * message crossed first is up to timing whenever a client sends without
 * waiting, and two runs of one build differ in it. "total" lines up the one
 * sequence as captured. In the one-sequence order either way: by old place,
 * extras after by new place. Inside a sequence messages align by identity
 * (diff/streams.ts): `keys` name a message by its data.
 */
export function lineUpMessages(a: NormalizedWsMessage[], b: NormalizedWsMessage[], order: 'direction' | 'total' = 'direction', eq: MessageEquality = RENDERED, keys: readonly string[] = DEFAULT_IDENTITY_KEYS): MessageLineup[] {
  const all = (n: number) => Array.from({ length: n }, (_, i) => i);
  const directions = order === 'total' ? [] : [...new Set([...a.map((m) => m.type), ...b.map((m) => m.type)])];
  if (directions.length <= 1) return lineUpSequence(a, b, all(a.length), all(b.length), eq, keys);
  const out: MessageLineup[] = [];
  for (const d of directions) {
    const ia: number[] = [];
    const ib: number[] = [];
    a.forEach((m, i) => m.type === d && ia.push(i));
    b.forEach((m, j) => m.type === d && ib.push(j));
    appendAll(out, lineUpSequence(ia.map((i) => a[i]!), ib.map((j) => b[j]!), ia, ib, eq, keys));
  }
  return out.sort(lineupOrder);
}

/** One sequence; `ia` / `ib`: each message's place in the whole connection. */
function lineUpSequence(a: NormalizedWsMessage[], b: NormalizedWsMessage[], ia: number[], ib: number[], eq: MessageEquality, keys: readonly string[]): MessageLineup[] {
  // The same messages at the start and the end pair as they are: that is what
  // the aligner does first with them, so only the middle gets tokens (most
  // connections differ in a few messages of thousands).
  let pre = 0;
  while (pre < a.length && pre < b.length && eq.same(a[pre], b[pre])) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && eq.same(a[a.length - 1 - suf], b[b.length - 1 - suf])) suf++;
  const out: MessageLineup[] = [];
  for (let k = 0; k < pre; k++) out.push({ old: ia[k]!, new: ib[k]!, status: 'paired', same: true });
  const ma = a.slice(pre, a.length - suf);
  const mb = b.slice(pre, b.length - suf);
  if (ma.length || mb.length) {
    for (const l of alignMessages(ma, mb, eq, keys)) {
      out.push({
        ...(l.old !== undefined ? { old: ia[l.old + pre]! } : {}),
        ...(l.new !== undefined ? { new: ib[l.new + pre]! } : {}),
        status: l.status,
      });
    }
  }
  for (let k = suf; k > 0; k--) out.push({ old: ia[a.length - k]!, new: ib[b.length - k]!, status: 'paired', same: true });
  return out.sort(lineupOrder);
}

/** WebSocket or gRPC messages lined up by identity (lineUpMessages): missing / extra / reordered rows, and the field changes of the ones paired. */
export function diffMessages(a: NormalizedWsMessage[], b: NormalizedWsMessage[], out: Row[], order: 'direction' | 'total' = 'direction', rules: ArrayRules = DEFAULT_ARRAY_RULES, root: 'ws' | 'grpc' = 'ws'): void {
  for (const l of lineUpMessages(a, b, order, RENDERED, rules.keysFor(`${root}.messages`))) {
    if (l.same) continue;
    if (l.status === 'missing') out.push({ kind: 'missing', path: `${root}.messages[${l.old}]`, old: a[l.old!] });
    else if (l.status === 'extra') out.push({ kind: 'extra', path: `${root}.messages[${l.new}]`, new: b[l.new!] });
    else {
      const p = `${root}.messages[${l.old}]`;
      if (l.status === 'reordered') {
        const what = messageSummary(a[l.old!]!);
        out.push(movedRow(p, l.old!, l.new!, what, what));
      }
      diffValues(a[l.old!], b[l.new!], p, out, rules);
    }
  }
}

/** Options for comparing a pair. */
export interface CompareOptions {
  /** Also compare header names' order and case. */
  headerOrder?: boolean;
  /** WebSocket message order per direction (default) or as one sequence (PairingConfig.wsOrder). */
  wsOrder?: 'direction' | 'total';
  /** Identity keys and multiset arrays (pairing.arrayKeys, normalize.unorderedArrays). */
  arrays?: ArrayRules;
}

/** The request line of a normalized entry, query and route key included: `GET /posts?_sort=views&_order=desc`, `POST /graphql[CreateItem]`. */
export function requestLine(e: Pick<NormalizedEntry, 'request'> & { meta?: Pick<NormalizedEntry['meta'], 'requestKey'> }): string {
  return keyedRequestLine(e.request.method, e.request.path, e.request.query, e.meta?.requestKey);
}

/** How a person names one exchange of a capture: `#<seq>`, else `#<index>` (docs/frames-and-show.md "One name per thing"). */
export function exchangeName(e: NormalizedEntry): string {
  return `#${e.meta.seq ?? e.meta.index}`;
}

/** One-line summary of an entry (for missing/extra rows). */
export function entrySummary(e: NormalizedEntry): string {
  return `${e.route} → ${e.response.status}`;
}

/** Differences of one pair of rendered entries (either side may be absent). */
export function comparePair(
  a: NormalizedEntry | undefined,
  b: NormalizedEntry | undefined,
  status: 'paired' | 'reordered' | 'missing' | 'extra',
  opts: CompareOptions = {},
): Difference[] {
  const entry = (a ?? b)!;
  // Most pairs are the same once normalized: say so without building a path per field.
  if (a && b && status === 'paired' && !opts.headerOrder && sameValue(a.request, b.request) && sameValue(a.response, b.response) && sameValue(a.ws, b.ws) && sameValue(a.grpc, b.grpc)) return [];
  let rows: Row[] = [];
  if (!a) rows.push({ kind: 'extra', path: '', new: entrySummary(b!) });
  else if (!b) rows.push({ kind: 'missing', path: '', old: entrySummary(a) });
  else {
    if (status === 'reordered') rows.push({ kind: 'reordered', path: '', old: `at ${exchangeName(a)}`, new: `at ${exchangeName(b)}` });
    // A body cut at the cap, or one the producer did not record, is not compared on either side,
    // unless both were cut alike with their rest hashed: then by prefix, size and hash (past-cap.ts).
    const truncated = !!(a.meta.truncated?.request || b.meta.truncated?.request || a.meta.notRecorded?.request || b.meta.notRecorded?.request) && !comparablePastCap(a.request.truncated, b.request.truncated);
    const truncatedRes = !!(a.meta.truncated?.response || b.meta.truncated?.response || a.meta.notRecorded?.response || b.meta.notRecorded?.response) && !comparablePastCap(a.response.truncated, b.response.truncated);
    // HTTP/1.x against HTTP/2: connection-specific headers exist only on one side by protocol.
    const crossed = !a.meta.h2 !== !b.meta.h2;
    const ra = withoutHopHeaders(truncated ? { ...a.request, body: undefined, truncated: undefined } : a.request, crossed);
    const rb = withoutHopHeaders(truncated ? { ...b.request, body: undefined, truncated: undefined } : b.request, crossed);
    const arrays = opts.arrays ?? DEFAULT_ARRAY_RULES;
    diffValues(stripUndefined(ra), stripUndefined(rb), 'request', rows, arrays);
    // A gRPC call's status is compared once, as grpc.status (from trailers or trailers-only headers alike).
    const grpcBoth = !!(a.grpc && b.grpc);
    const sa = withoutGrpcStatus(withoutHopHeaders(truncatedRes ? { ...a.response, body: undefined, events: undefined, unlisted: undefined, truncated: undefined } : a.response, crossed), grpcBoth);
    const sb = withoutGrpcStatus(withoutHopHeaders(truncatedRes ? { ...b.response, body: undefined, events: undefined, unlisted: undefined, truncated: undefined } : b.response, crossed), grpcBoth);
    diffValues(stripUndefined(sa), stripUndefined(sb), 'response', rows, arrays);
    if (a.ws || b.ws) {
      diffMessages(a.ws?.messages ?? [], b.ws?.messages ?? [], rows, opts.wsOrder, arrays);
      for (const d of ['send', 'receive'] as const) {
        const [ua, ub] = comparableUnlisted(a.ws?.unlisted?.[d], b.ws?.unlisted?.[d]);
        diffValues(ua, ub, `ws.unlisted.${d}`, rows);
      }
      diffValues(a.ws?.close ?? null, b.ws?.close ?? null, 'ws.close', rows);
    }
    if (a.grpc || b.grpc) {
      // Messages of a body cut at the cap are not compared on either side (the cut one, or those never recorded).
      const kept = (m: NormalizedWsMessage) => !(m.type === 'send' ? truncated : truncatedRes);
      diffMessages((a.grpc?.messages ?? []).filter(kept), (b.grpc?.messages ?? []).filter(kept), rows, opts.wsOrder, arrays, 'grpc');
      if (!truncated) diffValues(a.grpc?.unlisted?.send, b.grpc?.unlisted?.send, 'grpc.unlisted.send', rows);
      if (!truncatedRes) diffValues(a.grpc?.unlisted?.receive, b.grpc?.unlisted?.receive, 'grpc.unlisted.receive', rows);
      diffValues(a.grpc?.status ?? null, b.grpc?.status ?? null, 'grpc.status', rows);
      diffValues(a.grpc?.message ?? null, b.grpc?.message ?? null, 'grpc.message', rows);
    }
    if (opts.headerOrder && a.headerOrder && b.headerOrder) {
      diffValues(a.headerOrder.request.join(', '), b.headerOrder.request.join(', '), 'request.headerOrder', rows);
      diffValues(a.headerOrder.response.join(', '), b.headerOrder.response.join(', '), 'response.headerOrder', rows);
    }
  }
  rows = unlistedRows(pastCapRows(rows));
  if (rows.length > MAX_ROWS_PER_PAIR) {
    const cut = rows.length - MAX_ROWS_PER_PAIR;
    rows.length = MAX_ROWS_PER_PAIR;
    rows.push({ kind: 'changed', path: '(more)', old: `${cut}+ more differences not listed`, new: '' });
  }
  const request = requestLine(entry);
  return rows.map((r) => ({
    id: differenceId(entry.id, r.path, r.kind),
    kind: r.kind,
    entry: entry.id,
    route: entry.route,
    request,
    path: r.path,
    pattern: pathPattern(r.path),
    ...(r.old !== undefined ? { old: r.old } : {}),
    ...(r.new !== undefined ? { new: r.new } : {}),
    class: 'real' as const,
    ...(r.move ? { move: r.move } : {}),
  }));
}

/**
 * Headers HTTP/2 forbids as connection-specific (RFC 9113 §8.2.2; HTTP/3
 * likewise, RFC 9114 §4.2), and the HTTP/1.1 WebSocket handshake's key and
 * accept, which a WebSocket over HTTP/2 does not use (RFC 8441 §5).
 */
const HOP_HEADERS = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'sec-websocket-key', 'sec-websocket-accept'];

function withoutHopHeaders<T extends { headers: Record<string, unknown> }>(side: T, crossed: boolean): T {
  if (!crossed || !HOP_HEADERS.some((h) => h in side.headers)) return side;
  const headers = { ...side.headers };
  for (const h of HOP_HEADERS) delete headers[h];
  return { ...side, headers };
}

const GRPC_STATUS_FIELDS = ['grpc-status', 'grpc-message'];

/** A gRPC response without grpc-status and grpc-message in its headers (trailers-only) or trailers; trailers left empty are gone. */
function withoutGrpcStatus<T extends { headers: Record<string, unknown>; trailers?: Record<string, unknown> }>(side: T, grpc: boolean): T {
  const has = (m: Record<string, unknown> | undefined) => m !== undefined && GRPC_STATUS_FIELDS.some((h) => h in m);
  if (!grpc || (!has(side.headers) && !has(side.trailers))) return side;
  const without = (m: Record<string, unknown>) => {
    const out = { ...m };
    for (const h of GRPC_STATUS_FIELDS) delete out[h];
    return out;
  };
  const trailers = side.trailers && without(side.trailers);
  return { ...side, headers: without(side.headers), trailers: trailers && Object.keys(trailers).length > 0 ? trailers : undefined };
}

function stripUndefined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) setOwn(out, k, v);
  return out as T;
}
