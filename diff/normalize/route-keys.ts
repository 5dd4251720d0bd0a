// Which call of a route an entry is (docs/diff.md "Route keys"): every
// GraphQL call is `POST /graphql`, every JSON-RPC call `POST /rpc`, every
// Engine.IO request `GET /socket.io/`, so the route alone pairs them by
// position. A key names the call: a `pairing.keys` rule of the config when
// one matches the route, else the first built-in detector that recognizes
// the request (KEY_DETECTORS, each switched off by name in
// `pairing.disable`). The key goes into the route, hence into the pairing key
// and the entry id, and into the request line of every sample.
import { createHash } from 'node:crypto';
import type { HarNameValue } from '../../capture/index.js';
import type { MultiValue, RequestKey } from '../types.js';
import { normalizeString, type ValueWalk } from './walk.js';
import { unnumber, unnumberDeep, type OrdinalTable } from './ordinals.js';

/** The built-in key detectors, in the order they are tried; `pairing.disable` takes these names. */
export const KEY_DETECTORS = ['engine-io', 'graphql', 'jsonrpc'] as const;

/** What keying needs of the side's NormalizeContext (context.ts builds it). */
export interface KeyContext {
  /** The config's `pairing.keys`, route globs compiled. */
  routeKeys: ReadonlyArray<{ by: string; matches: (route: string) => boolean }>;
  /** The built-in detectors left on. */
  keyDetectors: ReadonlySet<string>;
  /** The side's value walk (header values normalize like any string). */
  walk: ValueWalk;
  /** The ordinal table (keys hold markers unnumbered). */
  table: OrdinalTable;
}

/** The request as its key reads it: the route without host or key, the normalized body and query, the raw headers, the Engine.IO revision. */
export interface KeyedRequest {
  /** `METHOD path`, markers unnumbered. */
  route: string;
  /** The upper-case method. */
  method: string;
  /** The parsed, normalized body (undefined when none). */
  body: unknown;
  /** The normalized query. */
  query: Record<string, MultiValue>;
  /** The request headers as captured. */
  headers: readonly HarNameValue[];
  /** The parsed, normalized response body (Engine.IO polling GETs are keyed by what they received). */
  responseBody: unknown;
  /** The URL's Engine.IO revision (engine-io.ts engineIoVersion), when it is Engine.IO's. */
  eio?: string;
}

/** The route an entry pairs and is named by: its route, then the key's bracket and query. */
export function keyedRoute(route: string, key: RequestKey | undefined): string {
  if (!key) return route;
  return `${route}${key.bracket !== undefined ? `[${key.bracket}]` : ''}${key.query?.length ? `?${key.query.join('&')}` : ''}`;
}

/**
 * A keyed route without its key (`POST /graphql[CreateItem]` → `POST
 * /graphql`): what route globs (`pairing.unordered`) also match. A
 * normalized path holds no `?`; one holding `[` is cut there too.
 */
export function routeWithoutKey(route: string): string {
  const sp = route.indexOf(' ');
  const cut = route.slice(sp + 1).search(/[[?]/);
  return cut < 0 ? route : route.slice(0, sp + 1 + cut);
}

/**
 * The request line of an entry (`GET /posts?_sort=views`), with its key:
 * the bracket after the path, the key's query parameters first, then the
 * rest of the query but what the key hides.
 */
export function keyedRequestLine(method: string, path: string, query: Record<string, MultiValue>, key: RequestKey | undefined): string {
  const shown = new Set([...(key?.query ?? []).map((q) => q.slice(0, q.indexOf('='))), ...(key?.hide ?? [])]);
  const parts: string[] = [...(key?.query ?? [])];
  for (const [k, v] of Object.entries(query)) if (!shown.has(k)) for (const x of Array.isArray(v) ? v : [v]) parts.push(x === '' ? k : `${k}=${x}`);
  return `${method} ${path}${key?.bracket !== undefined ? `[${key.bracket}]` : ''}${parts.length ? `?${parts.join('&')}` : ''}`;
}

/** The key of a request: the config's rule for its route, else the first detector left on that recognizes it; undefined for neither. */
export function requestKeyOf(r: KeyedRequest, ctx: KeyContext): RequestKey | undefined {
  const rule = ctx.routeKeys.find((k) => k.matches(r.route));
  if (rule) return configuredKey(rule.by, r, ctx);
  for (const name of KEY_DETECTORS) {
    if (!ctx.keyDetectors.has(name)) continue;
    const key = DETECTORS[name](r, ctx);
    if (key) return key;
  }
  return undefined;
}

/** A scalar as key text, markers unnumbered; "-" for none. */
function keyText(v: unknown, ctx: Pick<KeyContext, 'table'>): string {
  if (v === undefined || v === null) return '-';
  return unnumber(typeof v === 'string' ? v : JSON.stringify(v), ctx.table);
}

function lookup(v: unknown, dotted: string): unknown {
  let cur = v;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** A `pairing.keys` rule's key (config.ts validated `by`). */
function configuredKey(by: string, r: KeyedRequest, ctx: Pick<KeyContext, 'walk' | 'table'>): RequestKey | undefined {
  if (by.startsWith('query:')) {
    const name = by.slice('query:'.length);
    const v = r.query[name];
    // A request without the parameter keeps its plain route.
    return v === undefined ? undefined : { query: [`${name}=${keyText(Array.isArray(v) ? v.join(',') : v, ctx)}`] };
  }
  if (by.startsWith('header:')) {
    const name = by.slice('header:'.length).toLowerCase();
    const values = r.headers.filter((h) => h.name.toLowerCase() === name).map((h) => normalizeString(h.value, ctx.walk));
    return { bracket: keyText(values.length ? values.join(',') : undefined, ctx) };
  }
  if (by === 'graphql') return graphqlKey(r, ctx) ?? { bracket: '-' };
  if (by === 'jsonrpc') return { bracket: keyText(Array.isArray(r.body) ? r.body.map((b) => lookup(b, 'method')).join(',') : lookup(r.body, 'method'), ctx) };
  if (by === 'body-hash') return { bracket: createHash('sha256').update(JSON.stringify(unnumberDeep(r.body ?? null, ctx.table))).digest('hex').slice(0, 12) };
  return { bracket: keyText(lookup(r.body, by.slice('body:'.length)), ctx) };
}

/** The built-in detectors by name: a key when the request is of their protocol, else undefined. */
const DETECTORS: Record<(typeof KEY_DETECTORS)[number], (r: KeyedRequest, ctx: Pick<KeyContext, 'table'>) => RequestKey | undefined> = {
  'engine-io': engineIoKey,
  graphql: graphqlKey,
  jsonrpc: jsonRpcKey,
};

// A GraphQL document starts with an operation or fragment keyword, or is a query shorthand `{ ... }` (GraphQL spec §2.3).
const GRAPHQL_DOCUMENT = /^\s*(?:#[^\n]*\n\s*)*(?:(?:query|mutation|subscription|fragment)\b|\{)/;
const OPERATION_NAME = /\b(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/;

/** One GraphQL operation's name: `operationName`, else the document's first named operation, else `#` and a hash of the document. */
function operationOf(op: unknown, ctx: Pick<KeyContext, 'table'>): string | undefined {
  if (!op || typeof op !== 'object' || Array.isArray(op)) return undefined;
  const { query, operationName, extensions } = op as { query?: unknown; operationName?: unknown; extensions?: unknown };
  const named = typeof operationName === 'string' && operationName !== '' ? operationName : undefined;
  if (typeof query === 'string' && GRAPHQL_DOCUMENT.test(query)) {
    const text = unnumber(query, ctx.table);
    const name = named ?? OPERATION_NAME.exec(text)?.[1];
    return name !== undefined ? unnumber(name, ctx.table) : `#${createHash('sha256').update(text.replace(/\s+/g, ' ').trim()).digest('hex').slice(0, 8)}`;
  }
  // An automatic persisted query sends the operation's hash and name, no document.
  if (named !== undefined && lookup(extensions, 'persistedQuery') !== undefined) return unnumber(named, ctx.table);
  return undefined;
}

/** GraphQL over HTTP: a JSON body (or a batch of them) with a `query` document, or a GET with `?query=`: keyed by operation. */
function graphqlKey(r: KeyedRequest, ctx: Pick<KeyContext, 'table'>): RequestKey | undefined {
  if (Array.isArray(r.body) && r.body.length) {
    const ops = r.body.map((b) => operationOf(b, ctx));
    return ops.every((o) => o !== undefined) ? { bracket: ops.join(',') } : undefined;
  }
  const inBody = operationOf(r.body, ctx);
  if (inBody !== undefined) return { bracket: inBody };
  const { query, operationName, extensions } = r.query;
  const q = typeof query === 'string' ? query : undefined;
  const name = typeof operationName === 'string' ? operationName : undefined;
  const ext = typeof extensions === 'string' ? safeJson(extensions) : undefined;
  const inUrl = operationOf({ query: q, operationName: name, extensions: ext }, ctx);
  // The document and name are in the key; variables stay in the request line.
  return inUrl === undefined ? undefined : { bracket: inUrl, hide: ['query', 'operationName', 'extensions'] };
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** JSON-RPC: a body (or a batch) with a string `method` and a `jsonrpc` version (2.0) or `params` and `id` (1.0): keyed by method. */
function jsonRpcKey(r: KeyedRequest, ctx: Pick<KeyContext, 'table'>): RequestKey | undefined {
  const methodOf = (b: unknown): string | undefined => {
    if (!b || typeof b !== 'object' || Array.isArray(b)) return undefined;
    const o = b as Record<string, unknown>;
    return typeof o.method === 'string' && (typeof o.jsonrpc === 'string' || ('params' in o && 'id' in o)) ? o.method : undefined;
  };
  const methods = Array.isArray(r.body) ? (r.body.length ? r.body.map(methodOf) : [undefined]) : [methodOf(r.body)];
  return methods.every((m) => m !== undefined) ? { bracket: keyText(methods.join(','), ctx) } : undefined;
}

/** Engine.IO packet types that a timer sends (heartbeats, a poll's empty answer): they name a request only when nothing else is in it. */
const TIMER_PACKETS = new Set(['ping', 'pong', 'noop']);

/**
 * Engine.IO (Socket.IO's transport): keyed by transport, so polling pairs
 * with polling and the WebSocket upgrade with the upgrade, and a polling
 * request also by the kind of packets it carries (a POST: what it sent; a
 * GET: what it received): `open` for the handshake, `message`, or a
 * heartbeat alone, so one heartbeat poll fewer shifts nothing. The
 * revision, the session id and the cache-buster stay out of the request line.
 */
function engineIoKey(r: KeyedRequest): RequestKey | undefined {
  if (r.eio === undefined) return undefined;
  const transport = r.query.transport;
  const packets = r.method === 'GET' ? r.responseBody : r.body;
  const types = Array.isArray(packets) ? [...new Set(packets.map((p) => (p && typeof p === 'object' ? (p as { eio?: unknown }).eio : undefined)).filter((t): t is string => typeof t === 'string'))] : [];
  const kinds = types.some((t) => !TIMER_PACKETS.has(t)) ? types.filter((t) => !TIMER_PACKETS.has(t)) : types;
  return {
    ...(kinds.length ? { bracket: kinds.join(',') } : {}),
    query: [`transport=${Array.isArray(transport) ? transport.join(',') : transport}`],
    hide: ['EIO', 'sid', 't'],
  };
}
