// The scenario's HTTP client: undici 7, one Pool bound to the proxy's URL,
// JSON in and out. It reads whole bodies (SSE streams included: a long
// operation's stream ends when the operation does) and never throws on an
// HTTP status unless the caller asks with `expect`.
// undici is loaded when a scenario runs, not when scenario/ is imported:
// bb capture records through scenario/record/ and should not pay for it at start-up.
import type { Pool } from 'undici';
import { EventStreamParser, isJsonMedia } from '../../core/index.js';

/** Per-request options. */
export interface RequestOptions {
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Query parameters, appended to the path. */
  query?: Record<string, string | number | boolean>;
  /** Body: objects and arrays are sent as JSON; strings and Buffers as they are. */
  body?: unknown;
  /** Throw unless the status is one of these. */
  expect?: number | number[];
  /** Bound on waiting for the response head and between body chunks (default 10 s). */
  timeoutMs?: number;
}

/** One server-sent event, parsed from a text/event-stream body. */
export interface SseEvent {
  /** The event name ("message" when none was given). */
  event: string;
  /** The data lines joined with \n. */
  data: string;
  /** The last event id, when given. */
  id?: string;
}

/** What a request returns. */
export interface HttpResponse {
  /** HTTP status. */
  status: number;
  /** Response headers (lower-case names; repeated headers as arrays). */
  headers: Record<string, string | string[]>;
  /** Parsed JSON for JSON media types, text for text, else the bytes. */
  body: unknown;
  /** The body bytes as received (content-encoding left as is). */
  raw: Buffer;
  /** For text/event-stream: the events. */
  events?: SseEvent[];
}

/** The HTTP helpers a scenario gets as `t.http`. */
export interface HttpClient {
  /** The base URL every path is relative to. */
  readonly baseUrl: string;
  /** Any method. */
  request(method: string, path: string, opts?: RequestOptions): Promise<HttpResponse>;
  /** GET path. */
  get(path: string, opts?: RequestOptions): Promise<HttpResponse>;
  /** POST path with an optional body. */
  post(path: string, body?: unknown, opts?: RequestOptions): Promise<HttpResponse>;
  /** PUT path with an optional body. */
  put(path: string, body?: unknown, opts?: RequestOptions): Promise<HttpResponse>;
  /** PATCH path with an optional body. */
  patch(path: string, body?: unknown, opts?: RequestOptions): Promise<HttpResponse>;
  /** DELETE path. */
  delete(path: string, opts?: RequestOptions): Promise<HttpResponse>;
  /** Closes the pool's connections once requests in flight finish. */
  close(): Promise<void>;
  /** Closes the pool's connections now, failing requests in flight. */
  destroy(): Promise<void>;
}

/** Makes the client for one base URL (e.g. the proxy's http://127.0.0.1:PORT). */
export async function createHttpClient(baseUrl: string): Promise<HttpClient> {
  const { Pool: PoolClass } = await import('undici');
  const origin = new URL(baseUrl).origin;
  const pool: Pool = new PoolClass(origin, { connections: 8 });
  const request = async (method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> => {
    const what = `${method} ${path}`;
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | Buffer | undefined;
    if (opts.body !== undefined) {
      if (typeof opts.body === 'string' || Buffer.isBuffer(opts.body)) body = opts.body;
      else {
        body = JSON.stringify(opts.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      }
    }
    let target = path;
    if (opts.query) {
      const qs = new URLSearchParams(Object.entries(opts.query).map(([k, v]) => [k, String(v)])).toString();
      if (qs) target += (target.includes('?') ? '&' : '?') + qs;
    }
    const timeout = opts.timeoutMs ?? 10_000;
    let res;
    let raw: Buffer;
    try {
      res = await pool.request({ method, path: target, headers, body, headersTimeout: timeout, bodyTimeout: timeout });
      raw = Buffer.from(await res.body.arrayBuffer());
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e.code === 'UND_ERR_HEADERS_TIMEOUT') throw new Error(`${what} got no response within ${timeout} ms`);
      if (e.code === 'UND_ERR_BODY_TIMEOUT') throw new Error(`${what}: the response body stalled for ${timeout} ms`);
      throw new Error(`${what} failed: ${e.code ? `${e.code} ` : ''}${e.message}`);
    }
    const out = decode(res.statusCode, res.headers as Record<string, string | string[]>, raw);
    const expected = opts.expect === undefined ? undefined : [opts.expect].flat();
    if (expected && !expected.includes(out.status)) {
      const sample = raw.toString('utf8').slice(0, 200);
      throw new Error(`${what} answered ${out.status}, expected ${expected.join(' or ')}${sample ? `: ${sample}` : ''}`);
    }
    return out;
  };
  return {
    baseUrl: origin,
    request,
    get: (path, opts) => request('GET', path, opts),
    post: (path, body, opts) => request('POST', path, { ...opts, body }),
    put: (path, body, opts) => request('PUT', path, { ...opts, body }),
    patch: (path, body, opts) => request('PATCH', path, { ...opts, body }),
    delete: (path, opts) => request('DELETE', path, opts),
    close: () => pool.close(),
    destroy: () => pool.destroy(),
  };
}

function decode(status: number, headers: Record<string, string | string[]>, raw: Buffer): HttpResponse {
  const type = String(headers['content-type'] ?? '').toLowerCase();
  const encoded = headers['content-encoding'] !== undefined && headers['content-encoding'] !== 'identity';
  let body: unknown = raw;
  let events: SseEvent[] | undefined;
  if (!encoded && raw.length > 0) {
    if (isJsonMedia(type)) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = raw.toString('utf8');
      }
    } else if (type.startsWith('text/event-stream')) {
      body = raw.toString('utf8');
      events = parseSse(body as string);
    } else if (type.startsWith('text/') || type === '') {
      body = raw.toString('utf8');
    }
  } else if (raw.length === 0) {
    body = '';
  }
  return { status, headers, body, raw, ...(events ? { events } : {}) };
}

/** Parses a whole text/event-stream body with capture's parser (the HTML standard's rules, one implementation). */
export function parseSse(text: string): SseEvent[] {
  const parser = new EventStreamParser();
  parser.push(Buffer.from(text, 'utf8'), 0);
  return parser.end(0).map((m) => ({ event: m.eventName, data: m.data, ...(m.eventId !== '' ? { id: m.eventId } : {}) }));
}
