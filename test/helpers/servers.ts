// Small upstreams and their shutdown, shared by tests that start their own servers on 127.0.0.1 port 0.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** Ends an HTTP server and the WebSocket server on it: open sockets are cut, so the close never waits on a client. */
export function closeHttpAndWs(server: http.Server, wss?: WebSocketServer): Promise<void> {
  for (const c of wss?.clients ?? []) c.terminate();
  wss?.close();
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
}

/** A WebSocket server on 127.0.0.1 port 0 (its plain HTTP requests answered 404), `onConnection` its handler; close() ends both. */
export async function wsServer(onConnection: (ws: import('ws').WebSocket, req: http.IncomingMessage) => void): Promise<{ url: string; wss: WebSocketServer; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  wss.on('connection', onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, wss, close: () => closeHttpAndWs(server, wss) };
}

/** An HTTP server that reads each request's body whole, then calls `handle` with it and the request's URL (the test apps' servers). */
export function bodyServer(handle: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, url: URL) => void): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks), new URL(req.url ?? '/', 'http://app')));
  });
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

/** What a recording upstream saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  bodyBytes: number;
}

/** A running recording upstream (recordingUpstream). */
export interface RecordingUpstream {
  url: string;
  /** The requests read whole so far, in order. */
  seen: SeenRequest[];
  /** Resolves once n requests have been read whole. */
  received(n: number): Promise<void>;
  /** Answers the held requests and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

/**
 * An upstream that records each request it reads and answers 200 with a tiny
 * JSON body; with `hold`, answers wait for `release()` (a mirror target that
 * keeps requests in flight).
 */
export async function recordingUpstream(hold = false): Promise<RecordingUpstream> {
  const seen: SeenRequest[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const held: Array<() => void> = [];
  let released = !hold;
  const server = http.createServer((req, res) => {
    let bodyBytes = 0;
    req.on('data', (c: Buffer) => (bodyBytes += c.length));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes });
      for (const w of waiters.filter((w) => seen.length >= w.n)) w.resolve();
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      if (released) answer();
      else held.push(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    received: (n) => new Promise<void>((resolve) => (seen.length >= n ? resolve() : waiters.push({ n, resolve }))),
    release() {
      released = true;
      for (const a of held.splice(0)) a();
    },
    close: () => closeHttpAndWs(server),
  };
}

/** An event-stream server the test writes to: each request's response head goes at once, its bytes when pushed. */
export interface PushedStream {
  /** The server's origin. */
  url: string;
  /** Writes to the latest response. */
  push(bytes: string | Buffer): void;
  /** Ends the latest response. */
  end(): void;
  close(): Promise<void>;
}

/** Starts a PushedStream answering with `headers` (an event stream by default). */
export async function pushedStream(headers: http.OutgoingHttpHeaders = { 'Content-Type': 'text/event-stream' }): Promise<PushedStream> {
  let res: http.ServerResponse | undefined;
  const server = http.createServer((_req, r) => {
    r.writeHead(200, headers);
    r.flushHeaders();
    res = r;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    push: (bytes) => void res?.write(bytes),
    end: () => void res?.end(),
    close: () => closeHttpAndWs(server),
  };
}
