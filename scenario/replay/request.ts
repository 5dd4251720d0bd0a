// One replayed HTTP request, pure: its parts from the HAR entry (the head
// as recorded: names in their case and order, nothing added or dropped), and
// the bytes that go on the socket (wireRequest): Host following the target,
// the body re-encoded with its recorded Content-Encoding and framed as the
// original was (Content-Length to the body's size, or chunked). The send
// itself is connection.ts.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import * as zlib from 'node:zlib';
import { EventStreamParser, headerPairs, headerValue, isEventStreamMedia, isTextualMedia, mediaType, pairValue, serializeHead } from '../../core/index.js';
import { decodeContent, grpcMedia, multipartBoundary, splitGrpcBody, type HarRequest } from '../../capture/index.js';
import { BIND_DECODED_BYTES, grpcMessageBytes, type ResponseView } from '../../diff/index.js';

/** A request as the replay sends it. */
export interface RequestParts {
  /** HTTP method. */
  method: string;
  /** Path and query, as the client addressed them. */
  target: string;
  /** "1.0" or "1.1": the request line's version as recorded (HTTP/2 entries go as 1.1). */
  version?: string;
  /** Headers in their recorded case and order (HTTP/2 pseudo-headers left out: they are the request line). */
  headers: Array<[string, string]>;
  /** The body: text (or base64 of bytes) and its media type, as the capture holds it (decoded). */
  body?: { text: string; base64: boolean; mime: string; asSent?: boolean };
  /** Request trailers, as recorded (sent when the body goes chunked). */
  trailers?: Array<[string, string]>;
}

/**
 * Headers about the connection and the message's framing, not the
 * application: correlation neither binds nor rewrites them, and the WebSocket
 * client writes its own.
 */
export const WIRE_HEADERS = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'content-length', 'upgrade', 'te', 'trailer', 'expect', 'http2-settings']);

/** Headers a WebSocket client writes itself on the upgrade. */
export const WS_OWN_HEADERS = new Set(['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-accept', 'sec-websocket-protocol']);

/** The parts of a HAR request the replay re-sends. */
export function requestParts(req: HarRequest): RequestParts {
  // As written, not through URL(): its parser would percent-encode a placeholder's < and >, hiding it.
  const rest = req.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split('#')[0]!;
  const target = rest === '' ? '/' : rest.startsWith('/') ? rest : `/${rest}`;
  const headers: Array<[string, string]> = [];
  // HTTP/2 pseudo-headers (Chrome's HARs) are the request line, already in `target`.
  for (const h of req.headers ?? []) if (!h.name.startsWith(':')) headers.push([h.name, h.value]);
  const pd = req.postData;
  let body: RequestParts['body'];
  if (pd?.text !== undefined) body = { text: pd.text, base64: pd._encoding === 'base64', mime: pd.mimeType ?? '', ...(/kept as sent/.test(pd.comment ?? '') ? { asSent: true } : {}) };
  else if (pd?.params?.length) body = paramsBody(pd.params, pd.mimeType || pairValue(req.headers, 'content-type') || '');
  const trailers = req._trailers?.map((t): [string, string] => [t.name, t.value]);
  return { method: req.method, target, version: /^HTTP\/1\.0$/i.test(req.httpVersion ?? '') ? '1.0' : '1.1', headers, ...(body ? { body } : {}), ...(trailers?.length ? { trailers } : {}) };
}

/** A body from HAR's params alone: multipart with the recorded boundary, else URL-encoded. */
function paramsBody(params: NonNullable<HarRequest['postData']>['params'] & object, mime: string): NonNullable<RequestParts['body']> {
  const boundary = /^\s*multipart\/form-data\b/i.test(mime) ? multipartBoundary(mime) : undefined;
  if (boundary === undefined) {
    return { text: params.map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(p.value ?? '')}`).join('&'), base64: false, mime: mime || 'application/x-www-form-urlencoded' };
  }
  // RFC 7578 §4: each part under the boundary the Content-Type names, so the two agree.
  const parts = params.map((p) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.fileName !== undefined ? `; filename="${p.fileName}"` : ''}\r\n` +
    (p.contentType ? `Content-Type: ${p.contentType}\r\n` : '') + `\r\n${p.value ?? ''}\r\n`);
  return { text: `${parts.join('')}--${boundary}--\r\n`, base64: false, mime };
}

/** Sets `--header` overrides: each replaces every header of its name, or is added. */
export function withHeaders(headers: Array<[string, string]>, overrides: ReadonlyArray<[string, string]>): Array<[string, string]> {
  if (overrides.length === 0) return headers;
  const names = new Set(overrides.map(([n]) => n.toLowerCase()));
  return [...headers.filter(([n]) => !names.has(n.toLowerCase())), ...overrides];
}

/** Content codings the replay can apply again (zstd where this Node has it). */
const ENCODERS: Record<string, ((bytes: Buffer) => Buffer) | undefined> = {
  gzip: (b) => gzipSync(b),
  'x-gzip': (b) => gzipSync(b),
  deflate: (b) => deflateSync(b),
  br: (b) => brotliCompressSync(b),
  zstd: (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync,
};

/** `bytes` encoded with one content coding (gzip, deflate, br, zstd where Node has it); undefined for a coding the replay cannot apply. */
export function encodeCoding(bytes: Buffer, coding: string): Buffer | undefined {
  return ENCODERS[coding.trim().toLowerCase()]?.(bytes);
}

/**
 * The body as it crossed: a capture holds request bodies decoded, so each
 * recorded Content-Encoding is applied again, in the order listed (RFC 9110
 * §8.4). Bytes that already decode as declared (a HAR that kept them raw), or
 * that the capture says it kept as sent, go as they are; so does a body whose
 * coding this Node cannot apply.
 */
export function encodeBody(bytes: Buffer, contentEncoding: string | undefined, asSent = false): Buffer {
  const codings = (contentEncoding ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || bytes.length === 0 || asSent) return bytes;
  if (codings.some((c) => ENCODERS[c] === undefined)) return bytes;
  const already = decodeContent(bytes, contentEncoding, false);
  if (already.decoded || already.pastCap) return bytes;
  return codings.reduce((b, c) => ENCODERS[c]!(b), bytes);
}

/** The body's bytes as they go, unframed: re-encoded with the request's recorded Content-Encoding (encodeBody); empty when none. */
export function bodyBytes(parts: RequestParts): Buffer {
  const b = parts.body;
  if (!b) return Buffer.alloc(0);
  const codings = parts.headers.filter(([n]) => n.toLowerCase() === 'content-encoding').map(([, v]) => v);
  return encodeBody(b.base64 ? Buffer.from(b.text, 'base64') : Buffer.from(b.text, 'utf8'), codings.length ? codings.join(', ') : undefined, b.asSent);
}

/** A request's bytes on the wire. */
export interface WireRequest {
  /** Method, for the response parser (HEAD has no body). */
  method: string;
  /** The head: request line and fields, to the blank line. */
  head: Buffer;
  /** The body as framed (chunked framing included); empty when none. */
  body: Buffer;
}

/**
 * The bytes of one request: the recorded head with Host set to `host` (in
 * its place; first when the capture had none, as HTTP/2 entries do) and the
 * body's framing header set to what is sent: Content-Length to its size, or
 * the body chunked when the original was (its trailers after it).
 */
export function wireRequest(parts: RequestParts, host: string): WireRequest {
  const raw: string[] = [];
  let hasHost = false;
  let hasLength = false;
  let chunked = false;
  for (const [name, value] of parts.headers) {
    const lower = name.toLowerCase();
    if (lower === 'host') {
      if (hasHost) continue;
      hasHost = true;
      raw.push(name, host);
      continue;
    }
    if (lower === 'content-length') {
      if (hasLength) continue;
      hasLength = true;
    } else if (lower === 'transfer-encoding') chunked ||= /(^|,)\s*chunked\s*$/i.test(value);
    raw.push(name, value);
  }
  if (!hasHost) raw.unshift('Host', host);
  const lengthAt = raw.findIndex((n, i) => i % 2 === 0 && n.toLowerCase() === 'content-length') + 1;
  const bytes = bodyBytes(parts);
  let body = bytes;
  if (chunked) {
    const trailers = (parts.trailers ?? []).map(([n, v]) => `${n}: ${v}\r\n`).join('');
    body = Buffer.concat([bytes.length ? Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1') : Buffer.alloc(0), bytes, Buffer.from(`${bytes.length ? '\r\n' : ''}0\r\n${trailers}\r\n`, 'latin1')]);
    if (lengthAt > 0) raw.splice(lengthAt - 1, 2);
  } else if (lengthAt > 0) raw[lengthAt] = String(bytes.length);
  else if (bytes.length > 0) raw.push('Content-Length', String(bytes.length));
  const head = Buffer.from(serializeHead(`${parts.method} ${parts.target} HTTP/${parts.version ?? '1.1'}`, raw), 'latin1');
  return { method: parts.method, head, body };
}

/** What the target answered to one replayed request. */
export interface LiveResponse {
  /** HTTP status. */
  status: number;
  /** Set when bb's proxy answered for a failed upstream (its X-BB-Error code). */
  proxyError?: string;
  /** The view the extractor reads. */
  view: ResponseView;
}

/** The view of a live response (raw headers, body as received): decoded as the capture decodes it; `truncated` when `body` is its start only (decoded as far as it goes). */
export function liveResponse(status: number, rawHeaders: readonly string[], body: Buffer, truncated = false): LiveResponse {
  const headers = headerPairs(rawHeaders);
  const proxyError = headerValue(rawHeaders, 'x-bb-error');
  const ct = headerValue(rawHeaders, 'content-type');
  // A gRPC answer is its messages, split and decompressed as the capture splits them (capture/grpc.ts).
  const grpc = grpcMedia(ct);
  if (grpc) {
    const { messages } = splitGrpcBody([{ bytes: body, ts: 0 }], { type: 'receive', media: grpc, encoding: headerValue(rawHeaders, 'grpc-encoding'), truncated });
    return { status, ...(proxyError ? { proxyError } : {}), view: { headers, grpc: messages.map(grpcMessageBytes) } };
  }
  // As the capture decodes bodies (codings in sequence; what does not decode stays as sent), as far as binding reads:
  // a start past BIND_DECODED_BYTES (256 KiB of gzip can decode to 256 MiB, on bb shadow's relay thread).
  const decoded = decodeContent(body, headerValue(rawHeaders, 'content-encoding'), truncated, { maxDecoded: BIND_DECODED_BYTES, startPastCap: true });
  const bytes = decoded.bytes;
  if (decoded.cut) truncated = true;
  let view: ResponseView;
  if (isEventStreamMedia(ct)) {
    const events = EventStreamParser.parseText(bytes.toString('utf8'));
    view = { headers, events: events.map((e) => e.data), eventIds: events.map((e) => e.eventId) };
  } else view = { headers, ...(ct === undefined || mediaType(ct) === '' || isTextualMedia(ct) ? { text: bytes.toString('utf8'), ...(truncated ? { truncated } : {}) } : {}) };
  return { status, ...(proxyError ? { proxyError } : {}), view };
}
