// Real h2 peers for the h2 tap's tests: a node:http2 server behind a plain
// TCP listener that keeps every byte it receives and sends, and a
// node:http2 client whose socket does the same, so a test can check that
// the bytes crossing bb are exactly the peers' own.
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { Duplex } from 'node:stream';
import type { Cleanups } from './cleanups.js';
import { OP, parseFrames, wsFrame, type ParsedFrame } from './ws-frames.js';

/** Bytes one connection carried, per direction. */
export interface Wire {
  /** What this end received. */
  received: Buffer[];
  /** What this end sent. */
  sent: Buffer[];
}

/** An h2c server (prior knowledge) on 127.0.0.1 port 0 that records its connections' bytes. */
export interface H2Server {
  port: number;
  url: string;
  /** One per accepted connection, in accept order. */
  wires: Wire[];
  server: http2.Http2Server;
}

/**
 * A Duplex in front of `socket` that keeps every byte read from and written to it. node:http2 must be given this,
 * not the socket: handed a net.Socket it takes over the socket's handle and reads and writes it natively, past any
 * 'data' listener or patched write (the wires of these helpers stayed empty then, and every byte-for-byte check
 * built on them held vacuously).
 */
function recordedDuplex(socket: net.Socket): { duplex: Duplex; wire: Wire } {
  const wire: Wire = { received: [], sent: [] };
  const duplex = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      wire.sent.push(Buffer.from(chunk));
      socket.write(chunk, (err) => callback(err ?? null));
    },
    final(callback) {
      socket.end(() => callback());
    },
    destroy(err, callback) {
      socket.destroy();
      callback(err);
    },
  });
  socket.on('data', (c: Buffer) => {
    wire.received.push(c);
    if (!duplex.push(c)) socket.pause();
  });
  socket.on('end', () => duplex.push(null));
  socket.on('error', (err) => duplex.destroy(err));
  socket.on('close', () => duplex.destroy());
  return { duplex, wire };
}

/** Starts an h2c server; `onStream` answers each stream. */
export async function h2Server(
  cleanups: Cleanups,
  onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void,
  settings: http2.Settings = {},
): Promise<H2Server> {
  const server = http2.createServer({ settings });
  server.on('stream', onStream);
  server.on('sessionError', () => {});
  const wires: Wire[] = [];
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const { duplex, wire } = recordedDuplex(socket);
    wires.push(wire);
    server.emit('connection', duplex);
  });
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  cleanups.add(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        tcp.close(() => r());
      }),
  );
  const port = (tcp.address() as AddressInfo).port;
  return { port, url: `http://127.0.0.1:${port}`, wires, server };
}

/** A node:http2 client session to `url` whose socket's bytes are recorded. */
export function h2Client(url: string, cleanups: Cleanups, settings: http2.Settings = {}): { session: http2.ClientHttp2Session; wire: Wire } {
  const { hostname, port } = new URL(url);
  let wire!: Wire;
  const session = http2.connect(url, {
    settings,
    createConnection: () => {
      const recorded = recordedDuplex(net.connect({ host: hostname, port: Number(port) }));
      wire = recorded.wire;
      return recorded.duplex;
    },
  });
  session.on('error', () => {});
  cleanups.add(() => session.destroy());
  return { session, wire };
}

/** The result of one request on an h2 client session. */
export interface H2Result {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
  trailers: http2.IncomingHttpHeaders | undefined;
  rstCode: number;
}

/** Sends one request and collects the response (resolves on the stream's close). */
export function h2Request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: Buffer | string): Promise<H2Result> {
  return new Promise((resolve) => {
    const req = session.request(headers, { endStream: body === undefined });
    const chunks: Buffer[] = [];
    let status = 0;
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders | undefined;
    req.on('response', (h) => {
      head = h;
      status = Number(h[':status']);
    });
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => {});
    // rstCode is set once the close has been handled.
    req.on('close', () => setImmediate(() => resolve({ status, headers: head, body: Buffer.concat(chunks), trailers, rstCode: req.rstCode ?? 0 })));
    if (body !== undefined) req.end(body);
  });
}

/**
 * An h2c server that takes WebSockets over its streams (RFC 8441: it enables
 * the extended CONNECT in its SETTINGS). A stream `accept` refuses gets a 404
 * and `no such socket`; the others get a 200 (with `answer`'s headers), and
 * every whole frame the client sends goes to `reply` (a frame to send back,
 * or nothing); a close is answered with a close and ends the stream.
 */
export function h2WebSocketServer(
  cleanups: Cleanups,
  reply: (frame: ParsedFrame, headers: http2.IncomingHttpHeaders) => Buffer | undefined,
  opts: { accept?: (headers: http2.IncomingHttpHeaders) => boolean; answer?: http2.OutgoingHttpHeaders } = {},
): Promise<H2Server> {
  return h2Server(cleanups, (stream, headers) => {
    if (headers[':method'] !== 'CONNECT' || headers[':protocol'] !== 'websocket' || !(opts.accept?.(headers) ?? true)) {
      stream.respond({ ':status': 404 });
      stream.end('no such socket');
      return;
    }
    stream.respond({ ':status': 200, ...opts.answer });
    let pending: Buffer = Buffer.alloc(0);
    stream.on('data', (chunk: Buffer) => {
      const { frames, rest } = parseFrames(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const f of frames) {
        if (f.opcode === OP.close) stream.end(wsFrame({ opcode: OP.close, payload: f.payload }));
        else {
          const back = reply(f, headers);
          if (back) stream.write(back);
        }
      }
    });
  }, { enableConnectProtocol: true });
}

/** Opens a WebSocket over a new stream of `session` (once its peer's SETTINGS allow it) and waits for the answer's head. */
export async function openH2WebSocket(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders): Promise<{ stream: http2.ClientHttp2Stream; head: http2.IncomingHttpHeaders }> {
  if (!session.remoteSettings?.enableConnectProtocol) await once(session, 'remoteSettings');
  const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ...headers }, { endStream: false });
  const [head] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
  return { stream, head };
}

/** Everything a client stream receives, once it has closed. */
export function streamBytes(stream: http2.ClientHttp2Stream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => stream.on('close', () => resolve(Buffer.concat(chunks))));
}
