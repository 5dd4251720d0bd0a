// State kept per client connection: its id, its own upstream agents (the 1:1
// mapping), and how many exchanges are under way on it.
import type { Socket } from 'node:net';
import { now, type FactBus } from './events.js';
import { ConnectionAgents, type UpstreamTlsOptions } from './upstream.js';

/** One client connection as the proxy sees it. */
export interface ConnectionState {
  /** "c1", "c2", ... in accept order. */
  id: string;
  /** The scheme the client used to reach bb ('https' inside an intercepted tunnel). */
  scheme: 'http' | 'https';
  /** This connection's upstream agents. */
  agents: ConnectionAgents;
  /** Exchanges under way (request received, response not finished). */
  active: number;
  /** First bytes each upstream socket received (to tell an HTTP/2-only server). */
  firstBytes: WeakMap<Socket, Buffer>;
  /** The client socket. */
  socket: Socket;
}

const STATE = Symbol('bb.connection');

/** Registers a freshly accepted client socket and returns its state. */
export function trackConnection(
  socket: Socket,
  id: string,
  scheme: 'http' | 'https',
  bus: FactBus,
  tlsOptions: UpstreamTlsOptions,
): ConnectionState {
  const firstBytes = new WeakMap<Socket, Buffer>();
  const state: ConnectionState = {
    id,
    scheme,
    active: 0,
    firstBytes,
    socket,
    agents: new ConnectionAgents(tlsOptions, (upstreamSocket) => {
      upstreamSocket.once('data', (chunk: Buffer) => firstBytes.set(upstreamSocket, chunk));
      // 1:1: when the server ends an idle keep-alive connection, end the client's too,
      // so the client sees the server's close behaviour.
      upstreamSocket.once('close', () => {
        if (state.active === 0 && !socket.destroyed) socket.end();
      });
    }),
  };
  (socket as Socket & { [STATE]?: ConnectionState })[STATE] = state;
  bus.emit({ type: 'connection-opened', connectionId: id, time: now(), remoteAddress: socket.remoteAddress ?? '', remotePort: socket.remotePort ?? 0 });
  socket.once('close', () => {
    state.agents.destroy();
    bus.emit({ type: 'connection-closed', connectionId: id, time: now() });
  });
  return state;
}

/** The state of a tracked client socket (undefined when it was never tracked). */
export function connectionOf(socket: Socket): ConnectionState | undefined {
  return (socket as Socket & { [STATE]?: ConnectionState })[STATE];
}
