// What `bb frames` and `bb show` list, as plain data: WebSocket connections
// with their messages in order, HTTP entries as rows, and the timeline that
// interleaves both. Pure functions over a Har (from capture's reader, which
// already turned every message time into epoch seconds).
//
// Order, everywhere: `_bb.seq` where both sides have one (bb's total order),
// else time, then position in the file (docs/frames-and-show.md "Order and
// connection ids").
import { isH2OrLater, isWebSocketEntry, type Har, type HarEntry, type HarWebSocketMessage } from '../capture/index.js';
import { globMatcher, isoToSeconds } from '../core/index.js';
import { grpcAsMessage, grpcCallStatus, isGrpcEntry, isSseEntry, isStreamEntry, responseHeadTime, SeqPlacer, sseMessages, streamEnd, type GrpcCallStatus, type StreamEnd } from './streams.js';

/** One WebSocket connection of a capture. */
export interface WsConnectionView {
  /** HAR's `connection`, else the entry index (made unique with "/<index>" when shared). */
  id: string;
  /** The upgrade request's URL. */
  url: string;
  /** Index of the upgrade entry in `log.entries` (shown only in --json). */
  entry: number;
  /** The upgrade exchange's name, `#<exchange>`: its `_bb.seq`, else the entry index. */
  exchange: number;
  /** When the upgrade request started, epoch seconds. */
  openedAt: number;
  /** Its messages in order (HAR's own objects; a gRPC call's as grpcAsMessage shows them). */
  messages: HarWebSocketMessage[];
  /** Set for a gRPC call (listed like a connection, one per call): its status. */
  grpc?: GrpcCallStatus;
  /** Set for a server-sent event stream (listed like a connection, one per stream): who ended it. */
  sse?: { end: StreamEnd };
  /** Messages past those the capture lists (`_bb.unlisted`, both directions), when some are. */
  unlisted?: number;
}

/** One HTTP entry as `bb show` lists it. */
export interface EntryRow {
  /** Index in `log.entries`. */
  entry: number;
  /** `_bb.seq` when bb recorded it. */
  seq?: number;
  /** The entry's startedDateTime as written. */
  startedDateTime: string;
  /** startedDateTime in epoch seconds (NaN when unparsable). */
  time: number;
  method: string;
  url: string;
  status: number;
  statusText: string;
  /** Request body bytes on the wire (-1 unknown). */
  requestBodySize: number;
  /** Response body bytes on the wire (-1 unknown). */
  responseBodySize: number;
  /** Decoded response body bytes. */
  contentSize: number;
  /** Total time in ms (HAR's `time`). */
  duration: number;
  /** The page title (from pageref). */
  page?: string;
  /** HAR's `connection`. */
  connection?: string;
  /** True for WebSocket upgrades. */
  webSocket: boolean;
  /** How many WebSocket messages it holds. */
  webSocketMessages: number;
  /** A gRPC call: its status and how many messages it holds. */
  grpc?: GrpcCallStatus & { messages: number };
  /** bb's `_bb.error.code` (bb's own 502), `_bb.aborted`, or how many streams a reset burst stands for. */
  error?: string;
  /** Who `error` is about: "bb" (bb's own error response, marked `!`), or the side that hung up (marked `×`). */
  errorBy?: ErrorBy;
}

/** Who ended an exchange early: bb (its own error response) or a side that hung up. */
export type ErrorBy = 'bb' | 'client' | 'upstream';

/** The mark after a status: `!` bb's own error response, `×` a side hung up, "" neither. */
export function statusMark(by: ErrorBy | undefined): string {
  return by === undefined ? '' : by === 'bb' ? '!' : '×';
}

/** One event of the timeline, in total order. */
export type TimelineEvent =
  | { kind: 'request'; entry: number; exchange: number; seq?: number; time: number; method: string; url: string; status: number; page?: string }
  | { kind: 'response'; entry: number; exchange: number; seq?: number; time: number; method: string; url: string; status: number; errorBy?: ErrorBy; head?: true }
  | { kind: 'ws'; entry: number; connection: string; url: string; message: HarWebSocketMessage };

/** Opcode names, as `--opcode` takes them. */
export const OPCODE_NAMES: Readonly<Record<string, number>> = {
  continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10, error: -1,
};

/** Each opcode's name (asked per message: the live Frames tab's window asks 50,000 times at once). */
const NAME_OF_OPCODE: ReadonlyMap<number, string> = new Map(Object.entries(OPCODE_NAMES).map(([name, value]) => [value, name]));

/** The name of an opcode ("text", "op3" for unknown ones). */
export function opcodeName(opcode: number): string {
  return NAME_OF_OPCODE.get(opcode) ?? `op${opcode}`;
}

/** A sortable position: seq when known, else time, then position. */
interface Keyed<T> {
  item: T;
  seq?: number;
  time: number;
  pos: number;
}

function byOrder<T>(a: Keyed<T>, b: Keyed<T>): number {
  if (a.seq !== undefined && b.seq !== undefined && a.seq !== b.seq) return a.seq - b.seq;
  const ta = Number.isFinite(a.time) ? a.time : Infinity;
  const tb = Number.isFinite(b.time) ? b.time : Infinity;
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.pos - b.pos;
}

function sorted<T>(keyed: Array<Keyed<T>>): T[] {
  return keyed.sort(byOrder).map((k) => k.item);
}

const seqOf = (x: { _bb?: { seq?: unknown } }): number | undefined =>
  typeof x._bb?.seq === 'number' ? x._bb.seq : undefined;

// isoToSeconds is core's (core/clock.ts); inspect/'s face keeps offering it.
export { isoToSeconds };

// isWebSocketEntry is capture's (capture/har-entry.ts), as bb diff and bb replay read entries; inspect/'s face keeps offering it.
export { isWebSocketEntry };

/** Entries in capture order, with their index. */
export function orderedEntries(har: Har): Array<{ entry: HarEntry; index: number }> {
  return sorted(
    har.log.entries.map((entry, index) => ({
      item: { entry, index },
      seq: seqOf(entry),
      time: isoToSeconds(entry.startedDateTime),
      pos: index,
    })),
  );
}

/** The WebSocket connections of a capture, in the order they opened, messages ordered. */
export function wsConnections(har: Har): WsConnectionView[] {
  const conns: WsConnectionView[] = [];
  const used = new Set<string>();
  for (const { entry, index } of orderedEntries(har)) {
    const grpc = !isWebSocketEntry(entry) && isGrpcEntry(entry);
    const sse = !grpc && isSseEntry(entry);
    if (!grpc && !sse && !isWebSocketEntry(entry)) continue;
    const exchange = seqOf(entry) ?? index;
    // A gRPC call, an event stream or a WebSocket over an HTTP/2 stream (RFC 8441) is named by its exchange: many share one connection.
    const byExchange = grpc || sse || isH2OrLater(entry);
    let id = byExchange ? `#${exchange}` : entry.connection !== undefined && entry.connection !== '' ? String(entry.connection) : String(index);
    if (used.has(id)) id = `${id}/${index}`;
    used.add(id);
    const raw = grpc ? entry._grpcMessages!.map(grpcAsMessage) : sse ? sseMessages(entry) : entry._webSocketMessages ?? [];
    const messages = sorted(raw.map((m, pos) => ({ item: m, seq: seqOf(m), time: m.time, pos })));
    const view: WsConnectionView = { id, url: entry.request.url, entry: index, exchange, openedAt: isoToSeconds(entry.startedDateTime), messages };
    if (grpc) view.grpc = grpcCallStatus(entry);
    if (sse) view.sse = { end: streamEnd(entry) };
    const unlisted = (entry._bb?.unlisted?.request ?? 0) + (entry._bb?.unlisted?.response ?? 0);
    if (unlisted > 0) view.unlisted = unlisted;
    conns.push(view);
  }
  return conns;
}

/** What `bb frames` keeps. */
export interface FrameFilter {
  /** A connection id, `#<exchange>` of its upgrade, or entry index. */
  conn?: string;
  /** A glob over the URL (`*` any run, `?` one character). */
  url?: string;
  type?: 'send' | 'receive';
  /** Opcodes to keep. */
  opcodes?: number[];
  /** Kept when the payload text matches. */
  grep?: RegExp;
}

/** True when any message-level filter is set (connections without matches are then dropped). */
function filtersMessages(f: FrameFilter): boolean {
  return f.type !== undefined || f.opcodes !== undefined || f.grep !== undefined;
}

/** True when a connection passes the connection-level filters. */
export function connectionMatches(conn: { id: string; url: string; entry?: number; exchange?: number }, f: FrameFilter): boolean {
  if (f.conn !== undefined && f.conn !== conn.id && f.conn !== String(conn.entry) && f.conn !== `#${conn.exchange}`) return false;
  if (f.url !== undefined && !globMatcher(f.url)(conn.url)) return false;
  return true;
}

/** True when a message passes the message-level filters. */
export function messageMatches(m: HarWebSocketMessage, f: FrameFilter): boolean {
  if (f.type !== undefined && m.type !== f.type && !(m.type === 'error' && errorDirection(m) === f.type)) return false;
  if (f.opcodes !== undefined && !f.opcodes.includes(m.opcode)) return false;
  if (f.grep !== undefined && !f.grep.test(payloadText(m))) return false;
  return true;
}

function errorDirection(m: HarWebSocketMessage): unknown {
  return (m._bb as { direction?: unknown } | undefined)?.direction;
}

/** Applies a filter to connections and their messages. */
export function filterConnections(conns: WsConnectionView[], f: FrameFilter): WsConnectionView[] {
  return conns
    .filter((c) => connectionMatches(c, f))
    .map((c) => ({ ...c, messages: c.messages.filter((m) => messageMatches(m, f)) }))
    .filter((c) => !filtersMessages(f) || c.messages.length > 0);
}

/** The payload as text: opcode 1 as written, error rows their reason, close "code reason", else bytes as UTF-8. */
export function payloadText(m: HarWebSocketMessage): string {
  if (m.opcode === 1 || m.type === 'error') return m.data;
  if (m.opcode === 8) {
    const code = m._bb?.code;
    const reason = m._bb?.reason;
    if (code !== undefined) return `${code}${reason ? ` ${reason}` : ''}`;
    const bytes = payloadBytes(m);
    return bytes.length >= 2 ? `${bytes.readUInt16BE(0)} ${bytes.subarray(2).toString('utf8')}`.trim() : '';
  }
  return payloadBytes(m).toString('utf8');
}

/** The payload bytes: UTF-8 of the text for opcode 1, base64-decoded otherwise. */
export function payloadBytes(m: HarWebSocketMessage): Buffer {
  if (m.opcode === 1 || m.type === 'error') return Buffer.from(m.data, 'utf8');
  return Buffer.from(m.data, 'base64');
}

/** Page titles by id. */
function pageTitles(har: Har): Map<string, string> {
  return new Map((har.log.pages ?? []).map((p) => [p.id, p.title]));
}

/** One row per entry, in capture order. */
export function entryRows(har: Har): EntryRow[] {
  const titles = pageTitles(har);
  return orderedEntries(har).map(({ entry: e, index }) => {
    const row: EntryRow = {
      entry: index,
      startedDateTime: e.startedDateTime,
      time: isoToSeconds(e.startedDateTime),
      method: e.request.method,
      url: e.request.url,
      status: e.response.status,
      statusText: e.response.statusText,
      requestBodySize: e.request.bodySize,
      responseBodySize: e.response.bodySize,
      contentSize: e.response.content.size,
      duration: e.time,
      webSocket: isWebSocketEntry(e),
      webSocketMessages: (e._webSocketMessages?.length ?? 0) + (Array.isArray(e._webSocketMessages) ? (e._bb?.unlisted?.request ?? 0) + (e._bb?.unlisted?.response ?? 0) : 0),
    };
    const seq = seqOf(e);
    if (seq !== undefined) row.seq = seq;
    if (e.pageref !== undefined) row.page = titles.get(e.pageref) ?? e.pageref;
    if (e.connection !== undefined) row.connection = String(e.connection);
    if (isGrpcEntry(e)) row.grpc = { ...grpcCallStatus(e), messages: e._grpcMessages!.length + (e._bb?.unlisted?.request ?? 0) + (e._bb?.unlisted?.response ?? 0) };
    const error = entryError(e);
    if (error !== undefined) row.error = error;
    const by = entryErrorBy(e);
    if (by !== undefined) row.errorBy = by;
    return row;
  });
}

/** What went wrong with an entry, in a few words: bb's error code, who aborted it, or how many reset streams it stands for. */
export function entryError(e: HarEntry): string | undefined {
  const bb = e._bb;
  if (bb?.error) return bb.error.code;
  // A burst of h2 streams reset before any response (a rapid-reset flood) is one entry standing for many.
  if (bb?.resetBurst) return `${bb.resetBurst.count} streams reset by ${bb.aborted ?? 'client'}`;
  return bb?.aborted ? `aborted by ${bb.aborted}` : undefined;
}

/** Who ended an entry early: bb's own error response, or the side that hung up (a reset burst: who reset). */
export function entryErrorBy(e: HarEntry): ErrorBy | undefined {
  const bb = e._bb;
  if (bb?.error) return 'bb';
  if (bb?.resetBurst) return bb.aborted ?? 'client';
  return bb?.aborted;
}

/** What `bb show` keeps. */
export interface EntryFilter {
  /** Methods (upper case) to keep. */
  methods?: string[];
  /** Status patterns: "404", "4xx". */
  statuses?: string[];
  /** A glob over the URL. */
  url?: string;
  /** A page title or id. */
  page?: string;
  /** Only WebSocket entries. */
  ws?: boolean;
}

/** Applies a filter to entry rows; `har` resolves page ids. */
export function filterRows(rows: EntryRow[], f: EntryFilter, har: Har): EntryRow[] {
  const url = f.url !== undefined ? globMatcher(f.url) : undefined;
  const pageIds = new Set((har.log.pages ?? []).filter((p) => p.title === f.page || p.id === f.page).map((p) => p.title));
  return rows.filter((r) => {
    if (f.methods && !f.methods.includes(r.method.toUpperCase())) return false;
    if (f.statuses && !f.statuses.some((s) => statusMatches(s, r.status))) return false;
    if (url && !url(r.url)) return false;
    if (f.page !== undefined && !(r.page === f.page || (r.page !== undefined && pageIds.has(r.page)))) return false;
    if (f.ws && !r.webSocket) return false;
    return true;
  });
}

/** True when a status matches "404" or "4xx" (x = any digit). */
export function statusMatches(pattern: string, status: number): boolean {
  const p = pattern.trim().toLowerCase();
  const s = String(status);
  return p.length === s.length && [...p].every((ch, i) => ch === 'x' || ch === s[i]);
}

/** Every numbered record of a capture (entry starts, WebSocket and gRPC messages) with its time, to place the rest among. */
function seqPlacer(har: Har): SeqPlacer {
  const anchors: Array<{ seq: number; time: number }> = [];
  for (const e of har.log.entries) {
    const seq = seqOf(e);
    if (seq !== undefined) anchors.push({ seq, time: isoToSeconds(e.startedDateTime) });
    // Its end, where HAR's time is exact (a gRPC call's may count a request that outlived the head twice).
    const seqEnd = e._bb?.seqEnd;
    if (typeof seqEnd === 'number' && e.time >= 0 && !isGrpcEntry(e) && !isWebSocketEntry(e)) anchors.push({ seq: seqEnd, time: isoToSeconds(e.startedDateTime) + e.time / 1000 });
    for (const m of [...(e._webSocketMessages ?? []), ...(e._grpcMessages ?? [])]) {
      const s = seqOf(m);
      if (s !== undefined) anchors.push({ seq: s, time: m.time });
    }
  }
  return new SeqPlacer(anchors);
}

/** A message's place in the total order: its seq, else (in a numbered capture) a position placed by its time within its exchange. */
function messageSeq(m: HarWebSocketMessage, e: HarEntry, placer: SeqPlacer): number | undefined {
  const own = seqOf(m);
  if (own !== undefined || !placer.active) return own;
  const seqEnd = typeof e._bb?.seqEnd === 'number' ? e._bb.seqEnd : undefined;
  return placer.place(m.time, seqOf(e), seqEnd);
}

/** A stream's response head event: at the time its head arrived, placed before the first message it answered with. */
function headPlace(e: HarEntry, started: number, placer: SeqPlacer): { time: number; seq?: number } | undefined {
  const received = isSseEntry(e) ? sseMessages(e) : e._grpcMessages!.filter((m) => m.type === 'receive').map(grpcAsMessage);
  let first: HarWebSocketMessage | undefined;
  for (const m of received) if (first === undefined || (seqOf(m) ?? m.time) < (seqOf(first) ?? first.time)) first = m;
  const time = responseHeadTime(e, started, first?.time);
  if (Number.isNaN(time)) return undefined;
  if (!placer.active) return { time };
  const seqEnd = typeof e._bb?.seqEnd === 'number' ? e._bb.seqEnd : undefined;
  const before = first !== undefined ? messageSeq(first, e, placer) : seqEnd;
  return { time, seq: placer.place(time, seqOf(e), before) };
}

/** Every HTTP entry (request and, when it completed, response) and every WS message, in total order. */
export function timeline(har: Har, wsFilter: FrameFilter = {}): TimelineEvent[] {
  const keyed: Array<Keyed<TimelineEvent>> = [];
  const url = wsFilter.url !== undefined ? globMatcher(wsFilter.url) : undefined;
  const titles = pageTitles(har);
  const placer = seqPlacer(har);
  let pos = 0;
  har.log.entries.forEach((e, index) => {
    if (url && !url(e.request.url)) return;
    const started = isoToSeconds(e.startedDateTime);
    const exchange = seqOf(e) ?? index;
    const request: TimelineEvent = {
      kind: 'request', entry: index, exchange, time: started, method: e.request.method, url: e.request.url, status: e.response.status,
    };
    const seq = seqOf(e);
    if (seq !== undefined) request.seq = seq;
    if (e.pageref !== undefined) request.page = titles.get(e.pageref) ?? e.pageref;
    keyed.push({ item: request, seq, time: started, pos: pos++ });
    if (!isWebSocketEntry(e) && e.time >= 0) {
      const response: TimelineEvent = {
        kind: 'response', entry: index, exchange, time: started + e.time / 1000, method: e.request.method, url: e.request.url, status: e.response.status,
      };
      const by = entryErrorBy(e);
      if (by !== undefined) response.errorBy = by;
      // A stream's response row is its head, where it arrived; other responses are drawn when they completed.
      const head = isStreamEntry(e) ? headPlace(e, started, placer) : undefined;
      if (head) {
        response.time = head.time;
        response.head = true;
        keyed.push({ item: response, seq: head.seq, time: head.time, pos: pos++ });
      } else {
        const seqEnd = typeof e._bb?.seqEnd === 'number' ? e._bb.seqEnd : undefined;
        if (seqEnd !== undefined) response.seq = seqEnd;
        keyed.push({ item: response, seq: seqEnd, time: response.time, pos: pos++ });
      }
    }
  });
  for (const conn of filterConnections(wsConnections(har), wsFilter)) {
    const e = har.log.entries[conn.entry]!;
    for (const message of conn.messages) {
      keyed.push({
        item: { kind: 'ws', entry: conn.entry, connection: conn.id, url: conn.url, message },
        seq: messageSeq(message, e, placer),
        time: message.time,
        pos: pos++,
      });
    }
  }
  return sorted(keyed);
}
