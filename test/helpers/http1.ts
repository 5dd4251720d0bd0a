// Feeds bytes to bb's HTTP/1.1 parser and collects what it found, in a shape
// tests can compare (heads, bodies, trailers, how it ended).
import { Http1Parser, type FeedOutcome } from '../../proxy/http1/parser.js';
import type { Http1Head } from '../../proxy/http1/head.js';

/** One message as the parser framed it. */
export interface ParsedMessage {
  /** The start line, e.g. "GET / HTTP/1.1" or "HTTP/1.1 200 OK". */
  line: string;
  rawHeaders: string[];
  /** The body, chunk framing removed, as latin1. */
  body: string;
  rawTrailers: string[];
  /** True when the parser found the message's end. */
  complete: boolean;
}

/** Everything a parser said about some bytes. */
export interface Parsed {
  messages: ParsedMessage[];
  /** 'ok' (all read, idle or mid-message), 'error', or 'switched'. */
  outcome: FeedOutcome['state'];
  /** The fault code, when outcome is 'error'. */
  code?: string;
  /** Bytes after a protocol switch, as latin1. */
  rest?: string;
  /** True when the bytes end between messages (finish() would be clean). */
  clean: boolean;
}

const lineOf = (h: Http1Head): string =>
  h.kind === 'request'
    ? `${h.method} ${h.target} HTTP/${h.httpVersion}`
    : `HTTP/${h.httpVersion} ${h.statusCode}${h.statusMessage ? ' ' + h.statusMessage : ''}`;

/**
 * Parses `pieces` in order as one direction of a connection. For the response
 * side, `methods` are the requests in flight. With `eof`, finish() is called
 * (ends a close-delimited body).
 */
export function parsePieces(side: 'request' | 'response', pieces: Buffer[], methods: string[] = [], eof = false): Parsed {
  const messages: ParsedMessage[] = [];
  let current: ParsedMessage | undefined;
  const parser = new Http1Parser(side, {
    head(head) {
      current = { line: lineOf(head), rawHeaders: head.rawHeaders, body: '', rawTrailers: [], complete: false };
      messages.push(current);
    },
    body(chunk, start, end) {
      current!.body += chunk.toString('latin1', start, end);
    },
    end(_end, rawTrailers) {
      current!.rawTrailers = rawTrailers;
      current!.complete = true;
    },
  });
  for (const m of methods) parser.expect(m);
  let outcome: FeedOutcome = { state: 'ok' };
  let rest: string | undefined;
  for (const piece of pieces) {
    if (outcome.state === 'switched') {
      rest += piece.toString('latin1');
      continue;
    }
    outcome = parser.feed(piece);
    if (outcome.state === 'error') break;
    if (outcome.state === 'switched') rest = piece.toString('latin1', outcome.at);
  }
  let clean = outcome.state !== 'error' && parser.idle;
  if (eof && outcome.state === 'ok') {
    outcome = parser.finish();
    clean = outcome.state === 'ok';
  }
  return {
    messages,
    outcome: outcome.state,
    ...(outcome.state === 'error' ? { code: outcome.fault.code } : {}),
    ...(rest !== undefined ? { rest } : {}),
    clean,
  };
}

/** The ways to cut `bytes` in pieces that a test runs: whole, in two at every byte boundary, one byte at a time. */
export function* splits(bytes: Buffer): Generator<Buffer[]> {
  yield [bytes];
  for (let i = 1; i < bytes.length; i++) yield [bytes.subarray(0, i), bytes.subarray(i)];
  yield Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
}
