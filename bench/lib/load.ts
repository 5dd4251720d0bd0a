// Load generators for the proxy benchmark, all run in the benchmark's own
// process (the client): autocannon for small HTTP exchanges (a well-kept
// generator), undici for big response bodies (autocannon's own parser tops
// out near 20 MiB/s here, below any proxy, where undici reads 5-8× more),
// and small bounded loops for SSE (time to first and last event) and
// WebSocket echo round trips (ws clients).
import http from 'node:http';
import { createRequire } from 'node:module';
import { Pool } from 'undici';
import { WebSocket } from 'ws';
import { percentile } from './stats.js';

/** What one workload run measured. */
export interface Measured {
  /** Operations completed (requests, streams or messages). */
  ops: number;
  /** Wall time of the run, s. */
  seconds: number;
  /** ops / seconds. */
  rate: number;
  /** Median latency, ms (SSE: time to the first event). */
  p50: number;
  /** 99th percentile latency, ms (SSE: time to the first event). */
  p99: number;
  /** Failed operations (errors, timeouts, non-2xx, wrong payloads). */
  errors: number;
  /** SSE only: median time to the last event, ms. */
  lastP50?: number;
  /** Each operation's latency, ms (undiciLoad only): rounds pooled give a run's quantiles from every sample. */
  latencies?: number[];
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  latency: { p50: number; p99: number };
  requests: { total: number };
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration?: number;
  amount?: number;
  method?: string;
  body?: Buffer;
  headers?: Record<string, string>;
  /** Requests per second over all connections, at most (autocannon paces them). */
  overallRate?: number;
}
interface AutocannonInstance extends Promise<AutocannonResult> {
  on(event: 'response', listener: () => void): void;
  stop(): void;
}
// autocannon is CommonJS without types: load it through require, typed by the little we use.
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: AutocannonOptions) => AutocannonInstance;

/** HTTP load with autocannon: keep-alive connections, for `seconds` or until `amount` responses. */
export async function httpLoad(opts: AutocannonOptions & { onResponse?: () => void }): Promise<Measured> {
  const started = performance.now();
  const { onResponse: _onResponse, ...options } = opts;
  // autocannon refuses `duration: undefined`: pass one of duration or amount.
  if (options.amount) delete options.duration;
  const instance = autocannon(options);
  if (opts.onResponse) instance.on('response', opts.onResponse);
  // With `amount`, autocannon ends on its next one-second tick after the last answer: the run's time is up to that answer.
  let lastAnswer = started;
  if (opts.amount) instance.on('response', () => (lastAnswer = performance.now()));
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  const ops = result.requests.total;
  return {
    ops,
    seconds,
    rate: ops / (opts.amount ? (lastAnswer - started) / 1000 : result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/**
 * GETs of `path` over `connections` keep-alive connections (undici), one
 * request at a time on each, for `seconds`; with `rate`, paced to that many
 * requests per second over all connections (an open load: latency at a load
 * the server keeps up with, measured to the microsecond, where autocannon
 * records whole milliseconds).
 */
export async function undiciLoad(origin: string, path: string, connections: number, seconds: number, rate?: number): Promise<Measured> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  // Each connection's interval between sends; their first sends spread over one interval.
  const interval = rate ? (connections * 1000) / rate : 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async (_, i) => {
        let next = started + (interval * i) / connections;
        while (performance.now() < until) {
          if (interval > 0) {
            const wait = next - performance.now();
            next += interval;
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            if (performance.now() >= until) break;
          }
          const t0 = performance.now();
          try {
            const res = await pool.request({ path, method: 'GET' });
            let size = 0;
            for await (const chunk of res.body) size += (chunk as Buffer).length;
            if (res.statusCode !== 200 || size === 0) errors++;
            else latencies.push(performance.now() - t0);
          } catch {
            errors++;
            // An error must not spin: wait a little before the next try.
            await new Promise((r) => setTimeout(r, 10));
          }
        }
      }),
    );
  } finally {
    await pool.close();
  }
  const elapsed = (performance.now() - started) / 1000;
  return {
    ops: latencies.length,
    seconds: elapsed,
    rate: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    latencies,
  };
}

/** `streams` SSE requests one after another on one keep-alive connection; each must carry `events` events. */
export async function sseLoad(base: string, streams: number, events: number): Promise<Measured> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const first = new Float64Array(streams);
  const last = new Float64Array(streams);
  let errors = 0;
  const started = performance.now();
  try {
    for (let i = 0; i < streams; i++) {
      const t0 = performance.now();
      const times = await new Promise<{ first: number; last: number; count: number }>((resolve, reject) => {
        const req = http.get(`${base}/sse?n=${events}`, { agent }, (res) => {
          let firstAt = Number.NaN;
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (Number.isNaN(firstAt)) firstAt = performance.now();
            text += chunk;
          });
          res.on('end', () => resolve({ first: firstAt, last: performance.now(), count: text.split('\n\n').length - 1 }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.setTimeout(30_000, () => req.destroy(new Error('SSE stream timed out')));
      }).catch(() => undefined);
      if (!times || times.count !== events) {
        errors++;
        first[i] = Number.NaN;
        last[i] = Number.NaN;
        continue;
      }
      first[i] = times.first - t0;
      last[i] = times.last - t0;
    }
  } finally {
    agent.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  const ok = (a: Float64Array): Float64Array => a.filter((v) => !Number.isNaN(v));
  const okFirst = ok(first);
  const okLast = ok(last);
  return {
    ops: okFirst.length,
    seconds,
    rate: okFirst.length / seconds,
    p50: percentile(okFirst, 50),
    p99: percentile(okFirst, 99),
    lastP50: percentile(okLast, 50),
    errors,
  };
}

/** `clients` WebSocket clients connected to `wsUrl` (no compression); rejects when one fails. */
function openClients(wsUrl: string, clients: number): Promise<WebSocket[]> {
  return Promise.all(
    Array.from({ length: clients }, () =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      }),
    ),
  );
}

/** `clients` WebSocket clients each doing `perClient` echo round trips of `size`-byte text messages. */
export async function wsEchoLoad(
  wsUrl: string,
  clients: number,
  perClient: number,
  size = 100,
  onMessage?: () => void,
  timeoutMs = 120_000,
): Promise<Measured> {
  const payload = 'm'.repeat(size);
  const sockets = await openClients(wsUrl, clients);
  const latencies = new Float64Array(clients * perClient);
  let filled = 0;
  let errors = 0;
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.all(
        sockets.map(
          (ws) =>
            new Promise<void>((resolve) => {
              let done = 0;
              let sentAt = 0;
              const send = (): void => {
                sentAt = performance.now();
                ws.send(payload);
              };
              ws.on('message', (data: Buffer) => {
                latencies[filled++] = performance.now() - sentAt;
                if (data.length !== size) errors++;
                onMessage?.();
                if (++done >= perClient) resolve();
                else send();
              });
              ws.once('close', () => {
                if (done < perClient) errors += perClient - done;
                resolve();
              });
              send();
            }),
        ),
      ),
      new Promise<void>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`WebSocket echo did not finish within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    for (const ws of sockets) ws.terminate();
  }
  const seconds = (performance.now() - started) / 1000;
  const measured = latencies.subarray(0, filled);
  return { ops: filled, seconds, rate: filled / seconds, p50: percentile(measured, 50), p99: percentile(measured, 99), errors };
}

/** What a paced WebSocket load did. */
export interface PacedWsResult {
  /** Messages sent by the clients. */
  sent: number;
  /** Echoes received back. */
  echoed: number;
  /** Sockets that failed or closed before the end. */
  errors: number;
  /** How long it ran, s. */
  seconds: number;
}

/**
 * `clients` WebSocket echo clients sending `perSecond` text messages of
 * `size` bytes in all, round-robin, until `stop()` (which waits up to 2 s for
 * the last echoes, then closes the sockets and waits for their handshakes).
 */
export async function wsPacedLoad(wsUrl: string, clients: number, perSecond: number, size = 100): Promise<{ stop(): Promise<PacedWsResult> }> {
  const payload = 'm'.repeat(size);
  let echoed = 0;
  let errors = 0;
  let stopping = false;
  const sockets = await openClients(wsUrl, clients);
  for (const ws of sockets) {
    ws.on('message', () => echoed++);
    ws.on('error', () => {});
    ws.once('close', () => {
      if (!stopping) errors++;
    });
  }
  const started = performance.now();
  let sent = 0;
  let turn = 0;
  // Every 10 ms, whatever is due by now: the rate holds even when a timer fires late.
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * perSecond) - sent;
    for (let i = 0; i < due; i++) {
      const ws = sockets[turn++ % sockets.length]!;
      if (ws.readyState === WebSocket.OPEN) ws.send(payload);
      sent++;
    }
  }, 10);
  return {
    async stop() {
      clearInterval(timer);
      const seconds = (performance.now() - started) / 1000;
      const until = performance.now() + 2_000;
      while (echoed < sent && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
      stopping = true;
      // Closed as a client does: each close handshake finished (at most 2 s) before the load says it is done.
      await Promise.all(
        sockets.map((ws) => new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          const timer = setTimeout(() => (ws.terminate(), resolve()), 2_000);
          ws.once('close', () => (clearTimeout(timer), resolve()));
          ws.close();
        })),
      );
      return { sent, echoed, errors, seconds };
    },
  };
}

/** One WebSocket client sending `count` two-byte messages through the proxy, a window of 1,000 unanswered at most. */
export async function converse(wsUrl: string, count: number): Promise<void> {
  const socket = new WebSocket(wsUrl, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let answered = 0;
  let sent = 0;
  await new Promise<void>((resolve, reject) => {
    const more = (): void => {
      while (sent < count && sent - answered < 1_000) socket.send(String(sent++ % 100).padStart(2, '0'));
    };
    socket.on('message', () => {
      if (++answered === count) resolve();
      else if (sent - answered < 500) more();
    });
    socket.once('error', reject);
    more();
  });
  socket.close();
  await new Promise((r) => socket.once('close', r));
}

/** `count` runs of `one`, `parallel` at a time (each worker starts the next as its last ends). */
export async function inParallel(count: number, parallel: number, one: () => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** Short WebSocket connections: `count` in all, `parallel` at a time, each one message and its echo. */
export async function shortConnections(wsUrl: string, count: number, parallel = 8): Promise<void> {
  await inParallel(count, parallel, () => converse(wsUrl, 1));
}
