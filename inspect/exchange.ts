// One exchange whole, for `bb show CAPTURE --entry '#4' [--body]`: request
// line and headers, request body and trailers, status line and headers,
// response body (decoded, JSON pretty-printed, binary as a hex preview with
// its size) and trailers, SSE events and WebSocket messages. Pure: text lines from a HAR entry. Captured
// content is hostile: every control character is escaped, line by line.
import type { Har, HarEntry, HarNameValue } from '../capture/index.js';
import { escapeControls, formatSize, messageLine, formatOffset, type Style } from './format.js';
import { isoToSeconds, orderedEntries } from './model.js';
import { grpcAsMessage, grpcCallStatus, grpcStatusText, isGrpcEntry } from './streams.js';
import { isJsonLinesMedia, isJsonMedia, isTextualMedia } from '../core/index.js';

/** Bytes shown in a binary body's hex preview. */
const HEX_PREVIEW_BYTES = 64;

/** How an exchange is named everywhere a person reads it: `#<seq>`, else its index in the file. */
export function exchangeNumber(entry: HarEntry, index: number): number {
  return typeof entry._bb?.seq === 'number' ? entry._bb.seq : index;
}

/**
 * Finds the entry `#N` names (`#4` or `4`): the one whose `_bb.seq` is N, or
 * in a HAR without seqs the entry at index N. Undefined when none is.
 */
export function findExchange(har: Har, name: string): { entry: HarEntry; index: number } | undefined {
  const m = /^#?(\d+)$/.exec(name.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  return orderedEntries(har).find(({ entry, index }) => exchangeNumber(entry, index) === n);
}

/** True when an exchange name is `#N` or `N`. */
export function isExchangeName(name: string): boolean {
  return /^#?\d+$/.test(name.trim());
}


/** True when bytes read as text: valid UTF-8 without NUL or other non-whitespace controls. */
function looksLikeText(bytes: Buffer): boolean {
  const text = bytes.toString('utf8');
  if (text.includes('\ufffd')) return false;
  return !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text);
}

/** A body as lines: JSON pretty-printed, text as is (controls escaped), binary as a hex preview with its size. */
export function bodyLines(bytes: Buffer, mimeType: string): string[] {
  if (bytes.length === 0) return [];
  const textual = isTextualMedia(mimeType) || looksLikeText(bytes);
  if (!textual) {
    const shown = bytes.subarray(0, HEX_PREVIEW_BYTES);
    const lines = [`(binary, ${formatSize(bytes.length)}${mimeType ? `, ${mimeType}` : ''})`];
    for (let at = 0; at < shown.length; at += 16) {
      lines.push(`${at.toString(16).padStart(8, '0')}  ${shown.subarray(at, at + 16).toString('hex').replace(/(..)/g, '$1 ').trim()}`);
    }
    if (bytes.length > shown.length) lines.push(`… ${bytes.length - shown.length} more bytes`);
    return lines;
  }
  const text = bytes.toString('utf8');
  if ((isJsonMedia(mimeType) || isJsonLinesMedia(mimeType)) || /^\s*[[{]/.test(text)) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2).split('\n').map(escapeControls);
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  return text.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n').map(escapeControls);
}

function headerLines(headers: HarNameValue[]): string[] {
  return headers.map((h) => `${escapeControls(h.name)}: ${escapeControls(h.value)}`);
}

/** Trailers after the body they end (chunked or HTTP/2), as headers are shown; none when none came. */
function trailerLines(trailers: HarNameValue[] | undefined, dim: (t: string) => string): string[] {
  return trailers?.length ? ['', dim('trailers:'), ...headerLines(trailers)] : [];
}

/** The request body's bytes (postData, base64 when `_encoding` says so). */
function requestBody(entry: HarEntry): Buffer {
  const post = entry.request.postData;
  if (!post?.text) return Buffer.alloc(0);
  return post._encoding === 'base64' ? Buffer.from(post.text, 'base64') : Buffer.from(post.text, 'utf8');
}

/** The response body's bytes (content.text, base64 when `encoding` says so). */
function responseBody(entry: HarEntry): Buffer {
  const content = entry.response.content;
  if (!content?.text) return Buffer.alloc(0);
  return content.encoding === 'base64' ? Buffer.from(content.text, 'base64') : Buffer.from(content.text, 'utf8');
}

/** The request line as the client sent it: method, path and query, version. */
function requestLine(entry: HarEntry): string {
  let target = entry.request.url;
  try {
    const url = new URL(entry.request.url);
    target = url.pathname + url.search;
  } catch {
    // Not a URL (another producer's HAR): shown as written.
  }
  return [entry.request.method, target, entry.request.httpVersion].filter(Boolean).join(' ');
}

/** What `bb show --entry` prints; bodies only with `body`. */
export function exchangeText(entry: HarEntry, index: number, style: Style, options: { body: boolean }): string[] {
  const bold = (t: string): string => (style.color ? `\u001b[1m${t}\u001b[0m` : t);
  const dim = (t: string): string => (style.color ? `\u001b[2m${t}\u001b[0m` : t);
  const lines: string[] = [];
  const facts = [
    entry.connection !== undefined ? `connection ${entry.connection}` : undefined,
    entry.time >= 0 ? `${entry.time.toFixed(0)} ms` : undefined,
    entry.startedDateTime,
  ].filter(Boolean);
  lines.push(bold(`#${exchangeNumber(entry, index)} ${entry.request.method} ${escapeControls(entry.request.url)}`) + dim(`  (${facts.join(', ')})`));
  const bb = entry._bb;
  if (bb?.error) lines.push(`bb: ${bb.error.code} (${bb.error.phase}): ${escapeControls(bb.error.message)}`);
  if (bb?.aborted) lines.push(`bb: aborted by the ${bb.aborted}`);
  if (bb?.resetBurst) {
    const b = bb.resetBurst;
    const ids = b.streams.slice(0, 4).map(([first, last]) => (first === last ? `${first}` : `${first}-${last}`)).join(', ') + (b.streams.length > 4 ? ', ...' : '');
    const codes = b.resets.map((r) => `${r.by} ${r.code} × ${r.count}`).join(', ');
    lines.push(`bb: stands for ${b.count} HTTP/2 streams reset before a response (${codes}), streams ${ids}, until ${b.endedDateTime}; the request below is the first one's`);
  }
  lines.push('', bold(escapeControls(requestLine(entry))), ...headerLines(entry.request.headers));
  const reqBytes = requestBody(entry);
  if (options.body && reqBytes.length > 0) {
    lines.push('', ...bodyLines(reqBytes, entry.request.postData?.mimeType ?? ''));
    if (bb?.truncated?.request !== undefined) lines.push(dim(`(recorded ${formatSize(bb.truncated.request)} of ${formatSize(entry.request.bodySize)}: the rest streamed through unrecorded)`));
  } else if (reqBytes.length > 0) {
    lines.push(dim(`(request body ${formatSize(reqBytes.length)}: --body shows it)`));
  }
  lines.push(...trailerLines(entry.request._trailers, dim));
  const res = entry.response;
  const statusLine = (status: number, statusText: string) => escapeControls([res.httpVersion, status, statusText].filter((x) => x !== '' && x !== undefined).join(' '));
  // The 1xx heads before the response (100 Continue, 103 Early Hints), as they came.
  for (const i of res._informational ?? []) lines.push('', statusLine(i.status, i.statusText), ...headerLines(i.headers));
  lines.push('', bold(statusLine(res.status, res.statusText)), ...headerLines(res.headers));
  const resBytes = responseBody(entry);
  const events = entry._eventSourceMessages ?? [];
  const messages = entry._webSocketMessages ?? [];
  if (options.body && events.length > 0) {
    const since = isoToSeconds(entry.startedDateTime);
    lines.push('', dim(`${events.length} event${events.length === 1 ? '' : 's'}:`));
    for (const ev of events) {
      const name = ev.eventName ? `event ${escapeControls(ev.eventName)}` : 'message';
      const id = ev.eventId ? ` id ${escapeControls(ev.eventId)}` : '';
      lines.push(`${formatOffset(ev.time > 1e11 ? ev.time / 1000 : ev.time, since).padStart(11)} ${name}${id}: ${escapeControls(ev.data)}`);
    }
    lines.push(...unlistedLines([['event', bb?.unlisted?.response]], IN_BODY, dim));
  } else if (options.body && resBytes.length > 0) {
    lines.push('', ...bodyLines(resBytes, res.content.mimeType ?? ''));
  } else if (resBytes.length > 0) {
    lines.push(dim(`(response body ${formatSize(resBytes.length)}: --body shows it)`));
  }
  if (options.body && bb?.truncated?.response !== undefined) {
    lines.push(dim(`(recorded ${formatSize(bb.truncated.response)} of ${formatSize(res.bodySize)}: the rest streamed through unrecorded)`));
  }
  lines.push(...trailerLines(res._trailers, dim));
  if (messages.length > 0) {
    const opened = isoToSeconds(entry.startedDateTime);
    lines.push('', dim(`${messages.length} WebSocket message${messages.length === 1 ? '' : 's'}${options.body ? ':' : ' (--body lists them)'}`));
    if (options.body) {
      const ordered = [...messages].sort((a, b) => (a._bb?.seq ?? 0) - (b._bb?.seq ?? 0) || a.time - b.time);
      for (const m of ordered) lines.push(messageLine(m, opened, style));
    }
    lines.push(...unlistedLines(bothWays(bb?.unlisted), 'only their count and a hash were kept', dim));
  }
  if (isGrpcEntry(entry)) {
    const grpc = entry._grpcMessages!;
    lines.push('', `${grpcStatusText(grpcCallStatus(entry))}; ${dim(`${grpc.length} gRPC message${grpc.length === 1 ? '' : 's'}${options.body ? ':' : ' (--body lists them)'}`)}`);
    if (options.body) for (const m of grpc) lines.push(messageLine(grpcAsMessage(m), isoToSeconds(entry.startedDateTime), style, undefined, entry.request.url));
    lines.push(...unlistedLines(bothWays(bb?.unlisted), IN_BODY, dim));
  }
  if (bb?.close) lines.push(dim(`closed by ${bb.close.by}${bb.close.code !== null ? ` with ${bb.close.code}` : ''}${bb.close.reason ? ` ${escapeControls(bb.close.reason)}` : ''}`));
  return lines;
}

/** Where a gRPC call's or an event stream's messages past the list are. */
const IN_BODY = 'the recorded body holds them';

// A conversation's or call's messages past the list, by direction.
function bothWays(unlisted: { request?: number; response?: number } | undefined): Array<[string, number | undefined]> {
  return [['sent message', unlisted?.request], ['received message', unlisted?.response]];
}

/** A line for each kind of message the capture does not list (`_bb.unlisted`): how many, and where they are. */
function unlistedLines(counts: Array<[string, number | undefined]>, where: string, dim: (s: string) => string): string[] {
  return counts.flatMap(([what, n]) => (n !== undefined && n > 0 ? [dim(`(and ${n} more ${what}${n === 1 ? '' : 's'} not listed: ${where})`)] : []));
}
