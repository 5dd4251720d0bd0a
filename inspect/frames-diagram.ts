// What `bb frames --html` draws, as plain data: lanes (one per WebSocket
// connection, one for plain HTTP entries with --timeline), rows in total
// order (one arrow each), steps as bands of consecutive rows, and every
// row's whole payload. Pure: ordering and the --conn/--url/--type/--opcode/
// --grep filters are the frames model's own (timeline(), wsConnections(),
// filterConnections()); this file only adds --page and the layout facts.
import type { Har, HarEntry, HarWebSocketMessage, ProtoSchema } from '../capture/index.js';
import { entryError, entryErrorBy, filterConnections, isWebSocketEntry, opcodeName, payloadBytes, statusMark, timeline, wsConnections, type FrameFilter, type TimelineEvent, type WsConnectionView } from './model.js';
import { messageKindOf } from './streams.js';
import { grpcSchemaAt, shownLines, type GrpcSchemaOf } from './grpc-tree.js';
import { laneLabels, type LaneLabel } from './lanes.js';
import { clip, formatSize, grpcOf, preview } from './format.js';

/** One lane: a participant on the client side of the diagram. */
export interface DiagramLane {
  /** "ws": one WebSocket connection; "http": every plain HTTP entry. */
  kind: 'ws' | 'http';
  /** The connection id as `bb frames` names it ("HTTP" for the HTTP lane). */
  id: string;
  /** The upgrade URL ("" for the HTTP lane). */
  url: string;
  /** What the lane is: "connection c3", "sse stream #5", "grpc call #7", "HTTP". */
  name: string;
  /** What tells this lane from the others: host and path, and the query or first message that differs (lanes.ts). */
  label: LaneLabel;
  /** Index of the upgrade entry in `log.entries` (ws lanes). */
  entry?: number;
  /** Rows drawn in this lane. */
  rows: number;
}

/** One arrow. `dir` "send" points from the lane to the server, "receive" back. */
export interface DiagramRow {
  /** Index into `lanes`. */
  lane: number;
  dir: 'send' | 'receive';
  /** "ws" a message, "request"/"response" an HTTP entry (or a WebSocket upgrade). */
  kind: 'ws' | 'request' | 'response';
  /** WebSocket opcode (-1 error row); absent for HTTP rows. */
  opcode?: number;
  /** `_bb.seq` (seqEnd for responses) when recorded. */
  seq?: number;
  /** Epoch seconds (NaN when unknown). */
  time: number;
  /** Payload bytes (-1 unknown). */
  size: number;
  /** One line: opcode and size then a clipped preview; for HTTP method (status) and URL. */
  label: string;
  /** The step (page title) the row crossed in. */
  page?: string;
  /** Set on error rows: bb's error code or a short reason. */
  error?: string;
  /** Set on a response a side hung up on: "aborted by client" (not an error of bb's, so not marked as one). */
  aborted?: string;
  /** Close frames: decoded code and reason. */
  close?: { code?: number; reason: string };
}

/** A payload as the side panel shows it. */
export type DiagramPayload =
  | { kind: 'ws'; opcode: number; encoding: 'text' | 'base64'; data: string; truncated?: number; size?: number; decoded?: string }
  | { kind: 'http'; head: string; body?: { encoding: 'text' | 'base64'; data: string; cut?: number } };

/** A band of consecutive rows that crossed in one step. */
export interface DiagramBand {
  /** The page title. */
  name: string;
  /** First and last row index, inclusive. */
  from: number;
  to: number;
}

/** The whole picture. */
export interface FramesDiagram {
  lanes: DiagramLane[];
  rows: DiagramRow[];
  /** `payloads[i]` belongs to `rows[i]`. */
  payloads: DiagramPayload[];
  bands: DiagramBand[];
  /** What the server lane is called (log._bb.target, else "server"). */
  server: string;
  /** Connections in the capture before filtering. */
  totalConnections: number;
  /** How many of them are SSE streams or gRPC calls (the rest are WebSocket connections). */
  totalStreams: number;
}

/** Options for building the diagram. */
export interface DiagramOptions {
  /** Add the HTTP lane and the WebSocket upgrades (as `--timeline` does for text). */
  http?: boolean;
  /** Keep rows of this step only (a page title or id). */
  page?: string;
  /** Preview characters per row (default 100). */
  previewWidth?: number;
  /** HTTP bodies shown in the panel are cut past this many characters (default 256 KiB). */
  maxHttpBody?: number;
  /** The .proto files that name gRPC messages' fields (the config's normalize.proto); absent: field numbers. */
  proto?: ProtoSchema;
}

/** The page title an entry or message belongs to, resolving ids through log.pages. */
export function pageResolver(har: Har): (pageId: string | undefined) => string | undefined {
  const titles = new Map((har.log.pages ?? []).map((p) => [p.id, p.title]));
  return (id) => (id === undefined ? undefined : titles.get(id) ?? id);
}

/** A message's step: its own `_bb.page`, else its connection's pageref (Chrome, Playwright). */
function messagePageId(m: HarWebSocketMessage, e: HarEntry | undefined): string | undefined {
  return m._bb?.page ?? e?.pageref;
}

/** True when a page id or title names the step `page` (as `bb show --page` matches). */
function pageMatcher(har: Har, page: string): (pageId: string | undefined) => boolean {
  const ids = new Set((har.log.pages ?? []).filter((p) => p.title === page || p.id === page).map((p) => p.id));
  return (id) => id !== undefined && (id === page || ids.has(id));
}

/** `--page` over connections: messages of other steps go, then connections left empty. */
export function filterConnectionsByPage(conns: WsConnectionView[], har: Har, page: string | undefined): WsConnectionView[] {
  if (page === undefined) return conns;
  const matches = pageMatcher(har, page);
  return conns
    .map((c) => ({ ...c, messages: c.messages.filter((m) => matches(messagePageId(m, har.log.entries[c.entry]))) }))
    .filter((c) => c.messages.length > 0);
}

/** `--page` over timeline events (an HTTP response belongs to its request's step). */
export function filterTimelineByPage(events: TimelineEvent[], har: Har, page: string | undefined): TimelineEvent[] {
  if (page === undefined) return events;
  const matches = pageMatcher(har, page);
  return events.filter((ev) => {
    const e = har.log.entries[ev.entry];
    return matches(ev.kind === 'ws' ? messagePageId(ev.message, e) : e?.pageref);
  });
}

/** Close code and reason, decoded by bb or from the payload's first two bytes (RFC 6455 §5.5.1). */
function closeOf(m: HarWebSocketMessage): { code?: number; reason: string } {
  if (m._bb?.code !== undefined) return { code: m._bb.code, reason: m._bb.reason ?? '' };
  const bytes = payloadBytes(m);
  return bytes.length >= 2 ? { code: bytes.readUInt16BE(0), reason: bytes.subarray(2).toString('utf8') } : { reason: '' };
}

/**
 * A text message cut to what a preview of `width` characters can show, so a
 * megabyte payload is not escaped and split into characters whole. Escaping
 * only lengthens text and a character is at most two UTF-16 units, so
 * 2 × width + 2 units always give clip() more than `width` characters.
 */
function headOf(m: HarWebSocketMessage, width: number): HarWebSocketMessage {
  const text = m.opcode === 1 || m.type === 'error';
  const keep = width * 2 + 2;
  return text && m.data.length > keep ? { ...m, data: m.data.slice(0, keep) } : m;
}

function wsRow(m: HarWebSocketMessage, lane: number, width: number, schemaOf?: GrpcSchemaOf): { row: DiagramRow; payload: DiagramPayload } {
  // A gRPC message decoded once: its row's label and its payload's fields.
  const grpc = grpcOf(m, schemaOf);
  const size = m.type === 'error' ? -1 : (m._bb?.truncated !== undefined ? m._bb.size : undefined) ?? payloadBytes(m).length;
  const direction = m.type === 'error' ? m._bb?.direction : m.type;
  const row: DiagramRow = {
    lane, dir: direction === 'send' ? 'send' : 'receive', kind: 'ws', opcode: m.opcode, time: m.time, size,
    label: `${messageKindOf(m, opcodeName)}${size >= 0 ? ` ${formatSize(size)}` : ''} ${clip(preview(headOf(m, width), schemaOf, grpc), width)}`.trimEnd(),
  };
  if (m._bb?.seq !== undefined) row.seq = m._bb.seq;
  if (m.type === 'error') row.error = m._bb?.error ?? 'unparsable frame';
  if (m.opcode === 8) row.close = closeOf(m);
  const text = m.opcode === 1 || m.type === 'error';
  const payload: DiagramPayload = { kind: 'ws', opcode: m.opcode, encoding: text ? 'text' : 'base64', data: m.data };
  if (m._bb?.truncated !== undefined) {
    payload.truncated = m._bb.truncated;
    if (m._bb.size !== undefined) payload.size = m._bb.size;
  }
  // A gRPC message's decoded protobuf, shown above its hex dump.
  if (grpc) payload.decoded = shownLines(grpc).join('\n');
  return { row, payload };
}

function headText(lines: string[], headers: Array<{ name: string; value: string }>): string {
  return [...lines, ...headers.map((h) => `${h.name}: ${h.value}`)].join('\n');
}

function cutBody(encoding: 'text' | 'base64', data: string | undefined, max: number): { encoding: 'text' | 'base64'; data: string; cut?: number } | undefined {
  if (data === undefined || data === '') return undefined;
  return data.length > max ? { encoding, data: data.slice(0, encoding === 'base64' ? max - (max % 4) : max), cut: data.length } : { encoding, data };
}

/** " 1.2KB" for a body, "" for none or unknown. */
const sized = (bytes: number): string => (bytes > 0 ? ` ${formatSize(bytes)}` : '');

function httpRows(ev: Extract<TimelineEvent, { kind: 'request' | 'response' }>, e: HarEntry, lane: number, maxBody: number): { row: DiagramRow; payload: DiagramPayload } {
  const error = entryError(e);
  const by = entryErrorBy(e);
  if (ev.kind === 'request') {
    const body = e.request.postData;
    const row: DiagramRow = { lane, dir: 'send', kind: 'request', time: ev.time, size: e.request.bodySize, label: `${e.request.method}${sized(e.request.bodySize)} ${clip(e.request.url, 200)}` };
    if (ev.seq !== undefined) row.seq = ev.seq;
    const payload: DiagramPayload = { kind: 'http', head: headText([`${e.request.method} ${e.request.url} ${e.request.httpVersion}`], e.request.headers) };
    const cut = cutBody(body?._encoding === 'base64' ? 'base64' : 'text', body?.text, maxBody);
    if (cut) payload.body = cut;
    return { row, payload };
  }
  const content = e.response.content;
  const row: DiagramRow = {
    lane, dir: 'receive', kind: 'response', time: ev.time, size: content.size,
    label: `${e.response.status}${statusMark(by)}${sized(content.size)} ${e.request.method} ${clip(e.request.url, 200)}`,
  };
  if (ev.seq !== undefined) row.seq = ev.seq;
  if (error !== undefined && by === 'bb') row.error = error;
  else if (error !== undefined) row.aborted = error;
  const payload: DiagramPayload = { kind: 'http', head: headText([`${e.response.httpVersion} ${e.response.status} ${e.response.statusText}`.trim()], e.response.headers) };
  const cut = cutBody(content.encoding === 'base64' ? 'base64' : 'text', content.text, maxBody);
  if (cut) payload.body = cut;
  return { row, payload };
}

/** Builds the diagram of a capture with `bb frames`' filters. */
export function framesDiagram(har: Har, filter: FrameFilter = {}, opts: DiagramOptions = {}): FramesDiagram {
  const width = opts.previewWidth ?? 100;
  const maxBody = opts.maxHttpBody ?? 256 * 1024;
  const all = wsConnections(har);
  const conns = filterConnectionsByPage(filterConnections(all, filter), har, opts.page);
  const lanes: DiagramLane[] = [];
  const httpLane = opts.http ? lanes.push({ kind: 'http', id: 'HTTP', url: '', name: 'HTTP', label: { where: 'plain HTTP entries', differs: '' }, rows: 0 }) - 1 : -1;
  const laneOfConnection = new Map<string, number>();
  const laneOfEntry = new Map<number, number>();
  const labels = laneLabels(conns, opts.proto);
  for (const [k, c] of conns.entries()) {
    const name = c.grpc ? `grpc call ${c.id}` : c.sse ? `sse stream ${c.id}` : `connection ${c.id}`;
    const lane = lanes.push({ kind: 'ws', id: c.id, url: c.url, name, label: labels[k]!, entry: c.entry, rows: 0 }) - 1;
    laneOfConnection.set(c.id, lane);
    laneOfEntry.set(c.entry, lane);
  }
  // The one total order is timeline()'s; without --timeline only its messages are drawn.
  const events = filterTimelineByPage(timeline(har, filter), har, opts.page);
  const page = pageResolver(har);
  const rows: DiagramRow[] = [];
  const payloads: DiagramPayload[] = [];
  for (const ev of events) {
    const e = har.log.entries[ev.entry];
    if (!e) continue;
    let drawn: { row: DiagramRow; payload: DiagramPayload } | undefined;
    if (ev.kind === 'ws') {
      const lane = laneOfConnection.get(ev.connection);
      if (lane === undefined) continue;
      drawn = wsRow(ev.message, lane, width, grpcSchemaAt(opts.proto, ev.url));
      const p = page(messagePageId(ev.message, e));
      if (p !== undefined) drawn.row.page = p;
    } else {
      if (!opts.http) continue;
      // A WebSocket upgrade (or a stream's request) is drawn in its lane; one filtered out draws nothing.
      const lane = laneOfEntry.get(ev.entry) ?? (isWebSocketEntry(e) ? undefined : httpLane);
      if (lane === undefined) continue;
      drawn = httpRows(ev, e, lane, maxBody);
      const p = page(e.pageref);
      if (p !== undefined) drawn.row.page = p;
    }
    lanes[drawn.row.lane]!.rows++;
    rows.push(drawn.row);
    payloads.push(drawn.payload);
  }
  // An HTTP lane with nothing in it (a capture of WebSocket traffic only) is left out.
  if (httpLane >= 0 && lanes[httpLane]!.rows === 0) {
    lanes.splice(httpLane, 1);
    for (const r of rows) if (r.lane > httpLane) r.lane--;
  }
  return { lanes, rows, payloads, bands: bandsOf(rows), server: har.log._bb?.target ?? 'server', totalConnections: all.length, totalStreams: all.filter((c) => c.sse || c.grpc).length };
}

/** Runs of consecutive rows with the same page. */
function bandsOf(rows: DiagramRow[]): DiagramBand[] {
  const bands: DiagramBand[] = [];
  rows.forEach((r, i) => {
    const last = bands[bands.length - 1];
    if (r.page === undefined) return;
    if (last && last.name === r.page && last.to === i - 1) last.to = i;
    else bands.push({ name: r.page, from: i, to: i });
  });
  return bands;
}
