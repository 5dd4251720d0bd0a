// Wire helpers (capture/http-parts.ts), as tables: URLs, query pairs, Set-Cookie, extensions, refused packets.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseExtensions, parseRefusedPacket, parseSetCookie, requestUrl, parseParams } from '../../capture/http-parts.js';

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
