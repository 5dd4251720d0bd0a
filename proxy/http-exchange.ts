// One HTTP exchange through the proxy: forward the request exactly as the
// client sent it (raw header names, order, duplicates), stream the response
// back exactly as the server sent it, and emit facts along the way.
//
// Node does the framing (chunked in, chunked out); only hop-by-hop headers
// Node must manage may differ (Connection, Keep-Alive, Transfer-Encoding).
// Node is given raw header arrays, `setHost: false` and `sendDate = false`,
// so it adds no Host, Date or anything else.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { now, type FactBus, type FailureInfo, type RawHeaders } from './events.js';
import { badGateway, classifyUpstreamError } from './errors.js';
import type { ConnectionState } from './connection.js';
import type { Upstream } from './upstream.js';
import { serializeHead } from '../core/index.js';

/** Per-proxy settings an exchange needs. */
export interface ExchangeSettings {
  bus: FactBus;
  /** Add X-Forwarded-For/-Proto/-Host. */
  xfwd: boolean;
  /** Rewrite Host to the upstream's host. */
  changeOrigin: boolean;
  /** Max wait for the upstream's TCP/TLS connection. */
  connectTimeoutMs: number;
  /** Max idle time on the upstream while an exchange is under way (0 = none). */
  upstreamTimeoutMs: number;
  /** Picks the upstream for a request (reverse: fixed; forward: from the request). */
  resolveUpstream: (req: http.IncomingMessage, scheme: 'http' | 'https') => Upstream;
  /** Next exchange id (shared with upgrades and client errors). */
  nextExchangeId: () => number;
}

/** Builds the request headers to send upstream from the client's raw headers. */
export function outgoingHeaders(req: http.IncomingMessage, upstream: Upstream, settings: ExchangeSettings, scheme: string): RawHeaders {
  const raw = req.rawHeaders.slice();
  if (settings.changeOrigin) {
    const host = upstream.origin.replace(/^https?:\/\//, '');
    for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'host') raw[i + 1] = host;
  }
  if (settings.xfwd) {
    const socket = req.socket;
    raw.push('X-Forwarded-For', socket.remoteAddress ?? '');
    raw.push('X-Forwarded-Proto', scheme);
    raw.push('X-Forwarded-Host', req.headers.host ?? '');
  }
  return raw;
}

/** The request-target to send upstream: origin-form, even when the client used absolute-form (forward mode). */
export function originForm(target: string): string {
  if (target.startsWith('/') || target === '*') return target;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return target;
  }
}

/** Opens the upstream request for a client request: same method, target and raw headers, on this connection's agent. */
export function upstreamRequest(conn: ConnectionState, req: http.IncomingMessage, upstream: Upstream, settings: ExchangeSettings): http.ClientRequest {
  const requestFn = upstream.tls ? https.request : http.request;
  return requestFn({
    host: upstream.hostname,
    port: upstream.port,
    servername: upstream.servername,
    method: req.method,
    path: originForm(req.url ?? '/'),
    headers: outgoingHeaders(req, upstream, settings, conn.scheme) as unknown as http.OutgoingHttpHeaders,
    setHost: false,
    agent: conn.agents.agentFor(upstream),
  });
}

function pairs(raw: RawHeaders): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i], raw[i + 1]]);
  return out;
}

/** True when a response to this request with this status carries no body (RFC 9112 §6.3). */
function bodiless(method: string, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
}

/** What beginExchange found: the exchange's id and upstream, or why no upstream fits. */
export interface BegunExchange {
  exchangeId: number;
  upstream: Upstream;
  /** Set when resolveUpstream refused the request (the caller answers 502). */
  badTarget?: string;
}

/** Takes an exchange id, resolves the upstream and emits exchange-started (for plain requests and upgrades alike). */
export function beginExchange(conn: ConnectionState, req: http.IncomingMessage, settings: ExchangeSettings, upgrade: boolean): BegunExchange {
  const exchangeId = settings.nextExchangeId();
  let upstream: Upstream;
  let badTarget: string | undefined;
  try {
    upstream = settings.resolveUpstream(req, conn.scheme);
  } catch (err) {
    upstream = { origin: 'invalid', tls: false, hostname: '', port: 0 };
    badTarget = (err as Error).message;
  }
  settings.bus.emit({
    type: 'exchange-started',
    exchangeId,
    connectionId: conn.id,
    time: now(),
    scheme: conn.scheme,
    method: req.method ?? 'GET',
    target: req.url ?? '/',
    httpVersion: req.httpVersion,
    rawHeaders: req.rawHeaders,
    upstream: upstream.origin,
    upgrade,
  });
  return { exchangeId, upstream, badTarget };
}

/** Handles one request (and, with `expectContinue`, the 100-continue dance). */
export function handleExchange(
  conn: ConnectionState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  settings: ExchangeSettings,
  expectContinue = false,
): void {
  const { bus } = settings;
  const scheme = conn.scheme;
  res.sendDate = false;
  const { exchangeId, upstream, badTarget } = beginExchange(conn, req, settings, false);

  let finished = false; // completed, failed or aborted: exactly one terminal fact
  let responseStarted = false;
  conn.active++;

  function settle(): void {
    if (finished) return;
    finished = true;
    conn.active--;
  }

  function fail(failure: FailureInfo): void {
    if (finished) return;
    if (!res.headersSent && !res.destroyed) {
      const response = badGateway(failure, upstream.origin);
      settle();
      bus.emit({ type: 'exchange-failed', exchangeId, time: now(), error: failure, response });
      res.writeHead(response.statusCode, response.statusMessage, response.rawHeaders);
      res.end(response.body);
    } else {
      settle();
      bus.emit({ type: 'exchange-aborted', exchangeId, time: now(), by: 'upstream', phase: 'response', error: failure });
      res.destroy();
    }
  }

  if (badTarget !== undefined) {
    fail({ code: 'BB_BAD_TARGET', message: badTarget, phase: 'request' });
    return;
  }

  const outgoing = upstreamRequest(conn, req, upstream, settings);
  let firstUpstreamBytes: Buffer | undefined;
  let connectTimer: NodeJS.Timeout | undefined;

  outgoing.on('socket', (socket: Socket) => {
    firstUpstreamBytes = conn.firstBytes.get(socket);
    const connecting = (socket as Socket & { connecting?: boolean }).connecting;
    if (connecting && settings.connectTimeoutMs > 0) {
      connectTimer = setTimeout(() => {
        const err = Object.assign(new Error(`no connection after ${settings.connectTimeoutMs} ms`), { code: 'BB_CONNECT_TIMEOUT' });
        outgoing.destroy(err);
      }, settings.connectTimeoutMs);
      socket.once('connect', () => clearTimeout(connectTimer));
    }
  });
  if (settings.upstreamTimeoutMs > 0) {
    outgoing.setTimeout(settings.upstreamTimeoutMs, () => {
      outgoing.destroy(Object.assign(new Error(`no data from the upstream for ${settings.upstreamTimeoutMs} ms`), { code: 'BB_UPSTREAM_TIMEOUT' }));
    });
  }

  outgoing.on('error', (err: NodeJS.ErrnoException) => {
    clearTimeout(connectTimer);
    if (finished) return;
    const socket = outgoing.socket as Socket | null;
    const bytes = firstUpstreamBytes ?? (socket ? conn.firstBytes.get(socket) : undefined);
    fail(classifyUpstreamError(err, responseStarted ? 'response' : err.code === 'ECONNREFUSED' ? 'connect' : 'request', bytes));
  });

  if (expectContinue) {
    outgoing.on('continue', () => res.writeContinue());
  }
  outgoing.on('information', (info: http.InformationEvent) => {
    // 103 Early Hints and other 1xx (100 handled above): pass them on.
    if (info.statusCode !== 100 && info.statusCode !== 101) {
      const socket = res.socket;
      if (socket && !res.headersSent) {
        socket.write(serializeHead(`HTTP/1.1 ${info.statusCode} ${info.statusMessage}`, info.rawHeaders), 'latin1');
      }
    }
  });

  // Request body: observe, then forward with backpressure.
  req.on('data', (chunk: Buffer) => {
    bus.emit({ type: 'request-body', exchangeId, time: now(), chunk });
    if (!outgoing.write(chunk)) req.pause();
  });
  outgoing.on('drain', () => req.resume());
  req.on('end', () => {
    bus.emit({ type: 'request-ended', exchangeId, time: now(), rawTrailers: req.rawTrailers });
    if (req.rawTrailers.length > 0) outgoing.addTrailers(pairs(req.rawTrailers));
    outgoing.end();
  });

  // The client going away before completion aborts the exchange and the upstream request.
  res.on('close', () => {
    if (finished) return;
    settle();
    bus.emit({ type: 'exchange-aborted', exchangeId, time: now(), by: 'client', phase: responseStarted ? 'response' : 'request' });
    outgoing.destroy();
  });

  outgoing.on('response', (up: http.IncomingMessage) => {
    clearTimeout(connectTimer);
    responseStarted = true;
    const status = up.statusCode ?? 502;
    bus.emit({
      type: 'response-started',
      exchangeId,
      time: now(),
      statusCode: status,
      statusMessage: up.statusMessage ?? '',
      httpVersion: up.httpVersion,
      rawHeaders: up.rawHeaders,
    });
    if (res.destroyed) {
      up.destroy();
      return;
    }
    res.writeHead(status, up.statusMessage, up.rawHeaders as unknown as http.OutgoingHttpHeaders);

    // Completion must be announced before the client can see the response complete:
    // for a Content-Length body that is the moment its last byte is written.
    const noBody = bodiless(req.method ?? 'GET', status);
    const declared = up.headers['content-length'];
    const expected = noBody ? 0 : declared !== undefined && !up.headers['transfer-encoding'] ? Number(declared) : undefined;
    let received = 0;
    const complete = (): void => {
      if (finished) return;
      settle();
      bus.emit({ type: 'exchange-completed', exchangeId, time: now(), rawTrailers: up.rawTrailers ?? [] });
    };
    // Headers go out now so streams (SSE) start at once, except for bodiless
    // responses, whose head is the whole response: it leaves at end().
    if (expected !== 0) res.flushHeaders();

    up.on('data', (chunk: Buffer) => {
      bus.emit({ type: 'response-body', exchangeId, time: now(), chunk });
      received += chunk.length;
      if (expected !== undefined && received >= expected) complete();
      if (!res.write(chunk)) up.pause();
    });
    res.on('drain', () => up.resume());
    up.on('end', () => {
      complete();
      if (up.rawTrailers.length > 0) res.addTrailers(pairs(up.rawTrailers));
      res.end();
    });
    up.on('error', (err: NodeJS.ErrnoException) => {
      if (finished) return;
      fail(classifyUpstreamError(err, 'response'));
    });
    up.on('close', () => {
      // Closed without 'end': the upstream hung up mid-body.
      if (!finished && !up.complete) {
        fail({ code: 'ECONNRESET', message: 'the upstream closed the connection mid-response', phase: 'response' });
      }
    });
  });
}
