// One mirror target of a `bb shadow` run (the candidate or the secondary):
// its own recording proxy (so its answers become a capture like any other),
// lanes that carry the primary's requests to it, one lane per client
// connection of the primary so each connection's requests keep their order,
// and its WebSocket conversations. Nothing here is on the client's path:
// the tee hands a request over and returns; a slow or dead target only
// fills its own queue, and past the caps the tee drops the mirror.
//
// Server-issued values (docs/shadow.md "Sessions: each target's own ids and cookies"): when both the primary's
// and this target's answer to one request are in, the values each issued at
// the same place (issued.ts's responseValues: a JSON field, Location, a
// Set-Cookie value; a gRPC answer message's field; a server WebSocket
// message's field: mirror-ws.ts) are bound, so later mirrored requests carry
// this target's own ids and cookies (the binding bb replay and bb diff use;
// a gRPC call's messages are rewritten in mirror-grpc.ts).
import { connect } from 'node:net';
import type { PassThrough } from 'node:stream';
import type WebSocket from 'ws';
import { Counterparts, requestTokens, rewriteHeaderValue, rewriteTarget, rewriteTokens, textEncoding, tokensOf, type ResponseView, type ValueEncoding } from '../../diff/index.js';
import type { Recording } from '../record/index.js';
import { LaneConnection, liveResponse, withHeaders, wireRequest, WIRE_HEADERS, WS_OWN_HEADERS, type ExchangeOutcome, type RequestParts } from '../replay/index.js';
import { getOwn, headerValue, isLoopbackHost, lazyModule, setOwn } from '../../core/index.js';
import { grpcMedia, utf8Text } from '../../capture/index.js';
import { ClientMessages, grpcBodyTokens, MAX_WAITING_BYTES, rewriteGrpcBody } from './mirror-grpc.js';
import { H2Sessions, mirroredH2Request, type MirroredStream } from './mirror-h2.js';
import { MirroredConversation, type MirroredSocket } from './mirror-ws.js';
import { CATCH_UP_MS, OpenStreams, type CatchUp } from './message-pairs.js';
import { AnswersAwaited } from './answer-wait.js';

export type { MirroredSocket } from './mirror-ws.js';

// ws, loaded on the first WebSocket: a run without one never loads it.
const wsLib = lazyModule<typeof WebSocket>('ws', import.meta.url);

/** A request to mirror, as the primary's client sent it. */
export interface MirrorRequest {
  /** The shared id (the primary's `_bb.seq`). */
  id: number;
  /** The primary's client connection: one lane per connection. */
  connection: string;
  method: string;
  /** Path and query as sent. */
  target: string;
  /** "1.1", "1.0", or "2.0" (then `rawHeaders` start with the pseudo-headers). */
  version: string;
  /** Raw headers as sent. */
  rawHeaders: string[];
  /** The body bytes as sent (content-coding kept, chunk framing removed). */
  body: Buffer;
  /** Request trailers. */
  trailers: string[];
  /** An event stream's copy ends with the primary's stream: aborted shortly after the primary's exchange ended. */
  ended?: AbortSignal;
}

/** One mirror target. */
export class MirrorTarget {
  private readonly lanes = new Map<string, Lane>();
  /** Lanes by the local port of their socket (what the target proxy's facts call remotePort). */
  private readonly byPort = new Map<number, Lane>();
  private readonly portOf = new Map<string, number>();
  private readonly wsByPort = new Map<number, number>();
  /** Primary value → this target's value (bounded: the oldest go). */
  readonly bindings = new Counterparts();
  /** Its answers still to come (answer-wait.ts): a request carrying a value another lane's primary answer issued waits for the target's. */
  private readonly awaited = new AnswersAwaited();
  /** Its open streams, whose messages bind as they come, and its read-after-write waits (message-pairs.ts). */
  readonly streams = new OpenStreams(this.bindings, (id) => this.awaited.has(id), (values) => this.onStreamLearned?.(values.map((v) => [v, this.bindings.get(v)!])));
  /**
   * Hears each primary value a stream's messages taught this target's counterpart of, with it: the live comparison
   * learns them from completed exchanges only, and a stream may still be open when a read sends its value back.
   */
  onStreamLearned?: (pairs: Array<[string, string]>) => void;
  /** Its WebSocket conversations: their client messages' waits are looked at again when an answer comes. */
  private readonly conversations = new Set<MirroredConversation>();
  /** Requests sent or queued and not answered. */
  inFlight = 0;
  /** WebSocket upgrades handed over and not yet opened or refused (one may wait for a value: openWebSocket). */
  private opening = 0;
  /** Shared ids handed over and not settled, with how many (at most the in-flight cap: a rotating capture's segment waits for them). */
  private readonly unsettled = new Map<number, number>();
  /** Bytes of those requests. */
  queuedBytes = 0;
  /** Bytes of client WebSocket messages handed to this target's conversations and not yet written to its socket (messageQueued). */
  private wsQueuedBytes = 0;
  /** Each h2 stream's bytes still arriving that it holds and has not yet handed to its session (sendH2, live). */
  private readonly liveStreams = new Set<() => number>();
  /** The exchange in this target's capture of each WebSocket conversation and h2 stream under way, by shared id (dropMirror tags it). */
  private readonly exchanges = new Map<number, number>();
  private readonly host: string;
  private readonly port: number;
  private readonly sockets = new Set<WebSocket>();
  /** HTTP/2: one h2c session per client connection. */
  private readonly h2: H2Sessions;

  constructor(
    /** "candidate" or "secondary": its capture's label. */
    readonly name: string,
    /** Its recording proxy. */
    readonly recording: Recording,
    /** The target's own authority: the Host of a request the client addressed to bb shadow itself. */
    private readonly authority: string,
    /** bb shadow's own listen authority (host:port): a client Host naming anything else (a proxy in front) is kept. */
    private readonly own: string,
    /** --header TARGET:'Name: value' overrides. */
    private readonly headers: ReadonlyArray<[string, string]>,
    private readonly timeoutMs: number,
    /** Runs a lane's write once the primary's answers of this turn are out (after-turn.ts); default at once. */
    private readonly later: (job: () => void) => void = (job) => job(),
  ) {
    const u = new URL(recording.url);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.h2 = new H2Sessions(recording.url);
    // Each exchange the target's proxy sees gets the shared id of the request that made it.
    recording.proxy.bus.on((fact) => {
      if (fact.type === 'connection-opened') this.portOf.set(fact.connectionId, fact.remotePort);
      else if (fact.type === 'connection-closed') this.portOf.delete(fact.connectionId);
      else if (fact.type === 'exchange-started') {
        const id = this.sharedIdOf(fact);
        if (id === undefined) return;
        recording.tag(fact.exchangeId, { id });
        if (fact.upgrade || fact.stream !== undefined) this.exchanges.set(id, fact.exchangeId);
      }
    });
  }

  /**
   * What this target holds to send, counted against the queued-bytes cap: whole requests queued or in flight, and
   * the bytes of WebSocket conversations and h2 streams still arriving not yet written (a target that stopped
   * reading held them all before).
   */
  get queued(): number {
    let n = this.queuedBytes + this.wsQueuedBytes;
    for (const held of this.liveStreams) n += held();
    return n;
  }

  /** A client WebSocket message of `bytes` handed to one of this target's conversations: counted in `queued` until the returned release (its `sent`). */
  messageQueued(bytes: number): () => void {
    this.wsQueuedBytes += bytes;
    return () => void (this.wsQueuedBytes -= bytes);
  }

  /** The shared id of the request that made an exchange this target's proxy saw start (its capture's segment follows it: segment.ts). */
  sharedIdOf(fact: { connectionId: string; stream?: number }): number | undefined {
    const port = this.portOf.get(fact.connectionId);
    if (port === undefined) return undefined;
    return fact.stream !== undefined ? this.h2.idAt(port, fact.stream) : (this.wsByPort.get(port) ?? this.laneAt(port)?.current);
  }

  /** Whether every request handed over with a shared id at or below `id` has settled (answered, failed, timed out; a WebSocket opened or refused). */
  settledThrough(id: number): boolean {
    for (const k of this.unsettled.keys()) if (k <= id) return false;
    return true;
  }

  private hold(id: number): () => void {
    this.unsettled.set(id, (this.unsettled.get(id) ?? 0) + 1);
    return () => {
      const n = (this.unsettled.get(id) ?? 1) - 1;
      if (n > 0) this.unsettled.set(id, n);
      else this.unsettled.delete(id);
    };
  }

  private laneAt(port: number): Lane | undefined {
    let lane = this.byPort.get(port);
    if (lane) return lane;
    for (const l of this.lanes.values()) {
      const p = l.conn.localPort;
      if (p !== undefined) this.byPort.set(p, l);
      if (p === port) lane = l;
    }
    return lane;
  }

  /**
   * Queues a request on its connection's lane; `onAnswer` gets this target's response view (for binding), `onBody`
   * each body chunk as it comes; `ended` cuts this target's copy (else `req.ended`).
   */
  send(req: MirrorRequest, onAnswer: (answer: ResponseView | undefined) => void, onBody?: (chunk: Buffer) => void, ended?: AbortSignal): void {
    let lane = this.lanes.get(req.connection);
    if (!lane) this.lanes.set(req.connection, (lane = { conn: new LaneConnection(this.host, this.port), queue: [], busy: false }));
    this.inFlight++;
    this.queuedBytes += req.body.length;
    const settle = this.hold(req.id);
    let tokens: Set<string> | undefined;
    const carried = () => (tokens ??= new Set(carriedTokens(req)));
    const wait = this.waitFor(this.streams.behind(carried), this.awaited.behind(carried, req.connection));
    this.awaited.sent(req.id, req.connection);
    lane.queue.push({ req, onAnswer: (answer) => (settle(), onAnswer(answer)), ...(onBody ? { onBody } : {}), ...(wait ? { wait } : {}), ...(ended ? { ended } : {}) });
    // Counted at once (the tee's caps read the counts); written after the primary's turn.
    this.later(() => this.pump(req.connection, lane));
  }

  /**
   * Sends an HTTP/2 request on its own stream of the connection's h2c
   * session; `live` when its body is still arriving: the returned stream
   * takes the rest. `onAnswer` and `onBody` as `send`'s.
   */
  sendH2(req: MirrorRequest, live: boolean, onAnswer: (answer: ResponseView | undefined) => void, onBody?: (chunk: Buffer) => void, ended?: AbortSignal): MirroredStream | undefined {
    // A streaming call's client messages bind one by one as they cross (mirror-grpc.ts ClientMessages).
    const calls = live && binaryGrpc(req);
    const abort = new AbortController();
    this.inFlight++;
    this.queuedBytes += req.body.length;
    const settle = this.hold(req.id);
    // A whole request that carries a value another exchange's primary answer (or a stream's message) issued waits,
    // as a lane's request does, for the target's own (CATCH_UP_MS at most); the streams of one h2 connection are
    // not in order, so an exchange of its own connection counts too.
    let tokens: Set<string> | undefined;
    const carried = () => (tokens ??= new Set(carriedTokens(req)));
    const wait = live ? undefined : this.waitFor(this.streams.behind(carried), this.awaited.behind(carried));
    this.awaited.sent(req.id, req.connection);
    // A body still arriving: what it holds until its session takes it (counted in `queued`; set below).
    let held: (() => number) | undefined;
    // Sends it; the stream a body still arriving goes on through.
    const go = (): PassThrough | undefined => {
      const built = mirroredH2Request(req.rawHeaders, calls ? Buffer.alloc(0) : req.body, this.parts(req), this.authority, live);
      // Taken once the request is built: a session counts the stream until done().
      const { conn, opened, done } = this.h2.session(req.connection);
      // An event stream's copy ends with the primary's stream (`ended`, else req.ended), as an HTTP/1.1 lane's does.
      const cut = ended ?? req.ended;
      const signal = cut ? AbortSignal.any([abort.signal, cut]) : abort.signal;
      const limits = { what: `mirror ${req.id}`, timeoutMs: this.timeoutMs, waitMs: this.timeoutMs, signal, onTimeout: () => {}, onStream: (s: number) => opened(s, req.id), ...(onBody ? { onBody } : {}) };
      void conn.exchange(built.request, limits).then((outcome) => {
        done();
        settle();
        this.exchanges.delete(req.id);
        if (held) this.liveStreams.delete(held);
        this.inFlight--;
        this.queuedBytes -= req.body.length;
        built.more?.destroy();
        onAnswer(outcome.kind === 'response' ? liveResponse(outcome.status, outcome.rawHeaders, outcome.body, outcome.truncated).view : undefined);
        this.answered(req.id);
      });
      return built.more;
    };
    if (!live) return void this.streams.whenCaughtUp(wait, () => void go());
    // A request still arriving goes once its head may: a head that carries a value another exchange's primary
    // answer issued (a token from a login on a stream beside it: grpc-js calls share one connection) waits for
    // the target's own answer, as a whole request does; what the client sends meanwhile is held
    // (MAX_WAITING_BYTES at most: past it the call goes at once). Its messages then wait one by one (ClientMessages).
    let head: Set<string> | undefined;
    const headWait = this.waitFor(this.streams.behind(() => (head ??= new Set(headTokens(req)))), this.awaited.behind(() => (head ??= new Set(headTokens(req)))));
    let more: PassThrough | undefined;
    const waiting: Buffer[] = [];
    let waitingBytes = 0;
    let endHeld = false;
    let messages: ClientMessages | undefined;
    held = () => waitingBytes + (more ? more.writableLength + more.readableLength : 0) + (messages?.waiting ?? 0);
    this.liveStreams.add(held);
    const start = () => {
      if (more) return;
      more = go()!;
      for (const chunk of waiting.splice(0)) if (more.writable) more.write(chunk);
      waitingBytes = 0;
      if (endHeld && more.writable) more.end();
    };
    this.streams.whenCaughtUp(headWait, start);
    const out = {
      write: (chunk: Buffer) => {
        if (more) return void (more.writable && more.write(chunk));
        waiting.push(chunk);
        if ((waitingBytes += chunk.length) > MAX_WAITING_BYTES) start();
      },
      end: () => {
        if (more) return void (more.writable && more.end());
        endHeld = true;
      },
    };
    if (!calls) return { ...out, abort: () => abort.abort() };
    messages = new ClientMessages(
      {
        bindings: this.bindings,
        whenReady: (tokens, go) => this.streams.whenCaughtUp(this.waitFor(this.streams.behind(tokens), this.awaited.behind(tokens)), go),
      },
      out,
      headerValue(req.rawHeaders, 'grpc-encoding'),
    );
    if (req.body.length) messages.write(req.body);
    return { write: (chunk) => messages.write(chunk), end: () => messages.end(), abort: () => abort.abort() };
  }

  /** The primary's client connection closed: its lane closes once its queue is empty. */
  connectionClosed(connection: string): void {
    this.h2.close(connection);
    const lane = this.lanes.get(connection);
    if (!lane) return;
    lane.closing = true;
    if (!lane.busy && lane.queue.length === 0) this.dropLane(connection, lane);
  }

  private dropLane(connection: string, lane: Lane): void {
    lane.conn.close();
    this.lanes.delete(connection);
    for (const [p, l] of this.byPort) if (l === lane) this.byPort.delete(p);
  }

  private pump(connection: string, lane: Lane): void {
    if (lane.busy) return;
    const job = lane.queue.shift();
    if (!job) {
      if (lane.closing) this.dropLane(connection, lane);
      return;
    }
    lane.busy = true;
    lane.current = job.req.id;
    // Sent after the client read a stream's message: the target says it too first (its value is bound by then).
    this.streams.whenCaughtUp(job.wait, () => this.write(connection, lane, job));
  }

  private write(connection: string, lane: Lane, job: Lane['queue'][number]): void {
    const wire = wireRequest(this.parts(job.req), this.hostFor(job.req));
    const ended = job.ended ?? job.req.ended;
    void lane.conn.exchange(wire, { timeoutMs: this.timeoutMs, ...(ended ? { signal: ended } : {}), ...(job.onBody ? { onBody: job.onBody } : {}) }).then((outcome: ExchangeOutcome) => {
      // The answer's decoding and binding, and the lane's next write, wait for the primary's answers of this turn too.
      this.later(() => {
        lane.busy = false;
        this.inFlight--;
        this.queuedBytes -= job.req.body.length;
        job.onAnswer(outcome.kind === 'response' ? liveResponse(outcome.status, outcome.rawHeaders, outcome.body, outcome.truncated).view : undefined);
        this.answered(job.req.id);
        this.pump(connection, lane);
      });
    });
  }

  /** The primary's answer to an exchange mirrored here (decoded by the tee): requests carrying its values may wait for this target's. */
  primaryAnswered(id: number, view: ResponseView): void {
    this.awaited.primaryAnswered(id, view);
  }

  // The target's answer came (bound by now) or failed: the waits on it are looked at again.
  private answered(id: number): void {
    this.awaited.answered(id);
    this.streams.wake();
    for (const c of this.conversations) c.retry();
  }

  // One wait of streams' lag and of answers still to come (undefined: none).
  private waitFor(marks: CatchUp['marks'] | undefined, answers: number[] | undefined): CatchUp | undefined {
    if (!marks && !answers) return undefined;
    return { until: Date.now() + CATCH_UP_MS, marks: marks ?? [], ...(answers ? { answers } : {}) };
  }

  /** The request as this target gets it: values bound to its own, --header overrides applied. */
  private parts(req: MirrorRequest): RequestParts {
    const map = this.bindings;
    // A new value in a body is written as its syntax asks (textEncoding); in the target, percent-encoded (rewriteTarget).
    const rewrite = (text: string, encoding?: ValueEncoding) => (map.size === 0 ? text : rewriteTokens(text, map, encoding).text);
    const headers: Array<[string, string]> = [];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      const value = req.rawHeaders[i + 1]!;
      headers.push([name, WIRE_HEADERS.has(name.toLowerCase()) || map.size === 0 ? value : rewriteHeaderValue(name, value, map).text]);
    }
    const coded = headerValue(req.rawHeaders, 'content-encoding') !== undefined;
    const grpc = binaryGrpc(req);
    const text = !coded && !grpc && req.body.length > 0 ? utf8Text(req.body) : undefined;
    const body =
      req.body.length === 0 && !headers.some(([n]) => /^(content-length|transfer-encoding)$/i.test(n))
        ? undefined
        : text !== undefined
          ? { text: map.size === 0 ? text : rewrite(text, textEncoding(text, headerValue(req.rawHeaders, 'content-type'))), base64: false, mime: '' }
          : { text: (grpc && !coded ? rewriteGrpcBody(req.body, map, headerValue(req.rawHeaders, 'grpc-encoding')) : req.body).toString('base64'), base64: true, mime: '', asSent: true };
    const trailers: Array<[string, string]> = [];
    for (let i = 0; i + 1 < req.trailers.length; i += 2) trailers.push([req.trailers[i]!, req.trailers[i + 1]!]);
    return {
      method: req.method,
      target: map.size === 0 ? req.target : rewriteTarget(req.target, map).text,
      version: req.version === '1.0' ? '1.0' : '1.1',
      headers: withHeaders(headers, this.headers),
      ...(body ? { body } : {}),
      ...(trailers.length ? { trailers } : {}),
    };
  }

  /**
   * The Host this target gets: a --header override; else the target's own
   * authority when the client addressed bb shadow itself (Host follows the
   * target, as the primary's tap forwards it to the primary); else the
   * client's Host as it was (a proxy or mesh in front mirrors production's
   * Host, and the primary got it too); an HTTP/2 request's is its :authority.
   */
  private hostFor(req: MirrorRequest): string {
    const override = this.headers.find(([n]) => n.toLowerCase() === 'host');
    if (override) return override[1];
    const host = headerValue(req.rawHeaders, 'host') ?? headerValue(req.rawHeaders, ':authority');
    return host === undefined || sameAuthority(host, this.own) ? this.authority : host;
  }

  /**
   * Learns this target's values from its answer and the primary's to the same request; `issuedAt`: the tee's tick
   * when the primary's answer ended (a value its client sent before then is its own: sent on as written).
   */
  bind(primary: ResponseView, mine: ResponseView, issuedAt?: number): void {
    const sends = this.bindings.sends;
    this.bindings.learn(primary, mine, sends && issuedAt !== undefined ? sends.sentBefore(issuedAt) : undefined);
  }

  /**
   * Opens this target's side of a WebSocket conversation (the primary's
   * upgrade request, values bound); resolves to a sender of the client's
   * messages, or undefined when the target refused.
   */
  async openWebSocket(req: MirrorRequest): Promise<MirroredSocket | undefined> {
    // Under way from now: this target's capture waits for it (hold), and so does the end of the run (opening).
    const settle = this.hold(req.id);
    this.opening++;
    try {
      return await this.upgrade(req);
    } finally {
      settle();
      this.opening--;
    }
  }

  // openWebSocket's upgrade: resolves to the conversation once open, undefined when refused.
  private async upgrade(req: MirrorRequest): Promise<MirroredSocket | undefined> {
    // The upgrade may carry a value another connection's primary answer (or a stream's message) issued, such as
    // the session cookie a login set just before: it waits, as a lane's request does, for this target's own value
    // (CATCH_UP_MS at most), else it would go with the primary's (and a target that checks it refuses the socket).
    const carried = new Set(carriedTokens(req));
    const wait = this.waitFor(this.streams.behind(() => carried), this.awaited.behind(() => carried));
    if (wait) await new Promise<void>((resolve) => this.streams.whenCaughtUp(wait, resolve));
    const parts = this.parts(req);
    const protocolHeader = headerValue(req.rawHeaders, 'sec-websocket-protocol');
    const protocols = protocolHeader ? protocolHeader.split(',').map((s) => s.trim()).filter(Boolean) : [];
    const headers: Record<string, string> = {};
    for (const [n, v] of parts.headers) {
      // A WebSocket over an HTTP/2 stream (RFC 8441) opens as one over HTTP/1.1: its pseudo-headers are the request line.
      if (n.startsWith(':') || WS_OWN_HEADERS.has(n.toLowerCase()) || WIRE_HEADERS.has(n.toLowerCase())) continue;
      const prev = getOwn(headers, n);
      setOwn(headers, n, prev === undefined ? v : `${prev}, ${v}`);
    }
    headers['Host'] = this.hostFor(req);
    const offered = /permessage-deflate/i.test(headerValue(req.rawHeaders, 'sec-websocket-extensions') ?? '');
    const ws = new (wsLib())(`ws://${this.host}:${this.port}${parts.target}`, protocols, {
      headers,
      perMessageDeflate: offered,
      handshakeTimeout: this.timeoutMs,
      // Our own connection, so its local port is known before the proxy sees the upgrade.
      createConnection: () => {
        const socket = connect({ host: this.host, port: this.port });
        socket.once('connect', () => {
          const port = socket.localPort!;
          this.wsByPort.set(port, req.id);
          socket.once('close', () => this.wsByPort.delete(port));
        });
        return socket;
      },
    });
    // Listening from the start: the target's first message may come with its handshake's answer.
    const stream = this.streams.add();
    ws.once('close', stream.done);
    ws.once('close', () => this.exchanges.delete(req.id));
    const conversation = new MirroredConversation(ws, this.bindings, stream.pairs, {
      behind: (tokens) => this.awaited.behind(tokens),
      unanswered: (id) => this.awaited.has(id),
    });
    this.conversations.add(conversation);
    ws.once('close', () => this.conversations.delete(conversation));
    const opened = await new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('unexpected-response', (_q, res) => {
        res.resume();
        ws.terminate();
        resolve(false);
      });
      ws.once('error', () => resolve(false));
    });
    // Open or refused, openWebSocket settles its hold: an open one's exchange goes on in this target's capture.
    if (!opened) return undefined;
    ws.on('error', () => {});
    // The target's own messages are recorded by its proxy; the conversation reads them only to bind the values they issue.
    this.sockets.add(ws);
    ws.once('close', () => this.sockets.delete(ws));
    return conversation;
  }

  /**
   * The tee dropped a conversation's or a stream's mirrors part-way (a client message too large to mirror whole, or
   * past the queued-bytes cap): its exchange in this target's capture is tagged as the primary's is, so neither the live
   * comparison nor `bb diff` of the captures compares the part that went.
   */
  dropMirror(id: number, why: string): void {
    const exchangeId = this.exchanges.get(id);
    if (exchangeId !== undefined) this.recording.tag(exchangeId, { id, skipped: why });
  }

  /** Waits (at most `ms`) until every queued request is answered, then closes lanes and sockets. */
  async settle(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while ((this.inFlight > 0 || this.opening > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    for (const [c, lane] of this.lanes) this.dropLane(c, lane);
    this.h2.closeAll();
    for (const ws of this.sockets) ws.close(1001);
    const wsUntil = Date.now() + Math.min(ms, 1000);
    while (this.sockets.size > 0 && Date.now() < wsUntil) await new Promise((r) => setTimeout(r, 20));
    for (const ws of this.sockets) ws.terminate();
  }
}

interface Lane {
  conn: LaneConnection;
  queue: Array<{ req: MirrorRequest; onAnswer: (answer: ResponseView | undefined) => void; onBody?: (chunk: Buffer) => void; wait?: CatchUp; ended?: AbortSignal }>;
  busy: boolean;
  /** The shared id of the request on the wire now. */
  current?: number;
  closing?: boolean;
}

/** host:port names bb shadow's own listener (the loopback names of its address count). */
function sameAuthority(host: string, own: string): boolean {
  const split = (a: string) => {
    const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(a.trim().toLowerCase());
    return m ? { name: m[1]!, port: m[2] ?? '80' } : { name: a, port: '' };
  };
  const a = split(host);
  const b = split(own);
  return a.port === b.port && (a.name === b.name || (isLoopbackHost(a.name) && isLoopbackHost(b.name)));
}

/** A gRPC call's request in binary framing (gRPC-Web-text's is base64: it goes as sent). */
function binaryGrpc(req: MirrorRequest): boolean {
  const media = grpcMedia(headerValue(req.rawHeaders, 'content-type'));
  return media !== undefined && !media.text;
}

/** The values a request carries that a server may have issued (headTokens and bodyTokens), as the binding reads a request. */
function carriedTokens(req: MirrorRequest): string[] {
  return [...headTokens(req), ...bodyTokens(req)];
}

/** What a request's head carries: path, query, headers (HTTP/2's pseudo-headers aside, as sentRequest reads a recorded one), cookies. */
export function headTokens(req: MirrorRequest): string[] {
  const headers: Array<[string, string]> = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) if (!req.rawHeaders[i]!.startsWith(':')) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  return requestTokens({ target: req.target, headers });
}

/** What a request's body carries: a textual body's tokens, a gRPC call's messages' (none for a coded body). */
export function bodyTokens(req: MirrorRequest): string[] {
  if (req.body.length === 0 || headerValue(req.rawHeaders, 'content-encoding') !== undefined) return [];
  if (binaryGrpc(req)) return grpcBodyTokens(req.body, headerValue(req.rawHeaders, 'grpc-encoding'));
  const text = utf8Text(req.body);
  return text === undefined ? [] : tokensOf(text);
}
