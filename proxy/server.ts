// The proxy's sockets: a net.Server that accepts client connections and
// hands each one to the HTTP/1 tap (http1/tap.ts), which passes bytes through
// and reads a copy. This is the only file in proxy/ that listens.
import net, { type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { FactBus } from './events.js';
import { PROXY_DEFAULTS } from './options.js';
import { connectionOf, endSocket, trackConnection, type ConnectionState } from './connection.js';
import { tapConnection, type PreconnectedUpstream, type TapSettings, type UpstreamQuery } from './http1/tap.js';
import { tapH2 } from './h2-tap.js';
import type { UpgradeTap } from './upgrade.js';
import { MAX_HEAD_BYTES } from './http1/parser.js';
import { parseUpstream, preconnectUpstream, type Upstream, type UpstreamTlsOptions } from './upstream.js';
import { BbError, listenFailureWhy, namesOwnAddress } from '../core/index.js';
import { tlsTerminator } from './listen-tls.js';
import type { LeafFactory } from './tls/index.js';

export type { UpstreamQuery };

/** Options of one proxy. Validated by startProxy; errors say what to fix. */
export interface ProxyOptions {
  /** Reverse mode: the upstream origin, e.g. "http://127.0.0.1:3000". */
  target?: string;
  /** Forward mode: picks the upstream per request instead of `target`. */
  resolveUpstream?: (req: UpstreamQuery, scheme: 'http' | 'https') => Upstream;
  /** Where to listen; default 127.0.0.1 port 0 (any free port). */
  listen?: { host?: string; port?: number };
  /** Where facts go; a new bus when absent. */
  bus?: FactBus;
  /** Add X-Forwarded-* headers (off: bb adds nothing by default). */
  xfwd?: boolean;
  /** Rewrite Host to the upstream's host (off: the server sees the client's Host). */
  changeOrigin?: boolean;
  /** Max wait for an upstream connection, ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Max silence from the upstream during an exchange, ms (default 0 = none). */
  upstreamTimeoutMs?: number;
  /** Max time for a client's first byte, and for a whole request head once begun, ms (default 60 000, as Node's headersTimeout). */
  headTimeoutMs?: number;
  /** TLS to https/wss upstreams. */
  upstreamTls?: UpstreamTlsOptions;
  /** Reads both directions of each upgraded connection (the WebSocket tap). */
  tap?: UpgradeTap;
  /** The WebSocket tap: payload bytes (inflated) of a message its fact carries, the rest only counted; a recording passes its body cap (default 64 MiB). */
  wsKeep?: number;
  /** Max request head size, bytes (Node's default 16 KiB). */
  maxHeaderSize?: number;
  /** Reverse mode in front of an https target: terminate the clients' TLS with leaves from this factory, ALPN mirrored (--listen-tls). */
  listenTls?: { leaves: LeafFactory };
}

/** How an adopted socket is tapped. */
export interface AdoptOptions {
  /** The upstream connection made for this client before its handshake finished. */
  upstream?: PreconnectedUpstream;
  /** The protocol both sides agreed on by ALPN (absent: none). */
  alpn?: string;
}

/** A listening proxy. */
export interface RunningProxy {
  /** "http://127.0.0.1:PORT". */
  url: string;
  host: string;
  port: number;
  /** The facts of this proxy. */
  bus: FactBus;
  /** The upstream origin (reverse mode) or "forward". */
  target: string;
  /** The underlying server (forward mode feeds it tunnelled sockets and hears 'connect' from it). */
  server: net.Server;
  /** Exchanges under way. */
  inFlight(): number;
  /**
   * Registers a socket that did not come through listen() (a decrypted
   * CONNECT tunnel, a client of --listen-tls) and taps it: the h2 tap when
   * `alpn` is h2, else the HTTP/1.1 tap; `upstream` is one already connected
   * for it (ALPN mirrored), used instead of a connection of the tap's own.
   */
  adopt(socket: Duplex, scheme: 'http' | 'https', options?: AdoptOptions): void;
  /** Takes the next exchange id (for entries made outside the HTTP server, such as opaque tunnels). */
  nextExchangeId(): number;
  /**
   * Stops taking new work: no new connection is accepted, and an HTTP/1
   * connection takes no new request (its next one is left unread and the
   * connection ends once nothing is under way on it). What is under way goes
   * on. The first step of close; `bb shadow --until N` takes it at the N-th
   * request. Idempotent.
   */
  stopTaking(): void;
  /**
   * Stops accepting, lets in-flight exchanges finish for up to graceMs, then
   * closes every connection (upgraded ones included). Idempotent.
   */
  close(graceMs?: number): Promise<void>;
}

/** Starts a proxy; resolves once it listens. */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const bus = options.bus ?? new FactBus();
  let resolveUpstream = options.resolveUpstream;
  let targetLabel = 'forward';
  let fixedUpstream: Upstream | undefined;
  if (!resolveUpstream) {
    if (!options.target) throw new BbError('BB_PROXY_CONFIG', 'a reverse proxy needs a target like http://127.0.0.1:3000');
    let fixed: Upstream;
    try {
      fixed = parseUpstream(options.target);
    } catch {
      throw new BbError('BB_BAD_TARGET', `the target must be an http(s) URL like http://127.0.0.1:3000, got '${options.target}'`);
    }
    resolveUpstream = () => fixed;
    targetLabel = fixed.origin;
    fixedUpstream = fixed;
    if (options.listenTls && !fixed.tls) {
      throw new BbError('BB_PROXY_CONFIG', `listening with TLS needs an https:// target (bb speaks TLS on both sides), got '${options.target}'`);
    }
  } else if (options.listenTls) {
    throw new BbError('BB_PROXY_CONFIG', 'listening with TLS is for a reverse proxy with an https target (forward mode intercepts TLS inside CONNECT tunnels)');
  }
  const host = options.listen?.host ?? '127.0.0.1';
  const port = options.listen?.port ?? 0;

  let exchangeCounter = 0;
  let connectionCounter = 0;
  const tlsOptions = options.upstreamTls ?? {};
  const server = net.createServer({ allowHalfOpen: true, noDelay: true });
  const settings: TapSettings = {
    bus,
    xfwd: options.xfwd ?? false,
    changeOrigin: options.changeOrigin ?? false,
    // Forward mode names the upstream in the request line; the upstream itself expects origin-form.
    originForm: !!options.resolveUpstream,
    connectTimeoutMs: options.connectTimeoutMs ?? PROXY_DEFAULTS.connectTimeoutMs,
    upstreamTimeoutMs: options.upstreamTimeoutMs ?? PROXY_DEFAULTS.upstreamTimeoutMs,
    headTimeoutMs: options.headTimeoutMs ?? PROXY_DEFAULTS.headTimeoutMs,
    tlsOptions,
    maxHeadBytes: options.maxHeaderSize ?? MAX_HEAD_BYTES,
    resolveUpstream,
    nextExchangeId: () => ++exchangeCounter,
    tap: options.tap,
    wsKeep: options.wsKeep,
    // h2c needs prior knowledge of the target: reverse mode only.
    h2c: !options.resolveUpstream,
    // Forward mode listens for 'connect' (as on an http.Server); without a listener a CONNECT is refused by a close.
    onConnect: (req, socket, head) => {
      if (server.listenerCount('connect') > 0) server.emit('connect', req, socket, head);
      else socket.destroy();
    },
  };
  const connections = new Set<ConnectionState>();
  // Upgraded connections whose end (upgrade-closed) has not been reported yet.
  const openUpgrades = new Set<number>();
  bus.on((fact) => {
    if (fact.type === 'upgrade-opened') openUpgrades.add(fact.exchangeId);
    else if (fact.type === 'upgrade-closed') openUpgrades.delete(fact.exchangeId);
  });

  /** stopTaking was called: connections tracked from then on take no new exchange either. */
  let stopped = false;
  const track = (socket: Socket, scheme: 'http' | 'https'): ConnectionState => {
    const state = trackConnection(socket, `c${++connectionCounter}`, scheme, bus);
    connections.add(state);
    if (stopped) state.closing = true;
    socket.once('close', () => connections.delete(state));
    return state;
  };
  // Sockets whose TLS bb is terminating (--listen-tls), and upstreams made for them, until the tap has them.
  const handshaking = new Set<Socket>();
  const terminateTls = options.listenTls
    ? tlsTerminator({
        bus,
        leaves: options.listenTls.leaves,
        upstream: fixedUpstream!,
        tlsOptions,
        connectTimeoutMs: settings.connectTimeoutMs,
        nextExchangeId: settings.nextExchangeId,
        nextConnectionId: () => `c${++connectionCounter}`,
        adopt: (socket, scheme, adoptOptions) => adopt(socket, scheme, adoptOptions),
        track: (socket) => {
          handshaking.add(socket);
          socket.once('close', () => handshaking.delete(socket));
        },
        release: (socket) => handshaking.delete(socket),
      })
    : undefined;
  server.on('connection', (socket: Socket) => {
    if (terminateTls && !connectionOf(socket)) return terminateTls(socket);
    const state = connectionOf(socket) ?? track(socket, 'http');
    // Reverse mode connects upstream at accept (forward mode learns the target from the request).
    tapConnection(state, socket, settings, fixedUpstream ? preconnectUpstream(fixedUpstream, tlsOptions, settings.connectTimeoutMs) : undefined);
  });

  const listenOnce = (): Promise<AddressInfo> =>
    new Promise<AddressInfo>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(new BbError('BB_LISTEN', `cannot listen on ${host}:${port}: ${listenFailureWhy(err, '--listen')}`));
      };
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve(server.address() as AddressInfo);
      });
    });
  let address = await listenOnce();
  // A proxy whose target is its own address sends every connection to itself until
  // descriptors run out. A target that is down frees its port, which "any free port"
  // may then hand the proxy: take another. Asked for by name, it is the user's to change.
  for (let tries = 0; fixedUpstream && namesOwnAddress(fixedUpstream.hostname, fixedUpstream.port, { host: address.address, port: address.port }); tries++) {
    if (port !== 0 || tries === 8) {
      server.close();
      throw new BbError('BB_LISTEN', `cannot listen on ${host}:${address.port}: it is the target's own address, so bb would proxy to itself; pick another --listen port`);
    }
    await new Promise((r) => server.close(r));
    address = await listenOnce();
  }
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  function adopt(socket: Duplex, scheme: 'http' | 'https', adoptOptions: AdoptOptions = {}): void {
    const state = track(socket as Socket, scheme);
    if (adoptOptions.alpn === 'h2') tapH2({ conn: state, client: socket, head: Buffer.alloc(0), settings, upstream: adoptOptions.upstream });
    else if (adoptOptions.upstream) tapConnection(state, socket, settings, adoptOptions.upstream);
    else server.emit('connection', socket);
  }

  let closing: Promise<void> | undefined;
  const stopTaking = (): void => {
    if (stopped) return;
    stopped = true;
    server.close();
    // No new exchange starts on any connection (a keep-alive client's next request is not taken: http1/tap.ts;
    // an h2 client is told by a GOAWAY to open no more streams: h2-tap.ts).
    for (const c of connections) {
      c.closing = true;
      c.onClosing?.();
    }
  };
  const inFlight = (): number => {
    let n = 0;
    for (const c of connections) n += c.active;
    return n;
  };
  return {
    url: `${options.listenTls ? 'https' : 'http'}://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    bus,
    target: targetLabel,
    server,
    inFlight,
    stopTaking,
    adopt,
    nextExchangeId: settings.nextExchangeId,
    close(graceMs = PROXY_DEFAULTS.closeGraceMs) {
      closing ??= (async () => {
        stopTaking();
        for (const s of handshaking) s.destroy();
        const deadline = Date.now() + graceMs;
        // A connection with nothing under way ends, its last answer written first: the last chunk of a response
        // waits for the turn's journal write (turn-flush.ts, a setImmediate) after its exchange is counted done,
        // and a destroy then lost it (the client got 'other side closed' for an answer its HAR held complete). So a
        // connection ends once it was seen idle twice, a pass apart (a turn or more): its held bytes are out by
        // then, and end() sends the FIN after them. A switched connection (a WebSocket) is cut as before.
        const ended = new Set<ConnectionState>();
        let seenIdle = new Set<ConnectionState>();
        for (;;) {
          const idleNow = new Set<ConnectionState>();
          for (const c of connections) {
            if (c.active > 0 || ended.has(c)) continue;
            if (!seenIdle.has(c)) {
              idleNow.add(c);
              continue;
            }
            ended.add(c);
            if (c.switched) c.socket.destroy();
            else endSocket(c.socket);
          }
          seenIdle = idleNow;
          if ((inFlight() === 0 && idleNow.size === 0) || Date.now() >= deadline) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        // Ended sockets close once their bytes are out and the client answers the FIN: a few turns.
        const endedBy = Date.now() + 1_000;
        while ([...connections].some((c) => ended.has(c)) && Date.now() < endedBy) await new Promise((r) => setTimeout(r, 5));
        for (const c of connections) c.socket.destroy();
        // Let every socket's 'close' run (and the WebSocket taps report upgrade-closed)
        // before the caller finalizes a capture: bounded, sockets close within a few turns.
        // A tap may still be inflating a last message: wait for its upgrade-closed too.
        const closeBy = Date.now() + 1_000;
        while ((connections.size > 0 || openUpgrades.size > 0) && Date.now() < closeBy) await new Promise((r) => setTimeout(r, 5));
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
      })();
      return closing;
    },
  };
}
