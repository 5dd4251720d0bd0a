// Reverse mode with --listen-tls: bb terminates the clients' TLS itself, in
// front of an https target, with leaves from bb's CA (the client's SNI name,
// else the target's host), ALPN mirrored as in forward mode
// (tls/alpn-mirror.ts): the target is asked with the client's ALPN list and
// the client gets the target's choice, so an h2 client speaks h2 to the
// target through bb and an HTTP/1.1 client HTTP/1.1.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { now, type FactBus } from './events.js';
import { PROXY_DEFAULTS } from './options.js';
import type { Upstream, UpstreamTlsOptions } from './upstream.js';
import type { PreconnectedUpstream } from './tap-settings.js';
import { terminateMirrored, type LeafFactory } from './tls/index.js';

/** What a TLS-terminating listener needs from its proxy. */
export interface ListenTlsContext {
  bus: FactBus;
  leaves: LeafFactory;
  /** The fixed https target. */
  upstream: Upstream;
  tlsOptions: UpstreamTlsOptions;
  connectTimeoutMs: number;
  nextExchangeId: () => number;
  /** A fresh connection id, for a client whose handshake failed (a decrypted one gets its id when adopted). */
  nextConnectionId: () => string;
  /** Hands the decrypted socket to the tap (RunningProxy.adopt). */
  adopt: (socket: Duplex, scheme: 'https', options: { upstream?: PreconnectedUpstream; alpn?: string }) => void;
  /** Sockets the proxy must destroy at close until handed over (the raw client socket, the upstream made for it). */
  track: (socket: Socket) => void;
  /** The socket is the tap's now: the proxy closes it through the decrypted one. */
  release: (socket: Socket) => void;
}

/** A handler for freshly accepted sockets that terminates their TLS and adopts the decrypted stream. */
export function tlsTerminator(ctx: ListenTlsContext): (socket: Socket) => void {
  return (socket) => {
    ctx.track(socket);
    socket.on('error', () => socket.destroy());
    terminateMirrored({
      socket,
      leaves: ctx.leaves,
      defaultHost: ctx.upstream.hostname,
      upstream: ctx.upstream,
      servernameFromClient: false,
      tlsOptions: ctx.tlsOptions,
      connectTimeoutMs: ctx.connectTimeoutMs,
      helloTimeoutMs: PROXY_DEFAULTS.clientHelloTimeoutMs,
      track: ctx.track,
      onSecure: ({ client, alpn, upstream }) => {
        ctx.release(socket);
        if (upstream) ctx.release(upstream.socket);
        ctx.adopt(client, 'https', { upstream, alpn });
      },
      onFailure: (err) => {
        const code = err.code ?? 'BB_CLIENT_TLS';
        const reason = (err as { reason?: string }).reason ?? err.message.split('\n')[0];
        const hint = /ALERT|CERT/i.test(code) ? "the client does not trust bb's CA: bb ca trust-info" : undefined;
        ctx.bus.emit({
          type: 'client-error',
          connectionId: ctx.nextConnectionId(),
          exchangeId: ctx.nextExchangeId(),
          time: now(),
          error: { code, message: `TLS with the client failed: ${reason}${hint ? ` (${hint})` : ''}`, phase: 'tls' },
          ...(hint ? { hint } : {}),
        });
      },
    });
  };
}
