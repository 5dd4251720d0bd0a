// TEMPORARY stand-in for the h2 tap (the main engineer's proxy/h2-tap.ts
// replaces this file at merge): pipes both ways, records nothing.
import type { Duplex } from 'node:stream';
import type { ConnectionState } from './connection.js';
import type { TapSettings } from './tap-settings.js';

/** What the h2 tap is given for one client connection that negotiated h2. */
export interface H2TapStart {
  /** The tracked client connection. */
  conn: ConnectionState;
  /** The client's (decrypted) byte stream. */
  client: Duplex;
  /** Bytes already read from the client (may be empty). */
  head: Buffer;
  /** Per-proxy settings. */
  settings: TapSettings;
  /** Pre-connected upstream (ALPN h2); absent: the tap connects. */
  upstream?: { socket: Duplex; origin: string };
}

/** TEMPORARY: pipes the client and the pre-connected upstream into each other; without an upstream it closes the client. */
export function tapH2(start: H2TapStart): void {
  const { client, upstream, head } = start;
  if (!upstream) {
    client.destroy();
    return;
  }
  if (head.length > 0) upstream.socket.write(head);
  client.pipe(upstream.socket);
  upstream.socket.pipe(client);
  client.on('error', () => upstream.socket.destroy());
  upstream.socket.on('error', () => client.destroy());
  client.once('close', () => upstream.socket.destroy());
  upstream.socket.once('close', () => client.destroy());
}
