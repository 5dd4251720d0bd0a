// After a 101: the client gets the server's 101 head exactly as received,
// then bytes are piped both ways untouched. A tap may read copies of both
// directions (the WebSocket tap by default); nothing is ever re-framed.
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { headerValue } from '../core/index.js';
import { now, type FactBus, type RawHeaders } from './events.js';
import type { RequestHead, ResponseHead } from './http1-head.js';
import { tapWebSocket } from './ws-tap.js';

/** Called once bytes flow both ways; it may read (never write) both sockets. */
export type UpgradeTap = (args: {
  exchangeId: number;
  client: Duplex;
  upstream: Duplex;
  clientHead: Buffer;
  upstreamHead: Buffer;
  responseHeaders: RawHeaders;
}) => void;

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
}

/** Pipes an upgraded connection and starts its tap. */
export function handOver(h: HandOver): void {
  const { client, upstream, bus, exchangeId } = h;
  client.write(h.response.raw);
  if (h.upstreamHead.length > 0) client.write(h.upstreamHead);
  if (h.clientHead.length > 0) upstream.write(h.clientHead);
  const isWebSocket = /^websocket$/i.test(headerValue(h.request.rawHeaders, 'upgrade') ?? '');
  const tap: UpgradeTap | undefined = h.tap ?? (isWebSocket ? (args) => tapWebSocket({ ...args, emit: (fact) => bus.emit(fact) }) : undefined);
  if (tap) {
    // The tap starts before piping so that it sees every chunk from the first one.
    try {
      tap({ exchangeId, client, upstream, clientHead: h.clientHead, upstreamHead: h.upstreamHead, responseHeaders: h.response.rawHeaders });
    } catch {
      // A broken tap must never break the connection.
    }
  } else {
    // Not a WebSocket (or tapping is off): only the end is a fact.
    let closedOnce = false;
    const closed = (): void => {
      if (closedOnce) return;
      closedOnce = true;
      bus.emit({ type: 'upgrade-closed', exchangeId, time: now(), by: 'none' });
    };
    client.once('close', closed);
    upstream.once('close', closed);
  }
  client.pipe(upstream);
  upstream.pipe(client);
  // Either side ending or failing ends the other (half-close is passed on by pipe's end()).
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
  client.resume();
}
