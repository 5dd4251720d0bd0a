// A harness for the WebSocket tap: two real loopback socket pairs joined by a
// raw pipe, like the proxy joins them, with the tap reading the middle.
//
//   driverClient ── proxyClient ══pipe══ proxyUpstream ── driverServer
//
// Tests write literal frame bytes (test/helpers/ws-frames.ts builds them) at
// either driver end and read back both the facts and the bytes that reached
// the far end.
import net from 'node:net';
import { once } from 'node:events';
import type { Fact } from '../../proxy/events.js';
import { tapWebSocket, type WsTap } from '../../proxy/ws-tap.js';

/** Two connected loopback sockets: [the connecting end, the accepted end]. */
export async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const accepted = once(server, 'connection') as Promise<[net.Socket]>;
  const near = net.connect(port, '127.0.0.1');
  const [[far]] = await Promise.all([accepted, once(near, 'connect')]);
  server.close();
  return [near, far];
}

/** Options for one harness. */
export interface HarnessOptions {
  /** The 101's raw headers (default: none, so no deflate). */
  responseHeaders?: string[];
  clientHead?: Buffer;
  upstreamHead?: Buffer;
  keep?: number;
}

/** A running harness. */
export interface Harness {
  driverClient: net.Socket;
  driverServer: net.Socket;
  proxyClient: net.Socket;
  proxyUpstream: net.Socket;
  facts: Fact[];
  tap: WsTap;
  /** Bytes that reached the server end (sent by the client driver). */
  serverGot(): Buffer;
  /** Bytes that reached the client end (sent by the server driver). */
  clientGot(): Buffer;
  /** Waits (bounded) until `ok()` holds. */
  until(ok: () => boolean, what: string): Promise<void>;
  /** Facts of one type. */
  of<T extends Fact['type']>(type: T): Array<Extract<Fact, { type: T }>>;
  close(): void;
}

/** Builds the pipe, starts the tap. */
export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const [driverClient, proxyClient] = await socketPair();
  const [proxyUpstream, driverServer] = await socketPair();
  proxyClient.pipe(proxyUpstream);
  proxyUpstream.pipe(proxyClient);
  const facts: Fact[] = [];
  const tap = tapWebSocket({
    exchangeId: 7,
    client: proxyClient,
    upstream: proxyUpstream,
    clientHead: opts.clientHead ?? Buffer.alloc(0),
    upstreamHead: opts.upstreamHead ?? Buffer.alloc(0),
    responseHeaders: opts.responseHeaders ?? [],
    emit: (fact) => facts.push(fact),
    keep: opts.keep,
  });
  const toServer: Buffer[] = [];
  const toClient: Buffer[] = [];
  driverServer.on('data', (c: Buffer) => toServer.push(c));
  driverClient.on('data', (c: Buffer) => toClient.push(c));
  for (const s of [driverClient, driverServer, proxyClient, proxyUpstream]) s.on('error', () => {});
  return {
    driverClient,
    driverServer,
    proxyClient,
    proxyUpstream,
    facts,
    tap,
    serverGot: () => Buffer.concat(toServer),
    clientGot: () => Buffer.concat(toClient),
    async until(ok, what) {
      for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
      if (!ok()) throw new Error(`timed out waiting for ${what}; facts: ${JSON.stringify(facts.slice(0, 20).map(brief))}`);
    },
    of: (type) => facts.filter((f) => f.type === type) as never,
    close() {
      tap.stop();
      for (const s of [driverClient, driverServer, proxyClient, proxyUpstream]) s.destroy();
    },
  };
}

function brief(fact: Fact): unknown {
  return fact.type === 'ws-message' ? { ...fact, data: fact.data.toString('hex').slice(0, 40) } : fact;
}
