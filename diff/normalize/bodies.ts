// Bodies parsed by media type, before any rule runs: JSON, JSONL line by
// line, SSE into events, other text as text, binary as a size + digest.
//
// The parsers are an ordered list of named functions (first that accepts
// wins), so a zip parser (issue 8) slots in by name before "binary".
import { createHash } from 'node:crypto';
import type { HarEventSourceMessage } from '../../capture/index.js';
import { EventStreamParser, type EventStreamMessage, isJsonLinesMedia, isJsonMedia, isTextMedia, isTextualMedia, isZipMedia, mediaType, setOwn } from '../../core/index.js';
import { decodeEnginePayload, engineIoVersion } from './engine-io.js';
import { mayBeJson, parseComparedJson } from './json.js';

/** A body as bytes or text, with what the HAR says about it. */
export interface RawBody {
  /** Media type without parameters, lower-case ("" when unknown). */
  media: string;
  /** The text when the HAR holds text (decoded from base64 when it is UTF-8). */
  text?: string;
  /** The bytes when the HAR holds base64 that is not UTF-8 text. */
  bytes?: Buffer;
  /** SSE events the producer parsed (`_eventSourceMessages`). */
  events?: HarEventSourceMessage[];
  /** The entry's request URL, for parsers chosen by URL (Engine.IO polling). */
  url?: string;
}

/** One server-sent event as compared. */
export interface SseEvent {
  /** Event name ("message" when none given). */
  event: string;
  /** Event id ("" when none). */
  id: string;
  /** data, parsed as JSON when it parses. */
  data: unknown;
  /** The reconnection time a `retry:` line set before it (absent when none did). */
  retry?: number;
}

/** A parsed body: `events` for SSE, otherwise `value`. */
export type ParsedBody =
  | { kind: 'json' | 'jsonl' | 'text' | 'binary'; value: unknown }
  | { kind: 'events'; events: SseEvent[] };

/** One body parser. */
export interface BodyParser {
  /** Name, for editing the list. */
  name: string;
  /** Parses the body, or returns undefined to let the next parser try. */
  parse: (body: RawBody) => ParsedBody | undefined;
}


function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (!mayBeJson(text)) return { ok: false };
  try {
    return { ok: true, value: parseComparedJson(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * Parses SSE text with the one event-stream parser (core/event-stream.ts, the
 * HTML standard's rules, as bb's own capture does): a leading BOM is skipped,
 * an id holding NUL is ignored, a last event without its blank line is not an
 * event. Data that parses as JSON is compared as JSON.
 */
export function parseSseText(text: string): SseEvent[] {
  return EventStreamParser.parseText(text).map(sseEvent);
}

/** One event as compared: its name (`message` when none), id, data (JSON when it parses) and reconnection time. */
export function sseEvent(e: EventStreamMessage | HarEventSourceMessage): SseEvent {
  return { event: e.eventName || 'message', id: e.eventId ?? '', data: sseData(e.data), ...(typeof e.retry === 'number' ? { retry: e.retry } : {}) };
}

function sseData(s: string): unknown {
  const j = tryJson(s);
  return j.ok && s.trim() !== '' ? j.value : s;
}

/** The built-in parsers, in order. */
export const bodyParsers: BodyParser[] = [
  {
    // Engine.IO long-polling bodies (engine-io.ts): chosen by the URL's EIO and transport parameters.
    name: 'engine-io',
    parse: (b) => {
      const version = b.text === undefined || b.bytes !== undefined ? undefined : engineIoVersion(b.url);
      const packets = version === undefined ? undefined : decodeEnginePayload(b.text!, version);
      return packets ? { kind: 'json', value: packets } : undefined;
    },
  },
  {
    name: 'sse',
    parse: (b) => {
      if (b.events && b.events.length) {
        return { kind: 'events', events: b.events.map(sseEvent) };
      }
      if (b.media === 'text/event-stream' && b.text !== undefined) return { kind: 'events', events: parseSseText(b.text) };
      return undefined;
    },
  },
  {
    name: 'multipart',
    parse: (b) => {
      if (!b.media.startsWith('multipart/')) return undefined;
      const parts = multipartParts(b.bytes ?? Buffer.from(b.text ?? '', 'utf8'));
      return parts ? { kind: 'json', value: { parts } } : undefined;
    },
  },
  {
    name: 'jsonl',
    parse: (b) => {
      if (b.text === undefined || !isJsonLinesMedia(b.media)) return undefined;
      const lines = b.text.split(/\r?\n/).filter((l) => l.trim() !== '');
      return { kind: 'jsonl', value: lines.map((l) => { const j = tryJson(l); return j.ok ? j.value : l; }) };
    },
  },
  {
    name: 'json',
    parse: (b) => {
      if (b.text === undefined) return undefined;
      const t = b.text.trim();
      // Parse by media type, and also untyped text that is plainly JSON.
      if (!isJsonMedia(b.media) && !(t.startsWith('{') || t.startsWith('['))) return undefined;
      const j = tryJson(b.text);
      return j.ok ? { kind: 'json', value: j.value } : undefined;
    },
  },
  {
    name: 'text',
    parse: (b) => (b.text !== undefined && (isTextMedia(b.media) || isJsonMedia(b.media) || isJsonLinesMedia(b.media) || b.bytes === undefined) ? { kind: 'text', value: b.text } : undefined),
  },
  {
    name: 'binary',
    parse: (b) => {
      const bytes = b.bytes ?? Buffer.from(b.text ?? '', 'utf8');
      return { kind: 'binary', value: `<binary ${bytes.length} bytes sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}>` };
    },
  },
];

/** One part of a multipart body as compared: its headers (lower-case names) and its body. */
interface MultipartPart {
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Splits a multipart body (RFC 2046 §5.1) on the boundary its first line
 * names, so the random boundary is never compared. A part's body is JSON
 * when it parses, text when it is UTF-8, else a binary summary. Undefined
 * when the body does not start with a boundary line.
 */
function multipartParts(bytes: Buffer): MultipartPart[] | undefined {
  const eol = bytes.indexOf('\r\n');
  if (eol < 3 || bytes[0] !== 0x2d || bytes[1] !== 0x2d) return undefined;
  const delimiter = Buffer.concat([Buffer.from('\r\n'), bytes.subarray(0, eol)]);
  const parts: MultipartPart[] = [];
  let at = eol + 2;
  for (;;) {
    const end = bytes.indexOf(delimiter, at);
    const chunk = bytes.subarray(at, end < 0 ? bytes.length : end);
    const split = chunk.indexOf('\r\n\r\n');
    const head = split < 0 ? '' : chunk.subarray(0, split).toString('latin1');
    const content = split < 0 ? chunk : chunk.subarray(split + 4);
    const headers: Record<string, string> = {};
    for (const line of head.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) setOwn(headers, line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    parts.push({ headers, body: partBody(content) });
    if (end < 0) break;
    at = end + delimiter.length;
    // "--" after the delimiter closes the body (the epilogue is not compared).
    if (bytes[at] === 0x2d && bytes[at + 1] === 0x2d) break;
    at += 2;
  }
  return parts;
}

function partBody(content: Buffer): unknown {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    const j = tryJson(text);
    return j.ok && /^\s*[[{]/.test(text) ? j.value : text;
  } catch {
    return `<binary ${content.length} bytes sha256:${createHash('sha256').update(content).digest('hex').slice(0, 16)}>`;
  }
}

/** Text or bytes of a HAR body: base64 that decodes to valid UTF-8 becomes text. */
export function rawBody(mime: string | undefined, text: string | undefined, encoding: string | undefined, events?: HarEventSourceMessage[]): RawBody | undefined {
  const media = mediaType(mime);
  if ((text === undefined || text === '') && !(events && events.length)) return undefined;
  if (encoding === 'base64' && text !== undefined) {
    const bytes = Buffer.from(text, 'base64');
    const decoded = new TextDecoder('utf-8', { fatal: true });
    try {
      return { media, text: decoded.decode(bytes), bytes: isTextMedia(media) || isJsonMedia(media) ? undefined : bytes, events };
    } catch {
      return { media, bytes, events };
    }
  }
  return { media, text, events };
}

/**
 * Whether a body of this media type is compared parsed (text, JSON, events,
 * parts, zip entries) rather than as a binary digest: the guess for a body
 * the producer did not record, so its content-length is treated as it is on
 * the side that recorded it.
 */
export function parsedByMedia(media: string): boolean {
  return media === '' || isTextualMedia(media) || media.startsWith('multipart/') || isZipMedia(media);
}

/** Parses a body with the given parser list. */
export function parseBody(body: RawBody, parsers: readonly BodyParser[] = bodyParsers): ParsedBody {
  for (const p of parsers) {
    const r = p.parse(body);
    if (r) return r;
  }
  return { kind: 'text', value: body.text ?? '' };
}
