// What a HAR entry is, whoever wrote it (bb, a browser, mitmproxy): a
// WebSocket, an exchange over HTTP/2 or later, an event stream and its
// events. One answer for bb diff, bb frames and bb replay. Pure functions.
import { EventStreamParser, isEventStreamMedia, isoToSeconds } from '../core/index.js';
import type { HarEntry, HarEventSourceMessage } from './har.js';

/** True when an entry is a WebSocket (Chrome's marker, messages, or a 101; over HTTP/2, RFC 8441's 2xx to a CONNECT). */
export function isWebSocketEntry(e: HarEntry): boolean {
  return e._resourceType === 'websocket' || Array.isArray(e._webSocketMessages) || e.response.status === 101;
}

/** True for a WebSocket over an HTTP/2 stream (RFC 8441): an extended CONNECT that a WebSocket entry records. */
export function isH2WebSocketEntry(e: HarEntry): boolean {
  return e.request.method.toUpperCase() === 'CONNECT' && isWebSocketEntry(e);
}

/** True for an entry spoken over HTTP/2 or HTTP/3 (`HTTP/2.0`, Chrome's `http/2.0`, `h2`, `h3`, `HTTP/3`). */
export function isH2OrLater(e: HarEntry): boolean {
  return [e.request.httpVersion, e.response.httpVersion].some((v) => /^(https?\/)?(2|3)(\.0)?$|^h[23]/i.test(v ?? ''));
}

/** True when the response is declared an event stream (its Content-Type, else the content's mimeType). */
export function isEventStreamEntry(e: HarEntry): boolean {
  const type = e.response?.headers?.find((h) => h.name.toLowerCase() === 'content-type')?.value ?? e.response?.content?.mimeType;
  return isEventStreamMedia(type);
}

/**
 * An entry's server-sent events: those its producer split (`_eventSourceMessages`: bb, Chrome), else those of
 * a body another tool kept whole (Firefox, mitmproxy), read with the one event-stream parser (core/event-stream.ts,
 * as bb's capture reads the wire) and, having no times of their own, all placed at the response's end, when
 * every one of them had come. [] when no body was kept.
 */
export function sseEventsOf(e: HarEntry): HarEventSourceMessage[] {
  if (Array.isArray(e._eventSourceMessages)) return e._eventSourceMessages;
  const content = e.response?.content;
  if (!content?.text) return [];
  const text = content.encoding === 'base64' ? Buffer.from(content.text, 'base64').toString('utf8') : content.text;
  const end = isoToSeconds(e.startedDateTime) + Math.max(0, e.time) / 1000;
  return EventStreamParser.parseText(text).map((ev) => ({ ...ev, time: end }));
}
