// One HAR entry → the normalized entry that is paired and compared
// (docs/diff.md "What is compared"). Pure: rules, homes and the ordinal
// table come in (context.ts); nothing is read from disk. The request, the
// response, a WebSocket connection and a gRPC call each have their function;
// normalizeEntry calls them and builds the entry.
import { decodeProtobuf, grpcMedia, grpcStatus, inflateGrpcMessage, isH2OrLater, isH2WebSocketEntry, type HarEntry, type HarGrpcMessage, type HarInformational, type HarNameValue } from '../../capture/index.js';
import type { MultiValue, NormalizedEntry, NormalizedGrpc, NormalizedWsMessage, Unlisted } from '../types.js';
import type { NormalizeContext } from './context.js';
import { bodyParsers, parseBody, parsedByMedia, rawBody, sseEvent, type RawBody } from './bodies.js';
import { unlistedEvents, unlistedGrpc } from './unlisted.js';
import { decodeEnginePacket, engineIoQuery, engineIoSids, engineIoVersion } from './engine-io.js';
import { isAppHeartbeat, type HeartbeatContext } from './heartbeats.js';
import { normalizeString, normalizeValue, noteErased } from './walk.js';
import { mayBeJson, parseComparedJson } from './json.js';
import { unnumber } from './ordinals.js';
import { keyedRoute, requestKeyOf } from './route-keys.js';
import { requestNotRecorded, responseNotRecorded } from './not-recorded.js';
import { entryKey } from './keys.js';
import { comparedAsCookies, lifetime, requestCookies, responseCookies, responseTime } from './cookies.js';
import { getOwn, mediaType, pairValue, setOwn } from '../../core/index.js';
import { joinPath } from '../selector.js';
import { setPastCaps } from '../past-cap.js';

/** A request Host bb chose, as compared (docs/diff.md "What is compared"): bb shadow's captures, and both sides of a run with a `bb replay`. */
const BB_HOST = '<TARGET HOST>';

// `at`: where the headers are compared (`request.headers`), for the notes of what a config header mask erased.
// `answeredAt`: a response's time (its Date header, else its start), from which its Expires is a lifetime.
function headerMap(headers: HarNameValue[], at: string, ctx: NormalizeContext, bodyParsed: boolean, h2Url?: string, answeredAt?: number): Record<string, MultiValue> {
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
    if (comparedAsCookies(name, ctx)) continue; // compared as request.cookies / response.cookies (cookies.ts)
    let value = ctx.rules.maskedHeaders.get(name);
    // A request id header that holds no id (empty, "undefined") is compared: a broken one is a finding.
    if (value !== undefined && ctx.rules.maskAccepts.get(name)?.(h.value) === false) value = undefined;
    if (value !== undefined && ctx.walk.notes) {
      const rule = ctx.rules.configHeaders.get(name);
      // A repeated header is one field of several values: each noted at its place in it.
      const seen = getOwn(out, name);
      if (rule !== undefined) noteErased(`headers[${rule}]`, seen === undefined ? joinPath(at, name) : joinPath(joinPath(at, name), Array.isArray(seen) ? seen.length : 1), h.value, ctx.walk);
    }
    if (value === undefined && name === 'content-length' && bodyParsed && ctx.rules.maskBodyLength) value = '<VOLATILE>';
    // Expires is the response's time plus a lifetime (`<TS+1h>`), as a cookie's: two runs give it seconds apart, and
    // a date as written (1970 for "already expired", 2099 for "forever") is a value.
    if (value === undefined && name === 'expires' && answeredAt !== undefined && ctx.rules.cookieLifetimes) value = lifetime(h.value, answeredAt);
    value ??= normalizeString(h.value, ctx.walk);
    const prev = getOwn(out, name);
    setOwn(out, name, prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]);
  }
  return out;
}

/** The 1xx heads before a response (bb's `_informational`, checked by the reader), each as its status and headers. */
function informationalHeads(heads: HarInformational[] | undefined, ctx: NormalizeContext): NormalizedEntry['response']['informational'] {
  if (!heads?.length) return undefined;
  return heads.map((i, k) => ({ status: i.status, headers: headerMap(i.headers, `response.informational[${k}].headers`, ctx, false) }));
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
    const prev = getOwn(out, q.name);
    setOwn(out, q.name, prev === undefined ? q.value : Array.isArray(prev) ? [...prev, q.value] : [prev, q.value]);
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

/** An Engine.IO connection's bodies carry its URL (the parser reads the protocol revision from it). */
function withUrl(raw: RawBody | undefined, e: HarEntry, eio: string | undefined): RawBody | undefined {
  return raw && eio !== undefined ? { ...raw, url: e.request.url } : raw;
}

/** The request as compared but for its headers, and what its headers and a gRPC call need of it. */
interface NormalizedRequest {
  /** The upper-case method. */
  method: string;
  /** The URL path as in the capture (a gRPC method's name). */
  rawPath: string;
  /** The path, normalized. */
  path: string;
  /** The query parameters, normalized. */
  query: Record<string, MultiValue>;
  /** The body, parsed and normalized; undefined when there is none or it was not recorded. */
  body: unknown;
  /** Whether the body is compared parsed (its content-length is then masked). */
  parsed: boolean;
  /** The producer did not record the body (not-recorded.ts). */
  notRecorded: boolean;
}

/** The request's target (path, query) and body. */
function normalizeRequest(e: HarEntry, ctx: NormalizeContext, eio: string | undefined): NormalizedRequest {
  const { walk, table } = ctx;
  const { path: rawPath, query: urlQuery } = splitUrl(e._bb?.target && !/^[a-z]+:/i.test(e.request.url) ? e._bb.target : e.request.url);
  const path = normalizeString(rawPath, walk);
  const query = normalizeValue(queryMap(e.request.queryString.length ? e.request.queryString : urlQuery), walk, 'request.query') as Record<string, MultiValue>;
  if (eio !== undefined) engineIoQuery(query, table);

  const post = e.request.postData;
  let body: unknown;
  let parsed = false;
  const notRecorded = requestNotRecorded(e);
  const raw = withUrl(post ? rawBody(post.mimeType, post.text, post._encoding) : undefined, e, eio);
  if (notRecorded) {
    // Not compared (compare.ts drops it on both sides); its length is treated as the recording side's would be.
    parsed = parsedByMedia(mediaType(post?.mimeType ?? pairValue(e.request.headers, 'content-type')));
  } else if (raw) {
    const p = parseBody(raw, ctx.parsers ?? bodyParsers);
    parsed = p.kind !== 'binary';
    body = normalizeValue(p.kind === 'events' ? p.events : p.value, walk, 'request.body');
  } else if (post?.params?.length) {
    body = normalizeValue(Object.fromEntries(post.params.map((p) => [p.name, p.value ?? p.fileName ?? ''])), walk, 'request.body');
    parsed = true;
  }
  // A WebSocket over an HTTP/2 stream (RFC 8441) is compared as one over HTTP/1.1: its extended CONNECT as the GET
  // that upgrades (and its 2xx as the 101: comparedStatus), so a server moving between the two speaks the same protocol.
  return { method: isH2WebSocketEntry(e) ? 'GET' : e.request.method.toUpperCase(), rawPath, path, query, body, parsed, notRecorded };
}

/** The response status as compared: an HTTP/2 WebSocket's 2xx is HTTP/1.1's 101 (normalizeRequest). */
function comparedStatus(e: HarEntry): number {
  return isH2WebSocketEntry(e) && e.response.status >= 200 && e.response.status < 300 ? 101 : e.response.status;
}

/** The response's body (or its events, for text/event-stream), parsed and normalized. */
function normalizeResponse(e: HarEntry, ctx: NormalizeContext, eio: string | undefined): { body: unknown; events?: unknown[]; unlisted?: Unlisted; parsed: boolean; notRecorded: boolean } {
  const c = e.response.content;
  const notRecorded = responseNotRecorded(e);
  const raw = withUrl(rawBody(c.mimeType, c.text, c.encoding, e._eventSourceMessages), e, eio);
  let body: unknown;
  let events: unknown[] | undefined;
  let parsed = false;
  if (notRecorded) parsed = parsedByMedia(mediaType(c.mimeType));
  else if (raw) {
    const p = parseBody(raw, ctx.parsers ?? bodyParsers);
    parsed = p.kind !== 'binary';
    if (p.kind === 'events') events = normalizeValue(p.events, ctx.walk, 'response.events') as unknown[];
    else body = normalizeValue(p.value, ctx.walk, 'response.body');
  }
  if (eio !== undefined) engineIoSids(body, ctx.table);
  // Events the capture did not list: read from the body's text past the listed ones.
  const unlisted = events !== undefined && (e._bb?.unlisted?.response ?? 0) > 0 && raw?.text !== undefined
    ? unlistedEvents(raw.text, events.length, (ev) => normalizeValue(sseEvent(ev), ctx.walk))
    : undefined;
  return { body, ...(events !== undefined ? { events } : {}), ...(unlisted ? { unlisted } : {}), parsed, notRecorded };
}

/**
 * Normalizes one entry. `index` is its place in log.entries, `page` its page
 * label (pages.ts); order.ts names it (`id`) once every entry is normalized.
 */
export function normalizeEntry(e: HarEntry, index: number, page: string, ctx: NormalizeContext): Omit<NormalizedEntry, 'id'> {
  // Config rules that replace whole values note what they erased in this entry (meta.erased).
  if (!ctx.rules.erasing) return normalizeEntryAs(e, index, page, ctx);
  const notes: string[] = (ctx.walk.notes = []);
  try {
    const out = normalizeEntryAs(e, index, page, ctx);
    if (notes.length) out.meta.erased = notes;
    return out;
  } finally {
    ctx.walk.notes = undefined;
  }
}

function normalizeEntryAs(e: HarEntry, index: number, page: string, ctx: NormalizeContext): Omit<NormalizedEntry, 'id'> {
  const eio = engineIoVersion(e.request.url);
  // In this order: ordinal values are interned as they are met (ordinals.ts),
  // the bodies' before the headers'.
  const req = normalizeRequest(e, ctx, eio);
  const res = normalizeResponse(e, ctx, eio);

  // The route without its host: assignIds (order.ts) adds it when either capture has several.
  const route = `${req.method} ${unnumber(req.path, ctx.table)}`;
  const rk = requestKeyOf({ route, method: req.method, body: req.body, query: req.query, headers: e.request.headers, responseBody: res.body, ...(eio !== undefined ? { eio } : {}) }, ctx);
  const keyRoute = keyedRoute(route, rk);

  const h2 = isH2OrLater(e);
  const out: Omit<NormalizedEntry, 'id'> = {
    key: entryKey(page, keyRoute),
    route: keyRoute,
    request: { method: req.method, path: req.path, query: req.query, headers: headerMap(e.request.headers, 'request.headers', ctx, req.parsed, h2 ? e.request.url : undefined) },
    response: { status: comparedStatus(e), headers: headerMap(e.response.headers, 'response.headers', ctx, res.parsed, undefined, responseTime(e)) },
    headerOrder: { request: e.request.headers.map((h) => h.name), response: e.response.headers.map((h) => h.name) },
    meta: { index, page, ...(rk ? { requestKey: rk } : {}), ...((res.events !== undefined || e._grpcMessages !== undefined) && e._bb?.aborted === 'client' ? { clientLeft: true } : {}) },
  };
  // bb chose the request Host: bb shadow's (the client's for the primary, each target's own authority for a mirror), or a
  // replay's (it names its target, whatever the original named): a difference of bb's, never of the builds'. A replay's
  // Host is masked on both sides of its run, so a replay compares with any capture, a shadow's among them. Between two
  // of a shadow's captures an HTTP/1 request has bb's Host whether the client sent one or not: an HTTP/1.0 client may
  // send none, and each mirror names its target all the same (h2 names it in :authority, on every side).
  if ((ctx.bbChoseHost || e._bb?.shadow !== undefined) && getOwn(out.request.headers, 'host') !== undefined) setOwn(out.request.headers, 'host', BB_HOST);
  else if (ctx.shadowPair && e._bb?.shadow !== undefined && !h2) setOwn(out.request.headers, 'host', BB_HOST);
  // Headers `bb shadow --header` set on a target's copies (a token for the candidate) are the user's choice for that
  // target, not the build's: left out on both sides, as if neither request had them.
  if (ctx.bbSetHeaders?.size) {
    for (const name of ctx.bbSetHeaders) if (name !== 'host') delete (out.request.headers as Record<string, unknown>)[name];
    if (out.headerOrder) out.headerOrder.request = out.headerOrder.request.filter((n) => n.toLowerCase() === 'host' || !ctx.bbSetHeaders!.has(n.toLowerCase()));
  }
  // Trailers are fields like headers (response.trailers.NAME), after the headers in ordinal order.
  if (e.request._trailers?.length) out.request.trailers = headerMap(e.request._trailers, 'request.trailers', ctx, false);
  if (e.response._trailers?.length) out.response.trailers = headerMap(e.response._trailers, 'response.trailers', ctx, false);
  const informational = informationalHeads(e.response._informational, ctx);
  if (informational) out.response.informational = informational;
  // A gRPC call's bodies are its framed messages: compared as messages (grpc), not as bytes.
  if (e._grpcMessages) out.grpc = normalizeGrpc(e._grpcMessages, e, req.rawPath, ctx);
  else {
    if (req.body !== undefined) out.request.body = req.body;
    if (res.body !== undefined) out.response.body = res.body;
  }
  if (res.events !== undefined) out.response.events = res.events;
  if (res.unlisted) out.response.unlisted = res.unlisted;
  if (ctx.rules.cookies) {
    const sent = comparedAsCookies('cookie', ctx) ? requestCookies(e.request.headers, ctx) : undefined;
    const set = comparedAsCookies('set-cookie', ctx) ? responseCookies(e, ctx) : undefined;
    if (sent) out.request.cookies = sent;
    if (set) out.response.cookies = set;
  }
  if (typeof e._bb?.seq === 'number') out.meta.seq = e._bb.seq;
  if (e._bb?.error) out.meta.error = e._bb.error.code;
  if (h2) out.meta.h2 = true;
  if (e._bb?.truncated) out.meta.truncated = { request: e._bb.truncated.request !== undefined, response: e._bb.truncated.response !== undefined };
  setPastCaps(e, out);
  if (req.notRecorded || res.notRecorded) out.meta.notRecorded = { request: req.notRecorded, response: res.notRecorded };
  const ws = normalizeWebSocket(e, ctx, eio);
  if (ws) out.ws = ws;
  return out;
}

/** A WebSocket connection's messages (ping/pong left out under ws-ping-pong) and close; undefined for an entry that is not one. */
function normalizeWebSocket(e: HarEntry, ctx: NormalizeContext, eio: string | undefined): NormalizedEntry['ws'] {
  const msgs = e._webSocketMessages;
  if (!msgs && e._resourceType !== 'websocket') return undefined;
  const messages: NormalizedWsMessage[] = [];
  const beats: HeartbeatContext | undefined = ctx.rules.dropPingPong ? { url: e.request.url, subprotocol: (pairValue(e.response.headers, 'sec-websocket-protocol') ?? '').toLowerCase() } : undefined;
  for (const m of msgs ?? []) {
    if (beats && (m.opcode === 9 || m.opcode === 10)) continue;
    // Engine.IO heartbeats ("2", "3") are timer-driven too; "2probe" / "3probe" of the upgrade are kept.
    if (beats && eio !== undefined && m.opcode === 1 && (m.data === '2' || m.data === '3')) continue;
    // So are other protocols' keep-alive messages (heartbeats.ts): Action Cable's, graphql-ws's, SignalR's, Phoenix's, STOMP's...
    if (beats && m._bb?.truncated === undefined && isAppHeartbeat(m.opcode, m.data, beats)) continue;
    // A message cut at the body cap compares as what was kept (never parsed: a prefix is no packet or JSON) and says so.
    const cut = m._bb?.truncated;
    const data = cut !== undefined ? { truncated: { recorded: cut, size: m._bb?.size ?? null, ...(m._bb?.restHash !== undefined ? { hash: m._bb.restHash } : {}) }, kept: m.opcode === 1 ? normalizeString(m.data, ctx.walk) : m.data } : wsData(m.opcode, m.data, m._bb, ctx, eio, ctx.walk.notes ? `ws.messages[${messages.length}].data` : '');
    messages.push({ type: m.type, opcode: m.opcode, data });
  }
  const out: NonNullable<NormalizedEntry['ws']> = { messages };
  // Messages past the list: in no body, only their count and hash are in the capture (capture/ws-unlisted.ts).
  const counts = e._bb?.unlisted;
  if (counts) {
    const unlisted: NonNullable<typeof out.unlisted> = {};
    for (const [d, side] of [['send', 'request'], ['receive', 'response']] as const) {
      const n = counts[side];
      if (n !== undefined && n > 0) unlisted[d] = { count: n, digest: e._bb?.unlistedHash?.[side] ?? '' };
    }
    if (unlisted.send || unlisted.receive) out.unlisted = unlisted;
  }
  const close = e._bb?.close;
  if (close) out.close = { code: close.code, reason: normalizeString(String(close.reason ?? ''), ctx.walk), by: close.by };
  return out;
}

/**
 * One WebSocket message's data as compared: text parsed (an Engine.IO packet, JSON, else normalized text), a close as code and reason.
 * `at`: its field path, for the notes of erasing rules ('' when none note: normalizeValue reads it only then).
 */
function wsData(opcode: number, data: string, bb: { code?: number; reason?: string } | undefined, ctx: NormalizeContext, eio: string | undefined, at: string): unknown {
  if (opcode === 1) {
    // A connection whose upgrade URL is Engine.IO's: each text frame is one packet (engine-io.ts).
    const packet = eio === undefined ? undefined : decodeEnginePacket(data, eio);
    if (packet) {
      const v = normalizeValue(packet, ctx.walk, at);
      engineIoSids(v, ctx.table);
      return v;
    }
    if (mayBeJson(data)) {
      try {
        return normalizeValue(parseComparedJson(data), ctx.walk, at);
      } catch {
        // Not JSON after all: compared as text.
      }
    }
    return normalizeString(data, ctx.walk);
  }
  if (opcode === 8) {
    if (bb?.code !== undefined) return { code: bb.code, reason: bb.reason ?? '' };
    const bytes = Buffer.from(data, 'base64');
    return bytes.length >= 2 ? { code: bytes.readUInt16BE(0), reason: bytes.subarray(2).toString('utf8') } : { code: null, reason: '' };
  }
  if (opcode === -1) return normalizeString(data, ctx.walk);
  return data;
}

/**
 * A gRPC call as compared: each message decoded with its method's type when
 * the config's .proto files define the method (`path`, capture/proto-schema.ts),
 * else from the protobuf wire format without a schema (capture/protobuf.ts), its
 * values normalized like a JSON body; one that does not parse (or was cut
 * short) compares as its base64. The status comes from the trailers (bb
 * moves a gRPC-Web trailer frame there), else trailers-only headers.
 */
function normalizeGrpc(msgs: HarGrpcMessage[], e: HarEntry, path: string, ctx: NormalizeContext): NormalizedGrpc {
  const messages = msgs.map((m, i) => {
    const bytes = Buffer.from(m.data, 'base64');
    const whole = m._bb?.truncated === undefined && m._bb?.undecoded === undefined;
    return { type: m.type, opcode: 2, data: grpcData(bytes, whole, m.type, path, ctx, ctx.walk.notes ? `grpc.messages[${i}].data` : '') ?? m.data };
  });
  const { status, message } = grpcStatus(e.response._trailers, e.response.headers);
  const out: NormalizedGrpc = { messages, status };
  if (message !== undefined) out.message = normalizeString(message, ctx.walk);
  const unlisted = unlistedGrpcMessages(msgs, e, path, ctx);
  if (unlisted) out.unlisted = unlisted;
  return out;
}

/** A whole gRPC message's data as compared: decoded (with the config's .proto, else without a schema) and normalized; undefined when it stays base64. */
function grpcData(bytes: Buffer, whole: boolean, type: 'send' | 'receive', path: string, ctx: NormalizeContext, at: string): unknown {
  const decoded = whole ? (ctx.proto?.decode(path, type, bytes) ?? decodeProtobuf(bytes)) : undefined;
  return decoded ? normalizeValue(decoded, ctx.walk, at) : undefined;
}

/** Each direction's messages the capture did not list (`_bb.unlisted`), read from its body past the listed ones. */
function unlistedGrpcMessages(msgs: HarGrpcMessage[], e: HarEntry, path: string, ctx: NormalizeContext): NormalizedGrpc['unlisted'] {
  const counts = e._bb?.unlisted;
  if (!counts) return undefined;
  const out: NonNullable<NormalizedGrpc['unlisted']> = {};
  for (const type of ['send', 'receive'] as const) {
    const side = type === 'send' ? e.request : e.response;
    const text = type === 'send' ? e.request.postData?.text : e.response.content.text;
    const encoding = type === 'send' ? e.request.postData?._encoding : e.response.content.encoding;
    const media = grpcMedia(pairValue(side.headers, 'content-type'));
    if (!(counts[type === 'send' ? 'request' : 'response']! > 0) || text === undefined || !media) continue;
    const coding = pairValue(side.headers, 'grpc-encoding');
    const listed = msgs.filter((m) => m.type === type).length;
    const body = Buffer.from(text, encoding === 'base64' ? 'base64' : 'latin1');
    const folded = unlistedGrpc(body, media, listed, (flags, payload) => {
      const read = flags & 1 ? inflateGrpcMessage(payload, coding) : payload;
      if (typeof read === 'string') return payload.toString('base64');
      return grpcData(read, true, type, path, ctx, '') ?? read.toString('base64');
    });
    if (folded) out[type] = folded;
  }
  return out.send || out.receive ? out : undefined;
}
