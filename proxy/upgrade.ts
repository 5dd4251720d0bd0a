// After a 101: the client gets the server's 101 head exactly as received,
// then bytes are relayed both ways untouched. A tap may read copies of both
// directions (the WebSocket tap by default); nothing is ever re-framed.
//
// The relay is one 'data' listener per socket that writes the chunk on and
// then hands it to the tap: the bytes leave before any parsing or recording
// runs (a message's latency through bb is one write call), and each chunk
// costs one listener call, as a bare pipe does, instead of a pipe's listener
// plus a tap's. Backpressure is a pipe's: a full writer pauses the reader
// until it drains.
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { headerValue } from '../core/index.js';
import { now, type FactBus, type RawHeaders } from './events.js';
import type { RequestHead, ResponseHead } from './http1/head.js';
import { tapWebSocket, type WsTap } from './ws-tap.js';
import { endSocket } from './connection.js';

/** Per direction, what the relay passes each chunk to once it is forwarded, with the time it arrived (epoch ms). */
export interface TapFeeds {
  /** A chunk the client sent. */
  fromClient?(chunk: Buffer, time: number): void;
  /** A chunk the upstream sent. */
  fromUpstream?(chunk: Buffer, time: number): void;
}

/**
 * Called once bytes flow both ways; it may read (never write) both sockets,
 * either with listeners of its own or by returning feeds the relay calls.
 * The proxy reports the connection's end (upgrade-closed, by 'none'): only
 * the built-in WebSocket tap says more (who closed first, with what code).
 */
export type UpgradeTap = (args: {
  exchangeId: number;
  /** Absent for a WebSocket over an HTTP/2 stream (RFC 8441): there the stream's bytes come through the feeds only. */
  client?: Duplex;
  /** Absent as `client` is. */
  upstream?: Duplex;
  clientHead: Buffer;
  upstreamHead: Buffer;
  responseHeaders: RawHeaders;
}) => TapFeeds | void;

/** What the HTTP tap hands over when the upstream answered an upgrade with 101. */
export interface HandOver {
  exchangeId: number;
  request: RequestHead;
  /** The 101 (its raw bytes go to the client as they came). */
  response: ResponseHead;
  client: Duplex;
  upstream: Socket;
  /** Client bytes that came after the upgrade request head. */
  clientHead: Buffer;
  /** Upstream bytes that came after the 101 head. */
  upstreamHead: Buffer;
  bus: FactBus;
  /** The tap to run; default: the WebSocket tap for websocket upgrades. */
  tap?: UpgradeTap;
  /** The WebSocket tap: payload bytes of a message it keeps (default DEFAULT_WS_KEEP). */
  wsKeep?: number;
}

/** The built-in WebSocket tap, fed by the relay. */
function webSocketTap(bus: FactBus, keep: number | undefined): UpgradeTap {
  return (args) => {
    const tap = tapWebSocket({ ...args, emit: (fact) => bus.emit(fact), fed: true, keep });
    return { fromClient: tap.fromClient, fromUpstream: tap.fromUpstream };
  };
}

/** Relays an upgraded connection and starts its tap. */
export function handOver(h: HandOver): void {
  const { client, upstream, bus, exchangeId } = h;
  client.write(h.response.raw);
  if (h.upstreamHead.length > 0) client.write(h.upstreamHead);
  if (h.clientHead.length > 0) upstream.write(h.clientHead);
  const isWebSocket = /^websocket$/i.test(headerValue(h.request.rawHeaders, 'upgrade') ?? '');
  const tap: UpgradeTap | undefined = h.tap ?? (isWebSocket ? webSocketTap(bus, h.wsKeep) : undefined);
  let feeds: TapFeeds | void = undefined;
  if (tap) {
    // The tap starts before the relay so that it sees every chunk from the first one.
    try {
      feeds = tap({ exchangeId, client, upstream, clientHead: h.clientHead, upstreamHead: h.upstreamHead, responseHeaders: h.response.rawHeaders });
    } catch {
      // A broken tap must never break the connection.
    }
  }
  if (!tap || h.tap) {
    // No WebSocket tap reads it (not a WebSocket, or a caller's own tap): only the end is a fact. (A caller's tap
    // emitted none before: its connections stayed open in the proxy's count, and close() waited out its grace.)
    let closedOnce = false;
    const closed = (): void => {
      if (closedOnce) return;
      closedOnce = true;
      closedByNone(bus, exchangeId);
    };
    client.once('close', closed);
    upstream.once('close', closed);
  }
  relay(client, upstream, feeds?.fromClient?.bind(feeds));
  relay(upstream, client, feeds?.fromUpstream?.bind(feeds));
  // Either side ending or failing ends the other (half-close is passed on by relay's end()).
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
  client.resume();
}

/** Forwards every chunk `from` reads to `to`, then feeds it to the tap; `from`'s end ends `to`. */
function relay(from: Duplex, to: Duplex, feed: ((chunk: Buffer, time: number) => void) | undefined): void {
  let draining = false;
  const drained = (): void => {
    draining = false;
    from.resume();
  };
  from.on('data', (chunk: Buffer) => {
    const time = feed ? now() : 0;
    if (!to.write(chunk) && !draining) {
      draining = true;
      from.pause();
      to.once('drain', drained);
    }
    if (!feed) return;
    try {
      feed(chunk, time);
    } catch {
      // A broken tap must never break the connection: it reads no more of this direction.
      feed = undefined;
    }
  });
  from.once('end', () => endSocket(to));
}

/** An upgraded connection no WebSocket tap reads has ended: only that is a fact. */
function closedByNone(bus: FactBus, exchangeId: number): void {
  bus.emit({ type: 'upgrade-closed', exchangeId, time: now(), by: 'none' });
}

/**
 * A caller's own UpgradeTap (ProxyOptions.tap) on a WebSocket over an HTTP/2 stream: no sockets, the stream's DATA
 * fed through the feeds it returns (h2-streams.ts), and the end reported as handOver reports it for an HTTP/1.1
 * upgrade (closedByNone). Before, such a stream went to the built-in WebSocket tap whatever the caller asked.
 */
export function fedUpgradeTap(tap: UpgradeTap, exchangeId: number, responseHeaders: RawHeaders, bus: FactBus): WsTap {
  let feeds: TapFeeds | void = undefined;
  try {
    // The stream's bytes all come through the feeds: nothing came before the 2xx.
    const none = Buffer.alloc(0);
    feeds = tap({ exchangeId, clientHead: none, upstreamHead: none, responseHeaders });
  } catch {
    // A broken tap must never break the stream.
  }
  let fromClient = feeds?.fromClient?.bind(feeds);
  let fromUpstream = feeds?.fromUpstream?.bind(feeds);
  let ended = false;
  return {
    fromClient(chunk, time) {
      try {
        fromClient?.(chunk, time);
      } catch {
        fromClient = undefined;
      }
    },
    fromUpstream(chunk, time) {
      try {
        fromUpstream?.(chunk, time);
      } catch {
        fromUpstream = undefined;
      }
    },
    end() {
      if (ended) return;
      ended = true;
      closedByNone(bus, exchangeId);
    },
    stop() {
      fromClient = fromUpstream = undefined;
    },
  };
}
