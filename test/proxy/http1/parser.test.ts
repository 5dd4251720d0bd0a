// bb's HTTP/1.1 parser on literal bytes: the examples of RFC 9112 and the
// framing cases around them, each fed whole, split in two at every byte
// boundary and one byte at a time: every cut must give the same result.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Http1Parser, MAX_HEAD_BYTES, MAX_RESPONSE_HEAD_BYTES } from '../../../proxy/http1/parser.js';
import { parsePieces, splits, type Parsed } from '../../helpers/http1.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

/** Parses `bytes` every way splits() cuts them and checks each cut gives the same as the whole. */
function parseEveryCut(side: 'request' | 'response', bytes: string, methods: string[] = [], eof = false): Parsed {
  const whole = parsePieces(side, [b(bytes)], methods, eof);
  for (const pieces of splits(b(bytes))) {
    const cut = parsePieces(side, pieces, methods, eof);
    assert.deepEqual(cut, whole, `cut at ${pieces.map((p) => p.length).join('+')}`);
  }
  return whole;
}

/** parseEveryCut for bytes that must be refused with a code matching `code`. */
function parseRefusedEveryCut(side: 'request' | 'response', bytes: string, code: RegExp, methods: string[] = []): Parsed {
  const parsed = parseEveryCut(side, bytes, methods);
  assert.equal(parsed.outcome, 'error');
  assert.match(parsed.code!, code);
  return parsed;
}

// RFC 9112 §2.1 (the example request and response).
const rfcRequest = 'GET /hello.txt HTTP/1.1\r\nUser-Agent: curl/7.64.1\r\nHost: www.example.com\r\nAccept-Language: en, mi\r\n\r\n';
const rfcResponse =
  'HTTP/1.1 200 OK\r\nDate: Mon, 27 Jul 2009 12:28:53 GMT\r\nServer: Apache\r\nLast-Modified: Wed, 22 Jul 2009 19:15:56 GMT\r\n' +
  'ETag: "34aa387-d-1568eb00"\r\nAccept-Ranges: bytes\r\nContent-Length: 51\r\nVary: Accept-Encoding\r\nContent-Type: text/plain\r\n\r\n' +
  'Hello World! My content includes a trailing CRLF.\r\n';

describe('the HTTP/1.1 parser, request side', () => {
  it('reads the RFC 9112 §2.1 request, with names and order as sent', () => {
    const parsed = parseEveryCut('request', rfcRequest);
    assert.equal(parsed.outcome, 'ok');
    assert.equal(parsed.clean, true);
    assert.deepEqual(parsed.messages, [{
      line: 'GET /hello.txt HTTP/1.1',
      rawHeaders: ['User-Agent', 'curl/7.64.1', 'Host', 'www.example.com', 'Accept-Language', 'en, mi'],
      body: '',
      rawTrailers: [],
      complete: true,
    }]);
  });

  it('reads absolute-form, asterisk-form and authority-form targets (RFC 9112 §3.2)', () => {
    const absolute = parseEveryCut('request', 'GET http://www.example.org/pub/WWW/TheProject.html HTTP/1.1\r\nHost: www.example.org\r\n\r\n');
    assert.equal(absolute.messages[0]!.line, 'GET http://www.example.org/pub/WWW/TheProject.html HTTP/1.1');
    const asterisk = parseEveryCut('request', 'OPTIONS * HTTP/1.1\r\nHost: www.example.org:8001\r\n\r\n');
    assert.equal(asterisk.messages[0]!.complete, true);
    const connect = parseEveryCut('request', 'CONNECT server.example.com:80 HTTP/1.1\r\nHost: server.example.com:80\r\n\r\n\x16\x03\x01tls');
    assert.equal(connect.outcome, 'switched');
    assert.equal(connect.rest, '\x16\x03\x01tls', 'the bytes after CONNECT are the tunnel');
  });

  it('reads a chunked body with extensions and trailers, removing the framing (RFC 9112 §7.1)', () => {
    const bytes =
      'POST /upload HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\nTrailer: Expires\r\n\r\n' +
      '4;name=value\r\nWiki\r\n5;quoted="a \\"b\\"";flag\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n000;last=1\r\nExpires: Wed, 21 Oct 2015 07:28:00 GMT\r\n\r\n';
    const parsed = parseEveryCut('request', bytes);
    assert.equal(parsed.outcome, 'ok');
    assert.equal(parsed.messages[0]!.body, 'Wikipedia in\r\n\r\nchunks.');
    assert.deepEqual(parsed.messages[0]!.rawTrailers, ['Expires', 'Wed, 21 Oct 2015 07:28:00 GMT']);
    assert.equal(parsed.clean, true);
  });

  it('frames pipelined requests: no body, Content-Length, chunked, one after another in one packet', () => {
    const parsed = parseEveryCut(
      'request',
      'GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcPUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\nGET /d HTTP/1.0\r\n\r\n',
    );
    assert.deepEqual(parsed.messages.map((m) => [m.line, m.body, m.complete]), [
      ['GET /a HTTP/1.1', '', true],
      ['POST /b HTTP/1.1', 'abc', true],
      ['PUT /c HTTP/1.1', 'z', true],
      ['GET /d HTTP/1.0', '', true],
    ]);
  });

  it('stops after an upgrade request: the bytes after it are not HTTP until resume()', () => {
    const parsed = parseEveryCut('request', 'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n\x81\x85frame');
    assert.equal(parsed.outcome, 'switched');
    assert.equal(parsed.rest, '\x81\x85frame');
  });

  it('gives body bytes as views into the chunk it was fed, never copies', () => {
    const chunk = b('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello');
    const seen: Array<[Buffer, number, number]> = [];
    const parser = new Http1Parser('request', { head() {}, body: (c, s, e) => seen.push([c, s, e]), end() {} });
    assert.deepEqual(parser.feed(chunk), { state: 'ok' });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]![0], chunk, 'the same Buffer object');
    assert.deepEqual(seen[0]!.slice(1), [chunk.length - 5, chunk.length]);
  });

  it('reports where each message ends within the chunk, so the tap can forward up to there', () => {
    const chunk = b('GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok');
    const ends: number[] = [];
    const parser = new Http1Parser('request', { head() {}, body() {}, end: (e) => ends.push(e) });
    parser.feed(chunk);
    assert.deepEqual(ends, [chunk.indexOf('POST'), chunk.length]);
  });

  it('accepts a head of exactly 16 KiB and refuses one byte more with HPE_HEADER_OVERFLOW', () => {
    const frame = 'GET / HTTP/1.1\r\nHost: x\r\nX-Pad: \r\n\r\n';
    const exact = frame.replace('X-Pad: ', 'X-Pad: ' + 'p'.repeat(MAX_HEAD_BYTES - frame.length));
    assert.equal(exact.length, MAX_HEAD_BYTES);
    assert.equal(parsePieces('request', [b(exact)]).messages[0]?.complete, true);
    const over = exact.replace('X-Pad: ', 'X-Pad: p');
    assert.equal(parsePieces('request', [b(over)]).code, 'HPE_HEADER_OVERFLOW');
    // Over the cap without a line end yet: refused as soon as the cap is passed.
    assert.equal(parsePieces('request', [b('GET /' + 'a'.repeat(MAX_HEAD_BYTES))]).code, 'HPE_HEADER_OVERFLOW');
  });

  const refused: Array<[string, string, RegExp]> = [
    ['Content-Length with Transfer-Encoding', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /CONTENT_LENGTH/],
    ['two Content-Lengths, even equal', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc', /CONTENT_LENGTH/],
    ['a Content-Length list', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc', /CONTENT_LENGTH/],
    ['a non-numeric Content-Length', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n', /CONTENT_LENGTH/],
    ['a negative Content-Length', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', /CONTENT_LENGTH/],
    ['chunked not last', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n', /TRANSFER_ENCODING/],
    ['chunked twice', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n', /TRANSFER_ENCODING/],
    ['a Transfer-Encoding without chunked', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n', /TRANSFER_ENCODING/],
    ['obs-fold', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  2\r\n\r\n', /HEADER_TOKEN/],
    ['a bare LF', 'GET / HTTP/1.1\nHost: x\r\n\r\n', /LF_EXPECTED/],
    ['a bare LF ending the head', 'GET / HTTP/1.1\r\nHost: x\r\n\n', /LF_EXPECTED/],
    ['a bare CR in a value', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n', /HEADER_TOKEN/],
    ['a space before the colon', 'GET / HTTP/1.1\r\nHost : x\r\n\r\n', /HEADER_TOKEN/],
    ['a control character in a value', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n', /HEADER_TOKEN/],
    ['no Host in HTTP/1.1', 'GET / HTTP/1.1\r\nX-A: 1\r\n\r\n', /HEADER_TOKEN/],
    ['two Hosts', 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', /HEADER_TOKEN/],
    ['an unknown method', 'HELLO / HTTP/1.1\r\nHost: x\r\n\r\n', /METHOD/],
    ['an unknown version', 'GET / HTTP/7.3\r\nHost: x\r\n\r\n', /VERSION/],
    ['two spaces in the request line', 'GET  / HTTP/1.1\r\nHost: x\r\n\r\n', /URL/],
    ['a target that is no form', 'GET foo HTTP/1.1\r\nHost: x\r\n\r\n', /URL/],
    ['a leading empty line', '\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n', /METHOD/],
    ['a chunk size that is not hex', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n', /CHUNK/],
    ['a space after the chunk size', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4 \r\nabcd\r\n0\r\n\r\n', /CHUNK/],
    ['chunk data longer than its size', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n', /CHUNK/],
    ['a chunk-size line ending in a bare LF', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n', /CHUNK/],
    ['a chunk extension without a name', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2;=1\r\nab\r\n0\r\n\r\n', /CHUNK/],
    ['a trailer without a colon', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbroken\r\n\r\n', /HEADER_TOKEN/],
  ];
  for (const [name, bytes, code] of refused) {
    it(`refuses ${name}, however the bytes are cut`, () => {
      const parsed = parseRefusedEveryCut('request', bytes, code);
      assert.ok(parsed.messages.every((m) => !m.complete), 'no message of it completes');
    });
  }

  it('refuses nothing more after a refusal (the connection is done)', () => {
    const parser = new Http1Parser('request', { head() {}, body() {}, end() {} });
    const first = parser.feed(b('BAD\r\n\r\n'));
    assert.equal(first.state, 'error');
    assert.equal(parser.feed(b('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), first);
  });

  it('says the connection ended mid-message at EOF', () => {
    assert.equal(parsePieces('request', [b('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nabc')], [], true).code, 'HPE_INVALID_EOF_STATE');
    assert.equal(parsePieces('request', [b('GET / HTTP/1.1\r\nHo')], [], true).code, 'HPE_INVALID_EOF_STATE');
    assert.equal(parsePieces('request', [b('GET / HTTP/1.1\r\nHost: x\r\n\r\n')], [], true).clean, true);
  });
});

describe('the HTTP/1.1 parser, response side', () => {
  it('reads the RFC 9112 §2.1 response and its 51-byte body', () => {
    const parsed = parseEveryCut('response', rfcResponse, ['GET']);
    assert.equal(parsed.messages[0]!.line, 'HTTP/1.1 200 OK');
    assert.equal(parsed.messages[0]!.body, 'Hello World! My content includes a trailing CRLF.\r\n');
    assert.equal(parsed.clean, true);
  });

  it('frames by the queue of requests in flight: HEAD has no body, then GET has one', () => {
    const parsed = parseEveryCut('response', 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', ['HEAD', 'GET']);
    assert.deepEqual(parsed.messages.map((m) => [m.body, m.complete]), [['', true], ['ok', true]]);
    assert.equal(parsed.clean, true);
  });

  it('reads 100 Continue and 103 Early Hints as informational, then the final response', () => {
    const parsed = parseEveryCut(
      'response',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\n!',
      ['POST'],
    );
    assert.deepEqual(parsed.messages.map((m) => m.line), ['HTTP/1.1 100 Continue', 'HTTP/1.1 103 Early Hints', 'HTTP/1.1 201 Created']);
    assert.equal(parsed.messages[2]!.body, '!');
  });

  it('reads a response head past the request cap up to 256 KiB exactly, and refuses one byte more', () => {
    const frame = 'HTTP/1.1 200 OK\r\nContent-Security-Policy: \r\nContent-Length: 2\r\n\r\n';
    const exact = frame.replace('Policy: ', 'Policy: ' + 'p'.repeat(MAX_RESPONSE_HEAD_BYTES - frame.length));
    assert.equal(Buffer.byteLength(exact), MAX_RESPONSE_HEAD_BYTES);
    const read = parsePieces('response', [b(exact + 'ok')], ['GET']);
    assert.deepEqual([read.messages[0]?.body, read.messages[0]?.complete], ['ok', true]);
    assert.equal(parsePieces('response', [b(exact.replace('Policy: ', 'Policy: p') + 'ok')], ['GET']).code, 'HPE_HEADER_OVERFLOW');
  });

  it('reads 204 and 304 as bodiless even with a Content-Length', () => {
    const parsed = parseEveryCut('response', 'HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n', ['DELETE', 'GET']);
    assert.deepEqual(parsed.messages.map((m) => [m.line, m.body, m.complete]), [['HTTP/1.1 204 No Content', '', true], ['HTTP/1.1 304 Not Modified', '', true]]);
  });

  it('reads a body without length until the connection closes', () => {
    const open = parsePieces('response', [b('HTTP/1.1 200 OK\r\n\r\nstream of bytes')], ['GET']);
    assert.equal(open.messages[0]!.complete, false);
    const closed = parseEveryCut('response', 'HTTP/1.0 200 OK\r\n\r\nstream of bytes', ['GET'], true);
    assert.deepEqual([closed.messages[0]!.body, closed.messages[0]!.complete, closed.outcome], ['stream of bytes', true, 'ok']);
    const te = parseEveryCut('response', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz', ['GET'], true);
    assert.equal(te.messages[0]!.body, 'zz', 'a Transfer-Encoding without chunked reads until close (RFC 9112 §6.3)');
  });

  it('reads a chunked response with trailers', () => {
    const parsed = parseEveryCut('response', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 6\r\n\r\n', ['GET']);
    assert.equal(parsed.messages[0]!.body, 'abc');
    assert.deepEqual(parsed.messages[0]!.rawTrailers, ['X-Sum', '6']);
  });

  it('hands over after 101 and after 2xx to CONNECT', () => {
    const upgraded = parseEveryCut('response', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi', ['GET']);
    assert.deepEqual([upgraded.outcome, upgraded.rest], ['switched', '\x81\x02hi']);
    const tunnel = parseEveryCut('response', 'HTTP/1.1 200 Connection Established\r\n\r\n\x16\x03', ['CONNECT']);
    assert.deepEqual([tunnel.outcome, tunnel.rest], ['switched', '\x16\x03']);
  });

  it('accepts a status line without a reason phrase', () => {
    assert.equal(parseEveryCut('response', 'HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n', ['GET']).messages[0]!.complete, true);
  });

  const refused: Array<[string, string, RegExp]> = [
    ['a response to no request', 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n', /UNEXPECTED_RESPONSE/],
    ['Content-Length with Transfer-Encoding', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /CONTENT_LENGTH/],
    ['two Content-Lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc', /CONTENT_LENGTH/],
    ['a status that is not three digits', 'HTTP/1.1 20 OK\r\n\r\n', /STATUS/],
    ['a version that is not HTTP/1.x', 'HTTP/2.0 200 OK\r\n\r\n', /CONSTANT/],
    ['obs-fold', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n\t2\r\nContent-Length: 0\r\n\r\n', /HEADER_TOKEN/],
    ['a bare LF', 'HTTP/1.1 200 OK\nContent-Length: 0\n\n', /LF_EXPECTED/],
  ];
  for (const [name, bytes, code] of refused) {
    it(`refuses ${name}, however the bytes are cut`, () => {
      parseRefusedEveryCut('response', bytes, code, ['GET']);
    });
  }
});
