// The scenario's WebSocket client (ws 8). Every received message is kept in
// order; `next` consumes them: it resolves with the first message after the
// previous match that satisfies the predicate, skipping the ones that do not,
// and waits (bounded) when none has arrived yet.
import type WebSocket from 'ws';
import { lazyModule } from '../../core/index.js';

// ws, loaded on the first WebSocket: a run without one never loads it.
const wsLib = lazyModule<typeof WebSocket>('ws', import.meta.url);

/** What `next` matches: a predicate, or an object whose fields must all be equal (shallow). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- predicates read messages of any shape
export type MessageMatch = ((msg: any) => boolean) | Record<string, unknown>;

/** Options of `t.ws(path, opts)`. */
export interface WsOptions {
  /** Extra headers on the upgrade request. */
  headers?: Record<string, string>;
  /** Subprotocols to offer. */
  protocols?: string | string[];
  /** Offer permessage-deflate (ws's default: true). */
  perMessageDeflate?: boolean;
  /** Bound on the opening handshake (default 10 s). */
  openTimeoutMs?: number;
}

/** An open WebSocket as a scenario sees it. */
export interface WsClient {
  /** The URL it is connected to. */
  readonly url: string;
  /** Every message received so far, parsed as JSON when it parses (binary stays a Buffer). */
  readonly received: unknown[];
  /** Sends an object as JSON, a string as text, a Buffer as binary. */
  send(data: unknown): void;
  /** Resolves with the next received message matching `match` (default: any), within timeoutMs (default 5 s). */
  next(match?: MessageMatch, timeoutMs?: number): Promise<any>;
  /** Closes (default code 1000) and resolves when the close handshake finished. */
  close(code?: number, reason?: string): Promise<void>;
}

/** Describes a match for messages: the object as JSON, or the predicate's name. */
function describeMatch(match: MessageMatch | undefined): string {
  if (match === undefined) return 'message';
  if (typeof match === 'function') return `message matching ${match.name || 'the predicate'}`;
  return `message like ${JSON.stringify(match)}`;
}

function matches(match: MessageMatch | undefined, msg: unknown): boolean {
  if (match === undefined) return true;
  if (typeof match === 'function') return match(msg);
  if (msg === null || typeof msg !== 'object') return false;
  return Object.entries(match).every(([k, v]) => (msg as Record<string, unknown>)[k] === v);
}

/** Opens a WebSocket to `url` and resolves once it is open. */
export async function openWs(url: string, opts: WsOptions = {}): Promise<WsClient> {
  const path = new URL(url).pathname;
  const socket = new (wsLib())(url, opts.protocols ?? [], {
    headers: opts.headers,
    perMessageDeflate: opts.perMessageDeflate ?? true,
    handshakeTimeout: opts.openTimeoutMs ?? 10_000,
  });
  const received: unknown[] = [];
  let cursor = 0;
  let closedInfo: { code: number; reason: string } | undefined;
  let wake: (() => void) | undefined;
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) received.push(data);
    else {
      const text = data.toString('utf8');
      try {
        received.push(JSON.parse(text));
      } catch {
        received.push(text);
      }
    }
    wake?.();
  });
  const closed = new Promise<void>((resolve) => {
    socket.on('close', (code, reason) => {
      closedInfo = { code, reason: reason.toString('utf8') };
      wake?.();
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', (err) => reject(new Error(`WebSocket ${path} did not open: ${err.message}`)));
  });
  socket.on('error', () => {
    // Reported through close; an unhandled 'error' would crash the run.
  });

  return {
    url,
    received,
    send(data: unknown) {
      if (socket.readyState !== socket.OPEN) throw new Error(`WebSocket ${path} is not open (cannot send)`);
      if (typeof data === 'string' || Buffer.isBuffer(data)) socket.send(data);
      else socket.send(JSON.stringify(data));
    },
    async next(match?: MessageMatch, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while (cursor < received.length) {
          const msg = received[cursor++];
          if (matches(match, msg)) return msg;
        }
        if (closedInfo) {
          throw new Error(`WebSocket ${path} closed (${closedInfo.code}) before a ${describeMatch(match)} arrived`);
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${describeMatch(match)} on WebSocket ${path} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    },
    async close(code = 1000, reason = '') {
      if (socket.readyState === socket.OPEN) socket.close(code, reason);
      const timer = setTimeout(() => socket.terminate(), 5000);
      await closed;
      clearTimeout(timer);
    },
  };
}
