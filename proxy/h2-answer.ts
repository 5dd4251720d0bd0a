// When bb must speak h2 itself: the upstream could not be reached (or does not
// speak h2) before it sent a byte, so the client's connection is handed to
// node:http2, which answers each of its streams with bb's 502
// (docs/capture-format.md "HTTP/2 and gRPC entries"). The client's bytes read
// so far are put back first, so node:http2 reads the whole connection from its
// preface on.
import http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import { headerPairs } from '../core/index.js';
import { badGateway } from './errors.js';
import type { FailureInfo, SyntheticResponse } from './events.js';
import type { H2Streams } from './h2-streams.js';

/** How long a client may keep a connection bb answers itself without opening a stream. */
const IDLE_MS = 30_000;

/** Answers every stream of `client` (whose bytes so far are `replay`) with a 502 for `failure`. */
export function answerWith502(client: Duplex, replay: Buffer, failure: FailureInfo, origin: string, streams: H2Streams): void {
  const server = http2.createServer();
  server.on('stream', (stream: http2.ServerHttp2Stream, _headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    const response = badGateway(failure, origin);
    // The h2 form of bb's 502: the same body, lower-case field names, no Content-Length framing of its own.
    const h2: SyntheticResponse = { ...response, statusMessage: '', rawHeaders: [':status', '502', ...headerPairs(response.rawHeaders).flatMap((h) => [h.name.toLowerCase(), h.value])] };
    streams.failed(stream.id ?? 0, rawHeaders, failure, h2);
    stream.on('error', () => {});
    stream.respond(Object.fromEntries(headerPairs(h2.rawHeaders).map((h) => [h.name, h.value])));
    stream.end(response.body);
  });
  server.on('session', (session) => {
    session.on('error', () => {});
    session.setTimeout(IDLE_MS, () => session.close());
  });
  client.unshift(replay);
  server.emit('connection', client);
}
