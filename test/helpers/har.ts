// Hand-made HARs for tests, in two shapes: bb's own capture
// (docs/capture-format.md "What a capture holds"), built from what a test says
// about each exchange, and the plainer shapes other producers write (Chrome,
// Playwright, mitmproxy), built entry by entry with overrides.
import type { Har, HarEntry, HarWebSocketMessage } from '../../capture/har.js';

/** What a test says about one exchange. */
export interface ExchangeSpec {
  method?: string;
  url: string;
  status?: number;
  requestBody?: unknown;
  requestHeaders?: Array<[string, string]>;
  responseHeaders?: Array<[string, string]>;
  /** JSON value (serialized) or a string (sent as text/plain unless mime says otherwise). */
  body?: unknown;
  mime?: string;
  page?: string;
  ws?: Array<{ type: 'send' | 'receive'; data: unknown; opcode?: number }>;
  wsTimeUnit?: 's' | 'ms';
  close?: { code: number; reason: string; by: 'client' | 'server' | 'none' };
}

let clock = Date.parse('2026-01-01T00:00:00Z');

/** A time of the run these captures record (inside their time window), fresh each call: what a server stamps a response with. */
export function runTime(): string {
  return new Date(clock + Math.floor(Math.random() * 3_600_000)).toISOString();
}

/** One bb-shaped entry. */
export function bbEntry(spec: ExchangeSpec, seq: number): HarEntry {
  clock += 1000;
  const started = new Date(clock).toISOString();
  const text = spec.body === undefined ? '' : typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body);
  const mime = spec.mime ?? (spec.body === undefined || typeof spec.body === 'string' ? 'text/plain' : 'application/json');
  const u = new URL(spec.url);
  const reqText = spec.requestBody === undefined ? undefined : typeof spec.requestBody === 'string' ? spec.requestBody : JSON.stringify(spec.requestBody);
  const e: HarEntry = {
    startedDateTime: started,
    time: 3,
    request: {
      method: spec.method ?? 'GET',
      url: spec.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [['Host', u.host], ['User-Agent', 'test'], ...(spec.requestHeaders ?? [])].map(([name, value]) => ({ name: name!, value: value! })),
      queryString: [...u.searchParams].map(([name, value]) => ({ name, value })),
      headersSize: -1,
      bodySize: reqText ? Buffer.byteLength(reqText) : 0,
      ...(reqText !== undefined ? { postData: { mimeType: 'application/json', text: reqText } } : {}),
    },
    response: {
      status: spec.status ?? (spec.ws ? 101 : 200),
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [['Content-Type', mime], ['Content-Length', String(Buffer.byteLength(text))], ['Date', new Date(clock).toUTCString()], ...(spec.responseHeaders ?? [])].map(([name, value]) => ({ name: name!, value: value! })),
      content: { size: Buffer.byteLength(text), mimeType: mime, ...(text ? { text } : {}) },
      redirectURL: '',
      headersSize: -1,
      bodySize: Buffer.byteLength(text),
    },
    cache: {},
    timings: { send: 1, wait: 1, receive: 1 },
    connection: `c${seq}`,
    _bb: { seq },
    ...(spec.page ? { pageref: spec.page } : {}),
  };
  if (spec.ws) {
    e._resourceType = 'websocket';
    e._webSocketMessages = spec.ws.map((m, i): HarWebSocketMessage => {
      const t = clock / 1000 + i * 0.01;
      return {
        type: m.type,
        time: spec.wsTimeUnit === 'ms' ? t * 1000 : t,
        opcode: m.opcode ?? 1,
        data: typeof m.data === 'string' ? m.data : JSON.stringify(m.data),
      };
    });
    if (spec.close) e._bb!.close = { ...spec.close, time: clock / 1000 };
  }
  return e;
}

/** A bb-shaped capture from exchange specs; pages named by the specs' `page`. */
export function capture(specs: ExchangeSpec[], opts: { serverHome?: string; complete?: boolean; creator?: string } = {}): Har {
  const pages = [...new Set(specs.map((s) => s.page).filter((p): p is string => !!p))];
  const entries = specs.map((s, i) => bbEntry(s, i + 1));
  return {
    log: {
      version: '1.2',
      creator: { name: opts.creator ?? 'bb', version: '0.1.0' },
      pages: pages.map((p) => ({ id: p, title: p, startedDateTime: new Date(clock).toISOString(), pageTimings: {} })),
      entries,
      _bb: {
        format: 1,
        label: 'test',
        target: 'http://127.0.0.1:3001',
        listen: 'http://127.0.0.1:8080',
        startedDateTime: new Date(clock).toISOString(),
        endedDateTime: new Date(clock).toISOString(),
        complete: opts.complete ?? true,
        counts: { entries: entries.length, webSocketMessages: 0 },
        ...(opts.serverHome ? { serverHome: opts.serverHome } : {}),
      },
    },
  };
}

/** A random uuid (v4 shape). */
export function uuid(): string {
  return crypto.randomUUID();
}

/** One message as a producer writes it. */
export interface Msg {
  type: 'send' | 'receive' | 'error';
  time: number;
  opcode: number;
  data: string;
  _bb?: Record<string, unknown>;
}

/** A HAR entry in another producer's shape, with what readers require, plus overrides (`status` and `method` go where they belong). */
export function entry(url: string, startedDateTime: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { status = 200, method = 'GET', ...rest } = extra as { status?: number; method?: string };
  return {
    startedDateTime,
    time: 12,
    request: { method, url, httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: 0 },
    response: {
      status, statusText: '', httpVersion: 'HTTP/1.1', cookies: [], headers: [],
      content: { size: 42, mimeType: 'application/json' }, redirectURL: '', headersSize: -1, bodySize: 40,
    },
    cache: {},
    timings: { send: 1, wait: 10, receive: 1 },
    ...rest,
  };
}

/** A WebSocket entry (Chrome's marker, a 101, messages). */
export function wsEntry(url: string, startedDateTime: string, messages: Msg[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return entry(url, startedDateTime, { status: 101, _resourceType: 'websocket', _webSocketMessages: messages, ...extra });
}

/** A HAR document around entries (of either shape). */
export function har(entries: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): unknown {
  return { log: { version: '1.2', creator: { name: 'test', version: '1' }, pages: [], entries, ...extra } };
}
