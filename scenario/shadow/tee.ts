// The tee of a `bb shadow` run (docs/shadow.md "What is mirrored, and when"):
// it reads the primary's facts (a copy; the relay never waits for it),
// decides which exchanges are mirrored (safe methods, opted-in routes,
// sampling, caps) and tags each with its shared id, and hands each request to
// every mirror target when the primary's response head arrives. It keeps only
// what a mirror or a binding still needs of an exchange, and forgets it when
// the exchange ends.
import { globMatcher, headerValue, headerValues } from '../../core/index.js';
import type { Fact } from '../../proxy/index.js';
import type { Recording } from '../record/index.js';
import { liveResponse } from '../replay/index.js';
import { BIND_READ_BYTES, ClientSends, setCookiePair, tokensOf, type ResponseView } from '../../diff/index.js';
import { bodyTokens, headTokens, type MirrorRequest, type MirroredSocket, type MirrorTarget } from './mirror.js';
import { eventFeed, grpcFeed } from './message-pairs.js';
import { grpcMedia } from '../../capture/index.js';
import type { MirroredStream } from './mirror-h2.js';
import { routePath } from './route.js';
import { safe } from './safe.js';

/** Which requests are mirrored: safe methods, all, or safe plus routes ("POST /search", globs). */
export type MirrorPolicy = 'safe' | 'all' | string[];

/** What the tee decides by: which requests to mirror, sampling, caps. */
export interface TeeOptions {
  /** Which requests to mirror (default 'safe'). */
  mirror?: MirrorPolicy;
  /** Share of exchanges mirrored, 0..1 (default 1). */
  sample?: number;
  /** Sample by a header's or cookie's value (all of a user's requests or none), instead of at random. */
  sampleBy?: { kind: 'header' | 'cookie'; name: string };
  /** Mirrored requests in flight per target, at most (default 256). */
  maxInFlight?: number;
  /** Bytes of mirrored requests queued per target, at most (default 64 MiB); the bodies of requests still arriving that the tee holds to mirror, at most as many in all. */
  maxQueuedBytes?: number;
  /** Request bodies larger than this are not mirrored ("too large"; default 8 MiB). */
  maxMirrorBody?: number;
}

/** What the tee knows of one primary exchange. */
interface Pending {
  req: MirrorRequest;
  skip?: string;
  /** The request body so far, joined once when the request is handed over. */
  bodyChunks: Buffer[];
  bodyBytes: number;
  /** Bytes of bodyChunks counted in the tee's `gathered` (a body held to be mirrored, or read for binding). */
  gathered: number;
  requestEnded: boolean;
  responded: boolean;
  dispatched: boolean;
  /** The primary's answer (head and the start of its body, of `responseBytes` in all), for binding. */
  status?: number;
  responseHeaders?: string[];
  responseBody: Buffer[];
  responseBytes: number;
  /** Mirror answers waiting for the primary's to finish. */
  answers: Array<{ target: MirrorTarget; view: ResponseView }>;
  primaryView?: ResponseView;
  /** An event stream, or a gRPC call over h2 (its answer as binary messages): what its answer streams, known at its head. */
  stream?: 'sse' | 'grpc';
  /** With `stream`: ends the mirrors' copies when the primary's stream ends. */
  streamEnd?: AbortController;
  /** A mirrored event stream's events as its client got them (plain text only), and each target's copy's, cut alike (cutCopies). */
  eventsSeen?: number;
  copies?: Array<{ n: number; want?: number; cut: AbortController }>;
  /** WebSocket: each target's side. */
  sockets?: Promise<Array<MirroredSocket | undefined>>;
  /** WebSocket: the primary's server sent its close frame (a client close after it answers it). */
  serverClosed?: boolean;
  /** HTTP/2 (one stream): true. */
  h2: boolean;
  /** An event stream's events or a gRPC call's messages, read as they cross: fed to each target's pairs (message-pairs.ts). */
  events?: (chunk: Buffer) => void;
  /** HTTP/2, mirrored before the client's request ended: each target's stream, taking the rest as it crosses. */
  streams?: MirroredStream[];
  /** The tee's tick when the primary's exchange ended (what its answer issued, it issued then: ClientSends). */
  issuedAt?: number;
  /** Sampled by a cookie: decided at the answer's head, by the cookie it sets, else the one the request carried (sampleByAnswer). */
  sampleOnAnswer?: boolean;
}

/** What decide says of a request sampled by a cookie, which its answer may set: decided at the answer's head. */
const ON_ANSWER = Symbol('on answer');

/** How long after the primary's event stream ended otherwise (the primary failed; a coded stream its client left) the mirrors' copies are ended. */
const STREAM_END_GRACE_MS = 250;
/**
 * How long a copy of an event stream may take to catch up: one its client left, to reach as many events as the
 * client got; one the primary's server ended, to end on its own (a target 300 ms behind had its copy cut at a
 * quarter second and every event after the cut reported removed).
 */
const STREAM_CUT_WAIT_MS = 5_000;

/** Reads the primary's facts and hands requests to the mirrors; never waits for them. */
export class Tee {
  /** What the primary's client sent first, and when (on its clock): a value it sent before an answer or a stream's message issued it is its own, never learned (ClientSends). */
  private readonly sends = new ClientSends();
  private readonly pending = new Map<number, Pending>();
  /** Bytes of request bodies held across the requests still arriving, to mirror them or read them for binding (Pending.gathered). */
  private gathered = 0;
  private readonly optIn: Array<(route: string) => boolean>;
  constructor(
    private readonly primary: Recording,
    private readonly mirrors: MirrorTarget[],
    private readonly opts: TeeOptions,
    /** Runs work that can wait until the primary's answers of this turn are out (after-turn.ts); default at once. */
    private readonly later: (job: () => void) => void = (job) => job(),
  ) {
    const m = opts.mirror ?? 'safe';
    this.optIn = Array.isArray(m) ? m.map((g) => globMatcher(g)) : [];
    for (const target of mirrors) target.bindings.sends = this.sends;
  }

  fact(f: Fact): void {
    switch (f.type) {
      case 'exchange-started': {
        const id = this.primary.seqOf(f.exchangeId);
        if (id === undefined) return;
        const req: MirrorRequest = { id, connection: f.connectionId, method: f.method, target: f.target, version: f.httpVersion, rawHeaders: f.rawHeaders, body: Buffer.alloc(0), trailers: [] };
        // What the client sends, mirrored or not, counts toward its own values (its body too, once handed over).
        this.sends.note(headTokens(req), this.sends.tick());
        const p: Pending = { req, bodyChunks: [], bodyBytes: 0, gathered: 0, requestEnded: false, responded: false, dispatched: false, responseBody: [], responseBytes: 0, answers: [], h2: f.stream !== undefined };
        const decided = this.decide(f);
        if (decided === ON_ANSWER) p.sampleOnAnswer = true;
        else p.skip = decided;
        this.primary.tag(f.exchangeId, p.skip ? { id, skipped: p.skip } : { id });
        this.pending.set(f.exchangeId, p);
        if (!p.skip && f.upgrade) p.sockets = Promise.all(this.mirrors.map((m) => m.openWebSocket(req)));
        return;
      }
      case 'request-body': {
        const p = this.pending.get(f.exchangeId);
        if (!p || p.req.rawHeaders.length === 0) return;
        if (p.skip) {
          // Not mirrored: its body still says what the client chose (a name it signed up with); kept up to what binding
          // reads, and within what the tee holds of arriving bodies in all (past it, not read for binding).
          p.bodyBytes += f.chunk.length;
          if (p.bodyBytes > BIND_READ_BYTES || !this.hold(p, f.chunk)) {
            this.ungather(p);
            p.bodyChunks = [];
            p.bodyBytes = Infinity;
          }
          return;
        }
        if (p.streams) {
          // Mirrored already: the rest of the body crosses to the targets as it crosses to the primary, within each
          // target's queued-bytes cap (a target that stopped reading would have the shadow hold the rest).
          if (this.mirrors.some((m) => m.queued + f.chunk.length > this.queuedCap)) return this.dropMirrors(f.exchangeId, p, 'queue full');
          for (const s of p.streams) s.write(Buffer.from(f.chunk));
          return;
        }
        p.bodyBytes += f.chunk.length;
        if (p.bodyBytes > (this.opts.maxMirrorBody ?? 8 << 20)) {
          this.skip(f.exchangeId, p, 'too large');
          return;
        }
        // The bodies of requests still arriving, in all, held at most as many bytes as a target may queue: many
        // uploads at once each held up to the mirrored-body cap (1,000 of 8 MiB were 8 GB of the shadow's memory).
        if (!this.hold(p, f.chunk)) this.skip(f.exchangeId, p, 'queue full');
        return;
      }
      case 'request-ended': {
        const p = this.pending.get(f.exchangeId);
        if (!p) return;
        p.requestEnded = true;
        p.req.trailers = f.rawTrailers;
        if (p.skip) this.noteUnmirroredBody(p);
        p.streams?.forEach((s) => s.end());
        this.maybeDispatch(f.exchangeId, p);
        return;
      }
      case 'response-started': {
        const p = this.pending.get(f.exchangeId);
        if (!p) return;
        p.responded = true;
        p.status = f.statusCode;
        p.responseHeaders = f.rawHeaders;
        if (p.sampleOnAnswer && !p.skip) this.sampleByAnswer(f.exchangeId, p, f.rawHeaders);
        // A final answer to an `Expect: 100-continue` request whose body has not come (a 413 before it): the client
        // does not send it (RFC 9110 §10.1.1), so the request as sent has a Content-Length and no body. Not
        // mirrored: a target got it with its length rewritten to 0, and identical builds differed in it.
        if (!p.skip && !p.h2 && !p.requestEnded && f.statusCode >= 200 && /^\s*100-continue\s*$/i.test(headerValue(p.req.rawHeaders, 'expect') ?? '')) {
          this.skip(f.exchangeId, p, 'body not sent');
        }
        // A stream lasts as long as its client stays: the mirrors' copies end when the primary's does. An event
        // stream, and a gRPC call over h2 (a server-streaming one its client cancels: the targets' calls are
        // cancelled too, as far as the client read, where before they ran to their end).
        const type = headerValue(f.rawHeaders, 'content-type') ?? '';
        p.stream = /^\s*text\/event-stream/i.test(type) ? 'sse' : p.h2 && grpcMedia(type)?.text === false ? 'grpc' : undefined;
        if (p.stream) {
          p.streamEnd = new AbortController();
          p.req.ended = p.streamEnd.signal;
        }
        this.maybeDispatch(f.exchangeId, p);
        return;
      }
      case 'response-body': {
        const p = this.pending.get(f.exchangeId);
        if (!p || p.skip) return;
        // Decoded at once (the parser keeps text, not the tap's bytes).
        p.events?.(f.chunk);
        // Every byte counts (past BIND_READ_BYTES the kept start is read as cut); only the start is kept.
        const room = BIND_READ_BYTES - p.responseBytes;
        p.responseBytes += f.chunk.length;
        if (room > 0) p.responseBody.push(Buffer.from(f.chunk.subarray(0, room)));
        return;
      }
      case 'exchange-completed':
      case 'exchange-failed':
      case 'exchange-aborted': {
        const p = this.pending.get(f.exchangeId);
        if (!p) return;
        if (p.sockets) {
          // A WebSocket's exchange ends when it closes: close each target's side too.
          void p.sockets.then((ss) => ss.forEach((s) => s?.close()));
          this.ungather(p);
          this.pending.delete(f.exchangeId);
          return;
        }
        if (p.streams && f.type !== 'exchange-completed') p.streams.forEach((s) => s.abort());
        else p.streams?.forEach((s) => s.end());
        p.streams = undefined;
        p.requestEnded = true;
        p.responded = true;
        this.maybeDispatch(f.exchangeId, p);
        p.issuedAt = this.sends.tick();
        // A stream its client left (an SSE page closed) is compared as far as the client read it: each target's
        // copy is cut once it has as many events (STREAM_CUT_WAIT_MS at most), as bb replay cuts its copy. One the
        // primary's server ended is the targets' to end too: a slower target's copy is cut only if it has not
        // ended STREAM_CUT_WAIT_MS later (a copy that runs on is the target's difference, not bb's).
        const end = p.streamEnd;
        if (end && f.type === 'exchange-aborted' && p.copies) this.cutCopies(p);
        else if (end) setTimeout(() => end.abort(), f.type === 'exchange-completed' ? STREAM_CUT_WAIT_MS : STREAM_END_GRACE_MS).unref();
        this.ungather(p);
        this.pending.delete(f.exchangeId);
        if (f.type !== 'exchange-completed' || p.status === undefined || !p.responseHeaders || p.skip) {
          p.responseBody = [];
          p.answers = [];
          return;
        }
        // Decoding the primary's answer and binding waits for the client to have it; answers still to come
        // bind through the closure send() holds on `p` (they queue on p.answers until primaryView is set).
        this.later(() => {
          // Cut at BIND_READ_BYTES: read up to the cut (a gzip stream's start inflates, a JSON text's complete part parses).
          p.primaryView = liveResponse(p.status!, p.responseHeaders!, Buffer.concat(p.responseBody), p.responseBytes > BIND_READ_BYTES).view;
          for (const a of p.answers) a.target.bind(p.primaryView, a.view, p.issuedAt);
          // Targets still to answer: a request on another connection carrying this answer's values waits for theirs (answer-wait.ts).
          if (p.dispatched) for (const m of this.mirrors) m.primaryAnswered(p.req.id, p.primaryView);
          p.responseBody = [];
          p.answers = [];
        });
        return;
      }
      case 'upgrade-closed': {
        // A WebSocket's conversation ended (close frames both ways, or its sockets just ended): each target's side
        // ends too, and the tee forgets it (upgraded exchanges end here, not with exchange-completed).
        const p = this.pending.get(f.exchangeId);
        if (!p) return;
        void p.sockets?.then((ss) => ss.forEach((s) => s?.end()));
        this.ungather(p);
        this.pending.delete(f.exchangeId);
        return;
      }
      case 'ws-message': {
        const p = this.pending.get(f.exchangeId);
        if (!p?.sockets) return;
        if (f.direction !== 'send') {
          if (f.opcode === 8) p.serverClosed = true;
          // The primary's server messages, in the order the client's go (one promise's turns): a value one issues binds with the target's (mirror-ws.ts).
          if ((f.opcode !== 1 && f.opcode !== 2) || p.skip) return;
          // Decoded now, once for every target (the tap's bytes are its own again after this turn).
          const said = f.opcode === 1 && f.size === undefined ? f.data.toString('utf8') : undefined;
          // When it crossed, on the clock of what the client sent (its tick taken now, not in the promise's turn).
          const at = this.sends.tick();
          void p.sockets.then((ss) => ss.forEach((s) => s?.heard(said, at)));
          return;
        }
        // What the client says on a socket is its own from now (a nick it joins with).
        if (f.opcode === 1 && f.size === undefined && f.data.length <= BIND_READ_BYTES) this.sends.note(tokensOf(f.data.toString('utf8')), this.sends.tick());
        if (p.skip) return;
        if (f.opcode === 8) {
          // The client's close starts the handshake, or answers the primary's server's close: then each target's server
          // is left to close its side itself, as the primary's did (its code and who closed are compared).
          const answer = p.serverClosed === true;
          void p.sockets.then((ss) => ss.forEach((s) => (answer ? s?.answerClose(f.closeCode, f.closeReason) : s?.close(f.closeCode, f.closeReason))));
          return;
        }
        // A message the tap kept only the start of cannot be mirrored whole; one that would take a target past the
        // queued-bytes cap (a target that stopped reading) would grow the shadow's memory without end. Either drops
        // the conversation's mirrors, all targets alike (a comparison needs every side), from here on.
        const n = f.data.length;
        const why = f.size !== undefined ? 'too large' : this.mirrors.some((m) => m.queued + n > this.queuedCap) ? 'queue full' : undefined;
        if (why) return this.dropMirrors(f.exchangeId, p, why);
        const data = Buffer.from(f.data);
        const sent = this.mirrors.map((m) => m.messageQueued(n));
        void p.sockets.then((ss) => ss.forEach((s, i) => (s ? s.send(f.opcode, data, sent[i]) : sent[i]!())));
        return;
      }
      case 'connection-closed':
        for (const m of this.mirrors) m.connectionClosed(f.connectionId);
        return;
      default:
        return;
    }
  }

  /** Cuts each target's copy of an event stream its client left after as many events as the client got. */
  private cutCopies(p: Pending): void {
    for (const c of p.copies!) {
      c.want = p.eventsSeen!;
      if (c.n >= c.want) c.cut.abort();
    }
    setTimeout(() => p.streamEnd!.abort(), STREAM_CUT_WAIT_MS).unref();
  }

  /** Why a request is not mirrored, or undefined; ON_ANSWER when its answer's head decides (sampleByAnswer). */
  private decide(f: Extract<Fact, { type: 'exchange-started' }>): string | typeof ON_ANSWER | undefined {
    // A server push is the server's own promise, not a request of the client's.
    if (f.pushedBy !== undefined) return 'server push';
    const policy = this.opts.mirror ?? 'safe';
    if (policy !== 'all' && !safe(upgradeMethod(f), f.rawHeaders) && !this.optedIn(f)) return 'unsafe';
    const share = this.opts.sample ?? 1;
    if (share < 1) {
      const by = this.opts.sampleBy;
      // By a cookie: decided at the answer's head (sampleByAnswer), since the answer may set it (a login, a new
      // session), and the session it starts is the user's (not a WebSocket's: its mirrors open with the upgrade).
      if (by?.kind === 'cookie' && !f.upgrade) return ON_ANSWER;
      const key = by ? (by.kind === 'header' ? headerValue(f.rawHeaders, by.name) : cookieValue(headerValue(f.rawHeaders, 'cookie'), by.name)) : undefined;
      const x = key !== undefined ? fraction(key) : by ? 1 : Math.random();
      if (x >= share) return 'sampled out';
    }
    return undefined;
  }

  /**
   * A request sampled by a cookie, at its answer's head: by the value the answer sets the cookie to (a login, a new
   * session: the user's later requests carry that value, so each target must start its own session then), else by
   * the value the request carried, else out. Mirrors go at the answer's head anyway, so nothing waited for this.
   */
  private sampleByAnswer(exchangeId: number, p: Pending, rawHeaders: string[]): void {
    const name = this.opts.sampleBy!.name;
    // The last Set-Cookie of that name wins, as in a browser.
    const set = headerValues(rawHeaders, 'set-cookie').map(setCookiePair).filter((pair) => pair?.name === name).at(-1)?.value;
    const value = set ?? cookieValue(headerValue(p.req.rawHeaders, 'cookie'), name);
    if (value !== undefined && fraction(value) < (this.opts.sample ?? 1)) return;
    // Its body, whole already, was kept for the mirrors: noted now as a not-mirrored request's is at its end.
    if (p.requestEnded) this.noteUnmirroredBody(p);
    this.skip(exchangeId, p, 'sampled out');
  }

  /** Whether an unsafe request's route ("POST /items/{id}") is opted in; made only here (for every exchange, routePath was 1.2 % of the shadow's main thread: bench/shadow-profile.ts). */
  private optedIn(f: Extract<Fact, { type: 'exchange-started' }>): boolean {
    if (this.optIn.length === 0) return false;
    const route = `${upgradeMethod(f)} ${routePath(f.target)}`;
    return this.optIn.some((m) => m(route));
  }

  /** What a request not mirrored sent in its body still counts toward its client's own values (up to what binding reads). */
  private noteUnmirroredBody(p: Pending): void {
    if (p.bodyChunks.length === 0 || p.bodyBytes > BIND_READ_BYTES) return;
    this.sends.note(bodyTokens({ ...p.req, body: Buffer.concat(p.bodyChunks) }), this.sends.tick());
    p.bodyChunks = [];
    this.ungather(p);
  }

  /** The queued-bytes cap: per target, and for the bodies of arriving requests in all. */
  private get queuedCap(): number {
    return this.opts.maxQueuedBytes ?? 64 << 20;
  }

  // Holds a chunk of an arriving request's body, counted in `gathered`; false (nothing held) when it would pass the cap.
  private hold(p: Pending, chunk: Buffer): boolean {
    if (this.gathered + chunk.length > this.queuedCap) return false;
    p.bodyChunks.push(Buffer.from(chunk));
    p.gathered += chunk.length;
    this.gathered += chunk.length;
    return true;
  }

  // A gathered body is handed over or dropped: it no longer counts.
  private ungather(p: Pending): void {
    this.gathered -= p.gathered;
    p.gathered = 0;
  }

  /**
   * Drops the mirrors of a WebSocket conversation or of an h2 stream still arriving, part-way: each target's side is
   * cut and its capture's exchange tagged, the primary's too, so the exchange counts as skipped (why) and neither
   * the live comparison nor `bb diff` of the captures compares the part that went.
   */
  private dropMirrors(exchangeId: number, p: Pending, why: string): void {
    p.skip = why;
    this.primary.tag(exchangeId, { id: p.req.id, skipped: why });
    if (p.streams) {
      for (const m of this.mirrors) m.dropMirror(p.req.id, why);
      p.streams.forEach((s) => s.abort());
      p.streams = undefined;
    }
    void p.sockets?.then((ss) =>
      ss.forEach((s, i) => {
        // Once open (a conversation still opening when dropped has no exchange on the target yet).
        this.mirrors[i]!.dropMirror(p.req.id, why);
        s?.drop();
      }),
    );
  }

  private skip(exchangeId: number, p: Pending, why: string): void {
    p.skip = why;
    // Dropped part-way: none of the rest is kept (a body's tail alone is not what binding reads).
    this.ungather(p);
    p.bodyChunks = [];
    p.bodyBytes = Infinity;
    this.primary.tag(exchangeId, { id: p.req.id, skipped: why });
  }

  private maybeDispatch(exchangeId: number, p: Pending): void {
    // An h2 stream goes at the response head even while its request is still arriving (a streaming call).
    if (p.dispatched || p.skip || p.sockets || (!p.requestEnded && !p.h2) || !p.responded) return;
    p.dispatched = true;
    const cap = this.opts.maxInFlight ?? 256;
    const bytes = this.queuedCap;
    p.req.body = p.bodyChunks.length === 1 ? p.bodyChunks[0]! : Buffer.concat(p.bodyChunks);
    p.bodyChunks = [];
    this.ungather(p);
    // Its body's values are the client's from now, mirrored or not (read up to what binding reads at all; its head was noted at its start).
    if (p.req.body.length > 0 && p.req.body.length <= BIND_READ_BYTES) this.sends.note(bodyTokens(p.req), this.sends.tick());
    // All targets or none: a comparison needs every answer.
    if (this.mirrors.some((m) => m.inFlight >= cap || m.queued + p.bodyBytes > bytes)) {
      p.req.body = Buffer.alloc(0);
      this.skip(exchangeId, p, 'queue full');
      return;
    }
    const live = !p.requestEnded;
    const streams: MirroredStream[] = [];
    // An event stream's events (HTTP/1.1 or h2), and a gRPC call's messages, issue values its client sends back while it goes on:
    // bound message by message, not at its end.
    const headers = p.responseHeaders ?? [];
    const sse = p.stream === 'sse' && headerValue(headers, 'content-encoding') === undefined;
    const grpc = p.h2 && grpcMedia(headerValue(headers, 'content-type'));
    // Whose messages are counted, to cut the copies as far as the primary's client read (cutCopies): an event
    // stream's events, a gRPC call's answer messages.
    const counted = sse || p.stream === 'grpc';
    const encoding = grpc && !grpc.text ? headerValue(headers, 'grpc-encoding') : undefined;
    const said = sse || (grpc && !grpc.text) ? this.mirrors.map((m) => m.streams.add()) : undefined;
    const feed = (f: (message: string | Uint8Array | undefined) => void) => (sse ? eventFeed(f) : grpcFeed(encoding, f));
    // An event stream's events are counted as they are paired (a coded stream's are not: its copies end with it, as
    // any stream's do), and so are each copy's, to be cut as far as the primary's client read (cutCopies).
    if (said) {
      p.events = feed((message) => {
        if (counted) p.eventsSeen!++;
        said.forEach((s) => s.pairs.primary(message));
      });
    }
    if (counted) {
      p.eventsSeen = 0;
      const end = p.streamEnd!.signal;
      p.copies = this.mirrors.map(() => ({ n: 0, cut: new AbortController() }));
      for (const c of p.copies) end.addEventListener('abort', () => c.cut.abort(), { once: true });
    }
    for (const [i, m] of this.mirrors.entries()) {
      const onAnswer = (view: ResponseView | undefined) => {
        // The target's copy of the stream ended (or was cut with the primary's): nothing more to wait for on it.
        said?.[i]!.done();
        if (!view) return;
        if (p.primaryView) m.bind(p.primaryView, view, p.issuedAt);
        else p.answers.push({ target: m, view });
      };
      const copy = p.copies?.[i];
      const onBody = said
        ? feed((message) => {
            said[i]!.pairs.target(message);
            if (copy && ++copy.n === copy.want) copy.cut.abort();
          })
        : undefined;
      if (!p.h2) m.send(p.req, onAnswer, onBody, copy?.cut.signal);
      else {
        const s = m.sendH2(p.req, live, onAnswer, onBody, copy?.cut.signal);
        if (s) streams.push(s);
      }
    }
    if (live) p.streams = streams;
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  return (header ?? '').split(';').map(setCookiePair).find((pair) => pair?.name === name)?.value;
}

/** A stable fraction 0..1 of a string (FNV-1a, then murmur3's finalizer), so one user's requests are all in or all out. */
function fraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  // FNV-1a's last character only moves the high bits a little: users "user-0" … "user-9" (or ids 42, 43, 44)
  // all fell within 4 % of each other, so --sample 0.5 mirrored all of them or none. The finalizer spreads them.
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 0x1_0000_0000;
}

/**
 * A request's method as the mirror policy reads it: a WebSocket's extended CONNECT over HTTP/2 (RFC 8441) is the
 * GET of its HTTP/1.1 upgrade (the mirrors open it so, and `bb diff` compares the two alike), a safe method.
 */
function upgradeMethod(f: Extract<Fact, { type: 'exchange-started' }>): string {
  return f.upgrade && f.method === 'CONNECT' ? 'GET' : f.method;
}
