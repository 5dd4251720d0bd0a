// Forward mode: bb as the HTTP(S)_PROXY of its clients.
//
// - Absolute-form requests (GET http://host/path) go to the host they name.
// - CONNECT host:port: bb answers 200 and looks at the client's first bytes.
//   A TLS ClientHello is terminated with a leaf for the SNI name (or the
//   CONNECT host), ALPN mirrored (tls/alpn-mirror.ts: bb connects upstream
//   offering the client's list and answers with the upstream's choice), and
//   the decrypted socket is handed to the tap (h2 or HTTP/1.1) with that
//   upstream connection, so every request inside is recorded as in reverse
//   mode, with scheme https and upstream https://host:port. Plain HTTP in a tunnel is handed over the
//   same way without TLS. Anything else, and hosts outside `hosts`, is piped
//   opaquely and recorded as one CONNECT entry (see tunnel.ts).
// - Loopback only unless `allowRemote`: an open forward proxy relays for anyone.
import { isIP, type Socket } from 'node:net';
import { BbError, globMatcher, isLoopbackHost, namesOwnAddress, serializeHead } from '../core/index.js';
import { connectionOf } from './connection.js';
import { now, type FactBus } from './events.js';
import { startProxy, type ProxyOptions, type RunningProxy, type UpstreamQuery } from './server.js';
import { createLeafFactory, terminateMirrored, type Ca, type LeafFactory } from './tls/index.js';
import {
  CONNECT_ESTABLISHED,
  looksLikeHttp,
  looksLikeTls,
  openOpaqueTunnel,
  parseAuthority,
  readFirstBytes,
  type ConnectRequest,
  type TunnelTarget,
} from './tunnel.js';
import { parseUpstream, type Upstream } from './upstream.js';
import { PROXY_DEFAULTS } from './options.js';

/** Options of a forward proxy: those of startProxy without a target, plus interception settings. */
export interface ForwardProxyOptions extends Omit<ProxyOptions, 'target' | 'resolveUpstream' | 'changeOrigin'> {
  /** bb's CA; leaves are made from it (give this or `leaves`). */
  ca?: Ca;
  /** A ready leaf factory (shared between proxies, or made by a test). */
  leaves?: LeafFactory;
  /** Host globs to intercept (`*` = any run of characters, case-insensitive); default: every host. */
  hosts?: string[];
  /** Permit a non-loopback listen address (the caller should warn). */
  allowRemote?: boolean;
  /** How long to wait for a tunnel client's first bytes before piping it opaquely, ms (default 1000). */
  firstBytesTimeoutMs?: number;
}

/** A running forward proxy. */
export interface RunningForwardProxy extends RunningProxy {
  /** The leaf factory in use (its stats count leaves minted and cache hits). */
  leaves: LeafFactory;
  /** True when the proxy listens on a non-loopback address. */
  remote: boolean;
}

/** What requests on a tunnelled socket are for. */
interface TunnelInfo {
  target: TunnelTarget;
  /** The SNI name the client sent, for the upstream handshake. */
  servername?: string;
}

/** A predicate over host names from globs ("*.example.com", "api.*"), case-insensitive; no globs = every host. */
export function hostMatcher(globs: readonly string[] | undefined): (host: string) => boolean {
  const list = (globs ?? []).map((g) => g.trim()).filter((g) => g.length > 0);
  if (list.length === 0) return () => true;
  const patterns = list.map((glob) => globMatcher(glob.replace(/^\[(.*)\]$/, '$1'), { ignoreCase: true }));
  return (host) => {
    const h = host.replace(/\.$/, '');
    return patterns.some((matches) => matches(h));
  };
}

/** Starts bb in forward mode; resolves once it listens. */
export async function startForwardProxy(options: ForwardProxyOptions): Promise<RunningForwardProxy> {
  const listenHost = options.listen?.host ?? '127.0.0.1';
  const remote = !isLoopbackHost(listenHost);
  if (remote && !options.allowRemote) {
    throw new BbError('BB_FORWARD_REMOTE', `forward mode listens on loopback only: pass --allow-remote to listen on ${listenHost} (anyone who can reach it can relay through bb)`);
  }
  if (!options.leaves && !options.ca) throw new BbError('BB_FORWARD_NO_CA', 'forward mode needs bb\'s CA to intercept TLS');
  const leaves = options.leaves ?? createLeafFactory(options.ca!);
  const intercepts = hostMatcher(options.hosts);
  const firstBytesTimeoutMs = options.firstBytesTimeoutMs ?? PROXY_DEFAULTS.firstBytesTimeoutMs;
  const connectTimeoutMs = options.connectTimeoutMs ?? PROXY_DEFAULTS.connectTimeoutMs;
  const tunnels = new WeakMap<object, TunnelInfo>();
  const ownSockets = new Set<Socket>();
  let self: { host: string; port: number } | undefined;

  const track = (s: Socket): void => {
    ownSockets.add(s);
    s.once('close', () => ownSockets.delete(s));
  };

  const refuseLoop = (host: string, port: number): void => {
    if (self && namesOwnAddress(host, port, self)) {
      throw new Error(`the request names bb's own address (${host}:${port}); point it at the real server`);
    }
  };

  const resolveUpstream = (req: UpstreamQuery, scheme: 'http' | 'https'): Upstream => {
    const tunnel = tunnels.get(req.socket);
    if (tunnel) {
      const upstream = parseUpstream(`${scheme}://${tunnel.target.authority}`);
      if (scheme === 'https') upstream.servername = tunnel.servername ?? (isIP(tunnel.target.host) ? undefined : tunnel.target.host);
      return upstream;
    }
    const target = req.url ?? '';
    if (!/^https?:\/\//i.test(target)) {
      throw new Error(`bb in forward mode takes absolute-form requests (GET http://host/path) and CONNECT tunnels, not '${target.slice(0, 100)}'`);
    }
    const upstream = parseUpstream(new URL(target).origin);
    refuseLoop(upstream.hostname, upstream.port);
    return upstream;
  };

  const proxy = await startProxy({ ...options, listen: { host: listenHost, port: options.listen?.port }, resolveUpstream });
  self = { host: proxy.host, port: proxy.port };
  const bus: FactBus = proxy.bus;

  proxy.server.on('connect', (req: UpstreamQuery, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const request: ConnectRequest = {
      exchangeId: 0, // taken when the entry is recorded, so ids follow the order of facts
      connectionId: connectionOf(socket)?.id ?? 'c?',
      time: now(),
      target: req.url ?? '',
      httpVersion: req.httpVersion,
      rawHeaders: req.rawHeaders,
    };
    const target = parseAuthority(request.target);
    let selfTarget = false;
    try {
      if (target) refuseLoop(target.host, target.port);
    } catch {
      selfTarget = true;
    }
    if (!target || selfTarget) {
      refuseConnect(request, socket, target ? `CONNECT ${request.target} names bb itself` : `CONNECT needs host:port, got '${request.target.slice(0, 100)}'`);
      return;
    }
    const tunnelOptions = (established: boolean) => ({
      bus,
      client: socket,
      target,
      request: { ...request, exchangeId: proxy.nextExchangeId() },
      established,
      connectTimeoutMs,
      track,
    });
    if (!intercepts(target.host)) {
      // Bytes that came with the CONNECT head go first, once the upstream is there.
      if (head.length > 0) socket.unshift(head);
      openOpaqueTunnel(tunnelOptions(false));
      return;
    }
    socket.write(CONNECT_ESTABLISHED);
    const answeredAt = now();
    void readFirstBytes(socket, head, firstBytesTimeoutMs).then((first) => {
      // A client that hangs up before sending anything (a browser's speculative preconnect) leaves no entry.
      if (first.kind === 'closed' || socket.destroyed) return;
      if (first.kind === 'bytes' && looksLikeTls(first.bytes)) interceptTls(socket, target);
      else if (first.kind === 'bytes' && looksLikeHttp(first.bytes)) {
        tunnels.set(socket, { target });
        socket.resume();
        proxy.server.emit('connection', socket);
      } else openOpaqueTunnel(tunnelOptions(true), answeredAt);
    });
  });

  function refuseConnect(request: ConnectRequest, socket: Socket, message: string): void {
    const exchangeId = proxy.nextExchangeId();
    const body = Buffer.from(JSON.stringify({ error: 'bb_bad_connect', message }) + '\n');
    const response = {
      statusCode: 400,
      statusMessage: 'Bad Request',
      rawHeaders: ['Content-Type', 'application/json', 'Content-Length', String(body.length), 'Connection', 'close'],
      body,
    };
    bus.emit({ type: 'exchange-started', exchangeId, connectionId: request.connectionId, time: request.time, scheme: 'http', method: 'CONNECT', target: request.target, httpVersion: request.httpVersion, rawHeaders: request.rawHeaders, upstream: 'invalid', upgrade: false });
    bus.emit({ type: 'exchange-failed', exchangeId, time: now(), error: { code: 'BB_BAD_CONNECT', message, phase: 'request' }, response });
    socket.end(Buffer.concat([Buffer.from(serializeHead('HTTP/1.1 400 Bad Request', response.rawHeaders), 'latin1'), body]));
  }

  function interceptTls(socket: Socket, target: TunnelTarget): void {
    const connectionId = connectionOf(socket)?.id ?? 'c?';
    terminateMirrored({
      socket,
      leaves,
      defaultHost: target.host,
      upstream: parseUpstream(`https://${target.authority}`),
      servernameFromClient: true,
      tlsOptions: options.upstreamTls ?? {},
      connectTimeoutMs,
      helloTimeoutMs: PROXY_DEFAULTS.clientHelloTimeoutMs,
      track,
      onSecure: ({ client, alpn, upstream, servername }) => {
        tunnels.set(client, { target, servername });
        // Synchronously, as Node's own https server does, so no decrypted byte is read before the parser.
        proxy.adopt(client, 'https', { upstream, alpn });
      },
      onFailure: (err) => recordHandshakeFailure(connectionId, target, err),
    });
  }

  // The client refused bb's certificate (or hung up mid-handshake): one bad exchange, like a parse failure.
  function recordHandshakeFailure(connectionId: string, target: TunnelTarget, err: NodeJS.ErrnoException): void {
    const code = err.code ?? 'BB_CLIENT_TLS';
    const hint = /ALERT|CERT/i.test(code) ? "the client does not trust bb's CA: bb ca trust-info" : undefined;
    // OpenSSL errors carry a short `reason` ("tlsv1 alert unknown ca") beside a long multi-line message.
    const reason = (err as { reason?: string }).reason ?? err.message.split('\n')[0];
    bus.emit({
      type: 'client-error',
      connectionId,
      exchangeId: proxy.nextExchangeId(),
      time: now(),
      error: { code, message: `TLS with the client for ${target.authority} failed: ${reason}${hint ? ` (${hint})` : ''}`, phase: 'tls' },
      authority: target.authority,
      ...(hint ? { hint } : {}),
    });
  }

  const close = proxy.close.bind(proxy);
  return {
    ...proxy,
    leaves,
    remote,
    close: async (graceMs?: number) => {
      await close(graceMs);
      for (const s of ownSockets) s.destroy();
    },
  };
}
