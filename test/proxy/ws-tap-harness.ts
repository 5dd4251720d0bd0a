// A harness for the WebSocket tap: two real loopback socket pairs joined by a
// raw pipe, like the proxy joins them, with the tap reading the middle.
//
//   driverClient ── proxyClient ══pipe══ proxyUpstream ── driverServer
//
// Tests write literal frame bytes at either driver end and read back both the
// facts and the bytes that reached the far end.
import net from 'node:net';
import zlib from 'node:zlib';
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
  maxPayload?: number;
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
    maxPayload: opts.maxPayload,
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

/** Frame fields for `frame()`. */
export interface FrameSpec {
  opcode: number;
  payload?: Buffer | string;
  fin?: boolean;
  rsv1?: boolean;
  /** Mask key (client frames); omitted = unmasked. */
  mask?: Buffer;
}

/** Encodes one frame (RFC 6455 section 5.2), masking when a key is given. */
export function frame(spec: FrameSpec): Buffer {
  const payload = Buffer.from(spec.payload ?? '');
  const b0 = (spec.fin === false ? 0 : 0x80) | (spec.rsv1 ? 0x40 : 0) | spec.opcode;
  const maskBit = spec.mask ? 0x80 : 0;
  let head: Buffer;
  if (payload.length < 126) head = Buffer.from([b0, maskBit | payload.length]);
  else if (payload.length < 65536) {
    head = Buffer.alloc(4);
    head[0] = b0;
    head[1] = maskBit | 126;
    head.writeUInt16BE(payload.length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = b0;
    head[1] = maskBit | 127;
    head.writeUInt32BE(0, 2);
    head.writeUInt32BE(payload.length, 6);
  }
  if (!spec.mask) return Buffer.concat([head, payload]);
  const masked = Buffer.from(payload.map((b, i) => b ^ spec.mask![i % 4]!));
  return Buffer.concat([head, spec.mask, masked]);
}

/** A permessage-deflate compressor for one sender, with its own window and context choice. */
export class Compressor {
  private readonly deflate: zlib.DeflateRaw;
  private out: Buffer[] = [];
  constructor(
    windowBits: number,
    private readonly noContextTakeover: boolean,
  ) {
    this.deflate = zlib.createDeflateRaw({ windowBits });
    this.deflate.on('data', (c: Buffer) => this.out.push(c));
  }
  /** Compresses one whole message (RFC 7692 section 7.2.1: sync flush, trailer removed). */
  async message(data: Buffer | string): Promise<Buffer> {
    this.deflate.write(Buffer.from(data));
    await new Promise<void>((resolve) => this.deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve()));
    const all = Buffer.concat(this.out);
    this.out = [];
    if (this.noContextTakeover) this.deflate.reset();
    return all.subarray(0, all.length - 4);
  }
  close(): void {
    this.deflate.close();
  }
}

/** A mask key for client frames. */
export const MASK = Buffer.from('37fa213d', 'hex');
