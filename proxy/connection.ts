// State kept per client connection: its id, the scheme it reached bb with,
// and how many exchanges are under way on it (graceful stop waits for them).
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { now, type FactBus } from './events.js';

/** One client connection as the proxy sees it. */
export interface ConnectionState {
  /** "c1", "c2", ... in accept order. */
  id: string;
  /** The scheme the client used to reach bb ('https' inside an intercepted tunnel). */
  scheme: 'http' | 'https';
  /** Exchanges under way (request received, response not finished). */
  active: number;
  /** The client socket. */
  socket: Socket;
  /** The proxy is stopping (RunningProxy.close): no new exchange starts on this connection. */
  closing?: boolean;
  /** Told once when the proxy stops taking exchanges (RunningProxy.stopTaking): the h2 tap tells its client with a GOAWAY. */
  onClosing?: () => void;
  /** Switched to another protocol (a WebSocket after its 101): its bytes are the upgrade tap's. */
  switched?: boolean;
}

const STATE = Symbol('bb.connection');

/** Registers a freshly accepted client socket and returns its state. */
export function trackConnection(socket: Socket, id: string, scheme: 'http' | 'https', bus: FactBus): ConnectionState {
  const state: ConnectionState = { id, scheme, active: 0, socket };
  (socket as Socket & { [STATE]?: ConnectionState })[STATE] = state;
  bus.emit({ type: 'connection-opened', connectionId: id, time: now(), remoteAddress: socket.remoteAddress ?? '', remotePort: socket.remotePort ?? 0 });
  socket.once('close', () => bus.emit({ type: 'connection-closed', connectionId: id, time: now() }));
  return state;
}

/** The state of a tracked client socket (undefined when it was never tracked). */
export function connectionOf(socket: Socket): ConnectionState | undefined {
  return (socket as Socket & { [STATE]?: ConnectionState })[STATE];
}

/**
 * Ends a socket's writable side unless it is ended or destroyed already.
 * Node's end() on a finished or destroyed stream builds an Error (its stack
 * captured) that nobody reads: ~10 µs on every connection a client closes
 * after a `Connection: close` answer (docs/performance.md "Counted per operation: system calls and CPU by thread
 * (issue 39, 2026-12-07 04:16 UTC, AMD EPYC)"). Every end of a proxied socket goes through it.
 */
export function endSocket(socket: Writable): void {
  if (!socket.writableEnded && !socket.destroyed) socket.end();
}
