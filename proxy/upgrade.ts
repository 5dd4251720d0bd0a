// Upgrade requests (WebSocket): forward the request head exactly, write the
// server's 101 head to the client exactly as received (raw names and order),
// then pipe bytes both ways untouched. A tap may read copies of both
// directions; nothing is ever re-framed.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { now, type FailureInfo, type RawHeaders } from './events.js';
import { badGateway, classifyUpstreamError, serializeResponse } from './errors.js';
import type { ConnectionState } from './connection.js';
import { beginExchange, upstreamRequest, type ExchangeSettings } from './http-exchange.js';
import { tapWebSocket } from './ws-tap.js';
import { serializeHead } from '../core/index.js';

/** Called once bytes flow both ways; it may read (never write) both sockets. */
export type UpgradeTap = (args: {
  exchangeId: number;
  client: Duplex;
  upstream: Duplex;
  clientHead: Buffer;
  upstreamHead: Buffer;
  responseHeaders: RawHeaders;
}) => void;

function defaultTap(settings: ExchangeSettings): UpgradeTap {
  return (args) => {
    tapWebSocket({ ...args, emit: (fact) => settings.bus.emit(fact) });
  };
}

/** Handles an 'upgrade' request from the client. */
export function handleUpgrade(
  conn: ConnectionState,
  req: http.IncomingMessage,
  client: Duplex,
  clientHead: Buffer,
  settings: ExchangeSettings,
  tap: UpgradeTap | undefined,
): void {
  const { bus } = settings;
  const { exchangeId, upstream, badTarget } = beginExchange(conn, req, settings, true);
  let finished = false;
  conn.active++;
  const settle = (): boolean => {
    if (finished) return false;
    finished = true;
    conn.active--;
    return true;
  };

  const fail = (failure: FailureInfo): void => {
    if (!settle()) return;
    const response = badGateway(failure, upstream.origin);
    bus.emit({ type: 'exchange-failed', exchangeId, time: now(), error: failure, response });
    if (client.writable) client.end(serializeResponse(response));
  };

  if (badTarget !== undefined) {
    fail({ code: 'BB_BAD_TARGET', message: badTarget, phase: 'request' });
    return;
  }

  const outgoing = upstreamRequest(conn, req, upstream, settings);
  outgoing.on('error', (err: NodeJS.ErrnoException) => {
    const bytes = outgoing.socket ? conn.firstBytes.get(outgoing.socket as Socket) : undefined;
    fail(classifyUpstreamError(err, err.code === 'ECONNREFUSED' ? 'connect' : 'request', bytes));
  });
  client.on('error', () => outgoing.destroy());
  client.once('close', () => {
    if (!finished && settle()) {
      bus.emit({ type: 'exchange-aborted', exchangeId, time: now(), by: 'client', phase: 'request' });
      outgoing.destroy();
    }
  });

  outgoing.on('upgrade', (up: http.IncomingMessage, upSocket: Socket, upHead: Buffer) => {
    if (!settle()) {
      upSocket.destroy();
      return;
    }
    const time = now();
    bus.emit({
      type: 'upgrade-opened',
      exchangeId,
      time,
      statusCode: up.statusCode ?? 101,
      statusMessage: up.statusMessage ?? '',
      httpVersion: up.httpVersion,
      rawHeaders: up.rawHeaders,
      client,
      upstream: upSocket,
    });
    client.write(serializeHead(`HTTP/${up.httpVersion} ${up.statusCode} ${up.statusMessage}`, up.rawHeaders), 'latin1');
    if (upHead.length > 0) client.write(upHead);
    if (clientHead.length > 0) upSocket.write(clientHead);
    // The tap starts before piping so that it sees every chunk from the first one.
    const isWebSocket = /^websocket$/i.test(String(req.headers.upgrade ?? ''));
    const useTap = tap ?? (isWebSocket ? defaultTap(settings) : undefined);
    if (useTap) {
      try {
        useTap({ exchangeId, client, upstream: upSocket, clientHead, upstreamHead: upHead, responseHeaders: up.rawHeaders });
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
      upSocket.once('close', closed);
    }
    client.pipe(upSocket);
    upSocket.pipe(client);
    // Either side ending or failing ends the other (half-close is passed on by pipe's end()).
    upSocket.on('error', () => client.destroy());
    client.on('error', () => upSocket.destroy());
    upSocket.on('close', () => client.destroy());
    client.on('close', () => upSocket.destroy());
    upSocket.setTimeout(0);
    upSocket.setNoDelay(true);
  });

  // The server refused the upgrade: pass its answer on verbatim and end the connection,
  // since the socket now belongs to bb and cannot go back to the HTTP parser.
  outgoing.on('response', (up: http.IncomingMessage) => {
    bus.emit({
      type: 'response-started',
      exchangeId,
      time: now(),
      statusCode: up.statusCode ?? 502,
      statusMessage: up.statusMessage ?? '',
      httpVersion: up.httpVersion,
      rawHeaders: up.rawHeaders,
    });
    const chunked = /chunked/i.test(String(up.headers['transfer-encoding'] ?? ''));
    client.write(serializeHead(`HTTP/${up.httpVersion} ${up.statusCode} ${up.statusMessage}`, up.rawHeaders), 'latin1');
    up.on('data', (chunk: Buffer) => {
      bus.emit({ type: 'response-body', exchangeId, time: now(), chunk });
      client.write(chunked ? Buffer.concat([Buffer.from(chunk.length.toString(16) + '\r\n'), chunk, Buffer.from('\r\n')]) : chunk);
    });
    up.on('end', () => {
      if (settle()) bus.emit({ type: 'exchange-completed', exchangeId, time: now(), rawTrailers: up.rawTrailers });
      client.end(chunked ? '0\r\n\r\n' : undefined);
    });
    up.on('error', () => client.destroy());
  });
  outgoing.end();
}
