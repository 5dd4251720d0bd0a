// Application heartbeats over a WebSocket (docs/diff.md `ws-ping-pong`): the
// keep-alive messages protocols send on a timer in text or binary messages of
// their own, besides the ping and pong frames of RFC 6455. How many cross
// depends on how long a conversation lasted, not on the server, so two runs
// of one build differ in them; the rule leaves them out as it leaves out the
// frames. Each form is matched whole and strictly, so no message of the
// protocol's own traffic is ever taken for one:
// - Rails Action Cable's `{"type":"ping","message":<epoch seconds>}` (every 3 s);
// - graphql-ws (graphql-transport-ws) `{"type":"ping"}` / `{"type":"pong"}`,
//   an optional `payload` beside; subscriptions-transport-ws's keep-alive `{"type":"ka"}`;
// - ASP.NET Core SignalR's JSON hub protocol Ping `{"type":6}` and its record separator (\x1e);
// - Phoenix channels: a message on the reserved `phoenix` topic (its heartbeat and the reply),
//   as an object (serializer 1.0) or an array `[join_ref, ref, "phoenix", event, payload]` (2.0);
// - STOMP's heart-beat, an end of line alone (STOMP 1.2 §"Heart-beating");
// - SockJS's heartbeat frame `h`, on a SockJS session's socket (`…/<server>/<session>/websocket`);
// - MQTT's PINGREQ and PINGRESP (bytes C0 00 and D0 00) on a socket that speaks `mqtt`.
// Engine.IO's `2` and `3` are read where Engine.IO is (entry.ts).

/** What a connection's messages are read with: its upgrade URL and the subprotocol the server chose. */
export interface HeartbeatContext {
  url: string;
  /** The response's Sec-WebSocket-Protocol, lower-cased ('' for none). */
  subprotocol: string;
}

/** Longer messages are no heartbeat of these protocols. */
const LONGEST = 160;

const SOCKJS_SOCKET = /\/[^/?#]+\/[^/?#]+\/websocket(?:[?#]|$)/;
const EOLS = /^(?:\r?\n)+$/;
const HEARTBEAT_WORDS = /"(?:ping|pong|ka|phoenix)"/;

/** Whether a recorded WebSocket message (opcode, its data as the capture holds it: text, or base64 for binary) is an application heartbeat. */
export function isAppHeartbeat(opcode: number, data: string, ctx: HeartbeatContext): boolean {
  if (data.length > LONGEST) return false;
  if (opcode === 2) return ctx.subprotocol.startsWith('mqtt') && (data === 'wAA=' || data === '0AA=');
  if (opcode !== 1) return false;
  if (data === 'h') return SOCKJS_SOCKET.test(ctx.url);
  if (EOLS.test(data)) return true;
  const signalR = data.endsWith('\x1e');
  const text = signalR ? data.slice(0, -1) : data;
  if (!text.startsWith('{') && !text.startsWith('[')) return false;
  // The words every heartbeat form holds: a message with none is not parsed here (the diff parses it once, as data).
  if (!(signalR ? text.includes('6') : HEARTBEAT_WORDS.test(text))) return false;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (Array.isArray(v)) return v.length === 5 && v[2] === 'phoenix' && typeof v[3] === 'string';
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(',');
  if (signalR) return keys === 'type' && o.type === 6;
  if (o.topic === 'phoenix' && typeof o.event === 'string') return true;
  switch (o.type) {
    case 'ping':
      return (keys === 'message,type' && typeof o.message === 'number') || keys === 'type' || keys === 'payload,type';
    case 'pong':
      return keys === 'type' || keys === 'payload,type';
    case 'ka':
      return keys === 'type';
    default:
      return false;
  }
}
