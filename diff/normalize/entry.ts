// One HAR entry → the normalized entry that is paired and compared
// (DESIGN.md "The normalized entry"). Pure: rules, homes and the ordinal
// table come in; nothing is read from disk.
import { createHash } from 'node:crypto';
import { grpcStatus, type HarEntry, type HarGrpcMessage, type HarNameValue, type HarPage } from '../../capture/index.js';
import type { MultiValue, NormalizedEntry, NormalizedGrpc, NormalizedWsMessage } from '../types.js';
import { decodeProtobuf } from './protobuf.js';
import type { ProtoSchema } from './proto-schema.js';
import type { PathRuleConfig, RouteKeyConfig } from '../config.js';
import { bodyParsers, parseBody, parsedByMedia, rawBody, type BodyParser, type RawBody } from './bodies.js';
import { decodeEnginePacket, engineIoVersion } from './engine-io.js';
import { EIO_SID } from './rules.js';
import { normalizeString, normalizeValue, valueWalk, type RuleSet, type ValueWalk } from './rules.js';
import { unnumber, unnumberDeep, type OrdinalTable } from './ordinals.js';
import { globMatcher, mediaType, pairValue } from '../../core/index.js';
import { joinPath, pathMatcher } from '../selector.js';
import { alignSequences } from '../align.js';

/** What normalizing one side needs. */
export interface NormalizeContext {
  /** Compiled rules. */
  rules: RuleSet;
  /** Ordinal markers (shared by both sides). */
  table: OrdinalTable;
  /** The rules over this side's server homes (longest first) and the table, with this side's memo of normalized strings. */
  walk: ValueWalk;
  /** The same without homes, for hosts (a host never holds a path). */
  hostWalk: ValueWalk;
  /** Per-route pairing keys, each route glob compiled once. */
  routeKeys: CompiledRouteKey[];
  /** Per-path rules. */
  pathRules: PathRuleConfig[];
  /** Body parsers (editable list). */
  parsers?: readonly BodyParser[];
  /** The config's `.proto` files: gRPC messages of the methods they define decode with field names. */
  proto?: ProtoSchema;
}

/** A pairing.keys rule with its route glob compiled. */
export interface CompiledRouteKey extends RouteKeyConfig {
  matches: (route: string) => boolean;
}

/** Hosts are normalized without home directories. */
const NO_HOMES: readonly string[] = [];

/** What a NormalizeContext is made of; the walks and compiled route keys are derived here, once per side. */
export function normalizeContext(parts: {
  rules: RuleSet;
  homes: string[];
  table: OrdinalTable;
  routeKeys: readonly RouteKeyConfig[];
  pathRules: PathRuleConfig[];
  parsers?: readonly BodyParser[];
  proto?: ProtoSchema;
}): NormalizeContext {
  const { homes, ...rest } = parts;
  const { rules, table } = rest;
  return {
    ...rest,
    walk: valueWalk(rules, homes, table),
    hostWalk: valueWalk(rules, NO_HOMES, table),
    // A rule's route is written without a host (`POST /graphql`): it applies on every host.
    routeKeys: parts.routeKeys.map((k) => ({ ...k, matches: globMatcher(k.route) })),
  };
}

/** True for an entry spoken over HTTP/2 or HTTP/3 (`HTTP/2.0`, Chrome's `http/2.0`, `h2`, `h3`, `HTTP/3`). */
export function isH2OrLater(e: HarEntry): boolean {
  return [e.request.httpVersion, e.response.httpVersion].some((v) => /^(https?\/)?(2|3)(\.0)?$|^h[23]/i.test(v ?? ''));
}

function headerMap(headers: HarNameValue[], ctx: NormalizeContext, bodyParsed: boolean, h2Url?: string): Record<string, MultiValue> {
  const out: Record<string, MultiValue> = {};
  // :authority is HTTP/2's Host (RFC 9113 §8.3.1): compared as host, so h1 and h2 recordings agree.
  // Exporters that leave pseudo-headers out (mitmproxy) still have it in the URL.
  if (h2Url !== undefined && !headers.some((h) => h.name.toLowerCase() === 'host')) {
    const authority = headers.find((h) => h.name === ':authority')?.value ?? urlHost(h2Url);
    if (authority) headers = [{ name: 'host', value: authority }, ...headers];
  }
  for (const h of headers) {
    const name = h.name.toLowerCase();
    if (name.startsWith(':')) continue; // HTTP/2 pseudo-headers (Chrome lists them): method, path and authority are compared as such
    let value = ctx.rules.maskedHeaders.get(name);
    if (value === undefined && name === 'content-length' && bodyParsed && ctx.rules.maskBodyLength) value = '<VOLATILE>';
    value ??= normalizeString(h.value, ctx.walk);
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

function urlHost(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

function queryMap(pairs: HarNameValue[]): Record<string, MultiValue> {
  const out: Record<string, MultiValue> = {};
  for (const q of pairs) {
    const prev = out[q.name];
    out[q.name] = prev === undefined ? q.value : Array.isArray(prev) ? [...prev, q.value] : [prev, q.value];
  }
  return out;
}

function splitUrl(url: string): { path: string; query: HarNameValue[] } {
  try {
    const u = new URL(url);
    return { path: u.pathname, query: [...u.searchParams].map(([name, value]) => ({ name, value })) };
  } catch {
    const q = url.indexOf('?');
    return { path: q < 0 ? url : url.slice(0, q), query: [] };
  }
}

function wsData(opcode: number, data: string, bb: { code?: number; reason?: string } | undefined, ctx: NormalizeContext, eio: string | undefined): unknown {
  if (opcode === 1) {
    // A connection whose upgrade URL is Engine.IO's: each text frame is one packet (engine-io.ts).
    const packet = eio === undefined ? undefined : decodeEnginePacket(data, eio);
    if (packet) {
      const v = normalizeValue(packet, ctx.walk);
      engineIoSids(v, ctx.table);
      return v;
    }
    try {
      return normalizeValue(JSON.parse(data), ctx.walk);
    } catch {
      return normalizeString(data, ctx.walk);
    }
  }
  if (opcode === 8) {
    if (bb?.code !== undefined) return { code: bb.code, reason: bb.reason ?? '' };
    const bytes = Buffer.from(data, 'base64');
    return bytes.length >= 2 ? { code: bytes.readUInt16BE(0), reason: bytes.subarray(2).toString('utf8') } : { code: null, reason: '' };
  }
  if (opcode === -1) return normalizeString(data, ctx.walk);
  return data;
}

function lookup(v: unknown, dotted: string): unknown {
  let cur = v;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function routeKeyOf(route: string, body: unknown, query: Record<string, MultiValue>, ctx: NormalizeContext): string | undefined {
  const rule = ctx.routeKeys.find((k) => k.matches(route));
  if (!rule) return undefined;
  let v: unknown;
  if (rule.by === 'graphql') v = lookup(body, 'operationName') ?? query.operationName;
  else if (rule.by === 'jsonrpc') v = Array.isArray(body) ? body.map((b) => lookup(b, 'method')).join(',') : lookup(body, 'method');
  else if (rule.by === 'body-hash') v = createHash('sha256').update(JSON.stringify(unnumberDeep(body ?? null, ctx.table))).digest('hex').slice(0, 12);
  else v = lookup(body, rule.by.slice('body:'.length));
  if (v === undefined || v === null) return '-';
  return unnumber(typeof v === 'string' ? v : JSON.stringify(v), ctx.table);
}

/**
 * Whether entry ids include page titles: only when both captures have pages or
 * neither has. A browser's HAR (pages per navigation) against a proxy capture
 * without steps would otherwise pair nothing.
 */
export function pagesComparable(oldPages: HarPage[] | undefined, newPages: HarPage[] | undefined): boolean {
  return (oldPages?.length ?? 0) > 0 === (newPages?.length ?? 0) > 0;
}

/** Page labels by id: titles (normalized), numbered "(2)" when a title repeats. */
export function pageLabels(pages: HarPage[] | undefined, ctx: NormalizeContext): Map<string, string> {
  const seen = new Map<string, number>();
  const out = new Map<string, string>();
  for (const p of pages ?? []) {
    // A title that is a URL ending in "/" loses it, so ids read `https://x/GET /#1`, never `https://x//GET`.
    const title = unnumber(normalizeString(p.title || p.id, ctx.walk), ctx.table).replace(/(?<=.)\/+$/, '');
    const n = (seen.get(title) ?? 0) + 1;
    seen.set(title, n);
    out.set(p.id, n === 1 ? title : `${title} (${n})`);
  }
  return out;
}

/**
 * Both sides' page labels, paired by title and order (DESIGN.md "Pairing"):
 * equal titles pair along their longest common sequence; between two such
 * anchors, the pages left on each side pair in order and the new page takes
 * the old page's label. A browser names a page by its document title when it
 * reads it, which a script may change while the page loads ("loading" in one
 * recording, "loaded 3" in the next): the same page, the same place in the
 * sequence. No labels at all when only one side has pages.
 */
export function pairedPageLabels(
  oldPages: HarPage[] | undefined,
  newPages: HarPage[] | undefined,
  oldCtx: NormalizeContext,
  newCtx: NormalizeContext,
): { old: Map<string, string>; new: Map<string, string> } {
  if (!pagesComparable(oldPages, newPages)) return { old: new Map(), new: new Map() };
  const o = [...pageLabels(oldPages, oldCtx)];
  const n = [...pageLabels(newPages, newCtx)];
  const out = { old: new Map(o), new: new Map(n) };
  const used = new Set(n.map(([, label]) => label));
  const relabel = (oi: number, ni: number) => {
    const label = o[oi]![1];
    if (label === n[ni]![1] || used.has(label)) return;
    used.delete(n[ni]![1]);
    used.add(label);
    out.new.set(n[ni]![0], label);
  };
  // Between two anchors (equal titles), what is left on each side pairs in order.
  let gapO = 0;
  let gapN = 0;
  for (const [oi, ni] of [...alignSequences(o.map(([, l]) => l), n.map(([, l]) => l)), [o.length, n.length] as const]) {
    for (let k = 0; k < Math.min(oi - gapO, ni - gapN); k++) relabel(gapO + k, gapN + k);
    gapO = oi + 1;
    gapN = ni + 1;
  }
  return out;
}

function contentLength(headers: HarNameValue[]): number {
  return Number(pairValue(headers, 'content-length') ?? 0) || 0;
}

/**
 * A request body the producer did not record: the request had one
 * (bodySize or Content-Length above 0) and postData holds neither text nor
 * params (browsers leave postData out of some exports).
 */
export function requestNotRecorded(e: HarEntry): boolean {
  const post = e.request.postData;
  if (post && ((post.text !== undefined && post.text !== '') || post.params?.length)) return false;
  return e.request.bodySize > 0 || contentLength(e.request.headers) > 0;
}

/**
 * A response body the producer did not record: content.size (or a
 * Content-Length) above 0 and no text. Responses that have no body by
 * definition (to HEAD, 1xx, 204, 304: RFC 9110 §6.4.1) never count.
 */
export function responseNotRecorded(e: HarEntry): boolean {
  const c = e.response.content;
  if ((c.text !== undefined && c.text !== '') || e._eventSourceMessages?.length) return false;
  const status = e.response.status;
  if (e.request.method.toUpperCase() === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 304) return false;
  return c.size > 0 || contentLength(e.response.headers) > 0;
}

/** The host an entry went to, normalized ("a.test", "127.0.0.1:<PORT>" under loopback-port), markers unnumbered; "" when the URL has none. */
export function entryHost(e: HarEntry, ctx: Pick<NormalizeContext, 'hostWalk' | 'table'>): string {
  let host = '';
  try {
    host = new URL(e.request.url).host.toLowerCase();
  } catch {
    const h = e.request.headers.find((x) => x.name.toLowerCase() === 'host' || x.name === ':authority');
    host = h ? h.value.toLowerCase() : '';
  }
  return host && unnumber(normalizeString(host, ctx.hostWalk), ctx.table);
}

/** The pairing key of an entry: its page and its route. */
export function entryKey(page: string, route: string): string {
  return `${page}\n${route}`;
}

/** A route naming its host as a network-path reference (RFC 3986 §4.2): `GET /x` → `GET //a.test/x`; no host, no change. */
export function routeWithHost(route: string, host: string): string {
  return host ? route.replace(/^(\S+) /, `$1 //${host}`) : route;
}

/** A route without its host: `GET //a.test/x` → `GET /x`. */
export function routeWithoutHost(route: string): string {
  return route.replace(/^(\S+) \/\/[^/]*/, '$1 ');
}

/** The distinct normalized hosts of a capture's entries. */
export function hostsOf(entries: readonly HarEntry[], ctx: Pick<NormalizeContext, 'hostWalk' | 'table'>): Set<string> {
  const out = new Set<string>();
  for (const e of entries) out.add(entryHost(e, ctx));
  return out;
}

/**
 * Whether entry keys include the host, decided for a pair of captures: yes
 * when either has more than one host (forward mode, a browser's HAR), so
 * `https://a.test/` and `https://b.test/` do not pair; no for captures of one
 * host each (a reverse proxy), so old and new on different hosts or ports
 * still pair.
 */
export function hostsInKeys(oldHosts: ReadonlySet<string>, newHosts: ReadonlySet<string>): boolean {
  return oldHosts.size > 1 || newHosts.size > 1;
}

/**
 * Engine.IO's per-connection values (https://socket.io/docs/v4/engine-io-protocol/):
 * the session id the open packet hands out and every later URL carries
 * (`sid`), numbered as an ordinal so it corresponds across captures, and the
 * cache-busting `t` query parameter, masked.
 */
function engineIoQuery(query: Record<string, MultiValue>, table: OrdinalTable): void {
  if (typeof query.sid === 'string' && query.sid) query.sid = table.mark(EIO_SID, query.sid);
  if (query.t !== undefined) query.t = '<T>';
}

/** The open packets' `sid` (a polling body's packets, or one WebSocket packet) as EIO_SID ordinals. */
function engineIoSids(v: unknown, table: OrdinalTable): void {
  for (const p of Array.isArray(v) ? v : [v]) {
    const data = p && typeof p === 'object' && (p as { eio?: unknown }).eio === 'open' ? (p as { data?: unknown }).data : undefined;
    if (data && typeof data === 'object' && typeof (data as { sid?: unknown }).sid === 'string') (data as { sid: string }).sid = table.mark(EIO_SID, (data as { sid: string }).sid);
  }
}

/** Normalizes one entry. `occurrence` numbers the ids; call `entryKey` first to count them. */
export function normalizeEntry(e: HarEntry, index: number, page: string, ctx: NormalizeContext): Omit<NormalizedEntry, 'id'> {
  const { walk, table } = ctx;
  const parsers = ctx.parsers ?? bodyParsers;
  const { path: rawPath, query: urlQuery } = splitUrl(e._bb?.target && !/^[a-z]+:/i.test(e.request.url) ? e._bb.target : e.request.url);
  const path = normalizeString(rawPath, walk);
  const query = normalizeValue(queryMap(e.request.queryString.length ? e.request.queryString : urlQuery), walk) as Record<string, MultiValue>;
  const eio = engineIoVersion(e.request.url);
  const withUrl = (raw: RawBody | undefined): RawBody | undefined => (raw && eio !== undefined ? { ...raw, url: e.request.url } : raw);
  if (eio !== undefined) engineIoQuery(query, table);

  // A gRPC call's bodies are its framed messages: compared as messages (grpc), not as bytes.
  const grpcMsgs = e._grpcMessages;
  const post = e.request.postData;
  let reqBody: unknown;
  let reqParsed = false;
  const reqNotRecorded = requestNotRecorded(e);
  const reqRaw = withUrl(post ? rawBody(post.mimeType, post.text, post._encoding) : undefined);
  if (reqNotRecorded) {
    // Not compared (compare.ts drops it on both sides); its length is treated as the recording side's would be.
    reqParsed = parsedByMedia(mediaType(post?.mimeType ?? pairValue(e.request.headers, 'content-type')));
  } else if (reqRaw) {
    const p = parseBody(reqRaw, parsers);
    reqParsed = p.kind !== 'binary';
    reqBody = normalizeValue(p.kind === 'events' ? p.events : p.value, walk);
  } else if (post?.params?.length) {
    reqBody = normalizeValue(Object.fromEntries(post.params.map((p) => [p.name, p.value ?? p.fileName ?? ''])), walk);
    reqParsed = true;
  }

  const c = e.response.content;
  const resNotRecorded = responseNotRecorded(e);
  const resRaw = withUrl(rawBody(c.mimeType, c.text, c.encoding, e._eventSourceMessages));
  let resBody: unknown;
  let events: unknown[] | undefined;
  let resParsed = false;
  if (resNotRecorded) resParsed = parsedByMedia(mediaType(c.mimeType));
  else if (resRaw) {
    const p = parseBody(resRaw, parsers);
    resParsed = p.kind !== 'binary';
    if (p.kind === 'events') events = normalizeValue(p.events, walk) as unknown[];
    else resBody = normalizeValue(p.value, walk);
  }

  if (eio !== undefined) engineIoSids(resBody, table);

  const method = e.request.method.toUpperCase();
  // The route without its host: assignIds (engine.ts) adds it when either capture has several.
  const route = `${method} ${unnumber(path, table)}`;
  const rk = routeKeyOf(route, reqBody, query, ctx);
  const keyRoute = rk === undefined ? route : `${route}[${rk}]`;

  const out: Omit<NormalizedEntry, 'id'> = {
    key: entryKey(page, keyRoute),
    route: keyRoute,
    request: { method, path, query, headers: headerMap(e.request.headers, ctx, reqParsed, isH2OrLater(e) ? e.request.url : undefined) },
    response: { status: e.response.status, headers: headerMap(e.response.headers, ctx, resParsed) },
    headerOrder: { request: e.request.headers.map((h) => h.name), response: e.response.headers.map((h) => h.name) },
    meta: { index, page },
  };
  if (grpcMsgs) out.grpc = normalizeGrpc(grpcMsgs, e, rawPath, ctx);
  else {
    if (reqBody !== undefined) out.request.body = reqBody;
    if (resBody !== undefined) out.response.body = resBody;
  }
  if (events !== undefined) out.response.events = events;
  if (typeof e._bb?.seq === 'number') out.meta.seq = e._bb.seq;
  if (e._bb?.error) out.meta.error = e._bb.error.code;
  if (isH2OrLater(e)) out.meta.h2 = true;
  if (e._bb?.truncated) out.meta.truncated = { request: e._bb.truncated.request !== undefined, response: e._bb.truncated.response !== undefined };
  if (reqNotRecorded || resNotRecorded) out.meta.notRecorded = { request: reqNotRecorded, response: resNotRecorded };

  const msgs = e._webSocketMessages;
  if (msgs || e._resourceType === 'websocket') {
    const messages: NormalizedWsMessage[] = [];
    for (const m of msgs ?? []) {
      if (ctx.rules.dropPingPong && (m.opcode === 9 || m.opcode === 10)) continue;
      // Engine.IO heartbeats ("2", "3") are timer-driven too; "2probe" / "3probe" of the upgrade are kept.
      if (ctx.rules.dropPingPong && eio !== undefined && m.opcode === 1 && (m.data === '2' || m.data === '3')) continue;
      messages.push({ type: m.type, opcode: m.opcode, data: wsData(m.opcode, m.data, m._bb, ctx, eio) });
    }
    out.ws = { messages };
    const close = e._bb?.close;
    if (close) out.ws.close = { code: close.code, reason: normalizeString(String(close.reason ?? ''), walk), by: close.by };
  }
  return out;
}

/**
 * A gRPC call as compared: each message decoded with its method's type when
 * the config's .proto files define the method (`path`, proto-schema.ts),
 * else from the protobuf wire format without a schema (protobuf.ts), its
 * values normalized like a JSON body; one that does not parse (or was cut
 * short) compares as its base64. The status comes from the trailers (bb
 * moves a gRPC-Web trailer frame there), else trailers-only headers.
 */
function normalizeGrpc(msgs: HarGrpcMessage[], e: HarEntry, path: string, ctx: NormalizeContext): NormalizedGrpc {
  const messages = msgs.map((m) => {
    const bytes = Buffer.from(m.data, 'base64');
    const whole = m._bb?.truncated === undefined && m._bb?.undecoded === undefined;
    const decoded = whole ? (ctx.proto?.decode(path, m.type, bytes) ?? decodeProtobuf(bytes)) : undefined;
    return { type: m.type, opcode: 2, data: decoded ? normalizeValue(decoded, ctx.walk) : m.data };
  });
  const { status, message } = grpcStatus(e.response._trailers, e.response.headers);
  const out: NormalizedGrpc = { messages, status };
  if (message !== undefined) out.message = normalizeString(message, ctx.walk);
  return out;
}

/** Applies the config's per-path rules to a finished entry (in place). */
export function applyPathRules(entry: NormalizedEntry, rules: PathRuleConfig[]): void {
  const compiled = rules.map((r) => ({ where: globMatcher(r.where ?? '*'), path: pathMatcher(r.path), rule: r }));
  const active = compiled.filter((c) => c.where(entry.id));
  if (!active.length) return;
  const walk = (v: unknown, path: string): unknown => {
    if (v === null || typeof v !== 'object') return v;
    const isArr = Array.isArray(v);
    const src = v as Record<string, unknown>;
    for (const k of Object.keys(src)) {
      const p = isArr ? joinPath(path, Number(k)) : joinPath(path, k);
      const hit = active.find((c) => c.path(p));
      if (hit) {
        if (hit.rule.ignore && !isArr) delete src[k];
        else src[k] = hit.rule.replace ?? '<MASKED>';
      } else src[k] = walk(src[k], p);
    }
    return v;
  };
  walk(entry.request, 'request');
  walk(entry.response, 'response');
  if (entry.ws) walk(entry.ws, 'ws');
  if (entry.grpc) walk(entry.grpc, 'grpc');
}
