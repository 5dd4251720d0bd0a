// One replayed HTTP request: its parts from the HAR entry (pure), and the
// send through bb's recording proxy with undici (one Client per lane, so a
// lane is one connection as the original's was). The response is read to
// its end (SSE streams included) and handed back decoded for correlation.
// undici is loaded when a replay runs, not when scenario/ is imported.
import type { Client } from 'undici';
import { EventStreamParser, isEventStreamMedia, isTextualMedia, mediaType } from '../../core/index.js';
import { decodeContent, type HarRequest } from '../../capture/index.js';
import type { ResponseView } from '../../diff/index.js';

/** A request as the replay sends it. */
export interface RequestParts {
  /** HTTP method. */
  method: string;
  /** Path and query, as the client addressed them. */
  target: string;
  /** Headers in order, hop-by-hop and framing headers left out. */
  headers: Array<[string, string]>;
  /** The body: text (or base64 of bytes) and its media type. */
  body?: { text: string; base64: boolean; mime: string };
}

/** Headers the replay's own connection sets (framing, hop-by-hop, the proxy's Host). */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'content-length', 'upgrade', 'te', 'trailer', 'expect', 'http2-settings']);

/** Headers a WebSocket client writes itself on the upgrade. */
export const WS_OWN_HEADERS = new Set(['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-accept', 'sec-websocket-protocol']);

/** The parts of a HAR request the replay re-sends. */
export function requestParts(req: HarRequest): RequestParts {
  // As written, not through URL(): its parser would percent-encode a placeholder's < and >, hiding it.
  const rest = req.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split('#')[0]!;
  const target = rest === '' ? '/' : rest.startsWith('/') ? rest : `/${rest}`;
  const headers: Array<[string, string]> = [];
  for (const h of req.headers ?? []) {
    const lower = h.name.toLowerCase();
    // HTTP/2 pseudo-headers (Chrome's HARs) are the request line, already in `target`.
    if (lower.startsWith(':') || DROPPED.has(lower)) continue;
    headers.push([h.name, h.value]);
  }
  const pd = req.postData;
  let body: RequestParts['body'];
  if (pd?.text !== undefined) body = { text: pd.text, base64: pd._encoding === 'base64', mime: pd.mimeType ?? '' };
  else if (pd?.params?.length) body = { text: pd.params.map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(p.value ?? '')}`).join('&'), base64: false, mime: pd.mimeType || 'application/x-www-form-urlencoded' };
  return { method: req.method, target, headers, ...(body ? { body } : {}) };
}

/** Sets `--header` overrides: each replaces every header of its name, or is added. */
export function withHeaders(headers: Array<[string, string]>, overrides: ReadonlyArray<[string, string]>): Array<[string, string]> {
  if (overrides.length === 0) return headers;
  const names = new Set(overrides.map(([n]) => n.toLowerCase()));
  return [...headers.filter(([n]) => !names.has(n.toLowerCase())), ...overrides];
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

let undici: typeof import('undici') | undefined;

/** Loads undici once. */
export async function loadUndici(): Promise<typeof import('undici')> {
  undici ??= await import('undici');
  return undici;
}

/** One connection to the recording proxy, for one lane. */
export async function laneClient(proxyUrl: string, timeoutMs: number): Promise<Client> {
  const { Client } = await loadUndici();
  return new Client(proxyUrl, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 30_000, pipelining: 1 });
}

/** Sends one request on `client` and reads the whole response. Throws what undici throws (the proxy is gone). */
export async function sendRequest(client: Client, parts: RequestParts, signal?: AbortSignal): Promise<LiveResponse> {
  const flat: string[] = [];
  for (const [n, v] of parts.headers) flat.push(n, v);
  const body = parts.body ? (parts.body.base64 ? Buffer.from(parts.body.text, 'base64') : Buffer.from(parts.body.text, 'utf8')) : undefined;
  const res = await client.request({ method: parts.method, path: parts.target, headers: flat, ...(body !== undefined ? { body } : {}), ...(signal ? { signal } : {}) });
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  const headers: Array<{ name: string; value: string }> = [];
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) headers.push({ name, value: String(v) });
  }
  const get = (name: string) => headers.find((h) => h.name === name)?.value;
  const proxyError = get('x-bb-error');
  const ct = get('content-type');
  // As the capture decodes bodies (codings in sequence; what does not decode stays as sent).
  const bytes = decodeContent(Buffer.concat(chunks), get('content-encoding'), false).bytes;
  let view: ResponseView;
  if (isEventStreamMedia(ct)) view = { headers, events: EventStreamParser.parseText(bytes.toString('utf8')).map((e) => e.data) };
  else view = { headers, ...(ct === undefined || mediaType(ct) === '' || isTextualMedia(ct) ? { text: bytes.toString('utf8') } : {}) };
  return { status: res.statusCode, ...(proxyError ? { proxyError } : {}), view };
}
