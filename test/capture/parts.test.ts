// Tables for the pure pieces: SSE parsing, content decoding, wire helpers, and the HAR validator itself.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { EventStreamParser } from '../../core/index.js';
import { bodyText, decodeContent } from '../../capture/body.js';
import { parseExtensions, parseRefusedPacket, parseSetCookie, requestUrl, parseParams } from '../../capture/http-parts.js';
import { Redactor } from '../../capture/redact.js';
import { harProblems } from '../helpers/har-schema.js';

describe('EventStreamParser', () => {
  const table: Array<[string, string[], Array<[string, string, string]>]> = [
    ['default event name and id', ['data: a\n\n'], [['message', '', 'a']]],
    ['multi-line data joined with LF', ['data: a\ndata: b\n\n'], [['message', '', 'a\nb']]],
    ['comments and retry make no events', [': keep-alive\nretry: 10\n\n'], []],
    ['event name resets, id persists', ['id: 1\nevent: x\ndata: a\n\ndata: b\n\n'], [['x', '1', 'a'], ['message', '1', 'b']]],
    ['no space after the colon', ['data:a\n\n'], [['message', '', 'a']]],
    ['only the first space is stripped', ['data:  a\n\n'], [['message', '', ' a']]],
    ['a field without colon', ['data\n\n'], [['message', '', '']]],
    ['CR, LF and CRLF line ends', ['data: a\rdata: b\r\n\r\ndata: c\n\n'], [['message', '', 'a\nb'], ['message', '', 'c']]],
    ['a UTF-8 character split across chunks', [Buffer.from('data: é\n\n').subarray(0, 7).toString('latin1'), Buffer.from('data: é\n\n').subarray(7).toString('latin1')], [['message', '', 'é']]],
    ['a last event without its blank line is dropped', ['data: a\n\ndata: b\n'], [['message', '', 'a']]],
    ['a leading BOM is ignored', ['\ufeffdata: a\n\n'], [['message', '', 'a']]],
    ['an id with NUL is ignored', ['id: a\0b\ndata: x\n\n'], [['message', '', 'x']]],
  ];
  for (const [name, chunks, expected] of table) {
    it(name, () => {
      const p = new EventStreamParser();
      chunks.forEach((c, i) => p.push(name.includes('UTF-8') ? Buffer.from(c, 'latin1') : Buffer.from(c), 1000 * (i + 1)));
      assert.deepEqual(p.end(9000).map((e) => [e.eventName, e.eventId, e.data]), expected);
    });
  }
});

describe('decodeContent and bodyText', () => {
  it('says why a body stays raw', () => {
    const table: Array<[string | undefined, Buffer, boolean, RegExp | undefined]> = [
      [undefined, Buffer.from('x'), false, undefined],
      ['identity', Buffer.from('x'), false, undefined],
      ['gzip', gzipSync('x'), true, undefined],
      ['zstd', Buffer.from('x'), false, /^zstd: no decoder/],
      ['compress', Buffer.from('x'), false, /unknown content-coding/],
      ['gzip', Buffer.from('x'), false, /does not decode/],
    ];
    for (const [coding, bytes, decoded, why] of table) {
      const r = decodeContent(bytes, coding, false);
      assert.equal(r.decoded, decoded, String(coding));
      if (why) assert.match(r.undecoded!, why);
      else assert.equal(r.undecoded, undefined);
    }
  });

  it('decodes what arrived of a stream cut at the cap', () => {
    const text = Buffer.from('0123456789'.repeat(1000));
    const wire = gzipSync(text, { level: 0 });
    const r = decodeContent(wire.subarray(0, 5000), 'gzip', true);
    assert.ok(r.decoded);
    assert.ok(r.bytes.length > 0 && text.subarray(0, r.bytes.length).equals(r.bytes));
  });

  it('keeps text as text and everything else as base64', () => {
    const table: Array<[Buffer, string, boolean]> = [
      [Buffer.from('{"a":1}'), 'application/json', false],
      [Buffer.from('plain é'), '', false],
      [Buffer.from('looks like text'), 'image/png', true],
      [Buffer.from('{"a":1}'), 'application/vnd.api+json', false],
      [Buffer.from([0x00, 0x41]), 'text/plain', true],
      [Buffer.from([0xc3]), 'text/plain', true],
      [Buffer.from('\ufeffbom'), 'text/plain', false],
    ];
    for (const [bytes, mime, base64] of table) {
      const r = bodyText(bytes, mime);
      assert.equal(r.base64, base64, `${mime} ${bytes.toString('hex')}`);
      assert.ok((base64 ? Buffer.from(r.text, 'base64') : Buffer.from(r.text, 'utf8')).equals(bytes), 'round trip');
    }
  });
});

describe('wire helpers', () => {
  it('builds the URL the client addressed', () => {
    const table: Array<[string, string, string[], string, boolean]> = [
      ['http', '/a?b=1', ['Host', 'h:1'], 'http://h:1/a?b=1', false],
      ['https', '/', ['host', 'secure.test'], 'https://secure.test/', false],
      ['http', 'http://abs.test/x', ['Host', 'other'], 'http://abs.test/x', false],
      ['http', '/nohost', [], 'http://127.0.0.1:8080/nohost', false],
      ['http', '*', ['Host', 'h'], 'http://h/', true],
    ];
    for (const [scheme, target, headers, url, keep] of table) {
      assert.deepEqual(requestUrl(scheme, target, headers, 'http://127.0.0.1:8080/'), { url, keepTarget: keep }, target);
    }
  });

  it('parses query pairs, decoding escapes and plus', () => {
    assert.deepEqual(parseParams('a=1&b=x+y%21&c&=v&bad=%E0%A4%A'), [
      { name: 'a', value: '1' }, { name: 'b', value: 'x y!' }, { name: 'c', value: '' }, { name: '', value: 'v' }, { name: 'bad', value: '%E0%A4%A' },
    ]);
  });

  it('parses Set-Cookie attributes', () => {
    assert.deepEqual(parseSetCookie('id=a3f; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Domain=x.test; Secure; SameSite=Lax'), {
      name: 'id', value: 'a3f', expires: '2015-10-21T07:28:00.000Z', domain: 'x.test', secure: true, sameSite: 'Lax',
    });
    assert.equal(parseSetCookie('novalue'), undefined);
  });

  it('parses negotiated WebSocket extensions', () => {
    assert.deepEqual(parseExtensions('permessage-deflate; server_max_window_bits=10; client_no_context_takeover, x-other; a="q"'), {
      'permessage-deflate': { server_max_window_bits: 10, client_no_context_takeover: true },
      'x-other': { a: 'q' },
    });
    assert.deepEqual(parseExtensions(undefined), {});
  });

  it('reads the head of a refused packet when it parses', () => {
    assert.deepEqual(parseRefusedPacket(Buffer.from('GET /x HTTP/1.1\r\nHost: h\r\nbroken line\r\n\r\nbody')), {
      method: 'GET', target: '/x', httpVersion: '1.1', rawHeaders: ['Host', 'h'],
    });
    assert.equal(parseRefusedPacket(Buffer.from('\x16\x03\x01garbage')), undefined);
    assert.equal(parseRefusedPacket(undefined), undefined);
  });
});

describe('Redactor', () => {
  const r = new Redactor(Buffer.alloc(32, 7), { json: ['extra'] });
  it('redacts string values of whole keys only, at any depth, any case', () => {
    const v = { TOKEN: 'a', token_count: 'b', prompt_tokens: 11, token: 5, list: [{ password: 'p' }, 'password'], extra: 'e', deep: { client_secret: null } };
    assert.equal(r.jsonValue(v), true);
    assert.deepEqual(v, {
      TOKEN: r.placeholder('a'), token_count: 'b', prompt_tokens: 11, token: 5, list: [{ password: r.placeholder('p') }, 'password'],
      extra: r.placeholder('e'), deep: { client_secret: null },
    });
  });
  it('leaves non-secret text untouched, byte for byte', () => {
    assert.equal(r.jsonText('{ "a" : 1 }'), undefined);
    assert.equal(r.jsonText('not json'), undefined);
    assert.equal(r.queryString('a=1&b=%20'), 'a=1&b=%20');
  });
  it('keeps the Authorization scheme and Set-Cookie attributes', () => {
    assert.equal(r.headerValue('authorization', 'Bearer abc'), `Bearer ${r.placeholder('abc')}`);
    assert.equal(r.headerValue('Set-Cookie', 'a=b; Path=/'), `a=${r.placeholder('b')}; Path=/`);
    assert.equal(r.headerValue('X-Other', 'v'), 'v');
  });
});

describe('the HAR validator', () => {
  const valid = () => ({
    log: {
      version: '1.2', creator: { name: 'bb', version: '0' },
      entries: [{
        startedDateTime: '2025-01-01T00:00:00.000Z', time: 1, cache: {},
        request: { method: 'GET', url: 'http://h/', httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: 0 },
        response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: 0 },
        timings: { send: 0, wait: 1, receive: 0 },
      }],
    },
  });
  it('accepts a minimal valid HAR', () => {
    assert.deepEqual(harProblems(valid()), []);
  });
  it('flags negative timings, missing fields and wrong types', () => {
    const a = valid();
    a.log.entries[0]!.timings.wait = -2;
    assert.match(harProblems(a).join('\n'), /timings\/wait must be ≥ 0 or -1/);
    const b = valid() as { log: Record<string, unknown> };
    delete b.log.creator;
    assert.match(harProblems(b).join('\n'), /creator/);
    const c = valid();
    (c.log.entries[0]!.response.content as { size: unknown }).size = 'big';
    assert.match(harProblems(c).join('\n'), /content\/size/);
  });
});
