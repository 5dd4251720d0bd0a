// Upstream failures as data: a stable code, a sentence, and the 502 bb sends.
import type { FailureInfo, SyntheticResponse } from './events.js';
import { serializeHead } from '../core/index.js';

const SENTENCES: Record<string, string> = {
  ECONNREFUSED: 'the upstream refused the connection (is the server running?)',
  ECONNRESET: 'the upstream reset the connection',
  EPIPE: 'the upstream closed the connection while bb was writing',
  ETIMEDOUT: 'the upstream did not answer in time',
  BB_CONNECT_TIMEOUT: 'the upstream did not accept the connection in time',
  BB_UPSTREAM_TIMEOUT: 'the upstream did not answer in time',
  BB_UPSTREAM_HTTP2: 'the upstream speaks HTTP/2 only; bb proxies HTTP/1.1',
  BB_UPSTREAM_CLOSED: 'the upstream closed the connection before answering',
  BB_UPSTREAM_NOT_H2: 'the client spoke HTTP/2 (h2c prior knowledge) and the upstream does not: point bb at an h2c server, or let the client use HTTP/1.1',
  ENOTFOUND: 'the upstream host name does not resolve',
  EHOSTUNREACH: 'the upstream host is unreachable',
};

/** What to do when bb cannot verify an upstream's certificate: the flags that fix it. */
export const UPSTREAM_VERIFY_HINT = "trust the upstream's CA with --upstream-ca FILE, or skip verification with --insecure-upstream";

const UPSTREAM_VERIFY_SENTENCE = `bb could not verify the upstream's certificate: ${UPSTREAM_VERIFY_HINT}`;

/** True for the codes Node gives when an upstream's certificate fails verification (unknown CA, expired, wrong name). */
export function isVerifyFailure(code: string): boolean {
  return /^UNABLE_TO_|^CERT_|^DEPTH_ZERO_SELF_SIGNED|^SELF_SIGNED_CERT|^ERR_TLS_CERT_ALTNAME_INVALID$/.test(code);
}

/** Turns a Node error from the upstream side into a FailureInfo. */
export function classifyUpstreamError(err: NodeJS.ErrnoException, phase: FailureInfo['phase'], firstBytes?: Buffer): FailureInfo {
  let code = err.code ?? 'BB_UPSTREAM_ERROR';
  if (code.startsWith('HPE_') && firstBytes && looksLikeHttp2(firstBytes)) code = 'BB_UPSTREAM_HTTP2';
  if (code === 'ECONNRESET' && err.message === 'socket hang up') code = 'BB_UPSTREAM_CLOSED';
  if (/^ERR_TLS_|^UNABLE_TO_|^CERT_|^DEPTH_ZERO|^SELF_SIGNED|^ERR_SSL/.test(code)) phase = 'tls';
  const sentence = SENTENCES[code] ?? (isVerifyFailure(code) ? UPSTREAM_VERIFY_SENTENCE : code.startsWith('HPE_') ? 'the upstream sent a response bb cannot parse as HTTP/1.1' : err.message);
  return { code, message: sentence === err.message ? sentence : `${sentence} (${err.message})`, phase };
}

// An HTTP/2 server answering an HTTP/1.1 request sends a SETTINGS frame: 3-byte length, type 0x04.
// With prior knowledge only, some answer with a GOAWAY (type 0x07) instead.
function looksLikeHttp2(bytes: Buffer): boolean {
  return bytes.length >= 9 && (bytes[3] === 0x04 || bytes[3] === 0x07) && bytes.subarray(0, 4).toString('latin1') !== 'HTTP';
}

/** The response bb writes when the upstream failed: a short JSON body saying why. */
export function badGateway(failure: FailureInfo, upstream: string): SyntheticResponse {
  const body = Buffer.from(
    JSON.stringify({ error: 'bb_upstream_failed', code: failure.code, message: failure.message, upstream }) + '\n',
  );
  return {
    statusCode: 502,
    statusMessage: 'Bad Gateway',
    rawHeaders: ['Content-Type', 'application/json', 'Content-Length', String(body.length), 'X-BB-Error', failure.code],
    body,
  };
}

/** The response bb writes for a request Node's parser refused. */
export function badRequest(code: string, message: string): SyntheticResponse {
  const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const statusMessage = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  const body = Buffer.from(JSON.stringify({ error: 'bb_bad_request', code, message }) + '\n');
  return {
    statusCode: status,
    statusMessage,
    rawHeaders: ['Content-Type', 'application/json', 'Content-Length', String(body.length), 'Connection', 'close'],
    body,
  };
}

/** Serializes a synthetic response for writing on a raw socket. */
export function serializeResponse(res: SyntheticResponse, httpVersion = '1.1'): Buffer {
  return Buffer.concat([Buffer.from(serializeHead(`HTTP/${httpVersion} ${res.statusCode} ${res.statusMessage}`, res.rawHeaders), 'latin1'), res.body]);
}
