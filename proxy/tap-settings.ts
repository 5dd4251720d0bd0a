// What the HTTP/1 and h2 taps are given, per proxy.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FactBus } from './events.js';
import type { RewriteSettings } from './request-rewrite.js';
import type { Upstream, UpstreamTlsOptions } from './upstream.js';
import type { UpgradeTap } from './upgrade.js';

/** What resolveUpstream is told about a request (http.IncomingMessage has the same fields). */
export interface UpstreamQuery {
  /** The request-target as sent. */
  url: string;
  method: string;
  httpVersion: string;
  rawHeaders: string[];
  /** The client socket (forward mode knows tunnels by it). */
  socket: Duplex;
}

/** Per-proxy settings the tap needs. */
export interface TapSettings extends RewriteSettings {
  bus: FactBus;
  /** Max wait for the upstream's TCP/TLS connection (0 = none). */
  connectTimeoutMs: number;
  /** Max silence from the upstream while an exchange is under way (0 = none). */
  upstreamTimeoutMs: number;
  /** TLS to https upstreams. */
  tlsOptions: UpstreamTlsOptions;
  /** Max time for a client's first byte, and for a whole request head once begun (0 = none). */
  headTimeoutMs: number;
  /** Largest request head, bytes. */
  maxHeadBytes: number;
  /** Picks the upstream for a request (reverse: fixed; forward: from the request); throws to refuse. */
  resolveUpstream: (req: UpstreamQuery, scheme: 'http' | 'https') => Upstream;
  /** Next exchange id (shared with upgrades, client errors and tunnels). */
  nextExchangeId: () => number;
  /** Reads both directions of each upgraded connection (default: the WebSocket tap for websocket upgrades). */
  tap?: UpgradeTap;
  /** The WebSocket tap: payload bytes of a message it keeps (default DEFAULT_WS_KEEP). */
  wsKeep?: number;
  /** Reverse mode: a connection opening with the h2 preface goes to the h2 tap (h2c with prior knowledge). */
  h2c?: boolean;
  /** Forward mode: a CONNECT request; the socket is the caller's from here on, `head` the bytes after it. */
  onConnect?: (req: UpstreamQuery, socket: Duplex, head: Buffer) => void;
}

/** An upstream connection made before the tap started (TLS interception connects first to learn the upstream's ALPN choice). */
export interface PreconnectedUpstream {
  /** The connected (TLS) socket, not yet read. */
  socket: Socket;
  /** Its origin, "https://host:port": used when the first request resolves to the same one. */
  origin: string;
}
