// The WebSocket tap: parses a copy of an upgraded connection's bytes into
// ws-message facts, without relaying, re-framing or pausing anything.
//
// The proxy pipes client <-> upstream raw and hands the tap both sockets. The
// tap adds 'data' listeners (every chunk reaches the pipe and the tap; the pipe
// keeps its backpressure) and feeds each direction to its own ws Receiver:
// client frames are masked, so that Receiver runs with isServer: true, and the
// upstream's with isServer: false. The same flag makes each direction's
// PerMessageDeflate inflate with the right side's negotiated parameters.
//
// A FrameScanner reads the same bytes to learn what the Receiver does not say:
// when a message's first byte arrived, how many frames carried it, RSV1.
//
// Failures are facts: a frame the Receiver rejects becomes one ws-error and
// that direction is no longer parsed; the bytes keep flowing.
import type { Duplex } from 'node:stream';
import { Receiver, PerMessageDeflate, extension } from 'ws';
import { now, type Fact } from './events.js';
import { FrameScanner, type ScannedUnit } from './ws-frames.js';

/** What the proxy hands the tap once an upgrade succeeded and both sockets are piped. */
export interface WsTapOptions {
  /** The exchange of the upgrade request; every fact carries it. */
  exchangeId: number;
  /** Client socket (already piped to upstream; read only for the tap). */
  client: Duplex;
  /** Upstream socket (already piped to client; read only for the tap). */
  upstream: Duplex;
  /** Bytes the client sent after its upgrade request head (already forwarded). */
  clientHead: Buffer;
  /** Bytes the upstream sent right after the 101 head (already forwarded). */
  upstreamHead: Buffer;
  /** The 101's raw headers (flat [name, value, ...]); Sec-WebSocket-Extensions comes from here. */
  responseHeaders: string[];
  /** Where facts go (FactBus.emit): ws-message, ws-error, upgrade-closed. */
  emit: (fact: Fact) => void;
  /** Messages larger than this (bytes, inflated) become an error row; default 64 MiB. */
  maxPayload?: number;
}

/** A running tap. */
export interface WsTap {
  /** Detaches from both sockets; no more facts are emitted. Idempotent. */
  stop(): void;
}

/** Default cap on one message's inflated size. */
export const DEFAULT_WS_MAX_PAYLOAD = 64 * 1024 * 1024;

type Direction = 'send' | 'receive';

/** What the first close frame said, and who sent it. */
interface FirstClose {
  code?: number;
  reason?: string;
  by: 'client' | 'server';
}

/** Starts tapping an upgraded connection. Never throws, never writes to or pauses a socket. */
export function tapWebSocket(opts: WsTapOptions): WsTap {
  // ws keeps the cap in an int32 (`| 0`).
  const maxPayload = Math.min(opts.maxPayload ?? DEFAULT_WS_MAX_PAYLOAD, 2 ** 31 - 1);
  let stopped = false;
  let firstClose: FirstClose | undefined;
  const emit = (fact: Fact): void => {
    if (stopped) return;
    try {
      opts.emit(fact);
    } catch {
      // An observer's failure must not reach the connection (FactBus already isolates; this is for bare callbacks).
    }
  };


  const directions = (['send', 'receive'] as const).map((direction) =>
    new DirectionParser({
      direction,
      exchangeId: opts.exchangeId,
      extensionsHeader: extensionsHeader(opts.responseHeaders),
      maxPayload,
      emit,
      onClose: (code, reason) => {
        firstClose ??= { code, reason, by: direction === 'send' ? 'client' : 'server' };
      },
    }),
  );
  const [send, receive] = directions as [DirectionParser, DirectionParser];

  // Head bytes first, then every chunk, each stamped with its arrival time.
  send.push(opts.clientHead, now());
  receive.push(opts.upstreamHead, now());
  const onClientData = (chunk: Buffer): void => send.push(chunk, now());
  const onUpstreamData = (chunk: Buffer): void => receive.push(chunk, now());
  opts.client.on('data', onClientData);
  opts.upstream.on('data', onUpstreamData);

  // upgrade-closed once both sockets have closed and both parsers have drained
  // (inflate is asynchronous: a message may still be on its way).
  let open = 2;
  let closedAt = 0;
  const onSocketClosed = (): void => {
    open -= 1;
    if (open > 0) return;
    closedAt = now();
    void Promise.all(directions.map((d) => d.finish())).then(() => {
      emit({
        type: 'upgrade-closed',
        exchangeId: opts.exchangeId,
        time: closedAt,
        code: firstClose?.code,
        reason: firstClose?.reason,
        by: firstClose?.by ?? 'none',
      });
      detach();
    });
  };
  const watchClose = (socket: Duplex): (() => void) => {
    let seen = false;
    const once = (): void => {
      if (seen) return;
      seen = true;
      onSocketClosed();
    };
    if (socket.closed || socket.destroyed) queueMicrotask(once);
    else socket.once('close', once);
    return () => socket.removeListener('close', once);
  };
  const unwatchClient = watchClose(opts.client);
  const unwatchUpstream = watchClose(opts.upstream);

  function detach(): void {
    opts.client.removeListener('data', onClientData);
    opts.upstream.removeListener('data', onUpstreamData);
    unwatchClient();
    unwatchUpstream();
    for (const d of directions) d.dispose();
  }

  return {
    stop(): void {
      if (stopped) return;
      stopped = true;
      detach();
    },
  };
}

/** What one direction's parser needs. */
interface DirectionOptions {
  direction: Direction;
  exchangeId: number;
  /** The 101's Sec-WebSocket-Extensions values, joined ('' when absent). */
  extensionsHeader: string;
  maxPayload: number;
  emit: (fact: Fact) => void;
  /** Called for every close frame, in order (the tap keeps the first). */
  onClose: (code: number | undefined, reason: string | undefined) => void;
}

/** Parses one direction: a FrameScanner for frame facts and a Receiver for payloads. */
class DirectionParser {
  private readonly opts: DirectionOptions;
  private readonly scanner = new FrameScanner();
  // Units the scanner has seen and the Receiver has not reported yet, in order.
  private readonly pending: ScannedUnit[] = [];
  private receiver: Receiver | undefined;
  private deflate: PerMessageDeflate | undefined;
  // No more bytes go to the Receiver: it failed, or a close frame ended the direction.
  private done = false;
  private lastChunkTime = 0;

  constructor(opts: DirectionOptions) {
    this.opts = opts;
    const isServer = opts.direction === 'send';
    const extensions: Record<string, unknown> = {};
    try {
      // Parsed here, once per direction: accept() mutates what it is given.
      const offers = opts.extensionsHeader ? extension.parse(opts.extensionsHeader)[PerMessageDeflate.extensionName] : undefined;
      if (offers) {
        const deflate = new PerMessageDeflate({ isServer, maxPayload: opts.maxPayload });
        deflate.accept(offers);
        this.deflate = deflate;
        extensions[PerMessageDeflate.extensionName] = deflate;
      }
    } catch (err) {
      this.fail(now(), 'WS_ERR_INVALID_EXTENSIONS', `the 101's Sec-WebSocket-Extensions cannot be used: ${(err as Error).message}`);
      return;
    }
    const receiver = new Receiver({
      isServer,
      extensions,
      maxPayload: opts.maxPayload,
      // Invalid UTF-8 is the peers' business; the tap records the bytes.
      skipUTF8Validation: true,
    });
    receiver.on('message', (data: Buffer, isBinary: boolean) => this.message(data, isBinary ? 2 : 1));
    receiver.on('ping', (data: Buffer) => this.message(data, 9));
    receiver.on('pong', (data: Buffer) => this.message(data, 10));
    receiver.on('conclude', (code: number, reason: Buffer) => this.concluded(code, reason));
    receiver.on('error', (err: Error & { code?: string }) => {
      this.fail(this.lastChunkTime, err.code ?? 'WS_ERR_PARSE', err.message);
    });
    this.receiver = receiver;
  }

  /** Feeds one chunk that arrived at `time`. */
  push(chunk: Buffer, time: number): void {
    if (this.done || !this.receiver || chunk.length === 0) return;
    this.lastChunkTime = time;
    try {
      this.pending.push(...this.scanner.push(chunk, time));
      // A copy: the Receiver unmasks payloads in place, and the original chunk
      // may still be queued for writing to the other side.
      this.receiver.write(Buffer.from(chunk));
    } catch (err) {
      this.fail(time, 'WS_ERR_PARSE', (err as Error).message);
    }
  }

  /** Resolves when the Receiver has reported everything it was given. */
  finish(): Promise<void> {
    const receiver = this.receiver;
    if (!receiver || receiver.writableFinished || receiver.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      receiver.once('finish', resolve);
      receiver.once('close', resolve);
      receiver.once('error', resolve);
      if (!receiver.writableEnded) receiver.end();
    });
  }

  /** Stops feeding the Receiver and frees zlib once it is idle. */
  dispose(): void {
    this.done = true;
    // Closing zlib under a pending inflate makes ws's flush callback throw
    // (it reads the closed stream): wait for the Receiver to go idle first.
    void this.finish().then(() => {
      this.deflate?.cleanup();
      this.deflate = undefined;
    });
  }

  private message(data: Buffer, opcode: number, close?: { code?: number; reason?: string }): void {
    const unit = this.pending.shift();
    this.opts.emit({
      type: 'ws-message',
      exchangeId: this.opts.exchangeId,
      time: unit?.time ?? this.lastChunkTime,
      direction: this.opts.direction,
      opcode,
      data,
      frames: unit?.frames ?? 1,
      compressed: unit?.compressed ?? false,
      ...(close?.code !== undefined ? { closeCode: close.code } : {}),
      ...(close?.reason !== undefined ? { closeReason: close.reason } : {}),
    });
  }

  private concluded(code: number, reason: Buffer): void {
    // The Receiver ends itself after a close frame (RFC 6455 section 5.5.1: nothing follows it).
    this.done = true;
    // 1005 is what the Receiver reports for an empty close payload; it never appears on the wire.
    const empty = code === 1005 && reason.length === 0;
    const data = empty ? Buffer.alloc(0) : Buffer.concat([u16(code), reason]);
    const decoded = empty ? {} : { code, reason: reason.toString('utf8') };
    this.message(data, 8, decoded);
    this.opts.onClose(decoded.code, decoded.reason);
  }

  private fail(time: number, code: string, message: string): void {
    if (this.done) return;
    this.done = true;
    this.opts.emit({ type: 'ws-error', exchangeId: this.opts.exchangeId, time, direction: this.opts.direction, code, message });
  }
}

function u16(value: number): Buffer {
  const buf = Buffer.alloc(2);
  buf.writeUInt16BE(value, 0);
  return buf;
}

/** The 101's Sec-WebSocket-Extensions values, joined as one list ('' when absent). */
function extensionsHeader(rawHeaders: string[]): string {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'sec-websocket-extensions') values.push(rawHeaders[i + 1]!);
  }
  return values.join(', ');
}
