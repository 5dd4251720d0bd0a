// Small upstreams and their shutdown, shared by tests that start their own servers on 127.0.0.1 port 0.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebSocketServer } from 'ws';

/** Ends an HTTP server and the WebSocket server on it: open sockets are cut, so the close never waits on a client. */
export function closeHttpAndWs(server: http.Server, wss?: WebSocketServer): Promise<void> {
  for (const c of wss?.clients ?? []) c.terminate();
  wss?.close();
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
}

/** An HTTP server that reads each request's body, then answers "hello from <path>"; resolves once it listens. */
export async function helloServer(): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(`hello from ${req.url}`));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}
