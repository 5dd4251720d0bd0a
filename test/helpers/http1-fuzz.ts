// Inputs for the differential parser tests: the hardening corpus (the
// smuggling and malformed cases bb's proxy tests send) and seeded generators
// of valid and near-valid requests and responses. Same seed, same bytes.
import { prng } from './scripted-upstream.js';

/** One input: a name to report and the bytes. */
export interface FuzzCase {
  name: string;
  bytes: Buffer;
}

/** A response input: the method of the request it answers, too. */
export interface ResponseCase extends FuzzCase {
  method: string;
}

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const big = 'x'.repeat(20 * 1024);

/** The hardening corpus for requests (test/proxy/http1/tap-bad-input.test.ts's offences and their relatives). */
export const requestCorpus: FuzzCase[] = [
  ['not HTTP', 'HELLO THERE\r\n\r\n'],
  ['unknown version', 'GET / HTTP/7.3\r\nHost: x\r\n\r\n'],
  ['header without colon', 'GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n'],
  ['header name with a space', 'GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n'],
  ['control character in a value', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'],
  ['bare LF with NUL', 'GET / HTTP/1.1\nHost: x\n\0\n\n'],
  ['bare LF', 'GET / HTTP/1.1\nHost: x\n\n'],
  ['bare CR', 'GET / HTTP/1.1\rHost: x\r\r'],
  ['header over 16 KiB', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`],
  ['request line over 16 KiB', `GET /${big} HTTP/1.1\r\nHost: x\r\n\r\n`],
  ['CL with TE', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['TE with CL', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n'],
  ['two CLs', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde'],
  ['two equal CLs', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc'],
  ['CL list', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc'],
  ['CL not a number', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\nabc'],
  ['CL with plus', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc'],
  ['CL empty', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n'],
  ['chunked not last', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n'],
  ['chunked twice', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ['TE identity', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n'],
  ['TE with a space before the colon', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n'],
  ['TE obs-folded', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n'],
  ['TE with a vertical tab', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\x0bchunked\r\n\r\n0\r\n\r\n'],
  ['obs-fold', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n'],
  ['bad chunk size', 'POST /chunky HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\nZZ-not-hex\r\n\r\n'],
  ['chunk size with 0x', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x4\r\nabcd\r\n0\r\n\r\n'],
  ['chunk size with a space', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4 \r\nabcd\r\n0\r\n\r\n'],
  ['chunk size overflow', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000004\r\nabcd\r\n0\r\n\r\n'],
  ['chunk data too long', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n'],
  ['chunk LF only', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\nabcd\n0\n\n'],
  ['chunk ext bare LF', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;a\nabcd\r\n0\r\n\r\n'],
  ['good chunked with extensions', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b;c="d e"\r\nabcd\r\n0;z\r\nX-T: 1\r\n\r\n'],
  ['good pipeline', 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nokGET /3 HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['pipeline with a bad second', 'GET /pipelined-first HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nBroken\r\n\r\n'],
  ['no Host', 'GET / HTTP/1.1\r\n\r\n'],
  ['HTTP/1.0 without Host', 'GET / HTTP/1.0\r\n\r\n'],
  ['leading CRLF', '\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['NUL in target', 'GET /\0 HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['tab in target', 'GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['lower-case method', 'get / HTTP/1.1\r\nHost: x\r\n\r\n'],
].map(([name, bytes]) => ({ name: name!, bytes: b(bytes!) }));

/** The hardening corpus for responses. */
export const responseCorpus: ResponseCase[] = [
  ['CL with TE', 'GET', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ['two CLs', 'GET', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc'],
  ['bare LF', 'GET', 'HTTP/1.1 200 OK\nContent-Length: 2\n\nok'],
  ['obs-fold', 'GET', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n'],
  ['bad chunk', 'GET', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n'],
  ['chunked with trailers', 'GET', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nok\r\n0\r\nX-T: 1\r\n\r\n'],
  ['HEAD with CL', 'HEAD', 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n'],
  ['204 with CL', 'DELETE', 'HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n'],
  ['close-delimited', 'GET', 'HTTP/1.1 200 OK\r\n\r\nuntil close'],
  ['TE gzip', 'GET', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nuntil close'],
  ['100 then 200', 'POST', 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!'],
  ['103 then 200', 'GET', 'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!'],
  ['no reason phrase', 'GET', 'HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n'],
  ['status 2000', 'GET', 'HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n'],
  ['short CL', 'GET', 'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc'],
  // A response head may be 256 KiB (proxy/http1/parser.ts MAX_RESPONSE_HEAD_BYTES; Node given the same cap).
  ['header of 20 KiB', 'GET', `HTTP/1.1 200 OK\r\nX-Big: ${big}\r\nContent-Length: 0\r\n\r\n`],
  ['header over 256 KiB', 'GET', `HTTP/1.1 200 OK\r\nX-Big: ${'x'.repeat(257 * 1024)}\r\nContent-Length: 0\r\n\r\n`],
].map(([name, method, bytes]) => ({ name: name!, method: method!, bytes: b(bytes!) }));

/** A seeded picker: pick(list) with `rare` entries chosen less often. */
function picker(seed: number) {
  const next = prng(seed);
  const pick = <T>(common: T[], rare: T[] = [], rareChance = 0.08): T => {
    const list = rare.length > 0 && next() < rareChance ? rare : common;
    return list[Math.floor(next() * list.length)]!;
  };
  return { next, pick, int: (n: number) => Math.floor(next() * n) };
}

type Pick = ReturnType<typeof picker>;

const interesting = ['\r', '\n', ' ', '\t', ':', ';', '0', 'a', '\0', '\x7f', '\x80', ',', '"', '\x0b'];

/** Maybe changes one byte: insert, replace or delete, at a random place. */
function mutate(r: Pick, s: string): string {
  if (r.next() > 0.15) return s;
  const at = r.int(s.length);
  const ch = r.pick(interesting);
  const op = r.int(3);
  if (op === 0) return s.slice(0, at) + ch + s.slice(at);
  if (op === 1) return s.slice(0, at) + ch + s.slice(at + 1);
  return s.slice(0, at) + s.slice(at + 1);
}

const eol = (r: Pick): string => r.pick(['\r\n'], ['\n', '\r', '\r\r\n'], 0.03);

function fields(r: Pick): string {
  let out = '';
  const n = r.int(4);
  for (let i = 0; i < n; i++) {
    out += r.pick(
      ['X-A: 1', 'x-dup: 1', 'X-Sp:  padded  ', 'Accept: */*', 'X-Empty:', 'User-Agent: fuzz/1.0', 'X-Obs: a\x80b', 'X-Tab:\tv\t'],
      ['X-Bad : 1', ' X-Fold: 1', 'X-Ctl: a\x01b', 'NoColon', ':empty', 'X-Cr: a\rb', 'X-Del: a\x7fb', 'X\x80: 1'],
    ) + eol(r);
  }
  return out;
}

function chunkedBody(r: Pick): string {
  let out = '';
  const n = r.int(3);
  for (let i = 0; i < n; i++) {
    const len = 1 + r.int(12);
    const size = r.pick([len.toString(16), len.toString(16).toUpperCase(), '0' + len.toString(16)], ['0x' + len.toString(16), (len + 1).toString(16), '-' + len, len + ' ', ' ' + len]);
    const ext = r.pick(['', '', ';a', ';a=b', ';a="q d"', ';a=b;c'], [' ;a', '; a', ';a =b', ';"x"', ';a=b c', ';a="\\"', ';a=\x01']);
    out += size + ext + eol(r) + 'd'.repeat(len) + r.pick(['\r\n'], ['', '\n', 'x\r\n']);
  }
  out += r.pick(['0', '0', '00', '0;x=1'], ['', '0 ', '1']) + eol(r);
  out += r.pick(['', '', 'X-T: 1\r\n'], ['bad trailer\r\n', 'Content-Length: 5\r\n', ' fold\r\n']) + r.pick(['\r\n'], ['\n', '']);
  return out;
}

/** Framing headers and the body that goes with them (or nearly goes with them). */
function framing(r: Pick, request: boolean): string {
  const kind = r.int(request ? 5 : 6);
  const body = 'b'.repeat(r.int(6));
  if (kind === 0) return eol(r);
  if (kind === 1) {
    const cl = r.pick([String(body.length)], ['+' + body.length, body.length + ' ,', '0' + body.length, body.length + ', ' + body.length, String(body.length + 1), '', '0x1']);
    return `Content-Length: ${cl}${eol(r)}${r.next() < 0.1 ? `Content-Length: ${cl}\r\n` : ''}${eol(r)}${body}`;
  }
  if (kind <= 3) {
    const te = r.pick(['chunked', 'Chunked'], ['CHUNKED', 'gzip, chunked', 'chunked, gzip', 'identity', 'chunked,', ' chunked ', 'chunked;q=1', 'chunked, chunked', 'x chunked']);
    const cl = r.next() < 0.1 ? 'Content-Length: 3\r\n' : '';
    return `Transfer-Encoding: ${te}${eol(r)}${cl}${eol(r)}${chunkedBody(r)}`;
  }
  if (kind === 4) return `Content-Length: 0${eol(r)}${eol(r)}`;
  return `${eol(r)}close-delimited`;
}

/** Seeded valid and near-valid requests, 1 to 3 pipelined per case. */
export function fuzzRequests(seed: number, count: number): FuzzCase[] {
  const r = picker(seed);
  return Array.from({ length: count }, (_, i) => {
    let s = '';
    const n = 1 + r.int(3);
    for (let k = 0; k < n; k++) {
      const method = r.pick(['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'], ['get', 'FOO', 'GET\t', 'G:T']);
      const target = r.pick(['/', '/a/b?c=d', '/%20x', `/${k}`, 'http://example.com/x'], ['*', '/a b', '/a"b', '/{x}', '/\x7f', '/\xe9', '', 'foo', '/a#frag', '//x', '/a|b']);
      const version = r.pick(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'], ['HTTP/1.2', 'HTTP/2.0', 'http/1.1', 'HTTP/1', 'HTTP/1.1 ']);
      const host = r.pick(['Host: x' + eol(r)], ['', 'Host: a\r\nHost: b\r\n', 'Host:\r\n'], 0.05);
      s += `${method} ${target} ${version}${eol(r)}${host}${fields(r)}${framing(r, true)}`;
    }
    return { name: `request seed ${seed} #${i}`, bytes: b(mutate(r, s)) };
  });
}

/** Seeded valid and near-valid responses, each with the method it answers. */
export function fuzzResponses(seed: number, count: number): ResponseCase[] {
  const r = picker(seed);
  return Array.from({ length: count }, (_, i) => {
    const method = r.pick(['GET', 'GET', 'POST'], ['HEAD']);
    const info = r.pick([''], ['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n', 'HTTP/1.1 102 Processing\r\n\r\n'], 0.2);
    const line = r.pick(['HTTP/1.1 200 OK', 'HTTP/1.1 404 Not Found', 'HTTP/1.0 200 OK', 'HTTP/1.1 500 Oops'], ['HTTP/1.1 204 No Content', 'HTTP/1.1 304 Not Modified', 'HTTP/1.1 200', 'HTTP/1.1 200 ', 'HTTP/1.1 99 x', 'HTTP/1.1 2000 x', 'HTTP/2 200', 'HTTP/1.1 200 \x01', 'HTTP/1.1  200 OK', 'http/1.1 200 OK']);
    const s = `${info}${line}${eol(r)}${fields(r)}${framing(r, false)}`;
    return { name: `response seed ${seed} #${i}`, method, bytes: b(mutate(r, s)) };
  });
}
