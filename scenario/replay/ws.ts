// One replayed WebSocket conversation (ws 8): the upgrade as the original
// client wrote it (ws-upgrade.ts: bb's head writer, the recorded headers in
// their order and case, permessage-deflate offered as recorded), then the
// client's messages in order, ws speaking the frames. `--ws wait`
// sends client message k once the target has sent as many messages as the
// original server had before k (bounded; a wait that runs out is reported
// and the conversation goes on); `--ws timing` keeps the original gaps (at
// --pace's speed; under asap as recorded), and a message that sends back a
// value the target issued on the socket still waits for it (bounded).
// Text, binary and pings go as recorded (pongs are ws's own answers to the
// target's pings); the close carries the original code.
import { headerValue, lazyModule, pairValue, pairValues } from '../../core/index.js';
import type WebSocket from 'ws';
import type { Correlation } from './correlate.js';
import type { PlannedExchange, PlannedMessage, Waits } from './plan.js';
import { requestParts, withHeaders } from './request.js';
import { freshKey, openUpgrade, SwitchedSocket, upgradeRequest } from './ws-upgrade.js';

// ws, loaded on the first WebSocket: a run without one never loads it.
const wsLib = lazyModule<typeof WebSocket>('ws', import.meta.url);

/** What the conversation needs from the driver. */
export interface WsReplayContext {
  /** The recording proxy's URL (http://…). */
  proxyUrl: string;
  /** The Host the upgrade carries (the target's host, as every replayed request's). */
  host: string;
  /** --header overrides. */
  headers: ReadonlyArray<[string, string]>;
  /** The correlation (rewrites and learning); undefined with nothing to rewrite. */
  correlation: Correlation;
  /** wait | timing. */
  mode: 'wait' | 'timing';
  /** Bound on each wait for the target, ms. */
  waitMs: number;
  /** Gap scale: 1 keeps original gaps, 2 halves them; 0 (asap) keeps them in timing mode, which asks for them. */
  speed: number;
  /** Waits on other lanes (exchanges done, other sockets' progress). */
  waitFor(waits: Waits, what: string): Promise<void>;
  /** Called for each server message received (the driver's counts for other lanes). */
  onReceived(count: number): void;
  /** A wait that ran out. */
  onTimeout(what: string, waitedMs: number): void;
  /** Stops the conversation (Ctrl-C): the socket is closed at once with 1001 (going away). */
  signal?: AbortSignal;
}

/** How the conversation went. */
export interface WsReplayResult {
  /** False when the socket could not be opened (refused, not a 101). */
  opened: boolean;
  /** Why not, in a few words. */
  reason?: string;
  /** Client messages sent (data, ping, close). */
  sent: number;
  /** Server messages received (data, ping, pong). */
  received: number;
}

/**
 * ws options that match the original client's permessage-deflate offer (its
 * Sec-WebSocket-Extensions, RFC 7692 §7.1), which the upgrade carries as
 * recorded: ws then takes the target's answer to that offer, and checks it as
 * the offer allows; false when the original offered none.
 */
export function deflateOptions(entry: PlannedExchange['entry']): WebSocket.PerMessageDeflateOptions | false {
  const offer = pairValues(entry.request.headers, 'sec-websocket-extensions').join(', ');
  const first = offer.split(',').map((s) => s.trim()).find((s) => /^permessage-deflate\b/i.test(s));
  if (!first) return false;
  const params = new Map<string, string | true>();
  for (const part of first.split(';').slice(1)) {
    const [k, v] = part.split('=').map((x) => x.trim().replace(/^"|"$/g, ''));
    if (k) params.set(k.toLowerCase(), v ?? true);
  }
  const bits = (name: string): number | undefined => {
    const v = params.get(name);
    return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const client = params.get('client_max_window_bits');
  return {
    serverNoContextTakeover: params.has('server_no_context_takeover'),
    clientNoContextTakeover: params.has('client_no_context_takeover'),
    ...(bits('server_max_window_bits') ? { serverMaxWindowBits: bits('server_max_window_bits')! } : {}),
    // ws offers a bare client_max_window_bits unless told a number, or told false (not offered).
    ...(client === undefined ? { clientMaxWindowBits: false as unknown as number } : bits('client_max_window_bits') ? { clientMaxWindowBits: bits('client_max_window_bits')! } : {}),
    // Each message is compressed as the original chose (`compress` per send); ws's size threshold would skip small ones.
    threshold: 0,
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)).unref?.());

/** Re-drives one WebSocket exchange. */
export async function replayWebSocket(ex: PlannedExchange, ctx: WsReplayContext): Promise<WsReplayResult> {
  const parts = ctx.correlation.rewriteRequest(requestParts(ex.entry.request), ctx.correlation.replacementsFor(ex.i));
  const protocolHeader = pairValue(ex.entry.request.headers, 'sec-websocket-protocol');
  const protocols = protocolHeader ? protocolHeader.split(',').map((s) => s.trim()).filter(Boolean) : [];
  // The upgrade is bb's (ws-upgrade.ts): the recorded head, Host the target's, the key bb's own.
  const key = freshKey();
  const proxy = new URL(ctx.proxyUrl);
  const answer = await openUpgrade(proxy.hostname.replace(/^\[|\]$/g, ''), Number(proxy.port || 80), upgradeRequest({ ...parts, headers: withHeaders(parts.headers, ctx.headers) }, ctx.host, key), key, ctx.waitMs * 2);
  if (answer.kind === 'failed') return { opened: false, reason: `the WebSocket failed (${answer.reason})`, sent: 0, received: 0 };
  if (answer.kind === 'refused') {
    const bbError = headerValue(answer.rawHeaders, 'x-bb-error');
    return { opened: false, reason: bbError ? `the target failed (${bbError})` : `the server refused the WebSocket with ${answer.status}`, sent: 0, received: 0 };
  }
  // ws speaks the frames on the switched socket; the offer it would write (never sent) is the original's, so it takes
  // the target's answer to that offer. Its URL only names the request it believes it makes.
  const switched = new SwitchedSocket(answer.socket, answer.rawHeaders, answer.rest);
  let ws: WebSocket;
  try {
    ws = new (wsLib())(ctx.proxyUrl.replace(/^http/, 'ws'), protocols, { perMessageDeflate: deflateOptions(ex.entry), createConnection: () => switched });
  } catch (err) {
    // A recorded subprotocol ws refuses to offer (not a token): the socket the target opened is closed, not left.
    switched.destroy();
    return { opened: false, reason: `the WebSocket failed (${(err as Error).message})`, sent: 0, received: 0 };
  }

  let received = 0;
  let closed = false;
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  const bump = () => {
    received++;
    ctx.onReceived(received);
    notify();
  };
  ws.on('message', (data, isBinary) => {
    if (!isBinary) ctx.correlation.learnMessage(ex.i, received, data.toString());
    bump();
  });
  ws.on('ping', bump);
  ws.on('pong', bump);
  const closedP = new Promise<void>((resolve) => ws.once('close', () => {
    closed = true;
    notify();
    resolve();
  }));

  const opened = await new Promise<WsReplayResult>((resolve) => {
    ws.once('open', () => resolve({ opened: true, sent: 0, received: 0 }));
    // The target's subprotocol or extensions are not what was offered (ws's words), or the socket failed.
    ws.once('error', (err) => resolve({ opened: false, reason: `the WebSocket failed (${(err as NodeJS.ErrnoException).code ?? err.message})`, sent: 0, received: 0 }));
  });
  if (!opened.opened) return opened;
  ws.on('error', () => {});
  const openedAt = performance.now();

  /** Waits until `count` server messages have arrived (or the socket closed), at most waitMs. */
  const untilReceived = async (count: number, what: string): Promise<void> => {
    if (received >= count || closed) return;
    const t = performance.now();
    const ok = await waitUntil(waiters, () => received >= count || closed, ctx.waitMs);
    if (!ok) ctx.onTimeout(`${what}: waited for server message ${count} (${received} arrived)`, Math.round(performance.now() - t));
  };

  let sent = 0;
  let closeSent = false;
  const onAbort = () => {
    if (!closed) closeWith(ws, 1001, 'bb replay interrupted');
  };
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  if (ctx.signal?.aborted) onAbort();
  // A close the client sent after the server's is its echo (RFC 6455 §5.5.1): the target's own close is awaited below, the replayed client echoes that.
  const serverClose = ex.ws!.messages.findIndex((m) => m.type === 'receive' && m.opcode === 8);
  for (const [k, m] of ex.ws!.messages.entries()) {
    if (m.type !== 'send' || m.opcode === 10) continue;
    if (m.opcode === 8 && serverClose !== -1 && serverClose < k) break;
    if (closed || ctx.signal?.aborted) break;
    const what = `${ex.key} message ${k + 1}`;
    await ctx.waitFor(m.waits, what);
    if (ctx.mode === 'timing') {
      // Ctrl-C closes the socket: a long original gap ends with it.
      await Promise.race([sleep(openedAt + m.offsetMs / (ctx.speed || 1) - performance.now()), closedP]);
      // A target slower than the original would get its own value back as the recorded one: the message waits for it.
      await untilReceived(ctx.correlation.issuedBefore(ex.i, k), what);
    } else {
      await untilReceived(m.receivedBefore, what);
    }
    if (closed) break;
    send(ws, m, ctx, ex, k);
    sent++;
    if (m.opcode === 8) {
      closeSent = true;
      break;
    }
  }
  if (!closeSent && !closed && !ctx.signal?.aborted) {
    // The rest of what the server said, then the close the original ended with.
    await untilReceived(ex.ws!.received, `${ex.key} end`);
    const close = ex.entry._bb?.close;
    if (close?.by === 'server') {
      await Promise.race([closedP, sleep(ctx.waitMs)]);
    }
    // A recorded close without a status (code null) is sent as one (1005: an empty close frame), not as 1000.
    if (!closed) closeWith(ws, close ? close.code ?? (close.by === 'none' ? 1000 : 1005) : 1000, close?.reason ?? '');
  }
  await Promise.race([closedP, sleep(ctx.waitMs)]);
  ctx.signal?.removeEventListener('abort', onAbort);
  if (!closed) ws.terminate();
  return { opened: true, sent, received };
}

function closeWith(ws: WebSocket, code: number, reason: string): void {
  // 1005 and 1006 are never sent on the wire (RFC 6455 §7.4.1): they mean "none" and "dropped".
  if (code === 1006) ws.terminate();
  else if (code === 1005) ws.close();
  else ws.close(code, reason);
}

function send(ws: WebSocket, m: PlannedMessage, ctx: WsReplayContext, ex: PlannedExchange, k: number): void {
  const compress = m.compressed ?? true;
  switch (m.opcode) {
    case 1:
      ws.send(ctx.correlation.rewriteMessage(m.data, ctx.correlation.replacementsFor(ex.i, k)), { binary: false, compress });
      break;
    case 2:
      ws.send(Buffer.from(m.data, 'base64'), { binary: true, compress });
      break;
    case 9:
      ws.ping(Buffer.from(m.data, 'base64'));
      break;
    case 8:
      closeWith(ws, m.code ?? 1000, m.reason ?? '');
      break;
  }
}

/** Resolves true when `ready()` holds at a call of one of `waiters` (the caller's notify), false after `ms`. */
export function waitUntil(waiters: Set<() => void>, ready: () => boolean, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const check = () => {
      if (ready()) end(true);
    };
    const timer = setTimeout(() => end(false), ms);
    const end = (v: boolean) => {
      clearTimeout(timer);
      waiters.delete(check);
      resolve(v);
    };
    waiters.add(check);
  });
}
