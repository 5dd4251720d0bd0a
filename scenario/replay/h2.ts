// HTTP/2 replay (docs/replay.md "HTTP/2 and gRPC"): an entry recorded over
// HTTP/2 goes over HTTP/2. The replay speaks h2c with prior knowledge to bb's
// recording proxy, which taps it and speaks h2c to an http:// target or h2 by
// ALPN to an https:// one (proxy/h2-tap.ts), so what crosses is recorded as
// the original was. One H2Connection per original connection: the streams
// that shared one connection share one again, and the lanes of the plan keep
// them as concurrent as they were. A gRPC call's messages go one by one, each
// once the target has sent what the original server had before it (grpc.ts),
// and the call is cut at its deadline as the original client would cut it.
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { Readable } from 'node:stream';
import { pairValue } from '../../core/index.js';
import { grpcMedia, GrpcMessageCounter, type HarEntry } from '../../capture/index.js';
import { AnswerStart, armCut, clientReadUpTo, type CutReason, type ExchangeLimits, type ExchangeOutcome } from './connection.js';
import { grpcSends, grpcTimeoutLeft, grpcTimeoutMs, type GrpcSend } from './grpc.js';
import { bodyBytes, type RequestParts } from './request.js';
import { waitUntil } from './ws.js';

/** Whether an entry was recorded over HTTP/2 (bb writes "HTTP/2.0"; browsers "h2", "http/2.0"). */
export function isHttp2(entry: HarEntry): boolean {
  return /^(https?\/2(\.0)?|h2c?)$/i.test(entry.request.httpVersion ?? '');
}

/** The client connection preface (RFC 9113 §3.4) and an empty SETTINGS frame. */
const PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

/**
 * Whether the target speaks HTTP/2: to an http:// target, the h2c preface is
 * answered with a SETTINGS frame; an https:// one chooses h2 by ALPN (only
 * asked: the recording proxy checks its certificate). A target that does not
 * gets the HTTP/2 entries as HTTP/1.1, as a browser would fall back.
 */
export function speaksHttp2(target: URL, timeoutMs: number): Promise<boolean> {
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const secure = target.protocol === 'https:';
  const port = Number(target.port || (secure ? 443 : 80));
  return new Promise((resolve) => {
    const socket = secure
      ? tls.connect({ host, port, ALPNProtocols: ['h2', 'http/1.1'], rejectUnauthorized: false, ...(net.isIP(host) ? {} : { servername: host }) })
      : net.connect({ host, port });
    const timer = setTimeout(() => end(false), timeoutMs);
    const end = (yes: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(yes);
    };
    let head = Buffer.alloc(0);
    socket.once('error', () => end(false));
    socket.once('close', () => end(false));
    if (secure) socket.once('secureConnect', () => end((socket as tls.TLSSocket).alpnProtocol === 'h2'));
    else {
      socket.once('connect', () => socket.write(PREFACE));
      socket.on('data', (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        // The server's preface: a SETTINGS frame (type 4) on stream 0.
        if (head.length >= 9) end(head[3] === 4 && head.readUInt32BE(5) === 0);
      });
    }
  });
}

/** One request as it goes on an h2 stream. */
export interface H2Request {
  /** Header fields in order, pseudo-headers first, names lower-case (RFC 9113 §8.2.1). */
  headers: Array<[string, string]>;
  /** The body, when not a gRPC call's messages. */
  body: Buffer;
  /** A gRPC call's client messages. */
  grpc?: GrpcSend[];
  /** Request trailers, as recorded (names lower-case). */
  trailers?: Array<[string, string]>;
  /** The call's grpc-timeout as recorded, and its budget in ms: the deadline the replay keeps. */
  deadline?: { recorded: string; ms: number };
  /** Body bytes still arriving after `body` (a mirrored stream as it crosses): piped on, the stream ends when it ends. */
  more?: Readable;
}

/** Fields HTTP/2 forbids (RFC 9113 §8.2.2): they are about an HTTP/1.1 connection. */
const CONNECTION_FIELDS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'http2-settings']);

/** The order a request's pseudo-headers go in when the capture has none (node:http2's). */
const PSEUDO_ORDER = [':method', ':authority', ':scheme', ':path'];

/**
 * An entry's request for an h2 stream: the recorded fields in their order
 * (after correlation and --header: `parts`), the pseudo-headers following the
 * target (`:authority`, `:scheme`) and the parts (`:method`, `:path`),
 * Content-Length set to the body's size, nothing HTTP/2 forbids; a gRPC
 * call's messages through `rewriteMessage` (correlation), framed again.
 */
export function h2Request(entry: HarEntry, parts: RequestParts, authority: string, scheme: 'http' | 'https', rewriteMessage?: (message: Buffer, k: number) => Buffer): H2Request {
  const recorded = (entry.request.headers ?? []).map((h) => h.name.toLowerCase()).filter((n) => n.startsWith(':'));
  const grpc = grpcSends(entry, rewriteMessage);
  const body = grpc ? Buffer.alloc(0) : bodyBytes(parts);
  // A call's messages are built as they go (their lengths follow the target's values): no Content-Length (gRPC sends none).
  const sent = grpc ? { ...parts, headers: parts.headers.filter(([n]) => n.toLowerCase() !== 'content-length') } : parts;
  const fields = h2Fields(recorded, (n) => pairValue(entry.request.headers, n), sent, authority, scheme, grpc ? undefined : body.length);
  return { ...fields, body, ...(grpc ? { grpc } : {}) };
}

/**
 * A request's fields for an h2 stream: the pseudo-headers in the order
 * `pseudo` names them (node:http2's when none), `:authority` and `:scheme`
 * following the target, `:method` and `:path` the parts', others from
 * `recorded`; then the parts' fields without what HTTP/2 forbids, Host as
 * the authority, Content-Length as `contentLength` (kept as sent when
 * undefined: a body still arriving), grpc-timeout read as the call's deadline.
 */
export function h2Fields(
  pseudo: string[],
  recorded: (name: string) => string | undefined,
  parts: RequestParts,
  authority: string,
  scheme: 'http' | 'https',
  contentLength: number | undefined,
): Pick<H2Request, 'headers' | 'deadline' | 'trailers'> {
  const order = pseudo.length ? [...new Set(pseudo)] : PSEUDO_ORDER;
  const values: Record<string, string> = { ':method': parts.method, ':path': parts.target, ':authority': authority, ':scheme': scheme };
  const headers: Array<[string, string]> = order.map((n) => [n, values[n] ?? recorded(n) ?? '']);
  let deadline: H2Request['deadline'];
  for (const [name, value] of parts.headers) {
    const lower = name.toLowerCase();
    if (lower.startsWith(':') || CONNECTION_FIELDS.has(lower) || (lower === 'te' && value.trim().toLowerCase() !== 'trailers')) continue;
    if (lower === 'host') headers.push([lower, authority]);
    else if (lower === 'content-length') headers.push([lower, contentLength === undefined ? value : String(contentLength)]);
    else headers.push([lower, value]);
    const ms = lower === 'grpc-timeout' ? grpcTimeoutMs(value) : undefined;
    if (ms !== undefined) deadline = { recorded: value, ms };
  }
  const trailers = parts.trailers?.map(([n, v]): [string, string] => [n.toLowerCase(), v]);
  return { headers, ...(deadline ? { deadline } : {}), ...(trailers?.length ? { trailers } : {}) };
}

/** How an h2 exchange is bounded and reports its waits, besides the cut (ExchangeLimits). */
export interface H2Limits extends ExchangeLimits {
  /** How the exchange is named in a wait that runs out. */
  what: string;
  /** Bound on each wait for the target's messages, ms. */
  waitMs: number;
  /** A wait that ran out. */
  onTimeout(what: string, waitedMs: number): void;
  /** Told the stream's id once it is opened, before its HEADERS reach the proxy (bb shadow tags the proxy's exchange by it). */
  onStream?(streamId: number): void;
}

/** Node's header object, in the order given, repeated names as lists. */
function headerObject(headers: Array<[string, string]>): http2.OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [n, v] of headers) {
    const had = out[n];
    out[n] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return out;
}

/** node:http2's received headers as a flat name/value list, without the pseudo-headers. */
function flatHeaders(headers: http2.IncomingHttpHeaders): string[] {
  const raw: string[] = [];
  for (const [n, v] of Object.entries(headers)) {
    if (n.startsWith(':') || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) raw.push(n, String(one));
  }
  return raw;
}

/** One original HTTP/2 connection, replayed: an h2c session to the recording proxy, opened when first used. */
export class H2Connection {
  private session: http2.ClientHttp2Session | undefined;

  /** `proxyUrl`: the recording proxy (http://host:port). */
  constructor(private readonly proxyUrl: string) {}

  /** Sends one request on a stream of its own and reads the response to its end; never throws. */
  exchange(req: H2Request, limits: H2Limits): Promise<ExchangeOutcome> {
    if (limits.signal?.aborted) return Promise.resolve({ kind: 'cut', why: 'interrupted', afterMs: 0 });
    const started = performance.now();
    // The call's deadline is the original client's patience too.
    const clientAbortMs = Math.min(limits.clientAbortMs ?? Infinity, req.deadline?.ms ?? Infinity);
    const bounded = { ...limits, ...(Number.isFinite(clientAbortMs) ? { clientAbortMs } : {}) };
    return new Promise<ExchangeOutcome>((resolve) => {
      let status = 0;
      let rawHeaders: string[] = [];
      const answer = new AnswerStart();
      let counter: GrpcMessageCounter | undefined;
      let received = 0;
      const waiters = new Set<() => void>();
      let settled = false;
      let stream: http2.ClientHttp2Stream | undefined;
      const finish = (outcome: ExchangeOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        limits.signal?.removeEventListener('abort', onAbort);
        waiters.forEach((w) => w());
        resolve(outcome);
      };
      const cut = (why: CutReason, boundMs = 0) => {
        // RST_STREAM(CANCEL): the proxy records the stream as aborted by the client, as it was.
        if (stream && !stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
        finish({
          kind: 'cut',
          why,
          afterMs: Math.max(boundMs, Math.round(performance.now() - started)),
          ...(status ? { partial: { status, rawHeaders, ...answer.body(), truncated: true } } : {}),
        });
      };
      const onAbort = () => cut('interrupted');
      const timer = armCut(bounded, cut);
      const readAll = clientReadUpTo(limits.clientRead);
      limits.signal?.addEventListener('abort', onAbort, { once: true });
      const headers = req.deadline
        ? req.headers.map(([n, v]): [string, string] => [n, n === 'grpc-timeout' ? grpcTimeoutLeft(req.deadline!.recorded, req.deadline!.ms, performance.now() - started) : v])
        : req.headers;
      try {
        stream = this.open().request(headerObject(headers), { endStream: false, ...(req.trailers ? { waitForTrailers: true } : {}) });
      } catch (err) {
        finish({ kind: 'failed', reason: `the request failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` });
        return;
      }
      // On a session already connected the stream opens within request(), before a listener could hear 'ready'.
      if (limits.onStream && stream.id !== undefined) limits.onStream(stream.id);
      else if (limits.onStream) stream.once('ready', () => limits.onStream!(stream!.id!));
      if (req.trailers) stream.once('wantTrailers', () => stream!.sendTrailers(headerObject(req.trailers!)));
      stream.on('response', (h) => {
        status = Number(h[':status']);
        rawHeaders = flatHeaders(h);
        if (grpcMedia(typeof h['content-type'] === 'string' ? h['content-type'] : undefined)) counter = new GrpcMessageCounter(false);
      });
      stream.on('data', (chunk: Buffer) => {
        answer.add(chunk);
        limits.onBody?.(chunk);
        if (readAll?.(chunk)) return cut('client');
        if (!counter) return;
        received += counter.feed(chunk);
        waiters.forEach((w) => w());
      });
      stream.on('end', () => {
        if (status) finish({ kind: 'response', status, rawHeaders, ...answer.body() });
      });
      stream.on('error', (err: NodeJS.ErrnoException) => finish({ kind: 'failed', reason: `the stream failed (${err.code ?? err.message})` }));
      stream.on('close', () => finish({ kind: 'failed', reason: `the stream closed before the response ended (RST_STREAM ${stream!.rstCode})` }));
      void this.send(stream, req, limits, () => received, waiters, () => settled);
    });
  }

  /** The local port of the session's socket (what the proxy's connection-opened fact calls remotePort), once connected. */
  get localPort(): number | undefined {
    return this.session?.socket?.localPort;
  }

  /** Closes the session (every lane of the connection is done). */
  close(): void {
    this.session?.close();
    this.session = undefined;
  }

  // The body, or the call's messages each once the target has sent what the original's server had before it.
  private async send(stream: http2.ClientHttp2Stream, req: H2Request, limits: H2Limits, received: () => number, waiters: Set<() => void>, settled: () => boolean): Promise<void> {
    if (req.more) {
      if (req.body.length) stream.write(req.body);
      req.more.pipe(stream);
      return;
    }
    if (!req.grpc) {
      stream.end(req.body);
      return;
    }
    for (const [k, m] of req.grpc.entries()) {
      if (received() < m.after) {
        const t = performance.now();
        const ok = await waitUntil(waiters, () => received() >= m.after || settled(), limits.waitMs);
        if (!ok) limits.onTimeout(`${limits.what} message ${k + 1}: waited for server message ${m.after} (${received()} arrived)`, Math.round(performance.now() - t));
      }
      if (settled()) return;
      stream.write(m.frame());
    }
    stream.end();
  }

  private open(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const session = http2.connect(this.proxyUrl);
    // A failed session fails its streams, which say so; the session's own error only ends it.
    session.on('error', () => {});
    session.once('close', () => {
      if (this.session === session) this.session = undefined;
    });
    this.session = session;
    return session;
  }
}
