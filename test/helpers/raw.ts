// Raw-socket peers for byte-level tests: a client that sends exact bytes and
// collects what comes back, and an upstream that records what it receives and
// answers with scripted bytes.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A scripted upstream: `onConnection` decides what to do with each connection. */
export interface RawUpstream {
  port: number;
  /** Bytes received per connection, in accept order. */
  received: Buffer[][];
  /** Sockets in accept order. */
  sockets: net.Socket[];
  close(): Promise<void>;
}

/** Starts a raw TCP server on 127.0.0.1:0. */
export async function rawUpstream(onConnection: (socket: net.Socket, index: number, received: Buffer[]) => void): Promise<RawUpstream> {
  const received: Buffer[][] = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    const mine: Buffer[] = [];
    received.push(mine);
    sockets.push(socket);
    socket.on('data', (c) => mine.push(c));
    socket.on('error', () => {});
    onConnection(socket, sockets.length - 1, mine);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Waits until `predicate(bytes so far)` holds for one connection's received bytes. */
export async function until(get: () => Buffer, predicate: (b: Buffer) => boolean, timeoutMs = 5000): Promise<Buffer> {
  const start = Date.now();
  for (;;) {
    const b = get();
    if (predicate(b)) return b;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting; have ${JSON.stringify(b.toString('latin1'))}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A raw client connection that keeps everything it receives. */
export interface RawClient {
  socket: net.Socket;
  /** All bytes received so far. */
  bytes(): Buffer;
  /** Resolves when the server closes the connection. */
  closed: Promise<void>;
  send(data: string | Buffer): void;
}

/** Connects to 127.0.0.1:port. */
export async function rawClient(port: number): Promise<RawClient> {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c) => chunks.push(c));
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.on('close', () => r()));
  await new Promise<void>((r, j) => {
    socket.once('connect', () => r());
    socket.once('error', j);
  });
  return {
    socket,
    bytes: () => Buffer.concat(chunks),
    closed,
    send: (d) => socket.write(d),
  };
}

/** Splits an HTTP head into its lines (without the final empty line). */
export function headLines(bytes: Buffer): string[] {
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  return (end >= 0 ? text.slice(0, end) : text).split('\r\n');
}

/** Lines of a head without the hop-by-hop headers HTTP lets a proxy manage. */
export function endToEnd(lines: string[]): string[] {
  return lines.filter((l) => !/^(connection|keep-alive|transfer-encoding|te):/i.test(l));
}

/** True once `b` holds a whole head. */
export const hasHead = (b: Buffer): boolean => b.includes('\r\n\r\n');
