// The facts the proxy emits about traffic, in the past tense.
//
// proxy/ knows nothing of HAR: capture/ turns these facts into a journal and
// then a HAR file; anything else (a live log, a test) may listen too. Facts
// carry raw bytes and raw headers exactly as they crossed the wire.
//
// Facts are delivered synchronously, in the order things happened, through a
// FactBus. `exchange-completed` is emitted *before* the proxy forwards the
// last byte of the response to the client, so a listener that writes it to
// disk synchronously makes "what the client saw complete" crash-safe.
import type { Duplex } from 'node:stream';
import { now, type EpochMs } from '../core/index.js';

/** Headers as on the wire: a flat [name, value, name, value, ...] list, Node's rawHeaders shape. */
export type RawHeaders = string[];

export type { EpochMs };

/** Which side of the proxy a failure or hang-up came from. */
export type Side = 'client' | 'upstream';

/** A response bb itself wrote to the client (a 502 for an upstream failure, a 400 for a bad request). */
export interface SyntheticResponse {
  /** Status code bb sent. */
  statusCode: number;
  /** Reason phrase bb sent. */
  statusMessage: string;
  /** Headers bb sent, in order. */
  rawHeaders: RawHeaders;
  /** The whole body bb sent (short JSON). */
  body: Buffer;
}

/** A failure, kept as data (never only a log line). */
export interface FailureInfo {
  /** Stable code: ECONNREFUSED, ECONNRESET, ETIMEDOUT, BB_UPSTREAM_HTTP2, HPE_..., ... */
  code: string;
  /** One sentence for people. */
  message: string;
  /** When it happened: 'connect' | 'request' | 'response' | 'parse' | 'tls'. */
  phase: 'connect' | 'request' | 'response' | 'parse' | 'tls';
}

/** A client TCP connection was accepted. */
export interface ConnectionOpened {
  type: 'connection-opened';
  /** Stable id of the client connection within this proxy ("c1", "c2", ...). */
  connectionId: string;
  time: EpochMs;
  remoteAddress: string;
  remotePort: number;
}

/** A client TCP connection ended (either side closed it). */
export interface ConnectionClosed {
  type: 'connection-closed';
  connectionId: string;
  time: EpochMs;
}

/** A request head arrived from the client. */
export interface ExchangeStarted {
  type: 'exchange-started';
  /** Unique per proxy, increasing in arrival order. */
  exchangeId: number;
  connectionId: string;
  time: EpochMs;
  /** 'http' or 'https': the scheme the client used to reach bb. */
  scheme: 'http' | 'https';
  method: string;
  /** The request-target exactly as sent ("/a/b?c=d", or absolute-form in forward mode). */
  target: string;
  /** "1.1" or "1.0". */
  httpVersion: string;
  rawHeaders: RawHeaders;
  /** The upstream origin this exchange goes to ("http://127.0.0.1:3000"). */
  upstream: string;
  /** True when the request asks for a protocol upgrade (WebSocket). */
  upgrade: boolean;
  /** HTTP/2: the stream id (one exchange per stream). */
  stream?: number;
  /** HTTP/2: the stream whose PUSH_PROMISE made this exchange (its request is the promise). */
  pushedBy?: number;
}

/** Some request body bytes went through to the upstream (decoded from chunked framing, else as sent). */
export interface RequestBodyChunk {
  type: 'request-body';
  exchangeId: number;
  time: EpochMs;
  chunk: Buffer;
}

/** The client finished sending its request body. */
export interface RequestEnded {
  type: 'request-ended';
  exchangeId: number;
  time: EpochMs;
  rawTrailers: RawHeaders;
}

/** A response head from the upstream, as read. */
interface ResponseHeadFields {
  exchangeId: number;
  time: EpochMs;
  statusCode: number;
  statusMessage: string;
  httpVersion: string;
  rawHeaders: RawHeaders;
}

/** The upstream's response head arrived (any status except 1xx informational; 101 is reported by upgrade-opened). */
export interface ResponseStarted extends ResponseHeadFields {
  type: 'response-started';
}

/**
 * An informational (1xx) response head arrived before the final one (100 Continue, 103 Early Hints; not 101, which
 * upgrade-opened reports): relayed as it came, and recorded, since a build that stops sending one (or starts) changes
 * what its clients see.
 */
export interface ResponseInformational extends ResponseHeadFields {
  type: 'response-informational';
}

/** Some response body bytes arrived from the upstream (decoded from chunked framing, still content-encoded). */
export interface ResponseBodyChunk {
  type: 'response-body';
  exchangeId: number;
  time: EpochMs;
  chunk: Buffer;
}

/** The exchange completed; emitted before the last byte of the response goes to the client. */
export interface ExchangeCompleted {
  type: 'exchange-completed';
  exchangeId: number;
  time: EpochMs;
  rawTrailers: RawHeaders;
  /**
   * More completions may follow from the same chunk (h2: many streams end in
   * one read): a durable listener may wait for the `flush` fact, which comes
   * before that chunk is forwarded, instead of writing at each completion.
   */
  batched?: boolean;
}

/** The proxy is about to forward a chunk that completes the batched exchanges before it: make their records durable now. */
export interface Flush {
  type: 'flush';
}

/** The upstream could not be used; the client got bb's own response (if it was still there). */
export interface ExchangeFailed {
  type: 'exchange-failed';
  exchangeId: number;
  time: EpochMs;
  error: FailureInfo;
  /** What bb wrote to the client instead, absent when the response had already started. */
  response?: SyntheticResponse;
}

/** A side hung up before the exchange completed. */
export interface ExchangeAborted {
  type: 'exchange-aborted';
  exchangeId: number;
  time: EpochMs;
  by: Side;
  /** What was under way: 'request' (client still sending) or 'response' (response under way). */
  phase: 'request' | 'response';
  error?: FailureInfo;
  /** HTTP/2: the RST_STREAM error code's name ("CANCEL") when a reset ended it. */
  reset?: string;
}

/** Bytes that never became a request (bb's parser refused them), or an h2 connection ended for a protocol error. */
export interface ClientErrored {
  type: 'client-error';
  connectionId: string;
  /** A fresh exchange id, so the bad exchange is recorded like any other. */
  exchangeId: number;
  time: EpochMs;
  error: FailureInfo;
  /** The bytes the parser refused, when Node gave them. */
  rawPacket?: Buffer;
  /** What bb wrote back (400/431/...), absent when the socket was just closed. */
  response?: SyntheticResponse;
  /** Forward mode: the CONNECT host:port whose TLS handshake the client refused. */
  authority?: string;
  /** What the user can do about it, one short clause ("the client does not trust bb's CA: bb ca trust-info"). */
  hint?: string;
  /** Who sent the refused bytes, when not the client (an h2 upstream's malformed frame). */
  by?: Side;
}

/**
 * HTTP/2: streams of one connection reset before any response while it
 * flooded (rapid reset), summed as one exchange instead of one per stream.
 * Streams that got more than a reset (an answer, request body bytes) are
 * exchanges of their own and not in it.
 */
export interface StreamsReset {
  type: 'streams-reset';
  connectionId: string;
  /** A fresh exchange id, so the burst is recorded like any exchange. */
  exchangeId: number;
  /** When the first of its streams opened. */
  time: EpochMs;
  /** When the last of its streams was reset. */
  endTime: EpochMs;
  /** 'http' or 'https': the scheme the client used to reach bb. */
  scheme: 'http' | 'https';
  /** The first stream's method, target and headers: they stand for all of them. */
  method: string;
  target: string;
  rawHeaders: RawHeaders;
  /** The upstream origin the streams went to. */
  upstream: string;
  /** How many streams it sums. */
  count: number;
  /** Their ids, as [first, last] ranges of ids two apart (client streams are odd). */
  streams: Array<[number, number]>;
  /** How many streams each side reset with each RST_STREAM code ("CANCEL"), most first. */
  resets: Array<{ by: Side; code: string; count: number }>;
}

/** The upstream answered an upgrade request with 101 (or an HTTP/2 extended CONNECT with 2xx) and bytes now flow both ways. */
export interface UpgradeOpened {
  type: 'upgrade-opened';
  exchangeId: number;
  time: EpochMs;
  statusCode: number;
  statusMessage: string;
  httpVersion: string;
  rawHeaders: RawHeaders;
  /** The client's socket (bytes it sends go upstream). For taps: read only, never write. Absent for a WebSocket over an HTTP/2 stream (RFC 8441: a 2xx to an extended CONNECT). */
  client?: Duplex;
  /** The upstream's socket. For taps: read only, never write. Absent with `client`. */
  upstream?: Duplex;
}

/** One whole WebSocket message (or control frame) crossed the proxy. */
export interface WsMessage {
  type: 'ws-message';
  exchangeId: number;
  /** When its first byte reached the proxy. */
  time: EpochMs;
  /** 'send' = client to server, 'receive' = server to client (Chrome's words). */
  direction: 'send' | 'receive';
  /** 1 text, 2 binary, 8 close, 9 ping, 10 pong. */
  opcode: number;
  /** The payload, inflated when permessage-deflate compressed it (its first bytes only when `size` is set). */
  data: Buffer;
  /** The whole payload's bytes (inflated), when `data` holds only the first ones (the tap's cap); absent when `data` is whole. */
  size?: number;
  /** With `size`: the SHA-256 digest of the payload bytes past `data` (inflated), taken as they passed unkept. */
  restSha256?: Buffer;
  /** How many frames carried it. */
  frames: number;
  /** True when it was compressed on the wire. */
  compressed: boolean;
  /** For close (8): the decoded code, when the payload has one. */
  closeCode?: number;
  /** For close (8): the decoded reason. */
  closeReason?: string;
}

/** A WebSocket frame could not be parsed; that direction is no longer parsed, the bytes keep flowing. */
export interface WsFrameError {
  type: 'ws-error';
  exchangeId: number;
  time: EpochMs;
  direction: 'send' | 'receive';
  /** Stable code, e.g. WS_ERR_INVALID_OPCODE. */
  code: string;
  message: string;
}

/** An upgraded connection ended. */
export interface UpgradeClosed {
  type: 'upgrade-closed';
  exchangeId: number;
  time: EpochMs;
  /** The close code seen in a close frame (the first one sent), if any. */
  code?: number;
  reason?: string;
  /** Who sent the first close frame; 'none' when the sockets just ended. */
  by: 'client' | 'server' | 'none';
}

/** Everything the proxy says. */
export type Fact =
  | ConnectionOpened
  | ConnectionClosed
  | ExchangeStarted
  | RequestBodyChunk
  | RequestEnded
  | ResponseStarted
  | ResponseInformational
  | ResponseBodyChunk
  | ExchangeCompleted
  | Flush
  | ExchangeFailed
  | ExchangeAborted
  | ClientErrored
  | StreamsReset
  | UpgradeOpened
  | WsMessage
  | WsFrameError
  | UpgradeClosed;

/** A listener of facts. It must not throw; if it does, the bus records the error and traffic goes on. */
export type FactListener = (fact: Fact) => void;

/** What the bus caught from its listeners, for the one report at shutdown. */
export interface ListenerErrorReport {
  /** How many times a listener threw, in all. */
  count: number;
  /** One error per kind (name and message), first seen first, with how often that kind was thrown among the kept ones. */
  kinds: Array<{ error: Error; times: number }>;
}

/**
 * Delivers facts to listeners synchronously, isolating traffic from listener bugs:
 * a listener that throws is counted and kept (the first 100), never rethrown,
 * so the proxied connection goes on; whoever owns the bus reports them when
 * it stops (`errorReport()`; `bb capture` and `bb shadow` print one line per kind at exit).
 */
export class FactBus {
  private readonly listeners: FactListener[] = [];
  /** Errors thrown by listeners, the first 100, for reporting at shutdown. */
  readonly listenerErrors: Error[] = [];
  /** How many times a listener threw, including those past the first 100. */
  listenerErrorCount = 0;

  /** Adds a listener; returns a function that removes it. */
  on(listener: FactListener): () => void {
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }

  /** Delivers one fact to every listener, in order. */
  emit(fact: Fact): void {
    for (const listener of this.listeners) {
      try {
        listener(fact);
      } catch (err) {
        this.listenerErrorCount++;
        // Keep a bounded record: a listener failing on every fact must not grow memory.
        if (this.listenerErrors.length < 100) this.listenerErrors.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  /** The listener errors so far grouped by kind, or undefined when no listener threw. */
  errorReport(): ListenerErrorReport | undefined {
    if (this.listenerErrorCount === 0) return undefined;
    const kinds = new Map<string, { error: Error; times: number }>();
    for (const error of this.listenerErrors) {
      const kind = `${error.name}: ${error.message}`;
      const seen = kinds.get(kind);
      if (seen) seen.times++;
      else kinds.set(kind, { error, times: 1 });
    }
    return { count: this.listenerErrorCount, kinds: [...kinds.values()] };
  }

  /** True when someone listens (lets the proxy skip work nobody wants). */
  get hasListeners(): boolean {
    return this.listeners.length > 0;
  }
}

export { now };
