// One replayed request, pure: the body encoded again as it crossed (each
// recorded Content-Encoding in order; zstd where this Node has an encoder),
// a multipart body rebuilt under the boundary its Content-Type names, and the
// head's bytes: Host in its place, Content-Length to the body sent, chunked
// framing with trailers as the original had.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as zlib from 'node:zlib';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { encodeBody, liveResponse, requestParts, wireRequest, type RequestParts } from '../../../scenario/replay/request.js';
import { BIND_DECODED_BYTES, responseValues } from '../../../diff/index.js';
import type { HarRequest } from '../../../capture/index.js';

const TEXT = Buffer.from('{"kind":"replayed","n":12345}');
const zstd = zlib as { zstdCompressSync?: (b: Buffer) => Buffer; zstdDecompressSync?: (b: Buffer) => Buffer };

describe('encodeBody', () => {
  const table: Array<[string, string | undefined, (b: Buffer) => Buffer]> = [
    ['gzip', 'gzip', gunzipSync],
    ['x-gzip', 'x-gzip', gunzipSync],
    ['deflate', 'deflate', inflateSync],
    ['br', 'br', brotliDecompressSync],
    ['two codings in the order listed (gzip then br)', 'gzip, br', (b) => gunzipSync(brotliDecompressSync(b))],
    ['identity', 'identity', (b) => b],
    ['no Content-Encoding', undefined, (b) => b],
  ];
  for (const [name, coding, decode] of table) {
    it(`${name}: the body decodes back to the recorded text`, () => assert.deepEqual(decode(encodeBody(TEXT, coding)), TEXT));
  }

  it(`zstd: ${zstd.zstdCompressSync ? 'encoded with this Node’s encoder' : 'this Node has no encoder, so the body goes as the capture holds it'}`, () => {
    const sent = encodeBody(TEXT, 'zstd');
    if (zstd.zstdCompressSync) assert.deepEqual(zstd.zstdDecompressSync!(sent), TEXT);
    else assert.deepEqual(sent, TEXT);
  });

  it('goes as held: a coding nobody can apply, bytes the capture kept as sent, bytes that already decode as declared, an empty body', () => {
    assert.deepEqual(encodeBody(TEXT, 'compress'), TEXT);
    assert.deepEqual(encodeBody(TEXT, 'gzip, compress'), TEXT);
    assert.deepEqual(encodeBody(TEXT, 'gzip', true), TEXT);
    const gz = zlib.gzipSync(TEXT);
    assert.deepEqual(encodeBody(gz, 'gzip'), gz);
    assert.equal(encodeBody(Buffer.alloc(0), 'gzip').length, 0);
    // Bytes that decode as declared to more than bb decodes (a HAR of another tool that kept them raw): as they are,
    // not gzipped once more.
    const member = zlib.gzipSync(Buffer.alloc(1048576, 'a'));
    const bomb = Buffer.concat(Array.from({ length: 65 }, () => member));
    assert.ok(encodeBody(bomb, 'gzip').equals(bomb));
  });
});

// What binding reads of a live answer (the replay's target, bb shadow's primary and mirrors): decoded as the capture
// decodes, as far as BIND_DECODED_BYTES. 256 KiB of gzip decoded to 256 MiB before, on bb shadow's relay thread.
describe('liveResponse', () => {
  const json = ['content-type', 'application/json', 'content-encoding', 'gzip'];
  it('decodes a coded answer whole within BIND_DECODED_BYTES, and only its start past it', () => {
    const whole = liveResponse(200, json, zlib.gzipSync('{"id":"a1"}')).view;
    assert.deepEqual([whole.text, whole.truncated], ['{"id":"a1"}', undefined]);
    const long = JSON.stringify({ id: 'a1c9f2e7', pad: 'x'.repeat(2 * BIND_DECODED_BYTES) });
    const start = liveResponse(200, json, zlib.gzipSync(long)).view;
    assert.equal(start.truncated, true);
    assert.ok(start.text!.length > 0 && start.text!.length <= BIND_DECODED_BYTES, `${start.text!.length} characters`);
    assert.ok(long.startsWith(start.text!));
    // Read as a start: its values before the cut bind.
    assert.deepEqual(responseValues(start).filter((v) => v.value === 'a1c9f2e7').map((v) => v.place), ['body:$.id~0']);
    // A bomb: 600 KB that decode to 600 MiB, decoded no further than the cap.
    const member = zlib.gzipSync(Buffer.alloc(1048576, 'a'));
    const bomb = liveResponse(200, ['content-type', 'text/plain', 'content-encoding', 'gzip'], Buffer.concat(Array.from({ length: 600 }, () => member))).view;
    assert.equal(bomb.truncated, true);
    assert.ok(bomb.text!.length <= BIND_DECODED_BYTES && /^a+$/.test(bomb.text!));
  });
});

/** A HAR request with the fields the replay reads. */
function harRequest(extra: Partial<HarRequest>): HarRequest {
  return { method: 'POST', url: 'http://app.example:8080/upload?x=1', httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: 0, ...extra } as HarRequest;
}

describe('requestParts', () => {
  it('rebuilds a multipart body given only as params under the boundary its Content-Type names', () => {
    const mime = 'multipart/form-data; boundary="----WebKitFormBoundaryAbC123"';
    const parts = requestParts(harRequest({
      headers: [{ name: 'Content-Type', value: mime }],
      postData: { mimeType: mime, params: [{ name: 'title', value: 'hello' }, { name: 'doc', fileName: 'a.txt', contentType: 'text/plain', value: 'two\nlines' }] },
    }));
    assert.equal(parts.body!.text, [
      '------WebKitFormBoundaryAbC123\r\nContent-Disposition: form-data; name="title"\r\n\r\nhello\r\n',
      '------WebKitFormBoundaryAbC123\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\ntwo\nlines\r\n',
      '------WebKitFormBoundaryAbC123--\r\n',
    ].join(''));
  });

  it('keeps a multipart text as recorded, and URL-encodes params without a boundary', () => {
    const text = '--b1\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b1--\r\n';
    assert.equal(requestParts(harRequest({ postData: { mimeType: 'multipart/form-data; boundary=b1', text } })).body!.text, text);
    const form = requestParts(harRequest({ postData: { mimeType: 'application/x-www-form-urlencoded', params: [{ name: 'q', value: 'a b&c' }] } }));
    assert.equal(form.body!.text, 'q=a%20b%26c');
  });

  it('leaves HTTP/2 pseudo-headers out (they are the request line) and keeps names in case and order', () => {
    const parts = requestParts(harRequest({ method: 'GET', httpVersion: 'HTTP/2.0', headers: [{ name: ':method', value: 'GET' }, { name: ':path', value: '/upload?x=1' }, { name: 'X-B', value: '2' }, { name: 'a', value: '1' }] }));
    assert.equal(parts.target, '/upload?x=1');
    assert.deepEqual(parts.headers, [['X-B', '2'], ['a', '1']]);
  });
});

describe('wireRequest', () => {
  const parts = (headers: Array<[string, string]>, extra: Partial<RequestParts> = {}): RequestParts => ({ method: 'POST', target: '/p', headers, ...extra });

  it('sets Host in its place and Content-Length to the body sent (re-encoded), nothing added', () => {
    const wire = wireRequest(parts([['X-A', '1'], ['Host', 'old:1'], ['Content-Encoding', 'gzip'], ['Content-Length', '9']], { body: { text: TEXT.toString(), base64: false, mime: 'application/json' } }), 'new:2');
    const sent = zlib.gzipSync(TEXT).length;
    assert.equal(wire.head.toString('latin1'), `POST /p HTTP/1.1\r\nX-A: 1\r\nHost: new:2\r\nContent-Encoding: gzip\r\nContent-Length: ${sent}\r\n\r\n`);
    assert.deepEqual(gunzipSync(wire.body), TEXT);
  });

  it('puts Host first when the capture had none (an HTTP/2 entry) and adds Content-Length only for a body', () => {
    assert.equal(wireRequest(parts([['accept', '*/*']], { method: 'GET' }), 'h:3').head.toString('latin1'), 'GET /p HTTP/1.1\r\nHost: h:3\r\naccept: */*\r\n\r\n');
    assert.equal(wireRequest(parts([], { body: { text: 'abc', base64: false, mime: 'text/plain' } }), 'h:3').head.toString('latin1'), 'POST /p HTTP/1.1\r\nHost: h:3\r\nContent-Length: 3\r\n\r\n');
  });

  it('frames a chunked original as chunks, its trailers after the last, and keeps an HTTP/1.0 request line', () => {
    const wire = wireRequest(parts([['Host', 'x'], ['Transfer-Encoding', 'chunked']], { body: { text: 'hello', base64: false, mime: 'text/plain' }, trailers: [['X-Sum', 'abc']] }), 'h:4');
    assert.equal(wire.head.toString('latin1'), 'POST /p HTTP/1.1\r\nHost: h:4\r\nTransfer-Encoding: chunked\r\n\r\n');
    assert.equal(wire.body.toString('latin1'), '5\r\nhello\r\n0\r\nX-Sum: abc\r\n\r\n');
    assert.match(wireRequest(parts([], { method: 'GET', version: '1.0' }), 'h:5').head.toString('latin1'), /^GET \/p HTTP\/1\.0\r\n/);
  });
});
