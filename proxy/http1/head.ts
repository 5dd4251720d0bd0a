// Parsing and judging one complete HTTP/1.1 head (RFC 9112 §2–§6).
//
// The incremental parser (parser.ts) finds where a head ends and has
// already checked that every LF in it follows a CR; this file reads the start
// line and the field lines, and decides the one framing the body has. It is
// strict on purpose: anything two parsers could read two ways (a
// Content-Length beside Transfer-Encoding, two lengths, chunked not last,
// obs-fold, a space before the colon) is refused, so bb never forwards bytes
// the server might frame differently than bb recorded them.
import { METHODS } from 'node:http';
import type { RawHeaders } from '../events.js';

/** Why a head (or body framing) was refused: an llhttp-style code and one sentence. */
export interface Http1Fault {
  /** Stable code, llhttp's names where one fits (HPE_INVALID_METHOD, HPE_HEADER_OVERFLOW, ...). */
  code: string;
  /** One sentence saying what is wrong. */
  reason: string;
}

/** How a message's body is delimited. */
export type BodyFraming = 'none' | 'length' | 'chunked' | 'close';

/** A request head that passed judgement. */
export interface RequestHead {
  kind: 'request';
  method: string;
  /** The request-target exactly as sent. */
  target: string;
  /** "1.1" or "1.0". */
  httpVersion: string;
  /** Names as sent, values without surrounding whitespace (Node's rawHeaders shape). */
  rawHeaders: RawHeaders;
  /** How the body is delimited ('none' when there is none). */
  framing: BodyFraming;
  /** The Content-Length, -1 unless framing is 'length'. */
  contentLength: number;
  /** Upgrade + Connection: upgrade, or CONNECT: after this message the bytes may stop being HTTP. */
  upgrade: boolean;
  /** The client asked to keep the connection open after this exchange. */
  keepAlive: boolean;
  /** The head's bytes, start line to blank line (a view into the chunk when it came in one piece). */
  raw: Buffer;
}

/** A response head that passed judgement. */
export interface ResponseHead {
  kind: 'response';
  statusCode: number;
  statusMessage: string;
  /** "1.1" or "1.0". */
  httpVersion: string;
  /** Names as sent, values without surrounding whitespace. */
  rawHeaders: RawHeaders;
  /** How the body is delimited, given the request it answers. */
  framing: BodyFraming;
  /** The Content-Length, -1 unless framing is 'length'. */
  contentLength: number;
  /** A 1xx other than 101: the final response to the same request follows. */
  informational: boolean;
  /** 101, or 2xx to CONNECT: the bytes after this head are not HTTP. */
  switches: boolean;
  /** The head's bytes, status line to blank line. */
  raw: Buffer;
}

/** Either head. */
export type Http1Head = RequestHead | ResponseHead;

/** The methods llhttp knows: bb refuses what Node's parser would refuse. */
const KNOWN_METHODS = new Set(METHODS);

// tchar (RFC 9110 §5.6.2) and field-vchar / SP / HTAB / obs-text (§5.5), as byte tables.
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;
const FIELD_CHAR = new Uint8Array(256);
FIELD_CHAR[0x09] = 1;
for (let c = 0x20; c <= 0x7e; c++) FIELD_CHAR[c] = 1;
for (let c = 0x80; c <= 0xff; c++) FIELD_CHAR[c] = 1;
/** Bytes allowed in a request-target: visible ASCII only (RFC 3986 plus what browsers send unescaped). */
const TARGET_CHAR = new Uint8Array(256);
for (let c = 0x21; c <= 0x7e; c++) TARGET_CHAR[c] = 1;

/** A byte table for tokens (exported for the chunk-extension grammar). */
export const isTchar = (c: number): boolean => TCHAR[c] === 1;

const fault = (code: string, reason: string): Http1Fault => ({ code, reason });

function isToken(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (TCHAR[s.charCodeAt(i)] !== 1) return false;
  return true;
}

function version(s: string): string | undefined {
  if (s === 'HTTP/1.1') return '1.1';
  if (s === 'HTTP/1.0') return '1.0';
  return undefined;
}

/** What the field lines say about framing and the connection. */
interface FieldFacts {
  lengths: number;
  contentLength: number;
  te: string[] | undefined;
  hosts: number;
  upgradeHeader: boolean;
  /** The Connection options bb reads, as CONNECTION_* bits (no set of strings per head). */
  connection: number;
}

/** Connection options (RFC 9110 §7.6.1) that decide an upgrade and keep-alive, as bits of FieldFacts.connection. */
const CONNECTION_UPGRADE = 1;
const CONNECTION_CLOSE = 2;
const CONNECTION_KEEP_ALIVE = 4;

/**
 * Reads field lines from text[from, to) (each ending CRLF, the last one
 * included) into rawHeaders. Values are stored without leading/trailing
 * whitespace, as Node does. Returns a fault for any line that is not
 * `token ":" OWS field-value OWS`.
 */
export function parseFieldLines(text: string, from: number, to: number, rawHeaders: RawHeaders): Http1Fault | undefined {
  let at = from;
  while (at < to) {
    const eol = text.indexOf('\r\n', at);
    if (eol < 0 || eol >= to) return fault('HPE_CR_EXPECTED', 'a header line does not end with CRLF');
    const first = text.charCodeAt(at);
    // obs-fold (RFC 9112 §5.2): a line starting with whitespace continues the previous one.
    if (first === 0x20 || first === 0x09) return fault('HPE_INVALID_HEADER_TOKEN', 'a header line starts with whitespace (obs-fold is not accepted)');
    const colon = text.indexOf(':', at);
    if (colon < 0 || colon > eol) return fault('HPE_INVALID_HEADER_TOKEN', 'a header line has no colon');
    if (!isToken(text, at, colon)) return fault('HPE_INVALID_HEADER_TOKEN', 'a header name is empty or has a character a token cannot have');
    let vs = colon + 1;
    let ve = eol;
    for (let i = vs; i < ve; i++) {
      if (FIELD_CHAR[text.charCodeAt(i)] !== 1) return fault('HPE_INVALID_HEADER_TOKEN', 'a header value has a control character');
    }
    while (vs < ve && (text.charCodeAt(vs) === 0x20 || text.charCodeAt(vs) === 0x09)) vs++;
    while (ve > vs && (text.charCodeAt(ve - 1) === 0x20 || text.charCodeAt(ve - 1) === 0x09)) ve--;
    rawHeaders.push(text.slice(at, colon), text.slice(vs, ve));
    at = eol + 2;
  }
  return undefined;
}

/** RFC 9110 §6.5.1: framing fields cannot be trailers (llhttp refuses them too). */
export function judgeTrailers(rawTrailers: RawHeaders): Http1Fault | undefined {
  for (let i = 0; i < rawTrailers.length; i += 2) {
    const name = rawTrailers[i]!.toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding') return fault('HPE_INVALID_CONTENT_LENGTH', `${rawTrailers[i]} cannot be a trailer`);
  }
  return undefined;
}

/** A comma-separated list (RFC 9110 §5.6.1), lower-cased, elements trimmed; empty elements kept as ''. */
function listItems(value: string): string[] {
  return value.split(',').map((v) => v.trim().toLowerCase());
}

/** The CONNECTION_* bits of a Connection value: its list items (as listItems reads them) walked in place, no arrays. */
function connectionOptions(value: string): number {
  let bits = 0;
  for (let at = 0; at <= value.length; ) {
    let end = value.indexOf(',', at);
    if (end < 0) end = value.length;
    const item = value.slice(at, end).trim().toLowerCase();
    if (item === 'upgrade') bits |= CONNECTION_UPGRADE;
    else if (item === 'close') bits |= CONNECTION_CLOSE;
    else if (item === 'keep-alive') bits |= CONNECTION_KEEP_ALIVE;
    at = end + 1;
  }
  return bits;
}

function fieldFacts(rawHeaders: RawHeaders): FieldFacts | Http1Fault {
  const facts: FieldFacts = { lengths: 0, contentLength: -1, te: undefined, hosts: 0, upgradeHeader: false, connection: 0 };
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // Only a handful of names matter for framing: skip the rest on length before lower-casing.
    if (name.length !== 4 && name.length !== 7 && name.length !== 10 && name.length !== 14 && name.length !== 17) continue;
    const lower = name.toLowerCase();
    const value = rawHeaders[i + 1]!;
    if (lower === 'content-length') {
      facts.lengths++;
      if (facts.lengths > 1) return fault('HPE_UNEXPECTED_CONTENT_LENGTH', 'the message has more than one Content-Length');
      if (!/^[0-9]{1,15}$/.test(value)) return fault('HPE_INVALID_CONTENT_LENGTH', `Content-Length must be digits only, got '${value.slice(0, 40)}'`);
      facts.contentLength = Number(value);
    } else if (lower === 'transfer-encoding') {
      (facts.te ??= []).push(...listItems(value));
    } else if (lower === 'host') {
      facts.hosts++;
    } else if (lower === 'upgrade') {
      facts.upgradeHeader = true;
    } else if (lower === 'connection') {
      facts.connection |= connectionOptions(value);
    }
  }
  return facts;
}

/** Checks Transfer-Encoding: returns 'chunked' when chunked is the last coding, 'other' when it is absent from the end, or a fault. */
function transferCoding(te: string[]): 'chunked' | 'other' | Http1Fault {
  let chunkedAt = -1;
  for (let i = 0; i < te.length; i++) {
    const item = te[i]!;
    if (!isToken(item, 0, item.length)) return fault('HPE_INVALID_TRANSFER_ENCODING', 'Transfer-Encoding has an empty or malformed coding');
    if (item === 'chunked') {
      if (chunkedAt >= 0) return fault('HPE_INVALID_TRANSFER_ENCODING', 'Transfer-Encoding names chunked twice');
      chunkedAt = i;
    }
  }
  if (chunkedAt >= 0 && chunkedAt !== te.length - 1) return fault('HPE_INVALID_TRANSFER_ENCODING', 'Transfer-Encoding must end with chunked');
  return chunkedAt >= 0 ? 'chunked' : 'other';
}

const isFault = (x: unknown): x is Http1Fault => typeof x === 'object' && x !== null && 'code' in x && 'reason' in x;

/** Parses and judges a request head: `text` is the head as latin1, ending with the blank line's CRLF. */
export function parseRequestHead(text: string, raw: Buffer): RequestHead | Http1Fault {
  const eol = text.indexOf('\r\n');
  const sp1 = text.indexOf(' ');
  if (sp1 <= 0 || sp1 > eol) return fault('HPE_INVALID_METHOD', 'the request line has no method');
  const method = text.slice(0, sp1);
  if (!isToken(method, 0, method.length) || !KNOWN_METHODS.has(method)) return fault('HPE_INVALID_METHOD', `unknown method '${method.slice(0, 20)}'`);
  const sp2 = text.indexOf(' ', sp1 + 1);
  if (sp2 < 0 || sp2 > eol || sp2 === sp1 + 1) return fault('HPE_INVALID_URL', 'the request line needs exactly: method SP target SP version');
  for (let i = sp1 + 1; i < sp2; i++) if (TARGET_CHAR[text.charCodeAt(i)] !== 1) return fault('HPE_INVALID_URL', 'the request-target has a character that is not visible ASCII');
  const target = text.slice(sp1 + 1, sp2);
  const httpVersion = version(text.slice(sp2 + 1, eol));
  if (httpVersion === undefined) return fault('HPE_INVALID_VERSION', 'the HTTP version must be HTTP/1.1 or HTTP/1.0');
  const form = targetForm(method, target);
  if (form) return form;
  const rawHeaders: RawHeaders = [];
  const bad = parseFieldLines(text, eol + 2, text.length - 2, rawHeaders);
  if (bad) return bad;
  const facts = fieldFacts(rawHeaders);
  if (isFault(facts)) return facts;
  if (httpVersion === '1.1' && facts.hosts !== 1) return fault('HPE_INVALID_HEADER_TOKEN', 'an HTTP/1.1 request needs exactly one Host header');
  if (facts.hosts > 1) return fault('HPE_INVALID_HEADER_TOKEN', 'the request has more than one Host header');
  let framing: BodyFraming = facts.lengths ? 'length' : 'none';
  if (facts.te) {
    // RFC 9112 §6.1: a TE in HTTP/1.0 means the framing is faulty; §6.3: TE beside CL is smuggling's favourite.
    if (facts.lengths) return fault('HPE_UNEXPECTED_CONTENT_LENGTH', 'Content-Length and Transfer-Encoding are both present');
    if (httpVersion === '1.0') return fault('HPE_INVALID_TRANSFER_ENCODING', 'an HTTP/1.0 request cannot use Transfer-Encoding');
    const coding = transferCoding(facts.te);
    if (isFault(coding)) return coding;
    if (coding !== 'chunked') return fault('HPE_INVALID_TRANSFER_ENCODING', 'a request with Transfer-Encoding must end with chunked');
    framing = 'chunked';
  }
  if (framing === 'length' && facts.contentLength === 0) framing = 'none';
  const upgrade = method === 'CONNECT' || (facts.upgradeHeader && (facts.connection & CONNECTION_UPGRADE) !== 0);
  const close = (facts.connection & CONNECTION_CLOSE) !== 0;
  const keepAlive = httpVersion === '1.1' ? !close : (facts.connection & CONNECTION_KEEP_ALIVE) !== 0 && !close;
  return {
    kind: 'request',
    method,
    target,
    httpVersion,
    rawHeaders,
    framing,
    contentLength: framing === 'length' ? facts.contentLength : -1,
    upgrade,
    keepAlive,
    raw,
  };
}

/** RFC 9112 §3.2: origin-form, absolute-form, authority-form (CONNECT only), asterisk-form (OPTIONS only). */
function targetForm(method: string, target: string): Http1Fault | undefined {
  const c = target.charCodeAt(0);
  if (method === 'CONNECT') {
    return /^[A-Za-z0-9._~%!$&'()*+,;=[\]:-]+:[0-9]{1,5}$/.test(target) ? undefined : fault('HPE_INVALID_URL', 'CONNECT needs host:port as its target');
  }
  if (c === 0x2f) return undefined; // '/'
  if (target === '*') return method === 'OPTIONS' ? undefined : fault('HPE_INVALID_URL', "only OPTIONS may use the '*' target");
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]+/.test(target)) return undefined;
  return fault('HPE_INVALID_URL', 'the request-target must start with / or be an absolute URL');
}

/** Parses and judges a response head answering a request with `method`. */
export function parseResponseHead(text: string, raw: Buffer, method: string): ResponseHead | Http1Fault {
  const eol = text.indexOf('\r\n');
  const httpVersion = version(text.slice(0, 8));
  if (httpVersion === undefined || text.charCodeAt(8) !== 0x20) return fault('HPE_INVALID_CONSTANT', 'the status line must start with HTTP/1.1 or HTTP/1.0 and a space');
  const code = text.slice(9, 12);
  if (!/^[1-5][0-9][0-9]$/.test(code)) return fault('HPE_INVALID_STATUS', 'the status code must be three digits, 100 to 599');
  let statusMessage = '';
  if (eol !== 12) {
    if (text.charCodeAt(12) !== 0x20) return fault('HPE_INVALID_STATUS', 'the status code must be followed by a space or the end of the line');
    for (let i = 13; i < eol; i++) if (FIELD_CHAR[text.charCodeAt(i)] !== 1) return fault('HPE_INVALID_STATUS', 'the reason phrase has a control character');
    statusMessage = text.slice(13, eol);
  }
  const statusCode = Number(code);
  const rawHeaders: RawHeaders = [];
  const bad = parseFieldLines(text, eol + 2, text.length - 2, rawHeaders);
  if (bad) return bad;
  const facts = fieldFacts(rawHeaders);
  if (isFault(facts)) return facts;
  if (facts.te && facts.lengths) return fault('HPE_UNEXPECTED_CONTENT_LENGTH', 'Content-Length and Transfer-Encoding are both present');
  const switches = statusCode === 101 || (method === 'CONNECT' && statusCode >= 200 && statusCode < 300);
  const informational = statusCode >= 100 && statusCode < 200 && statusCode !== 101;
  // RFC 9112 §6.3: the order in which a recipient decides the body's length.
  let framing: BodyFraming;
  if (switches || informational || statusCode === 204 || statusCode === 304 || method === 'HEAD') framing = 'none';
  else if (facts.te) {
    const coding = transferCoding(facts.te);
    if (isFault(coding)) return coding;
    framing = coding === 'chunked' ? 'chunked' : 'close';
  } else if (facts.lengths) framing = facts.contentLength === 0 ? 'none' : 'length';
  else framing = 'close';
  return {
    kind: 'response',
    statusCode,
    statusMessage,
    httpVersion,
    rawHeaders,
    framing,
    contentLength: framing === 'length' ? facts.contentLength : -1,
    informational,
    switches,
    raw,
  };
}

/** True for the value parseRequestHead/parseResponseHead return when they refuse. */
export { isFault as isHttp1Fault };
