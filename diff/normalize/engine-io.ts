// Engine.IO / Socket.IO payloads → plain data whose JSON parts are normalized
// like any JSON body, with the packet types kept as fields so a changed type
// is still a difference.
//
// Wire formats (read from the specs, not from their code):
//   Engine.IO v4  https://github.com/socketio/engine.io-protocol  ("Packet
//                 encoding", "Payload"): one type character (0 open, 1 close,
//                 2 ping, 3 pong, 4 message, 5 upgrade, 6 noop) then the data;
//                 `b` + base64 for binary; polling bodies join packets with
//                 the record separator \x1e.
//   Engine.IO v3  the same repository's v3 branch: polling bodies frame each
//                 packet as `<length>:<packet>` (length in characters);
//                 binary as `b<type><base64>`.
//   Socket.IO v5  https://github.com/socketio/socket.io-protocol ("Packet
//                 encoding"), carried in an Engine.IO message:
//                 <type>[<attachments>-][<namespace>,][<ack id>][JSON]
//                 (0 CONNECT, 1 DISCONNECT, 2 EVENT, 3 ACK, 4 CONNECT_ERROR,
//                 5 BINARY_EVENT, 6 BINARY_ACK).
//
// The compared shape of one packet (every field but `eio` only when present):
//   { eio: "message", sio: "EVENT", nsp: "/", ack: 12, attachments: 1,
//     event: "chat", args: [...] }        an event (event name kept verbatim)
//   { eio: "message", sio: "ACK", nsp: "/", ack: 12, args: [...] }
//   { eio: "message", sio: "CONNECT", nsp: "/admin", data: {...} }
//   { eio: "open", data: { sid, upgrades, pingInterval, ... } }
//   { eio: "ping", data: "probe" }        Engine.IO types without Socket.IO
//   { eio: "message", data: "hello" }     an Engine.IO message that is not Socket.IO
//   { eio: "message", binary: "<binary 4 bytes sha256:…>" }
// A polling body is the array of its packets, in order.
import { createHash } from 'node:crypto';
import type { MultiValue } from '../types.js';
import type { OrdinalTable } from './ordinals.js';
import { parseComparedJson } from './json.js';

/** Engine.IO packet type names by their wire character. */
const ENGINE_TYPES: Record<string, string> = { 0: 'open', 1: 'close', 2: 'ping', 3: 'pong', 4: 'message', 5: 'upgrade', 6: 'noop' };

/** Socket.IO packet type names by their wire digit. */
const SOCKET_TYPES = ['CONNECT', 'DISCONNECT', 'EVENT', 'ACK', 'CONNECT_ERROR', 'BINARY_EVENT', 'BINARY_ACK'];

/** One Engine.IO packet as compared (see the header comment for the shapes). */
export interface EnginePacket {
  /** Engine.IO packet type name ("open", "message", ...). */
  eio: string;
  /** Socket.IO packet type name, when the message carries a Socket.IO packet. */
  sio?: string;
  /** Socket.IO namespace ("/" when the packet names none). */
  nsp?: string;
  /** Socket.IO acknowledgement id. */
  ack?: number;
  /** Number of binary attachments announced by a BINARY_EVENT / BINARY_ACK. */
  attachments?: number;
  /** Event name of an EVENT / BINARY_EVENT. */
  event?: string;
  /** Arguments of an event (after its name) or of an ACK. */
  args?: unknown[];
  /** Any other payload: JSON when it parses, else the text. */
  data?: unknown;
  /** A binary packet's size and digest. */
  binary?: string;
}

/**
 * The Engine.IO protocol revision of a request URL ("3", "4", ...), or
 * undefined when the URL is not Engine.IO's. Engine.IO requests carry `EIO`
 * and `transport` query parameters whatever their path (Socket.IO's path,
 * `/socket.io/`, is configurable), so those decide, not the path.
 */
export function engineIoVersion(url: string | undefined): string | undefined {
  if (!url || !url.includes('EIO=') || !url.includes('transport=')) return undefined;
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const params = new URLSearchParams(url.slice(q + 1).split('#')[0]);
  const eio = params.get('EIO');
  return eio && /^\d+$/.test(eio) && params.has('transport') ? eio : undefined;
}

function binarySummary(bytes: Buffer): string {
  return `<binary ${bytes.length} bytes sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}>`;
}

function jsonOrText(s: string): unknown {
  try {
    return parseComparedJson(s);
  } catch {
    return s;
  }
}

/**
 * A Socket.IO packet from an Engine.IO message's data, or undefined when the
 * data does not follow the Socket.IO encoding (a bare Engine.IO message).
 */
export function decodeSocketIoPacket(s: string): Omit<EnginePacket, 'eio'> | undefined {
  const type = SOCKET_TYPES[s.charCodeAt(0) - 0x30];
  if (s.length === 0 || type === undefined) return undefined;
  const out: Omit<EnginePacket, 'eio'> = { sio: type, nsp: '/' };
  let i = 1;
  if (type === 'BINARY_EVENT' || type === 'BINARY_ACK') {
    const dash = s.indexOf('-', i);
    if (dash <= i || !/^\d+$/.test(s.slice(i, dash))) return undefined;
    out.attachments = Number(s.slice(i, dash));
    i = dash + 1;
  }
  if (s[i] === '/') {
    const comma = s.indexOf(',', i);
    const end = comma < 0 ? s.length : comma;
    out.nsp = s.slice(i, end);
    i = comma < 0 ? end : end + 1;
  }
  const ackStart = i;
  while (i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39) i++;
  if (i > ackStart) out.ack = Number(s.slice(ackStart, i));
  const rest = s.slice(i);
  if (rest === '') {
    // EVENT and ACK must carry an array; the other types may carry nothing.
    return type === 'EVENT' || type === 'ACK' || type === 'BINARY_EVENT' || type === 'BINARY_ACK' ? undefined : out;
  }
  let payload: unknown;
  try {
    payload = parseComparedJson(rest);
  } catch {
    return undefined;
  }
  if (type === 'EVENT' || type === 'BINARY_EVENT') {
    if (!Array.isArray(payload) || payload.length === 0) return undefined;
    if (typeof payload[0] === 'string') {
      out.event = payload[0];
      out.args = payload.slice(1);
    } else out.args = payload;
  } else if (type === 'ACK' || type === 'BINARY_ACK') {
    if (!Array.isArray(payload)) return undefined;
    out.args = payload;
  } else out.data = payload;
  return out;
}

/**
 * One Engine.IO packet (a WebSocket text frame, or one packet of a polling
 * body), or undefined when `s` is not one. `version`: the URL's EIO value.
 */
export function decodeEnginePacket(s: string, version = '4'): EnginePacket | undefined {
  if (s.length === 0) return undefined;
  if (s[0] === 'b') {
    // v4: `b` + base64 of a message; v3: `b` + type character + base64.
    const typed = version === '3' ? ENGINE_TYPES[s[1] ?? ''] : 'message';
    const base64 = s.slice(version === '3' ? 2 : 1);
    if (typed === undefined || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) return undefined;
    return { eio: typed, binary: binarySummary(Buffer.from(base64, 'base64')) };
  }
  const eio = ENGINE_TYPES[s[0]!];
  if (eio === undefined) return undefined;
  const rest = s.slice(1);
  if (eio === 'message') {
    const sio = decodeSocketIoPacket(rest);
    return sio ? { eio, ...sio } : { eio, data: jsonOrText(rest) };
  }
  return rest === '' ? { eio } : { eio, data: eio === 'open' ? jsonOrText(rest) : rest };
}

/** Splits a v3 polling body (`<length>:<packet>` repeated), or undefined when it is not framed so. */
function splitV3Payload(text: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    const len = colon < 0 ? NaN : Number(text.slice(i, colon));
    if (colon <= i || !Number.isInteger(len) || !/^\d+$/.test(text.slice(i, colon)) || colon + 1 + len > text.length) return undefined;
    out.push(text.slice(colon + 1, colon + 1 + len));
    i = colon + 1 + len;
  }
  return out;
}

/**
 * The packets of an HTTP long-polling body, or undefined when the text is not
 * an Engine.IO payload (the "ok" a server answers a POST with, for one).
 */
export function decodeEnginePayload(text: string, version = '4'): EnginePacket[] | undefined {
  if (text === '') return undefined;
  const parts = version === '3' ? splitV3Payload(text) : text.split('\x1e');
  if (!parts || parts.length === 0) return undefined;
  const out: EnginePacket[] = [];
  for (const p of parts) {
    const packet = decodeEnginePacket(p, version);
    if (!packet) return undefined;
    out.push(packet);
  }
  return out;
}

/** The ordinal class of Engine.IO session ids (the `sid` of the open packet and of every later URL). */
export const EIO_SID = 'EIO_SID';

/**
 * Engine.IO's per-connection values (https://socket.io/docs/v4/engine-io-protocol/):
 * the session id the open packet hands out and every later URL carries
 * (`sid`), numbered as an ordinal so it corresponds across captures, and the
 * cache-busting `t` query parameter, masked.
 */
export function engineIoQuery(query: Record<string, MultiValue>, table: OrdinalTable): void {
  if (typeof query.sid === 'string' && query.sid) query.sid = table.mark(EIO_SID, query.sid);
  if (query.t !== undefined) query.t = '<T>';
}

/** The open packets' `sid` (a polling body's packets, or one WebSocket packet) as EIO_SID ordinals. */
export function engineIoSids(v: unknown, table: OrdinalTable): void {
  for (const p of Array.isArray(v) ? v : [v]) {
    const data = p && typeof p === 'object' && (p as { eio?: unknown }).eio === 'open' ? (p as { data?: unknown }).data : undefined;
    if (data && typeof data === 'object' && typeof (data as { sid?: unknown }).sid === 'string') (data as { sid: string }).sid = table.mark(EIO_SID, (data as { sid: string }).sid);
  }
}
