// The h2 tap: one client connection speaking HTTP/2 (h2c with prior
// knowledge in reverse mode, or h2 negotiated by ALPN inside TLS), its own
// upstream connection (1:1), and the frames between them passed on
// unchanged while bb's passive reader (proxy/h2/) reads a copy of each
// direction (docs/capture.md "What the proxy guarantees": HTTP/2 and gRPC).
//
// bb writes bytes of its own only where it must speak:
// - the upstream cannot be reached, or its first frame is not SETTINGS (it
//   does not speak h2): nothing of it reached the client yet, so the client's
//   bytes (kept until then) are handed to node:http2, which answers each
//   stream with bb's 502 (h2-answer.ts);
// - either side breaks the protocol (a malformed frame, an HPACK error, a
//   header bomb): the chunk holding it goes nowhere, both sides get a
//   GOAWAY with the RFC 9113 error code where a frame may go (else a close),
//   and the error is recorded as an entry of its own (RFC 9113 section 5.4.1).
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { now, type FailureInfo, type Side } from './events.js';
import { classifyUpstreamError } from './errors.js';
import { endSocket, type ConnectionState } from './connection.js';
import type { TapSettings } from './tap-settings.js';
import { armConnectTimeout, armSilenceTimeout, upstreamCa, type Upstream } from './upstream.js';
import { H2Session, goawayFrame, type H2ConnectionError, type H2ErrorName, type H2Fact, type H2Side } from './h2/index.js';
import { H2Streams } from './h2-streams.js';
import { answerWith502 } from './h2-answer.js';

/** What the h2 tap is given. */
export interface H2TapStart {
  /** The tracked client connection. */
  conn: ConnectionState;
  /** The client's (decrypted) byte stream. */
  client: Duplex;
  /** Bytes already read from the client (the preface onward); may be empty. */
  head: Buffer;
  /** Per-proxy settings. */
  settings: TapSettings;
  /** An upstream already connected with ALPN h2 (or reverse mode's plain TCP one, opened at accept, maybe still connecting), and its origin; absent: the tap connects. */
  upstream?: { socket: Duplex; origin: string };
}

/** Starts tapping one h2 client connection. */
export function tapH2(start: H2TapStart): void {
  new H2Tap(start).start();
}

/** The h1 tap's test for a connection that opens with the h2 preface's first line pair ("PRI * HTTP/2.0\r\n\r\n"). */
export function startsLikeH2(bytes: Buffer): boolean {
  return bytes.length >= PREFACE_HEAD.length && bytes.subarray(0, PREFACE_HEAD.length).equals(PREFACE_HEAD);
}

const PREFACE_HEAD = Buffer.from('PRI * HTTP/2.0\r\n\r\n', 'latin1');

/** Client bytes kept until the upstream proves it speaks h2 (bb can then still answer them itself). */
const KEEP_LIMIT = 1024 * 1024;

/** The highest stream id (2^31 - 1): a GOAWAY naming it refuses no stream, only new ones. */
const MAX_STREAM_ID = 0x7fffffff;

/** How long bb waits for peers to close after its GOAWAY. */
const GOAWAY_LINGER_MS = 2_000;

/** Most bytes of an offending chunk kept in the record. */
const RAW_LIMIT = 64 * 1024;

// The recorded code of a connection error, spelt out so the codes table sees each one.
const FAILURE_CODES: Partial<Record<H2ConnectionError['code'], string>> = {
  PROTOCOL_ERROR: 'BB_H2_PROTOCOL_ERROR',
  FRAME_SIZE_ERROR: 'BB_H2_FRAME_SIZE_ERROR',
  COMPRESSION_ERROR: 'BB_H2_COMPRESSION_ERROR',
  ENHANCE_YOUR_CALM: 'BB_H2_ENHANCE_YOUR_CALM',
  FLOW_CONTROL_ERROR: 'BB_H2_FLOW_CONTROL_ERROR',
};

function failureCode(code: H2ConnectionError['code']): string {
  return FAILURE_CODES[code] ?? 'BB_H2_PROTOCOL_ERROR';
}

class H2Tap {
  private readonly conn: ConnectionState;
  private readonly client: Duplex;
  private readonly settings: TapSettings;
  private readonly session: H2Session;
  private readonly streams: H2Streams;
  private upstream: Duplex | undefined;
  private origin = 'invalid';
  private connected = false;
  /** The upstream's first frame header was a SETTINGS frame: it speaks h2. */
  private confirmed = false;
  private serverHead: Buffer | undefined;
  private kept: Buffer[] | undefined = [];
  private keptBytes = 0;
  private waiting: Buffer[] = [];
  private clientEnded = false;
  private done = false;
  private goaway: { by: Side; lastStreamId: number; error: string } | undefined;
  /** The proxy stopped taking exchanges: the client is told so by bb's GOAWAY, once a frame may go (sent). */
  private stopping: 'no' | 'pending' | 'sent' = 'no';

  constructor(private readonly begin: H2TapStart) {
    this.conn = begin.conn;
    this.client = begin.client;
    this.settings = begin.settings;
    this.streams = new H2Streams(this.conn, this.settings, () => this.origin);
    this.session = new H2Session({}, (fact) => this.onFact(fact));
  }

  start(): void {
    // A stopping proxy takes no new exchange (server.ts stopTaking): an h2 client hears it as a GOAWAY.
    this.conn.onClosing = () => this.tellStopping();
    if (this.conn.closing) this.stopping = 'pending';
    this.client.on('data', this.onClient);
    this.client.on('end', this.onClientEnd);
    this.client.on('error', () => {});
    this.client.once('close', this.onClientClose);
    // Whichever way the connection ends, the reset burst it leaves is recorded (this listener stays when bb answers itself).
    this.client.once('close', () => this.streams.endBurst());
    // The upstream is named before the head is parsed: the streams that came with the preface go to it too.
    const opened = this.begin.upstream;
    const resolved = opened ? undefined : this.resolve();
    this.origin = opened?.origin ?? resolved?.upstream?.origin ?? this.origin;
    if (this.begin.head.length > 0) this.onClient(this.begin.head);
    if (this.done) return;
    if (opened) {
      const { socket } = opened;
      // One opened at accept (h2c after the HTTP/1 tap's) may still be connecting: bytes wait for it.
      const connecting = socket instanceof net.Socket && socket.connecting;
      if (connecting) socket.once('connect', () => this.onConnected());
      this.attachUpstream(socket, !connecting);
    } else if (resolved?.upstream) this.connect(resolved.upstream);
    else if (resolved?.failure) this.answerItself(resolved.failure);
  }

  private onFact(fact: H2Fact): void {
    if (fact.type === 'goaway') {
      const by: Side = fact.from === 'client' ? 'client' : 'upstream';
      this.goaway = { by, lastStreamId: fact.lastStreamId, error: fact.error };
      if (fact.errorCode !== 0) {
        const debug = fact.debug.length > 0 ? `: ${fact.debug.toString('utf8').slice(0, 200)}` : '';
        this.record({ code: 'BB_H2_GOAWAY', message: `the ${by === 'client' ? 'client' : 'upstream'} ended the connection with GOAWAY(${fact.error})${debug}`, phase: 'response' }, by, undefined);
      }
      return;
    }
    if (fact.type === 'error') return; // handled where push() returns it
    this.streams.onFact(fact);
  }

  // ---- connecting

  /** Where this connection's streams go, or why bb cannot send them anywhere. */
  private resolve(): { upstream: Upstream; failure?: undefined } | { upstream?: undefined; failure: FailureInfo } {
    try {
      return { upstream: this.settings.resolveUpstream({ url: '*', method: 'PRI', httpVersion: '2.0', rawHeaders: [], socket: this.client }, this.conn.scheme) };
    } catch (err) {
      return { failure: { code: 'BB_BAD_TARGET', message: (err as Error).message, phase: 'request' } };
    }
  }

  private connect(upstream: Upstream): void {
    const socket = upstream.tls
      ? tls.connect({
          host: upstream.hostname, port: upstream.port, servername: upstream.servername, ca: upstreamCa(this.settings.tlsOptions),
          rejectUnauthorized: !this.settings.tlsOptions.insecure, ALPNProtocols: ['h2'],
        })
      : net.connect({ host: upstream.hostname, port: upstream.port, noDelay: true });
    armConnectTimeout(socket, this.settings.connectTimeoutMs, upstream.tls ? 'secureConnect' : 'connect');
    socket.once(upstream.tls ? 'secureConnect' : 'connect', () => {
      if (upstream.tls && (socket as tls.TLSSocket).alpnProtocol !== 'h2') {
        this.notH2(`the upstream's TLS did not agree to h2 (ALPN: ${(socket as tls.TLSSocket).alpnProtocol || 'none'})`);
        return;
      }
      this.onConnected();
    });
    this.attachUpstream(socket, false);
  }

  private attachUpstream(socket: Duplex, connected: boolean): void {
    this.upstream = socket;
    let failure: NodeJS.ErrnoException | undefined;
    socket.on('data', (chunk: Buffer) => this.onServer(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (failure ??= err));
    socket.on('end', () => this.onUpstreamEnd());
    socket.once('close', () => this.onUpstreamClose(failure));
    // Silence only counts while a stream waits for the server, as for HTTP/1.1.
    if (socket instanceof net.Socket) armSilenceTimeout(socket, this.settings.upstreamTimeoutMs, () => this.streams.size > 0);
    if (connected) this.onConnected();
  }

  private onConnected(): void {
    if (this.done || !this.upstream) return;
    this.connected = true;
    for (const chunk of this.waiting) this.writeUp(chunk);
    this.waiting = [];
    if (this.clientEnded) endSocket(this.upstream);
  }

  // ---- client → upstream

  private readonly onClient = (chunk: Buffer): void => {
    if (this.done) return;
    const boundary = this.session.clientAtFrameBoundary;
    const error = this.session.fromClient(chunk, now());
    if (error) {
      this.protocolError('client', error, chunk, boundary);
      return;
    }
    if (this.kept) {
      this.keptBytes += chunk.length;
      if (this.keptBytes > KEEP_LIMIT) this.kept = undefined;
      else this.kept.push(chunk);
    }
    if (this.connected) this.writeUp(chunk);
    else this.waiting.push(chunk);
  };

  private writeUp(chunk: Buffer): void {
    const up = this.upstream!;
    if (!up.write(chunk)) {
      // Backpressure: a slow server slows the client down.
      this.client.pause();
      up.once('drain', () => {
        if (!this.done) this.client.resume();
      });
    }
  }

  private readonly onClientEnd = (): void => {
    this.clientEnded = true;
    if (this.connected && this.upstream) endSocket(this.upstream);
  };

  private readonly onClientClose = (): void => {
    if (!this.done) this.streams.abortAll('client');
    this.done = true;
    this.upstream?.destroy();
  };

  // ---- upstream → client

  private onServer(chunk: Buffer): void {
    if (this.done) return;
    if (!this.confirmed) {
      const head = this.serverHead ? Buffer.concat([this.serverHead, chunk]) : chunk;
      if (head.length < 9) {
        this.serverHead = head;
        return;
      }
      this.serverHead = undefined;
      // The server's connection preface is a SETTINGS frame on stream 0, not an ACK (RFC 9113 section 3.4).
      if (head[3] !== 0x4 || (head[4]! & 0x1) !== 0 || head.readUInt32BE(5) !== 0) {
        this.notH2('the upstream answered the h2 preface with bytes that are not a SETTINGS frame');
        return;
      }
      this.confirmed = true;
      this.kept = undefined;
      chunk = head;
    }
    const boundary = this.session.serverAtFrameBoundary;
    const error = this.session.fromServer(chunk, now());
    this.streams.flush();
    if (error) {
      this.protocolError('server', error, chunk, boundary);
      return;
    }
    if (!this.client.write(chunk)) {
      const up = this.upstream!;
      up.pause();
      this.client.once('drain', () => up.resume());
    }
    if (this.stopping === 'pending') this.sendStopping();
  }

  private onUpstreamEnd(): void {
    if (this.done) return;
    if (!this.confirmed) return; // close follows: answered there
    endSocket(this.client);
  }

  private onUpstreamClose(err: NodeJS.ErrnoException | undefined): void {
    if (this.done) return;
    if (!this.confirmed) {
      const failure = err
        ? classifyUpstreamError(err, err.code === 'ECONNREFUSED' || err.code === 'BB_CONNECT_TIMEOUT' || !this.connected ? 'connect' : 'request')
        : { code: 'BB_UPSTREAM_CLOSED', message: 'the upstream closed the connection before answering', phase: 'request' as const };
      this.answerItself(failure);
      return;
    }
    this.done = true;
    const goaway = this.goaway?.by === 'upstream' ? this.goaway : undefined;
    const failure: FailureInfo = goaway
      ? { code: 'BB_H2_GOAWAY', message: `the upstream sent GOAWAY(${goaway.error}, last stream ${goaway.lastStreamId}) and closed before this stream ended`, phase: 'response' }
      : err
        ? classifyUpstreamError(err, 'response')
        : { code: 'ECONNRESET', message: 'the upstream closed the connection with streams open', phase: 'response' };
    if (this.streams.size > 0) this.streams.abortAll('upstream', failure);
    if (err?.code === 'BB_UPSTREAM_TIMEOUT' && this.session.serverAtFrameBoundary) {
      // bb gave up on a silent server: the client hears it as a GOAWAY (its streams were not all answered), not a reset.
      goAway(this.client, this.streams.highestClientStream, 'INTERNAL_ERROR', `bb: ${failure.message}`.slice(0, 256));
    } else if (err) this.client.destroy();
    else endSocket(this.client);
  }

  // ---- bb's own words

  /** The proxy is stopping: tell the client to open no more streams, as a server shutting down gracefully does. */
  private tellStopping(): void {
    if (this.stopping !== 'no') return;
    this.stopping = 'pending';
    this.sendStopping();
  }

  /**
   * bb's GOAWAY for a stop, once a frame may go to the client: after the server's preface, between two of its
   * frames. Its last stream is the highest id there is (RFC 9113 section 6.8, the graceful form): every stream the
   * client opened meanwhile still reaches the server (its header block is part of the HPACK state both peers share,
   * so bb could not hold one back) and is answered; the client opens no more, and its connection ends once its
   * streams are done (RunningProxy.close).
   */
  private sendStopping(): void {
    if (this.stopping !== 'pending' || this.done || !this.confirmed || !this.session.serverAtFrameBoundary) return;
    if (this.client.writableEnded || this.client.destroyed) return;
    this.stopping = 'sent';
    this.client.write(goawayFrame(MAX_STREAM_ID, 'NO_ERROR', 'bb: the proxy is stopping'));
  }

  /** The upstream is not an h2 server we can use: answer the client ourselves if nothing of the upstream reached it. */
  private notH2(message: string): void {
    this.answerItself({ code: 'BB_UPSTREAM_NOT_H2', message, phase: 'response' });
  }

  private answerItself(failure: FailureInfo): void {
    if (this.done) return;
    this.done = true;
    const up = this.upstream;
    this.upstream = undefined;
    up?.destroy();
    if (!this.kept) {
      // Too much was sent to keep: bb cannot read it again, so the streams fail and the connection ends.
      this.streams.abortAll('upstream', failure);
      this.client.destroy();
      return;
    }
    const replay = Buffer.concat(this.kept);
    this.kept = undefined;
    this.client.pause();
    this.client.off('data', this.onClient);
    this.client.off('end', this.onClientEnd);
    this.client.off('close', this.onClientClose);
    answerWith502(this.client, replay, failure, this.origin, this.streams);
    // Streams node:http2 never sees again (the client reset them meanwhile) end with the connection.
    this.client.once('close', () => this.streams.abortAll('client'));
  }

  /** One side broke h2: record it, end its streams, and close both connections with GOAWAY where a frame may go. */
  private protocolError(side: H2Side, error: H2ConnectionError, chunk: Buffer, boundaryBefore: boolean): void {
    this.done = true;
    const by: Side = side === 'client' ? 'client' : 'upstream';
    const failure: FailureInfo = { code: failureCode(error.code), message: `the ${by} broke HTTP/2: ${error.message}`, phase: 'parse' };
    this.record(failure, by, chunk);
    this.streams.abortAll(by, failure);
    const debug = `bb: ${error.message}`.slice(0, 256);
    // The offending chunk went nowhere, so its direction stands where it stood before it.
    const toClientOk = side === 'server' ? boundaryBefore : this.session.serverAtFrameBoundary;
    const toServerOk = this.connected && (side === 'client' ? boundaryBefore : this.session.clientAtFrameBoundary);
    if (toClientOk) goAway(this.client, this.streams.highestClientStream, error.code, debug);
    else this.client.destroy();
    const up = this.upstream;
    if (up) {
      if (toServerOk) goAway(up, 0, error.code, debug);
      else up.destroy();
    }
  }

  /** A connection-level event as an entry of its own (the shape of a refused packet). */
  private record(error: FailureInfo, by: Side, raw: Buffer | undefined): void {
    this.settings.bus.emit({
      type: 'client-error', connectionId: this.conn.id, exchangeId: this.settings.nextExchangeId(), time: now(), error,
      ...(raw ? { rawPacket: raw.length > RAW_LIMIT ? raw.subarray(0, RAW_LIMIT) : raw } : {}),
      ...(by === 'upstream' ? { by } : {}),
    });
  }
}

/** Ends `socket` with a GOAWAY frame, and destroys it if the peer has not closed within GOAWAY_LINGER_MS. */
function goAway(socket: Duplex, lastStreamId: number, code: H2ErrorName, debug: string): void {
  socket.end(goawayFrame(lastStreamId, code, debug));
  setTimeout(() => socket.destroy(), GOAWAY_LINGER_MS).unref();
}
