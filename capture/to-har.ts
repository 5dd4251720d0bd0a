// Journal records of one exchange → one HAR entry. Pure: bytes come through
// the `readBody` function the writer passes in, and nothing here touches disk.
import type { BbEntryExt, HarEntry, HarShadow, HarRequest, HarResponse, HarTimings, HarWebSocketMessage } from './har.js';
import { END_RECORDS } from './journal.js';
import type {
  AbortRecord, BodyRecord, JournalRecord, ClientErrorRecord, DoneRecord, FailRecord, GrpcSeqRecord, RequestEndRecord,
  InformationalRecord, ResetBurstRecord, ResponseStartRecord, StartRecord, UpgradeRecord, WsCloseRecord, WsErrorRecord, WsMessageRecord,
} from './journal.js';
import { utf8Text } from './body.js';
import {
  headerPairs, headerValue, headerValues, headSize, parseCookieHeader, parseExtensions, parseParams,
  parseRefusedPacket, parseSetCookie, requestUrl, splitQuery,
} from './http-parts.js';
import type { Redactor } from './redact.js';
import { redactRawPacket } from './redact-raw.js';
import { grpcEntryParts } from './grpc.js';
import { MESSAGES_LISTED } from './options.js';
import { RestHashing } from './rest-hash.js';
import { WsUnlisted } from './ws-unlisted.js';
import { buildPostData, fillContent, gather, type BodyContext } from './to-har-bodies.js';

/** Everything the journal said about one exchange, gathered by the writer. */
export interface ExchangeRecords {
  /** The request head; absent for refused packets (cerr). */
  start?: StartRecord;
  /** Request body chunks, in order. */
  requestBody: BodyRecord[];
  /** Request end, when it came. */
  requestEnd?: RequestEndRecord;
  /** Response head, when it came. */
  responseStart?: ResponseStartRecord;
  /** Response body chunks, in order. */
  responseBody: BodyRecord[];
  /** The 101, for WebSockets. */
  upgrade?: UpgradeRecord;
  /** Informational (1xx) heads before the final response, in order. */
  informational?: InformationalRecord[];
  /** WebSocket messages and error rows, in order: the first MESSAGES_LISTED messages of a direction. */
  ws: Array<WsMessageRecord | WsErrorRecord>;
  /** WebSocket: the messages past the list, folded (ws-unlisted.ts). */
  wsUnlisted?: WsUnlisted;
  /** gRPC messages' seqs, in the order their last bytes crossed. */
  grpcSeq?: GrpcSeqRecord[];
  /** h2: a burst of streams reset before any response, one record for the whole entry. */
  burst?: ResetBurstRecord;
  /** `bb shadow`'s tags, merged. */
  shadow?: HarShadow;
  /** The hashes of the bodies' bytes past the cap (q request, r response). */
  rest?: { q?: string; r?: string };
  /** The record that ended it; absent when still open at finalize. */
  end?: DoneRecord | FailRecord | AbortRecord | ClientErrorRecord | WsCloseRecord;
}

/** What building an entry needs besides the records. */
export interface EntryContext extends BodyContext {
  /** Origin used when a request names no host (the proxy's listen URL). */
  fallbackOrigin: string;
  /** id → title of pages, for refused packets that carry only a page id. */
  pageIds?: ReadonlySet<string>;
}

/** The note of an entry whose exchange had not ended when the HAR was written. */
export const IN_FLIGHT_NOTE = 'still in flight when the capture ended';

/** Fresh, empty records for an exchange. */
export function emptyRecords(): ExchangeRecords {
  return { requestBody: [], responseBody: [], ws: [] };
}

/**
 * Adds a record of an exchange (after its start) to its records; true when it
 * ended the exchange. The writer and the live view gather records this one way.
 */
export function addRecord(ex: ExchangeRecords, r: JournalRecord): boolean {
  switch (r.r) {
    case 'qb': addBodyRecord(ex.requestBody, r); break;
    case 'rb': addBodyRecord(ex.responseBody, r); break;
    case 'qe': ex.requestEnd = r; break;
    case 'rs': ex.responseStart = r; break;
    case 'upg': ex.upgrade = r; break;
    case 'inf': (ex.informational ??= []).push(r); break;
    case 'wsm': case 'wse': addWsRecord(ex, r); break;
    case 'gm': (ex.grpcSeq ??= []).push(r); break;
    case 'tag': ex.shadow = { ...ex.shadow, ...r.shadow }; break;
    case 'rest': (ex.rest ??= {})[r.d] = r.h; break;
    default: break;
  }
  if (!END_RECORDS.has(r.r)) return false;
  ex.end = r as ExchangeRecords['end'];
  return true;
}

// A body's records past the cap keep no bytes: one after another they are one (a new object, the records may be
// shared), so a peer trickling bytes for hours past the cap costs one record here, not one a turn.
function addBodyRecord(list: BodyRecord[], r: BodyRecord): void {
  const last = list[list.length - 1];
  if (r.n === 0 && last !== undefined && last.n === 0) list[list.length - 1] = { ...last, w: last.w + r.w };
  else list.push(r);
}

/** Adds a WebSocket message or error row: listed, or past the list folded into the exchange's WsUnlisted. */
export function addWsRecord(ex: ExchangeRecords, r: WsMessageRecord | WsErrorRecord): void {
  if (r.r === 'wse' || (ex.wsUnlisted ??= new WsUnlisted()).take(r)) ex.ws.push(r);
}

/** Builds the HAR entry for one exchange. */
export function buildEntry(ex: ExchangeRecords, ctx: EntryContext): HarEntry {
  if (!ex.start && ex.end?.r === 'cerr') return buildRefusedEntry(ex.end, ctx);
  if (!ex.start && ex.burst) return buildResetBurstEntry(ex.burst, ctx);
  const start = ex.start!;
  const bb: BbEntryExt = { seq: start.seq, started: startedMs(start.ts) };
  if (ex.end) bb.seqEnd = ex.end.seq;
  if (start.sid !== undefined) bb.stream = start.sid;
  if (start.push !== undefined) bb.pushed = start.push;
  if (ex.shadow) bb.shadow = ex.shadow;
  const notes: string[] = [];

  const request = buildRequest(start, ex, ctx, bb, notes);
  let response: HarResponse;
  const fail = ex.end?.r === 'fail' ? ex.end : undefined;
  if (fail) bb.error = { code: fail.err.code, message: fail.err.message, phase: fail.err.phase };
  if (ex.end?.r === 'abort') {
    bb.aborted = ex.end.by;
    if (ex.end.rst) bb.reset = ex.end.rst;
    notes.push(
      `aborted by ${ex.end.by} during the ${ex.end.phase}` + (ex.end.err ? `: ${ex.end.err.code} ${ex.end.err.message}` : ''),
    );
  }
  if (!ex.end) {
    bb.inFlight = true;
    notes.push(IN_FLIGHT_NOTE);
  }

  const entry: HarEntry = {
    startedDateTime: new Date(start.ts).toISOString(),
    time: 0,
    request,
    response: undefined as unknown as HarResponse,
    cache: {},
    timings: { send: -1, wait: -1, receive: -1 },
    connection: start.c,
  };
  if (start.page) entry.pageref = start.page;

  if (ex.upgrade) {
    response = buildHead(ex.upgrade.st, ex.upgrade.sm, ex.upgrade.v, ex.upgrade.h, ctx);
    entry._resourceType = 'websocket';
    entry._webSocketMessages = ex.ws.map((m) => buildWsMessage(m, ctx));
    if (ex.wsUnlisted?.any()) {
      const { counts, hashes } = ex.wsUnlisted.summary(ctx.readBody, ctx.redactor ? ctx.redactor.restHashing() : new RestHashing());
      bb.unlisted = counts;
      bb.unlistedHash = hashes;
      for (const [side, who] of [['request', 'the client'], ['response', 'the server']] as const) {
        if (counts[side]) notes.push(`${counts[side]} messages ${who} sent past the first ${MESSAGES_LISTED} are not listed: their count and a hash are kept`);
      }
    }
    bb.extensions = parseExtensions(headerValue(ex.upgrade.h, 'sec-websocket-extensions'));
    const close = ex.end?.r === 'wsc' ? ex.end : undefined;
    bb.close = close
      ? { code: close.code ?? null, reason: close.reason ?? '', by: close.by, time: close.ts / 1000 }
      : { code: null, reason: '', by: 'none', time: null };
  } else if (fail?.resp) {
    response = buildHead(fail.resp.st, fail.resp.sm, '1.1', fail.resp.h, ctx);
    fillContent(response, [{ r: 'rb', x: start.x, ts: fail.ts, ...fail.resp }], fail.resp.h, ctx, bb, notes, false);
  } else if (ex.responseStart) {
    const rs = ex.responseStart;
    response = buildHead(rs.st, rs.sm, rs.v, rs.h, ctx);
    const events = fillContent(response, ex.responseBody, rs.h, ctx, bb, notes, true);
    if (events) entry._eventSourceMessages = events;
    if (ex.end?.r === 'done' && ex.end.tr.length > 0) response._trailers = headerPairs(ex.end.tr);
  } else {
    // No response reached the client (upstream failed after the head, or a hang-up).
    response = emptyResponse();
  }
  if (ex.informational) {
    const kept = ex.informational.filter((r) => !r.more);
    if (kept.length) response._informational = kept.map((r) => ({ status: r.st, statusText: r.sm, headers: redactHeaders(r.h, ctx) }));
    if (kept.length < ex.informational.length) notes.push(`more than ${kept.length} informational (1xx) heads came before the response; the first ${kept.length} are kept`);
  }
  entry.response = response;
  const grpc = ex.upgrade ? undefined : grpcEntryParts(request, response, ex.requestBody, ex.responseBody, ctx.readBody, ex.grpcSeq, ctx.redactor);
  if (grpc) {
    entry._grpcMessages = grpc.messages;
    if (grpc.unlisted.send > 0) (bb.unlisted ??= {}).request = grpc.unlisted.send;
    if (grpc.unlisted.receive > 0) (bb.unlisted ??= {}).response = grpc.unlisted.receive;
    bb.grpc = grpc.status;
    if (grpc.trailers && !response._trailers) response._trailers = grpc.trailers;
    notes.push(...grpc.notes);
  }

  // A cut body's rest hash stands beside its `truncated` (a hash without it would hash nothing).
  if (ex.rest?.q && bb.truncated?.request !== undefined) (bb.restHash ??= {}).request = ex.rest.q;
  if (ex.rest?.r && bb.truncated?.response !== undefined) (bb.restHash ??= {}).response = ex.rest.r;
  entry.timings = timings(start.ts, ex);
  entry.time = sumTimings(entry.timings);
  if (notes.length > 0) entry.comment = notes.join('; ');
  entry._bb = bb;
  return entry;
}

function buildRequest(start: StartRecord, ex: ExchangeRecords, ctx: EntryContext, bb: BbEntryExt, notes: string[]): HarRequest {
  const { url, keepTarget } = requestUrl(start.scheme, start.target, start.h, ctx.fallbackOrigin);
  if (keepTarget) bb.target = ctx.redactor ? ctx.redactor.url(start.target) : start.target;
  const request = buildRequestHead(start.method, url, start.v, start.h, ctx);
  // An h2 head crosses HPACK-compressed: its size is not a text head's.
  request.headersSize = start.v === '2.0' ? -1 : headSize(`${start.method} ${start.target} HTTP/${start.v}`, start.h);
  request.bodySize = ex.requestBody.reduce((sum, c) => sum + c.w, 0);
  if (request.bodySize > 0 || ex.requestBody.some((c) => c.n > 0)) {
    request.postData = buildPostData(ex.requestBody, start.h, ctx, bb, notes);
  }
  if (ex.requestEnd && ex.requestEnd.tr.length > 0) request._trailers = headerPairs(ex.requestEnd.tr);
  return request;
}

/** The URL a start record's entry shows (request.url): absolute, its query redacted when the capture is. */
export function entryUrl(start: StartRecord, fallbackOrigin: string, redactor: Redactor | undefined): string {
  const rawUrl = requestUrl(start.scheme, start.target, start.h, fallbackOrigin).url;
  return redactedUrl(rawUrl, splitQuery(rawUrl), redactor);
}

function redactedUrl(rawUrl: string, { base, query, hash }: ReturnType<typeof splitQuery>, r: Redactor | undefined): string {
  if (!r) return rawUrl;
  // The path was redacted as it was journaled; a value remembered since (from a body) is hidden in it too.
  const path = r.knownValues(base);
  if (query === undefined) return path + hash;
  return `${path}?${r.queryString(query)}${hash}`;
}

function buildRequestHead(method: string, rawUrl: string, version: string, h: string[], ctx: EntryContext): HarRequest {
  const r = ctx.redactor;
  const parts = splitQuery(rawUrl);
  const { query } = parts;
  const url = redactedUrl(rawUrl, parts, r);
  return {
    method,
    url,
    httpVersion: `HTTP/${version}`,
    cookies: parseCookieHeader(headerValues(h, 'cookie')).map((c) => (r ? { ...c, value: r.placeholder(c.value) } : c)),
    headers: redactHeaders(h, ctx),
    queryString: r ? parseParams(query).map((p) => r.param(p)) : parseParams(query),
    headersSize: -1,
    bodySize: 0,
  };
}

function buildHead(status: number, reason: string, version: string, h: string[], ctx: EntryContext): HarResponse {
  const r = ctx.redactor;
  const cookies = headerValues(h, 'set-cookie')
    .map(parseSetCookie)
    .filter((c) => c !== undefined)
    .map((c) => (r ? { ...c, value: r.placeholder(c.value) } : c));
  return {
    status,
    statusText: reason,
    httpVersion: `HTTP/${version}`,
    cookies,
    headers: redactHeaders(h, ctx),
    content: { size: 0, mimeType: headerValue(h, 'content-type') ?? '' },
    redirectURL: r ? r.url(headerValue(h, 'location') ?? '') : (headerValue(h, 'location') ?? ''),
    headersSize: version === '2.0' ? -1 : headSize(`HTTP/${version} ${status} ${reason}`, h),
    bodySize: 0,
  };
}

function emptyResponse(): HarResponse {
  return {
    status: 0, statusText: '', httpVersion: '', cookies: [], headers: [],
    content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: -1,
  };
}

function redactHeaders(h: string[], ctx: EntryContext) {
  const pairs = headerPairs(h);
  const r = ctx.redactor;
  if (!r) return pairs;
  return pairs.map((p) => {
    const value = r.anyHeaderValue(p.name, p.value);
    return value === p.value ? p : { name: p.name, value };
  });
}

/** One journaled WebSocket message (or error row) in HAR's shape; also for tailing a live journal. */
export function buildWsMessage(m: WsMessageRecord | WsErrorRecord, ctx: Pick<EntryContext, 'readBody' | 'redactor'>): HarWebSocketMessage {
  if (m.r === 'wse') {
    return {
      type: 'error', time: m.ts / 1000, opcode: -1, data: m.msg,
      _bb: { seq: m.seq, ...(m.page ? { page: m.page } : {}), error: m.code, direction: m.d },
    };
  }
  const payload = m.n > 0 ? ctx.readBody(m) : Buffer.alloc(0);
  let data: string;
  if (m.op === 1) {
    data = utf8Text(payload) ?? payload.toString('utf8');
    const r = ctx.redactor;
    if (r) data = r.textValue(data) ?? data;
  } else {
    data = (ctx.redactor ? ctx.redactor.secretBytes(closePayload(payload, m.op, ctx.redactor)) : payload).toString('base64');
  }
  const bb: NonNullable<HarWebSocketMessage['_bb']> = { seq: m.seq, frames: m.f, compressed: m.z };
  if (m.page) bb.page = m.page;
  if (m.cc !== undefined) bb.code = m.cc;
  if (m.cr !== undefined) bb.reason = m.cr;
  if (m.n < m.w) {
    bb.truncated = m.n;
    bb.size = m.w;
    if (m.h !== undefined) bb.restHash = m.h;
  }
  return { type: m.d, time: m.ts / 1000, opcode: m.op, data, _bb: bb };
}

/**
 * A close frame's payload (its code, then its reason's UTF-8) with the reason redacted as the reason fields are
 * (recorder.ts): secretBytes alone left another secret, a `ghp_…` token say, readable in the message's base64.
 */
function closePayload(payload: Buffer, op: number, redactor: NonNullable<EntryContext['redactor']>): Buffer {
  if (op !== 8 || payload.length <= 2) return payload;
  const reason = payload.subarray(2).toString('utf8');
  const redacted = redactor.textValue(reason);
  return redacted === undefined || redacted === reason ? payload : Buffer.concat([payload.subarray(0, 2), Buffer.from(redacted, 'utf8')]);
}

/** `https://host` from a CONNECT authority (`host:443` → `https://host`). */
function httpsOrigin(authority: string): string {
  return `https://${authority.endsWith(':443') ? authority.slice(0, -4) : authority}`;
}

/** A refused packet (Node's parser said no) as an entry of its own. */
function buildRefusedEntry(rec: ClientErrorRecord, ctx: EntryContext): HarEntry {
  const notes: string[] = [];
  const raw = rec.raw ? gather([rec.raw], ctx, notes).bytes : undefined;
  const parsed = parseRefusedPacket(raw);
  // A forward-mode TLS handshake the client refused is listed under the host it was for.
  const origin = rec.host ? httpsOrigin(rec.host) : ctx.fallbackOrigin.replace(/\/+$/, '');
  const request = parsed
    ? buildRequestHead(parsed.method, requestUrl(origin.startsWith('https') ? 'https' : 'http', parsed.target, parsed.rawHeaders, origin).url, parsed.httpVersion, parsed.rawHeaders, ctx)
    : buildRequestHead('-', origin + '/', '1.1', [], ctx);
  if (!parsed) request.httpVersion = '';
  request.bodySize = -1;
  const bb: BbEntryExt = {
    seq: rec.seq, seqEnd: rec.seq, started: startedMs(rec.ts),
    error: { code: rec.err.code, message: rec.err.message, phase: rec.err.phase },
  };
  // The bytes themselves are redacted too: base64 hides a secret from grep, not from a reader.
  if (raw && raw.length > 0) bb.rawPacket = (ctx.redactor ? redactRawPacket(raw, rec.err.code, ctx.redactor) : raw).toString('base64');
  let response = emptyResponse();
  if (rec.resp) {
    response = buildHead(rec.resp.st, rec.resp.sm, '1.1', rec.resp.h, ctx);
    fillContent(response, [{ r: 'rb', x: rec.x, ts: rec.ts, ...rec.resp }], rec.resp.h, ctx, bb, notes, false);
  }
  notes.unshift(rec.by === 'upstream' ? `the proxy refused the upstream's bytes: ${rec.err.code}` : `the proxy refused these bytes: ${rec.err.code}`);
  const entry: HarEntry = {
    startedDateTime: new Date(rec.ts).toISOString(),
    time: 0,
    request,
    response,
    cache: {},
    timings: { send: 0, wait: 0, receive: 0 },
    connection: rec.c,
    comment: notes.join('; '),
    _bb: bb,
  };
  if (rec.page) entry.pageref = rec.page;
  return entry;
}

/** A burst of h2 streams reset before any response as one entry: the first stream's request, standing for all. */
function buildResetBurstEntry(rec: ResetBurstRecord, ctx: EntryContext): HarEntry {
  const { url, keepTarget } = requestUrl(rec.scheme, rec.target, rec.h, ctx.fallbackOrigin);
  const request = buildRequestHead(rec.method, url, rec.v, rec.h, ctx);
  const resets = rec.rst.map((r) => ({ by: r.by, code: r.code, count: r.n }));
  const bb: BbEntryExt = {
    seq: rec.seq, seqEnd: rec.seq, started: startedMs(rec.ts), stream: rec.sid,
    aborted: resets[0]?.by ?? 'client',
    ...(resets[0] ? { reset: resets[0].code } : {}),
    resetBurst: { count: rec.n, streams: rec.ids, endedDateTime: new Date(rec.te).toISOString(), resets },
  };
  if (keepTarget) bb.target = rec.target;
  const spanMs = round(rec.te - rec.ts);
  const codes = resets.map((r) => `${r.by} ${r.code} × ${r.count}`).join(', ');
  const entry: HarEntry = {
    startedDateTime: new Date(rec.ts).toISOString(),
    time: 0,
    request,
    response: emptyResponse(),
    cache: {},
    timings: { send: -1, wait: -1, receive: -1 },
    connection: rec.c,
    comment: `stands for ${rec.n} HTTP/2 streams reset before a response (${codes}) within ${spanMs} ms; the request shown is the first one's (stream ${rec.sid})`,
    _bb: bb,
  };
  if (rec.page) entry.pageref = rec.page;
  return entry;
}

const round = (ms: number) => Math.round(Math.max(0, ms) * 1000) / 1000;
/** An epoch ms to the µs below it, never past the millisecond startedDateTime names (ts × 1000 would round up). */
function startedMs(ts: number): number {
  const ms = Math.floor(ts);
  return ms + Math.floor((ts - ms) * 1000) / 1000;
}

/** send = request head → request end, wait → response head, receive → end; unknown phases -1. */
export function timings(startTs: number, ex: ExchangeRecords): HarTimings {
  const reqEnd = ex.requestEnd?.ts;
  const head = ex.responseStart?.ts ?? ex.upgrade?.ts;
  const end = ex.upgrade ? head : ex.end?.ts;
  const t: HarTimings = { blocked: -1, dns: -1, connect: -1, ssl: -1, send: -1, wait: -1, receive: -1 };
  if (reqEnd !== undefined) t.send = round(reqEnd - startTs);
  if (head !== undefined) {
    t.wait = round(head - (reqEnd !== undefined && reqEnd < head ? reqEnd : startTs));
    if (end !== undefined) t.receive = round(end - head);
  } else if (ex.end && reqEnd !== undefined) {
    // Failed or aborted before any response: the time waited still counts.
    t.wait = round(ex.end.ts - reqEnd);
  }
  return t;
}

/** HAR's entry.time: the sum of the known phases. */
export function sumTimings(t: HarTimings): number {
  let sum = 0;
  for (const v of [t.blocked, t.dns, t.connect, t.send, t.wait, t.receive]) if (v !== undefined && v > 0) sum += v;
  return Math.round(sum * 1000) / 1000;
}
