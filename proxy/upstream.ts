// Where an exchange goes, and the one upstream connection the tap opens per
// client connection (1:1: reused for keep-alive, closed with it).
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import net, { type Socket } from 'node:net';
import { isVerifyFailure } from './errors.js';

/** An upstream origin. */
export interface Upstream {
  /** "http://127.0.0.1:3000" — what capture records as the target. */
  origin: string;
  /** true for https / wss upstreams. */
  tls: boolean;
  hostname: string;
  port: number;
  /** SNI name for TLS upstreams (a host name, never an IP). */
  servername?: string;
}

/** How bb talks TLS to upstreams. */
export interface UpstreamTlsOptions {
  /** Extra CA certificates (PEM), added to Node's bundled roots, never replacing them. */
  extraCa?: string[];
  /** Skip certificate verification (explicit opt-out). */
  insecure?: boolean;
  /**
   * The PEM of NODE_EXTRA_CA_CERTS, read by the caller (the CLI, the package
   * entry point): Node adds it to its roots only while no `ca` is given, so
   * with extraCa bb must add it itself.
   */
  nodeExtraCa?: string[];
}

/**
 * The PEM text of a NODE_EXTRA_CA_CERTS file, when set and readable (Node
 * itself only warns about an unreadable one; so does bb, by leaving it out).
 * The caller reads the variable: proxy/ takes no environment.
 */
export function readExtraCaFile(file: string | undefined): string[] {
  if (!file) return [];
  try {
    return [readFileSync(file, 'utf8')];
  } catch {
    return [];
  }
}

/** Parses an origin URL ("http://127.0.0.1:3000") into an Upstream; throws TypeError when it is not one. */
export function parseUpstream(origin: string): Upstream {
  const url = new URL(origin);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${origin}`);
  const isTls = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : isTls ? 443 : 80;
  return {
    origin: `${url.protocol}//${url.host}`,
    tls: isTls,
    hostname,
    port,
    servername: isTls && !isIpAddress(hostname) ? hostname : undefined,
  };
}

function isIpAddress(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

/** What the HTTP/1.1 tap offers when it connects by itself. */
export const HTTP1_ALPN: readonly string[] = Object.freeze(['http/1.1']);

const caLists = new WeakMap<UpstreamTlsOptions, string[] | undefined>();

/** The `ca` list for TLS to upstreams (undefined: Node's own roots), built once per options object. */
export function upstreamCa(tlsOptions: UpstreamTlsOptions): string[] | undefined {
  if (!caLists.has(tlsOptions)) {
    // Node's `ca:` replaces its whole store, NODE_EXTRA_CA_CERTS included: extra CAs add to both.
    caLists.set(tlsOptions, tlsOptions.extraCa?.length ? [...tls.rootCertificates, ...(tlsOptions.nodeExtraCa ?? []), ...tlsOptions.extraCa] : undefined);
  }
  return caLists.get(tlsOptions);
}

/**
 * Opens one TCP (or TLS) connection to an upstream: the tap's 1:1 upstream
 * socket. TLS offers `alpn` (default http/1.1, what the HTTP/1.1 tap speaks;
 * null offers none): an intercepting proxy passes on the client's own list
 * (names as latin1 strings, one char per byte, sent as those bytes).
 */
export function connectUpstream(upstream: Upstream, tlsOptions: UpstreamTlsOptions, alpn: readonly string[] | null = HTTP1_ALPN): Socket {
  if (!upstream.tls) return net.connect({ host: upstream.hostname, port: upstream.port, noDelay: true });
  const socket = tls.connect({
    host: upstream.hostname,
    port: upstream.port,
    servername: upstream.servername,
    ca: upstreamCa(tlsOptions),
    rejectUnauthorized: !tlsOptions.insecure,
    ...(alpn && alpn.length > 0 ? { ALPNProtocols: alpnWire(alpn) } : {}),
  });
  socket.setNoDelay(true);
  return socket;
}

/** An ALPN list in its wire form (RFC 7301 §3.1: each name behind its one-byte length), so every byte is sent as the client sent it. */
export function alpnWire(names: readonly string[]): Buffer {
  return Buffer.concat(names.flatMap((name) => [Buffer.of(name.length), Buffer.from(name, 'latin1')]));
}

/**
 * Destroys an upstream socket that is still connecting after `ms` with a BB_CONNECT_TIMEOUT error
 * (classifyUpstreamError names it); the timer ends once `connectEvent` fires or the socket closes.
 */
export function armConnectTimeout(socket: Socket, ms: number, connectEvent: 'connect' | 'secureConnect'): void {
  if (ms <= 0) return;
  const timer = setTimeout(() => socket.destroy(Object.assign(new Error(`no connection after ${ms} ms`), { code: 'BB_CONNECT_TIMEOUT' })), ms);
  socket.once(connectEvent, () => clearTimeout(timer));
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Destroys an upstream socket silent for `ms` with a BB_UPSTREAM_TIMEOUT error, but only while `waiting()`
 * says a client waits for it (`--upstream-timeout`: an idle kept-alive connection may stay open).
 */
export function armSilenceTimeout(socket: Socket, ms: number, waiting: () => boolean): void {
  if (ms <= 0) return;
  socket.setTimeout(ms, () => {
    if (waiting()) socket.destroy(Object.assign(new Error(`no data from the upstream for ${ms} ms`), { code: 'BB_UPSTREAM_TIMEOUT' }));
  });
}

/**
 * Reverse mode: the upstream connection opened as the client's is accepted
 * (a raw pipe connects at accept too), so the first request pays no connect.
 * It is only a head start: the tap takes it for its first request (or makes
 * its own when this one failed or closed meanwhile), and destroys it with
 * the client connection. The connect timeout runs from accept.
 */
export function preconnectUpstream(upstream: Upstream, tlsOptions: UpstreamTlsOptions, connectTimeoutMs: number): { socket: Socket; origin: string } {
  const socket = connectUpstream(upstream, tlsOptions);
  // Failures before the tap listens are the tap's to find (a destroyed socket is not taken): never thrown.
  socket.on('error', () => {});
  armConnectTimeout(socket, connectTimeoutMs, upstream.tls ? 'secureConnect' : 'connect');
  return { socket, origin: upstream.origin };
}

/**
 * What probeUpstream found: the origin takes connections (over TLS: with a certificate bb trusts, and `alpn` the
 * protocol it chose of h2 and http/1.1, '' for none), or why not.
 */
export type UpstreamProbe = { ok: true; alpn?: string } | { ok: false; code: string; untrusted: boolean };

/**
 * Connects to `origin` as the proxy will (over TLS with `tlsOptions`' trust,
 * offering h2 and http/1.1) and hangs up: so a command can refuse a target
 * that is down, or whose certificate bb cannot verify, before it records
 * anything (bb replay, bb shadow). `untrusted`: the certificate failed
 * verification (unknown CA, expired, wrong name).
 */
export function probeUpstream(origin: string, tlsOptions: UpstreamTlsOptions, timeoutMs: number): Promise<UpstreamProbe> {
  const upstream = parseUpstream(origin);
  return new Promise((resolve) => {
    const socket = connectUpstream(upstream, tlsOptions, ['h2', 'http/1.1']);
    const timer = setTimeout(() => end({ ok: false, code: 'ETIMEDOUT', untrusted: false }), timeoutMs);
    const end = (probe: UpstreamProbe) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(probe);
    };
    if (upstream.tls) socket.once('secureConnect', () => end({ ok: true, alpn: (socket as tls.TLSSocket).alpnProtocol || '' }));
    else socket.once('connect', () => end({ ok: true }));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? err.message;
      end({ ok: false, code, untrusted: isVerifyFailure(code) });
    });
  });
}
