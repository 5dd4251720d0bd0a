// CONNECT tunnels bb does not look inside: bytes piped both ways untouched,
// recorded as one entry (CONNECT host:port → 200) that completes when the
// tunnel closes. Also the small pieces the forward proxy needs to read a
// CONNECT: the authority-form target and the first bytes the client sends.
import net, { type Socket } from 'node:net';
import { now, type EpochMs, type FactBus, type FailureInfo, type RawHeaders } from './events.js';
import { badGateway, classifyUpstreamError, serializeResponse } from './errors.js';
import { armConnectTimeout } from './upstream.js';

/** The host and port a CONNECT names. */
export interface TunnelTarget {
  /** Host name or IP, without IPv6 brackets. */
  host: string;
  port: number;
  /** "host:port" as an authority ("[::1]:443" for IPv6). */
  authority: string;
}

/** Parses an authority-form request-target ("example.com:443", "[::1]:8443"); undefined when it is not one. */
export function parseAuthority(target: string): TunnelTarget | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:/?#@[\]]+)):(\d{1,5})$/.exec(target);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  const host = m[1] ?? m[2]!;
  if (m[1] !== undefined && net.isIPv6(host) === false) return undefined;
  return { host, port, authority: m[1] !== undefined ? `[${host}]:${port}` : `${host}:${port}` };
}

/** What the client sent first in a tunnel: bytes, nothing within the wait, or a hang-up. */
export type FirstBytes = { kind: 'bytes'; bytes: Buffer } | { kind: 'silent' } | { kind: 'closed' };

/**
 * Waits for the client's first bytes and puts them back (unshift), so whoever
 * reads the socket next — a TLSSocket or the HTTP parser — sees them again.
 * `head` holds bytes that came in the same packet as the CONNECT head.
 */
export function readFirstBytes(socket: Socket, head: Buffer, waitMs: number): Promise<FirstBytes> {
  if (head.length > 0) {
    socket.unshift(head);
    return Promise.resolve({ kind: 'bytes', bytes: head });
  }
  return new Promise((resolve) => {
    const done = (result: FirstBytes): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      socket.pause();
      socket.unshift(chunk);
      done({ kind: 'bytes', bytes: chunk });
    };
    const onClose = (): void => done({ kind: 'closed' });
    // A server-speaks-first protocol (SMTP, SSH) never sends first: after the wait it is piped opaquely.
    const timer = setTimeout(() => {
      socket.pause();
      done({ kind: 'silent' });
    }, waitMs);
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/** True when the bytes start a TLS handshake record (RFC 8446 §5.1: type 22, version 3.x). */
export function looksLikeTls(bytes: Buffer): boolean {
  return bytes.length >= 1 && bytes[0] === 0x16 && (bytes.length < 2 || bytes[1] === 0x03);
}

/** True when the bytes start an HTTP/1.x request line: a method token and a space ("GET /path HTTP/1.1"). */
export function looksLikeHttp(bytes: Buffer): boolean {
  return /^[A-Z][A-Z_-]{1,20} [^\s]/.test(bytes.subarray(0, 32).toString('latin1'));
}

/** The CONNECT request as a tunnel entry records it. */
export interface ConnectRequest {
  /** Fresh exchange id from the proxy. */
  exchangeId: number;
  /** The client connection the CONNECT came on. */
  connectionId: string;
  /** When the CONNECT head arrived. */
  time: EpochMs;
  /** The request-target, authority-form. */
  target: string;
  httpVersion: string;
  rawHeaders: RawHeaders;
}

/** How an opaque tunnel is made. */
export interface OpaqueTunnelOptions {
  bus: FactBus;
  /** The client socket (after the CONNECT head). */
  client: Socket;
  target: TunnelTarget;
  request: ConnectRequest;
  /** True when bb already answered 200 (it peeked at the first bytes); else it answers once the upstream accepts. */
  established: boolean;
  /** Max wait for the upstream's TCP connection, ms (0 = none). */
  connectTimeoutMs: number;
  /** Sockets this proxy must destroy at close. */
  track: (socket: Socket) => void;
}

/** The 200 a proxy sends when a tunnel is open. */
export const CONNECT_ESTABLISHED = Buffer.from('HTTP/1.1 200 Connection Established\r\n\r\n', 'latin1');

/** Emits the start of a tunnel entry and, when bb already answered, its 200. */
export function startTunnelEntry(bus: FactBus, request: ConnectRequest, upstream: string, answeredAt?: EpochMs): void {
  bus.emit({
    type: 'exchange-started',
    exchangeId: request.exchangeId,
    connectionId: request.connectionId,
    time: request.time,
    scheme: 'http',
    method: 'CONNECT',
    target: request.target,
    httpVersion: request.httpVersion,
    rawHeaders: request.rawHeaders,
    upstream,
    upgrade: false,
  });
  bus.emit({ type: 'request-ended', exchangeId: request.exchangeId, time: request.time, rawTrailers: [] });
  if (answeredAt !== undefined) established(bus, request.exchangeId, answeredAt);
}

function established(bus: FactBus, exchangeId: number, time: EpochMs): void {
  bus.emit({ type: 'response-started', exchangeId, time, statusCode: 200, statusMessage: 'Connection Established', httpVersion: '1.1', rawHeaders: [] });
}

/**
 * Connects to the target and pipes bytes both ways, untouched. The entry
 * completes when both sides are done; a failed connect before bb answered is
 * a 502 with `exchange-failed`, after it an `exchange-aborted` by the upstream.
 */
export function openOpaqueTunnel(opts: OpaqueTunnelOptions, answeredAt?: EpochMs): void {
  const { bus, client, target, request } = opts;
  const exchangeId = request.exchangeId;
  const upstreamLabel = `tcp://${target.authority}`;
  startTunnelEntry(bus, request, upstreamLabel, opts.established ? answeredAt ?? now() : undefined);
  let finished = false;
  const finish = (emit: () => void): void => {
    if (finished) return;
    finished = true;
    emit();
  };

  const upstream = net.connect({ host: target.host, port: target.port, noDelay: true });
  opts.track(upstream);
  let connected = false;
  armConnectTimeout(upstream, opts.connectTimeoutMs, 'connect');

  upstream.once('connect', () => {
    connected = true;
    if (!opts.established) {
      if (client.destroyed) {
        upstream.destroy();
        return;
      }
      client.write(CONNECT_ESTABLISHED);
      established(bus, exchangeId, now());
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    const failure: FailureInfo = classifyUpstreamError(err, connected ? 'response' : 'connect');
    if (!connected && !opts.established) {
      const response = badGateway(failure, upstreamLabel);
      finish(() => bus.emit({ type: 'exchange-failed', exchangeId, time: now(), error: failure, response }));
      if (client.writable) client.end(serializeResponse(response));
      return;
    }
    finish(() => bus.emit({ type: 'exchange-aborted', exchangeId, time: now(), by: 'upstream', phase: 'response', error: failure }));
    client.destroy();
  });
  client.on('error', () => upstream.destroy());
  // Half-closes pass through pipe's end(). A socket that is gone for good takes the other one
  // with it once its queued bytes are written; the entry completes when both are closed.
  let closed = 0;
  const onClose = (): void => {
    if (++closed < 2) return;
    finish(() => bus.emit({ type: 'exchange-completed', exchangeId, time: now(), rawTrailers: [] }));
  };
  upstream.once('close', () => {
    if (!connected) {
      // Closed before connecting without an error event (destroyed when the proxy closed).
      finish(() => bus.emit({ type: 'exchange-aborted', exchangeId, time: now(), by: 'upstream', phase: 'request' }));
      client.destroy();
    } else {
      client.destroySoon();
    }
    onClose();
  });
  client.once('close', () => {
    if (connected) upstream.destroySoon();
    else {
      finish(() => bus.emit({ type: 'exchange-aborted', exchangeId, time: now(), by: 'client', phase: 'request' }));
      upstream.destroy();
    }
    onClose();
  });
}
