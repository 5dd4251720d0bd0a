// Checks a parsed HAR entry by entry and fills what other producers leave out.
//
// Pure: takes parsed JSON, returns typed HAR or throws a HarShapeError naming
// the JSON path of the first wrong value ("log.entries[3].response.status must
// be a number"). Unknown `_` fields pass through untouched; missing optional
// fields get HAR's "unknown" values (-1, "", []); `null` counts as missing for
// optional fields (several exporters write it).
import type {
  HarEntry,
  HarLog,
  HarNameValue,
  HarWebSocketMessage,
  HarGrpcMessage,
  HarEventSourceMessage,
  HarInformational,
  HarPage,
} from './har.js';
import { isShadowRole } from './har.js';
import { toEpochSeconds } from '../core/index.js';

/** A value in the file has the wrong type; `path` is its JSON path. */
export class HarShapeError extends Error {
  /** JSON path of the offending value, e.g. log.entries[3].response.status. */
  readonly path: string;
  constructor(path: string, expected: string, got: unknown) {
    super(`${path} must be ${expected} (got ${describe(got)})`);
    this.name = 'HarShapeError';
    this.path = path;
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, path: string): Obj {
  if (!isObj(v)) throw new HarShapeError(path, 'an object', v);
  return v;
}

function optObj(o: Obj, key: string, path: string): Obj | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw new HarShapeError(`${path}.${key}`, 'an object', v);
  return v;
}

function str(o: Obj, key: string, path: string, fallback?: string): string {
  const v = o[key];
  if ((v === undefined || v === null) && fallback !== undefined) return fallback;
  if (typeof v !== 'string') throw new HarShapeError(`${path}.${key}`, 'a string', v);
  return v;
}

function optStr(o: Obj, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new HarShapeError(`${path}.${key}`, 'a string', v);
  return v;
}

function num(o: Obj, key: string, path: string, fallback?: number): number {
  const v = o[key];
  if ((v === undefined || v === null) && fallback !== undefined) return fallback;
  if (typeof v !== 'number' || Number.isNaN(v)) throw new HarShapeError(`${path}.${key}`, 'a number', v);
  return v;
}

// RFC 4648 base64, standard alphabet; whitespace tolerated (some exporters wrap lines).
// Searched for a bad character rather than matched whole: linear even on a 100 MB body.
const NOT_BASE64 = /[^A-Za-z0-9+/=\s]/;

/** A text said to be base64 must be base64: decoding it would silently drop what is not. */
function checkBase64(text: string | undefined, encoding: unknown, path: string): void {
  if (encoding !== 'base64' || text === undefined) return;
  const pad = text.indexOf('=');
  const bare = /\s/.test(text) ? text.replace(/\s/g, '') : text;
  const ok = !NOT_BASE64.test(text) && (pad < 0 || /^={1,2}\s*$/.test(text.slice(pad))) && bare.length % 4 !== 1;
  if (!ok) throw new HarShapeError(path, 'base64 (its encoding says so)', text);
}

function arr(o: Obj, key: string, path: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new HarShapeError(`${path}.${key}`, 'an array', v);
  return v;
}

function nameValues(o: Obj, key: string, path: string): HarNameValue[] {
  return arr(o, key, path).map((item, i) => {
    // Most items are already right: taken as they are (no path built, no copy).
    if (isObj(item) && typeof item.name === 'string' && typeof item.value === 'string') return item as unknown as HarNameValue;
    const p = `${path}.${key}[${i}]`;
    const nv = obj(item, p);
    const value = nv.value;
    // Some exporters write numbers or null as header/query values; keep them as text.
    if (value !== undefined && value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new HarShapeError(`${p}.value`, 'a string', value);
    }
    return { ...nv, name: str(nv, 'name', p), value: value === undefined || value === null ? '' : String(value) };
  });
}

export { toEpochSeconds };

function wsMessages(e: Obj, path: string): HarWebSocketMessage[] | undefined {
  if (e._webSocketMessages === undefined || e._webSocketMessages === null) return undefined;
  return arr(e, '_webSocketMessages', path).map((item, i) => {
    if (isObj(item) && typeof item.type === 'string' && typeof item.time === 'number' && item.time <= 1e11 && typeof item.opcode === 'number' && !Number.isNaN(item.opcode) && typeof item.data === 'string') {
      return item as unknown as HarWebSocketMessage;
    }
    const p = `${path}._webSocketMessages[${i}]`;
    const m = obj(item, p);
    const type = str(m, 'type', p);
    return {
      ...m,
      type: type as HarWebSocketMessage['type'],
      time: toEpochSeconds(num(m, 'time', p, 0)),
      opcode: num(m, 'opcode', p, 1),
      data: str(m, 'data', p, ''),
    } as HarWebSocketMessage;
  });
}

function grpcMessages(e: Obj, path: string): HarGrpcMessage[] | undefined {
  if (e._grpcMessages === undefined || e._grpcMessages === null) return undefined;
  return arr(e, '_grpcMessages', path).map((item, i) => {
    const p = `${path}._grpcMessages[${i}]`;
    const m = obj(item, p);
    const type = str(m, 'type', p);
    if (type !== 'send' && type !== 'receive') throw new HarShapeError(`${p}.type`, '"send" or "receive"', type);
    const data = str(m, 'data', p, '');
    checkBase64(data, 'base64', `${p}.data`);
    return { ...m, type, time: toEpochSeconds(num(m, 'time', p, 0)), compressed: m.compressed === true, data } as HarGrpcMessage;
  });
}

function sseMessages(e: Obj, path: string): HarEventSourceMessage[] | undefined {
  if (e._eventSourceMessages === undefined || e._eventSourceMessages === null) return undefined;
  return arr(e, '_eventSourceMessages', path).map((item, i) => {
    if (isObj(item) && typeof item.time === 'number' && item.time <= 1e11 && typeof item.eventName === 'string' && typeof item.eventId === 'string' && typeof item.data === 'string') {
      return item as unknown as HarEventSourceMessage;
    }
    const p = `${path}._eventSourceMessages[${i}]`;
    const m = obj(item, p);
    return {
      ...m,
      time: toEpochSeconds(num(m, 'time', p, 0)),
      eventName: str(m, 'eventName', p, 'message'),
      eventId: str(m, 'eventId', p, ''),
      data: str(m, 'data', p, ''),
    } as HarEventSourceMessage;
  });
}

/** A response's 1xx heads (bb's `_informational`): each a status, its text ('' when none) and headers. */
function informationalHeads(res: Obj, path: string): HarInformational[] | undefined {
  if (res._informational === undefined || res._informational === null) return undefined;
  return arr(res, '_informational', path).map((item, i) => {
    const p = `${path}._informational[${i}]`;
    const h = obj(item, p);
    return { ...h, status: num(h, 'status', p), statusText: str(h, 'statusText', p, ''), headers: nameValues(h, 'headers', p) } as HarInformational;
  });
}

/** Checks one entry (at `path`, e.g. "log.entries[3]") and fills its missing optional fields. */
export function validateEntry(raw: unknown, path: string): HarEntry {
  const e = obj(raw, path);
  const rp = `${path}.request`;
  const req = obj(e.request, rp);
  const sp = `${path}.response`;
  const res = obj(e.response, sp);
  const postRaw = optObj(req, 'postData', rp);
  const pp = `${rp}.postData`;
  const contentRaw = optObj(res, 'content', sp) ?? {};
  const cp = `${sp}.content`;
  // Filled in place, in the order a copy would have appended missing keys:
  // the parsed JSON is the caller's own, and copying every level of every
  // entry cost more than the checks (bounded diffs read each entry once or twice).
  e.startedDateTime = str(e, 'startedDateTime', path, '');
  e.time = num(e, 'time', path, -1);
  req.method = str(req, 'method', rp);
  req.url = str(req, 'url', rp);
  req.httpVersion = str(req, 'httpVersion', rp, '');
  req.cookies = arr(req, 'cookies', rp);
  req.headers = nameValues(req, 'headers', rp);
  req.queryString = nameValues(req, 'queryString', rp);
  req.headersSize = num(req, 'headersSize', rp, -1);
  req.bodySize = num(req, 'bodySize', rp, -1);
  if (postRaw) {
    postRaw.mimeType = str(postRaw, 'mimeType', pp, '');
    postRaw.text = optStr(postRaw, 'text', pp);
    postRaw.params = arr(postRaw, 'params', pp);
    req.postData = postRaw;
  }
  res.status = num(res, 'status', sp);
  res.statusText = str(res, 'statusText', sp, '');
  res.httpVersion = str(res, 'httpVersion', sp, '');
  res.cookies = arr(res, 'cookies', sp);
  res.headers = nameValues(res, 'headers', sp);
  contentRaw.size = num(contentRaw, 'size', cp, -1);
  contentRaw.mimeType = str(contentRaw, 'mimeType', cp, '');
  contentRaw.text = optStr(contentRaw, 'text', cp);
  contentRaw.encoding = optStr(contentRaw, 'encoding', cp);
  res.content = contentRaw;
  res.redirectURL = str(res, 'redirectURL', sp, '');
  res.headersSize = num(res, 'headersSize', sp, -1);
  res.bodySize = num(res, 'bodySize', sp, -1);
  const informational = informationalHeads(res, sp);
  if (informational) res._informational = informational;
  e.request = req;
  e.response = res;
  e.cache = optObj(e, 'cache', path) ?? {};
  e.timings = optObj(e, 'timings', path) ?? { send: -1, wait: -1, receive: -1 };
  e.pageref = optStr(e, 'pageref', path);
  e.connection = e.connection === undefined || e.connection === null ? undefined : String(e.connection);
  const entry = e as unknown as HarEntry;
  checkBase64(entry.response.content.text, entry.response.content.encoding, `${cp}.text`);
  if (entry.request.postData) checkBase64(entry.request.postData.text, entry.request.postData._encoding, `${pp}.text`);
  const ws = wsMessages(e, path);
  if (ws) entry._webSocketMessages = ws;
  const grpc = grpcMessages(e, path);
  if (grpc) entry._grpcMessages = grpc;
  const sse = sseMessages(e, path);
  if (sse) entry._eventSourceMessages = sse;
  if (e._bb !== undefined && e._bb !== null) obj(e._bb, `${path}._bb`);
  return entry;
}

/** Checks one page and fills what is missing. */
export function validatePage(raw: unknown, path: string): HarPage {
  const p = obj(raw, path);
  return {
    ...(p as Partial<HarPage>),
    id: str(p, 'id', path, ''),
    title: str(p, 'title', path, ''),
    startedDateTime: str(p, 'startedDateTime', path, ''),
    pageTimings: (optObj(p, 'pageTimings', path) as HarPage['pageTimings'] | undefined) ?? {},
  };
}

/** The log without its entries: everything a reader needs besides them. */
export type HarLogHeader = Omit<HarLog, 'entries'>;

/** Checks the log's own fields (everything but entries). `raw` must be the `log` object. */
export function validateLogHeader(raw: Obj): HarLogHeader {
  const creator = optObj(raw, 'creator', 'log') ?? {};
  const header: HarLogHeader = {
    ...(raw as Partial<HarLog>),
    version: str(raw, 'version', 'log', ''),
    creator: { ...creator, name: str(creator, 'name', 'log.creator', ''), version: str(creator, 'version', 'log.creator', '') },
    pages: arr(raw, 'pages', 'log').map((p, i) => validatePage(p, `log.pages[${i}]`)),
  };
  delete (header as Partial<HarLog>).entries;
  const bb = optObj(raw, '_bb', 'log');
  if (bb) {
    if (bb.complete !== undefined && typeof bb.complete !== 'boolean') throw new HarShapeError('log._bb.complete', 'a boolean', bb.complete);
    optStr(bb, 'serverHome', 'log._bb');
    if (bb.setHeaders !== undefined && !(Array.isArray(bb.setHeaders) && bb.setHeaders.every((n) => typeof n === 'string'))) {
      throw new HarShapeError('log._bb.setHeaders', 'an array of header names', bb.setHeaders);
    }
    if (bb.shadowRole !== undefined && !isShadowRole(bb.shadowRole)) throw new HarShapeError('log._bb.shadowRole', "'primary', 'candidate' or 'secondary'", bb.shadowRole);
  }
  return header;
}

/** Checks a whole parsed HAR document. */
export function validateHar(doc: unknown): { log: HarLog } {
  const root = obj(doc, '(top level)');
  const log = obj(root.log, 'log');
  if (!Array.isArray(log.entries)) throw new HarShapeError('log.entries', 'an array', log.entries);
  const header = validateLogHeader(log);
  const entries = log.entries.map((e, i) => validateEntry(e, `log.entries[${i}]`));
  return { log: { ...header, entries } };
}

export { isObj };
