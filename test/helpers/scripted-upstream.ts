// A scriptable upstream for fault tests: a raw TCP server on 127.0.0.1:0 that
// runs a small script per connection, so a test can stall, reset, half-close
// or send garbage at any point of a response.
//
//   const up = await scriptedUpstream(() => [
//     { wait: 'request' },
//     { send: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf' },
//     { reset: true },
//   ]);
//
// Steps run in order. `wait: 'request'` waits for the next whole request on
// that connection (head plus a Content-Length or chunked body), so a script
// can answer several keep-alive requests in turn. The script ends the
// connection only when it says so; a script that runs out leaves it open.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { mulberry32 } from '../../core/index.js';

/** One step of a connection's script. */
export type Step =
  /** Waits for the next whole request (head + body), or only its head. */
  | { wait: 'request' | 'head' }
  /** Waits this many milliseconds. */
  | { wait: number }
  /** Waits until the client half-closes (or closes) its side. */
  | { wait: 'client-end' }
  /** Waits for any bytes past those a wait has consumed (a WebSocket frame after the upgrade), and consumes them. */
  | { wait: 'more' }
  /** Writes exact bytes. */
  | { send: string | Buffer }
  /** Writes n pseudo-random bytes from a fixed seed (deterministic garbage). */
  | { garbage: number; seed?: number }
  /** Does nothing more, keeping the connection open (the upstream hangs). */
  | { stall: true }
  /** Sends a TCP RST. */
  | { reset: true }
  /** Half-closes: sends FIN, keeps reading. */
  | { halfClose: true }
  /** Closes gracefully (FIN) and forgets the socket. */
  | { close: true }
  /** Calls back into the test (e.g. to count, or to flip a flag). */
  | { call: (socket: net.Socket) => void | Promise<void> };

/** A running scripted upstream. */
export interface ScriptedUpstream {
  /** The port on 127.0.0.1. */
  port: number;
  /** "http://127.0.0.1:PORT". */
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Bytes received per connection, in accept order. */
  received(index: number): Buffer;
  /** True once connection `index` has closed (the proxy hung up, or the script ended it). */
  isClosed(index: number): boolean;
  /** Resolves when `n` connections have run their scripts to the end (or closed). */
  settled(n: number, timeoutMs?: number): Promise<void>;
  /** Closes every socket and the server. */
  close(): Promise<void>;
}

/** A whole HTTP/1.1 response with a Content-Length body. */
export function httpResponse(body: string | Buffer = '', status = 200, headers: Array<[string, string]> = []): Buffer {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  let head = `HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Status'}\r\n`;
  for (const [n, v] of headers) head += `${n}: ${v}\r\n`;
  head += `Content-Length: ${b.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), b]);
}

/** A small deterministic PRNG (mulberry32): the same seed gives the same bytes. */
export const prng = mulberry32;

/** n pseudo-random bytes from `seed`. */
export function garbageBytes(n: number, seed = 1): Buffer {
  const next = prng(seed);
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256);
  return out;
}

// Where the next request in `buf` (from `from`) ends, or -1 while it is incomplete.
function requestEnd(buf: Buffer, from: number, headOnly: boolean): number {
  const headEnd = buf.indexOf('\r\n\r\n', from, 'latin1');
  if (headEnd < 0) return -1;
  const bodyStart = headEnd + 4;
  if (headOnly) return bodyStart;
  const head = buf.subarray(from, headEnd).toString('latin1');
  const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
    const end = buf.indexOf('0\r\n\r\n', bodyStart, 'latin1');
    return end < 0 ? -1 : end + 5;
  }
  if (cl) {
    const end = bodyStart + Number(cl[1]);
    return buf.length >= end ? end : -1;
  }
  return bodyStart;
}

/** Starts a scripted upstream; `scriptFor(index)` gives each accepted connection its script. */
export async function scriptedUpstream(scriptFor: (index: number) => Step[]): Promise<ScriptedUpstream> {
  const sockets: net.Socket[] = [];
  const received: Buffer[] = [];
  const closedSet = new Set<number>();
  let done = 0;
  const server = net.createServer((socket) => {
    const index = sockets.length;
    sockets.push(socket);
    received.push(Buffer.alloc(0));
    let consumed = 0;
    let clientEnded = false;
    let closed = false;
    let wake: (() => void) | undefined;
    socket.on('data', (c: Buffer) => {
      received[index] = Buffer.concat([received[index]!, c]);
      wake?.();
    });
    socket.on('end', () => {
      clientEnded = true;
      wake?.();
    });
    socket.on('close', () => {
      closed = true;
      closedSet.add(index);
      wake?.();
    });
    socket.on('error', () => {});
    const changed = () => new Promise<void>((r) => (wake = r));

    const run = async (): Promise<void> => {
      for (const step of scriptFor(index)) {
        if (closed) return;
        if ('wait' in step) {
          if (typeof step.wait === 'number') await new Promise((r) => setTimeout(r, step.wait as number));
          else if (step.wait === 'client-end') while (!clientEnded && !closed) await changed();
          else if (step.wait === 'more') {
            while (received[index]!.length <= consumed && !closed && !clientEnded) await changed();
            consumed = received[index]!.length;
          }
          else {
            for (;;) {
              const end = requestEnd(received[index]!, consumed, step.wait === 'head');
              if (end >= 0) {
                consumed = end;
                break;
              }
              if (closed || clientEnded) return;
              await changed();
            }
          }
        } else if ('send' in step) socket.write(step.send);
        else if ('garbage' in step) socket.write(garbageBytes(step.garbage, step.seed));
        else if ('stall' in step) return;
        else if ('reset' in step) {
          socket.resetAndDestroy();
          return;
        } else if ('halfClose' in step) socket.end();
        else if ('close' in step) {
          socket.end();
          return;
        } else if ('call' in step) await step.call(socket);
      }
    };
    run().finally(() => done++);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => sockets.length,
    received: (i) => received[i] ?? Buffer.alloc(0),
    isClosed: (i) => closedSet.has(i),
    async settled(n, timeoutMs = 5000) {
      const start = Date.now();
      while (done < n) {
        if (Date.now() - start > timeoutMs) throw new Error(`only ${done} of ${n} scripts settled`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
