// The replay's driver: one async loop per lane, each exchange started when
// what happened before it in the original has happened again (its waits),
// and not before its original time under --pace original / Nx. HTTP goes
// through one socket per lane (connection.ts: one connection, as the
// original had, the head as recorded), WebSockets through ws.ts. A request
// the original client aborted is cut after the same time; every exchange is
// bounded by --timeout; Ctrl-C cuts whatever is waited on. Entries recorded
// over HTTP/2 go over HTTP/2 (h2.ts): one session per original connection,
// shared by its lanes, so streams overlap on it as they did. Nothing here
// throws for a failed exchange: failures are counted and the replay goes on,
// so the capture holds everything that crossed.
import type { Correlation } from './correlate.js';
import type { ReplayPlan, Waits } from './plan.js';
import { LaneConnection, type CutReason } from './connection.js';
import { liveResponse, requestParts, wireRequest, withHeaders } from './request.js';
import { H2Connection, h2Request, isHttp2 } from './h2.js';
import { replayWebSocket, waitUntil } from './ws.js';
import { grpcMessageFeed, type HarEntry } from '../../capture/index.js';
import { pairValue } from '../../core/index.js';
import { BIND_READ_BYTES } from '../../diff/index.js';

/** How the driver runs. */
export interface DriveReplayOptions {
  /** The recording proxy's URL. */
  proxyUrl: string;
  /** The Host requests carry (the target's host). */
  host: string;
  /** The target's scheme: an HTTP/2 request's :scheme (default http). */
  scheme?: 'http' | 'https';
  /** False when the target does not speak HTTP/2: entries recorded over it go as HTTP/1.1 (default true). */
  http2?: boolean;
  /** 0 = asap (order only); 1 = original gaps; 2 = twice as fast. */
  speed: number;
  /** WebSocket pacing. */
  ws: 'wait' | 'timing';
  /** Bound on each wait for the target (a response, a server message), ms. */
  waitMs: number;
  /** Bound on one HTTP exchange, ms (--timeout). */
  timeoutMs: number;
  /** --header overrides. */
  headers: ReadonlyArray<[string, string]>;
  /** The correlation. */
  correlation: Correlation;
  /** Starts a step (the original's page titles). */
  step(title: string): void;
  /** Exchanges done so far. */
  onProgress?(done: number, total: number): void;
  /** Stops the replay (Ctrl-C): exchanges under way are cut, lanes stop, waits end. */
  signal?: AbortSignal;
}

/** What the driver did. */
export interface DriveReplayResult {
  /** Exchanges that got a response (whatever its status). */
  replayed: number;
  /** Exchanges that got none, and why. */
  failed: Array<{ entry: string; reason: string }>;
  /** WebSocket messages sent and received. */
  webSocketMessages: number;
  /** Waits that ran out. */
  timeouts: Array<{ what: string; waitedMs: number }>;
  /** Exchanges cut before their response ended: as the original client did, or by --timeout. */
  cut: Array<{ entry: string; why: Exclude<CutReason, 'interrupted'>; afterMs: number }>;
}

/** A promise with its resolver. */
/** What the original client had read of a response it aborted (bytes as they crossed, an event stream's events), or undefined when nothing. */
function readBeforeAbort(entry: HarEntry): { bytes: number; events?: number } | undefined {
  const bytes = Math.max(0, entry.response?.bodySize ?? 0);
  const events = entry._eventSourceMessages?.length;
  if (events) return { bytes, events };
  return bytes > 0 ? { bytes } : undefined;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Sleeps, cut short when `signal` aborts (Ctrl-C must not wait out a long original gap). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Re-drives the plan; resolves when every lane is done. */
export async function driveReplay(plan: ReplayPlan, opts: DriveReplayOptions): Promise<DriveReplayResult> {
  const n = plan.exchanges.length;
  const done = Array.from({ length: n }, deferred);
  const isDone = new Uint8Array(n);
  // Per WebSocket exchange: server messages received, and who waits on them.
  const received = new Map<number, number>();
  const receiveWaiters = new Map<number, Set<() => void>>();
  const result: DriveReplayResult = { replayed: 0, failed: [], webSocketMessages: 0, timeouts: [], cut: [] };
  let finished = 0;
  let page: string | undefined;
  // The schedule starts when the first exchange does: start-up is not taken from the first gap.
  let t0: number | undefined;
  const proxy = new URL(opts.proxyUrl);
  // Ctrl-C ends every wait at once (another lane's exchange, a server message).
  const interrupted = new Promise<void>((resolve) => {
    if (opts.signal?.aborted) resolve();
    else opts.signal?.addEventListener('abort', () => resolve(), { once: true });
  }).then(() => receiveWaiters.forEach((set) => set.forEach((w) => w())));

  const finish = (i: number) => {
    isDone[i] = 1;
    done[i]!.resolve();
    receiveWaiters.get(i)?.forEach((w) => w());
    opts.onProgress?.(++finished, n);
  };

  const waitFor = async (waits: Waits, what: string): Promise<void> => {
    for (const a of waits.after) if (!isDone[a]) await Promise.race([done[a]!.promise, interrupted]);
    for (const { exchange, count } of waits.received) {
      if (opts.signal?.aborted) return;
      if (isDone[exchange] || (received.get(exchange) ?? 0) >= count) continue;
      const t = performance.now();
      const set = receiveWaiters.get(exchange) ?? new Set<() => void>();
      receiveWaiters.set(exchange, set);
      const ok = await waitUntil(set, () => Boolean(isDone[exchange]) || (received.get(exchange) ?? 0) >= count || Boolean(opts.signal?.aborted), opts.waitMs);
      if (!ok) result.timeouts.push({ what: `${what}: waited for ${plan.exchanges[exchange]!.key}'s server message ${count}`, waitedMs: Math.round(performance.now() - t) });
    }
  };

  // One h2 session per original connection, shared by that connection's lanes; closed when every lane is done.
  const h2Sessions = new Map<string, H2Connection>();
  const h2For = (ex: ReplayPlan['exchanges'][number]): H2Connection => {
    const key = ex.entry.connection ?? `lane ${ex.lane}`;
    let session = h2Sessions.get(key);
    if (!session) h2Sessions.set(key, (session = new H2Connection(opts.proxyUrl)));
    return session;
  };

  const runLane = async (lane: number[]): Promise<void> => {
    const connection = new LaneConnection(proxy.hostname.replace(/^\[|\]$/g, ''), Number(proxy.port || 80));
    try {
      for (const i of lane) {
        const ex = plan.exchanges[i]!;
        if (!opts.signal?.aborted) {
          await waitFor(ex.waits, ex.key);
          t0 ??= performance.now() - ex.offsetMs / (opts.speed || 1);
          if (opts.speed > 0) await sleep(t0 + ex.offsetMs / opts.speed - performance.now(), opts.signal);
        }
        if (opts.signal?.aborted) {
          result.failed.push({ entry: ex.key, reason: 'the replay was interrupted' });
          finish(i);
          continue;
        }
        if (ex.page !== undefined && ex.page !== page) {
          page = ex.page;
          opts.step(ex.page);
        }
        if (ex.ws) {
          const ws = await replayWebSocket(ex, {
            proxyUrl: opts.proxyUrl,
            host: opts.host,
            headers: opts.headers,
            correlation: opts.correlation,
            mode: opts.ws,
            waitMs: opts.waitMs,
            speed: opts.speed,
            waitFor,
            onReceived: (count) => {
              received.set(i, count);
              receiveWaiters.get(i)?.forEach((w) => w());
            },
            onTimeout: (what, waitedMs) => result.timeouts.push({ what, waitedMs }),
            ...(opts.signal ? { signal: opts.signal } : {}),
          });
          if (ws.opened) result.replayed++;
          else result.failed.push({ entry: ex.key, reason: ws.reason ?? 'the WebSocket did not open' });
          result.webSocketMessages += ws.sent + ws.received;
          finish(i);
          continue;
        }
        const parts = requestParts(ex.entry.request);
        const sent = opts.correlation.rewriteRequest({ ...parts, headers: withHeaders(parts.headers, opts.headers) }, opts.correlation.replacementsFor(i));
        // The original client's patience: it gave up after entry.time, with no response (or not all of it). When it
        // had read some of it, the replay reads as much, then leaves (waiting for it up to --wait past that time).
        const aborted = ex.entry._bb?.aborted === 'client';
        const clientRead = aborted ? readBeforeAbort(ex.entry) : undefined;
        const clientAbortMs = aborted ? Math.max(0, ex.entry.time) + (clientRead ? opts.waitMs : 0) : undefined;
        const limits = {
          timeoutMs: opts.timeoutMs,
          ...(clientAbortMs !== undefined ? { clientAbortMs } : {}),
          ...(clientRead ? { clientRead } : {}),
          ...(opts.signal ? { signal: opts.signal } : {}),
        };
        // A gRPC call's messages: each client one with the values known when it goes, each server one learned as it
        // comes (one longer than BIND_READ_BYTES binds nothing).
        let r = 0;
        const heard = ex.entry._grpcMessages && grpcMessageFeed(pairValue(ex.entry.response.headers, 'grpc-encoding'), BIND_READ_BYTES, (m) => {
          const at = r++;
          if (m) opts.correlation.learnGrpcMessage(i, at, m);
        });
        const outcome = isHttp2(ex.entry) && opts.http2 !== false
          ? await h2For(ex).exchange(h2Request(ex.entry, sent, opts.host, opts.scheme ?? 'http', (m, k) => opts.correlation.rewriteGrpcMessage(m, opts.correlation.replacementsFor(i, k, true))), {
            ...limits, what: ex.key, waitMs: opts.waitMs, onTimeout: (what, waitedMs) => result.timeouts.push({ what, waitedMs }),
            ...(heard ? { onBody: heard } : {}),
          })
          : await connection.exchange(wireRequest(sent, opts.host), limits);
        if (outcome.kind === 'response') {
          const res = liveResponse(outcome.status, outcome.rawHeaders, outcome.body, outcome.truncated);
          if (res.proxyError) result.failed.push({ entry: ex.key, reason: `no response from the target (${res.proxyError})` });
          else {
            result.replayed++;
            opts.correlation.learnResponse(i, res.view);
          }
        } else if (outcome.kind === 'failed') result.failed.push({ entry: ex.key, reason: outcome.reason });
        else if (outcome.why === 'interrupted') result.failed.push({ entry: ex.key, reason: 'the replay was interrupted' });
        else {
          // What the target sent before the cut issued values as the original's did (an EventSource that read one event
          // and left sends its id back in Last-Event-ID): learned as far as it goes.
          const part = outcome.partial && liveResponse(outcome.partial.status, outcome.partial.rawHeaders, outcome.partial.body, true);
          if (part && !part.proxyError) opts.correlation.learnResponse(i, part.view);
          result.cut.push({ entry: ex.key, why: outcome.why, afterMs: outcome.afterMs });
          // Cut as the original was is the original's outcome; cut by --timeout is no response.
          if (outcome.why === 'timeout') result.failed.push({ entry: ex.key, reason: `no response within --timeout ${opts.timeoutMs} ms` });
        }
        finish(i);
      }
    } finally {
      connection.close();
    }
  };

  await Promise.all(plan.lanes.map(runLane));
  h2Sessions.forEach((s) => s.close());
  return result;
}
