// How bb writes to a socket, call by call: the proxy/http1 tests that say a
// head and its body leave in one write (issue 39) read these.
import net from 'node:net';
import { startProxy, type RunningProxy } from '../../proxy/index.js';
import { rawClient, rawUpstream, type RawClient, type RawUpstream } from './raw.js';
import { atFileEnd } from './cleanups.js';

type WriteGeneric = (this: net.Socket, writev: boolean, data: Buffer | Array<{ chunk: Buffer }>, enc: string, cb: () => void) => void;

/**
 * Records the buffers of every write call made on the sockets `ours` picks
 * (as latin1), until restore(). It wraps `_writeGeneric`, which both a write
 * and a writev reach, and which a socket still connecting (an upstream opened
 * at accept) calls again once connected.
 */
export function recordWriteCalls(ours: (socket: net.Socket) => boolean): { calls: string[][]; restore(): void } {
  const calls: string[][] = [];
  const proto = net.Socket.prototype as unknown as { _writeGeneric: WriteGeneric };
  const generic = proto._writeGeneric;
  proto._writeGeneric = function (writev, data, enc, cb) {
    if (!this.connecting && ours(this)) {
      calls.push(writev ? (data as Array<{ chunk: Buffer }>).map((c) => Buffer.from(c.chunk).toString('latin1')) : [Buffer.from(data as Buffer).toString('latin1')]);
    }
    return generic.call(this, writev, data, enc, cb);
  };
  return { calls, restore: () => (proto._writeGeneric = generic) };
}

/** A raw upstream (`onConnection`), bb's proxy in front of it and a raw client of the proxy, all closed at file end. */
export async function rawThroughProxy(onConnection: (socket: net.Socket) => void): Promise<{ upstream: RawUpstream; proxy: RunningProxy; client: RawClient }> {
  const upstream = await rawUpstream(onConnection);
  atFileEnd(() => upstream.close());
  const proxy = await startProxy({ target: `http://127.0.0.1:${upstream.port}` });
  atFileEnd(() => proxy.close(100));
  return { upstream, proxy, client: await rawClient(proxy.port) };
}
