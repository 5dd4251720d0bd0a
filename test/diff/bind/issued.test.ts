// Server-issued values, read the same way from a capture and a live answer
// (diff/bind/issued.ts: what bb diff binds and bb replay follows).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { messageValues, parseLooseJson, protoTokens, recordedResponse, requestTokens, responseValues, rewriteHeaderValue, rewriteProtoMessage, rewriteTarget, rewriteTokens, textEncoding, tokensOf, type ResponseView } from '../../../diff/bind/index.js';
import type { HarEntry } from '../../../capture/index.js';
import { encodeItem } from '../../helpers/grpc-items.js';
import { placedTokens, sameIssued, targetTokens } from '../../../diff/bind/issued.js';

describe('tokensOf', () => {
  const table: Array<[string, string[]]> = [
    // A text that reads as a path is also read whole, after its tokens (a JSON string a client may send back whole).
    ['/v1/sessions/session_4f2a-9b/prompts', ['sessions', 'session_4f2a-9b', 'prompts', '/v1/sessions/session_4f2a-9b/prompts']],
    ['sid=<redacted:0123abcd>; theme=dark', ['<redacted:0123abcd>', 'theme', 'dark']],
    ['Bearer eyJhbGciOi.eyJzdWIi.sig', ['Bearer', 'eyJhbGciOi.eyJzdWIi.sig']],
    ['{"price":12.50,"n":123,"id":4711}', ['price', '4711']],
    ['a b c', []],
    // A percent-escape separates: URL-encoded JSON and lists keep their ids whole.
    ['variables=%7B%22id%22%3A%221042%22%7D&ids=5017%2C5018', ['variables', '1042', '5017', '5018']],
  ];
  for (const [text, tokens] of table) it(`splits ${JSON.stringify(text)}`, () => assert.deepEqual(tokensOf(text), tokens));
});

describe('a standard-base64 value is one token, as written or percent-encoded', () => {
  // Its `+` and `/` would cut it into parts whose number and lengths vary from one random value to the next.
  const value = '4witsO+F3O6FXo0Vt+i6+x/n';
  // The values taken whole: a text that is one value, or those after the tokens (placedTokens).
  const wholes = (text: string, target = false) => {
    const { tokens, pieces } = placedTokens(text, target);
    assert.deepEqual(target ? targetTokens(text) : tokensOf(text), tokens);
    return pieces === tokens.length ? tokens.filter((t) => t === text) : tokens.slice(pieces);
  };
  it('issues it whole, then its parts; a URL sends it back whole, encoded in either case; a JSON body whole', () => {
    assert.deepEqual(tokensOf(value), [value, '4witsO', 'F3O6FXo0Vt']);
    assert.deepEqual(wholes('/feed?page=3&cursor=4witsO%2BF3O6FXo0Vt%2Bi6%2Bx%2Fn', true), [value]);
    assert.deepEqual(wholes('/feed?cursor=4witsO%2bF3O6FXo0Vt%2bi6%2bx%2fn&page=3', true), [value]);
    assert.deepEqual(wholes(`{"cursor":"${value}","n":"${value}x","id":"Xk9fQ2pL7aB3dE5g"}`), [value, `${value}x`, 'Xk9fQ2pL7aB3dE5g']);
    // Shown by a `/` alone: whole as a value of its own (a JSON string), or encoded in a query.
    assert.deepEqual(wholes('3tdVnmuO6aPaWEL/Hl9CbJqj'), ['3tdVnmuO6aPaWEL/Hl9CbJqj']);
    assert.deepEqual(wholes('{"c":"3tdVnmuO6aPaWEL/Hl9CbJqj"}'), ['3tdVnmuO6aPaWEL/Hl9CbJqj']);
    assert.deepEqual(wholes('/list?cursor=%2FZyUnIgF3CLOF0xEPBjJshrs', true), ['/ZyUnIgF3CLOF0xEPBjJshrs']);
    assert.deepEqual(wholes('/ZyUnIgF3CLOF0xEPBjJshrs'), ['/ZyUnIgF3CLOF0xEPBjJshrs']);
    assert.deepEqual(wholes('/x6vGAN/Xk9fQ2aB7cD8eF1g'), ['/x6vGAN/Xk9fQ2aB7cD8eF1g']);
    // Padding shows it too; in a target a path's segments before it are not part of it.
    assert.deepEqual(wholes('/cursor/xK9fQ2pLm3Nq7Rt5Vw8Y==?page=2', true), ['xK9fQ2pLm3Nq7Rt5Vw8Y==']);
    // A text that is one value is its first token, whether it drew a `+` or `/` or not (bb shadow pairs them there);
    // a value read whole inside a longer text comes after the tokens, at places of its own.
    const at = (json: unknown) => responseValues({ headers: [], text: JSON.stringify(json) }).map((v) => `${v.place} ${v.value}`);
    assert.deepEqual(at({ next: value }), [`body:$.next~0 ${value}`, 'body:$.next~1 4witsO', 'body:$.next~2 F3O6FXo0Vt']);
    assert.deepEqual(at({ next: 'AbCdEf0123456789xyzW' }), ['body:$.next~0 AbCdEf0123456789xyzW']);
    assert.deepEqual(at({ next: `/feed?cursor=${encodeURIComponent(value)}&n=4711` }), ['body:$.next~0 feed', 'body:$.next~1 cursor', 'body:$.next~2 4witsO', 'body:$.next~3 F3O6FXo0Vt', 'body:$.next~4 4711', `body:$.next~b0 ${value}`]);
  });
  it('reads a text with no separator as the one token it is, as the general walk reads it (the same text and a space)', () => {
    // Separator-free texts of every kind placedTokens tells apart: short, decimal, made, base64-alphabet whole values
    // (16+ characters), with `.` or `~` inside, non-ASCII letters, past the longest token.
    const alphabet = 'abcXYZ019_-.~é';
    const texts = ['', 'abc', 'abcd', '12.50', '-12.50', '4711', 'AbCdEf0123456789xyzW', 'session_4f2a-9b', 'v1.2.3', 'a~b~c', 'naïve1', 'x'.repeat(4097), 'Q'.repeat(4096)];
    for (let i = 0; i < 2000; i++) texts.push(Array.from({ length: Math.floor(Math.random() * 40) }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join(''));
    for (const text of texts) {
      for (const target of [false, true]) assert.deepEqual(placedTokens(text, target), placedTokens(`${text} `, target), JSON.stringify(text));
    }
    assert.deepEqual(placedTokens('AbCdEf0123456789xyzW'), { tokens: ['AbCdEf0123456789xyzW'], pieces: 1 });
    assert.deepEqual(placedTokens('12.50'), { tokens: [], pieces: 0 });
  });

  it("leaves a path, words, short values and other escapes as they were: tokens only", () => {
    for (const text of ['image/svg+xml', 'a+b', 'multipart/form-data; boundary=----x', 'variables=%7B%22id%22%3A%221042%22%7D&ids=5017%2C5018', 'en-US,en;q=0.9', 'Hello world, this is + that', 'application/ld+json', '/files/report-2.pdf']) {
      assert.deepEqual(wholes(text), [], text);
    }
    // A text that reads as a path is whole after its tokens, which keep their places whether it is or not.
    assert.deepEqual(placedTokens('/operations/tIdgwSBbNIDn'), { tokens: ['operations', 'tIdgwSBbNIDn', '/operations/tIdgwSBbNIDn'], pieces: 2 });
    assert.deepEqual(placedTokens('/operations/tIdg.SBbNIDn'), { tokens: ['operations', 'tIdg.SBbNIDn'], pieces: 2 });
    // A request's path: its `/` is the path's, though a JSON string of the same text would be one value.
    for (const target of ['/x6vGAN/Xk9fQ2aB7cD8eF1g', '/rp/F1I/hhiciZrRi8bX4iRX', '/AbCdEf0123456789xyzW']) assert.deepEqual(wholes(target, true), [], target);
    assert.deepEqual(rewriteTarget('/x6vGAN/Xk9fQ2aB7cD8eF1g', new Map([['/x6vGAN/Xk9fQ2aB7cD8eF1g', '/x'], ['Xk9fQ2aB7cD8eF1g', 'Yk9fQ2aB7cD8eF1h']])).text, '/x6vGAN/Yk9fQ2aB7cD8eF1h');
  });
  it("rewrites it whole, percent-encoded again where it was (a `+` in a query is a space), else as its context's encoder writes it", () => {
    const map = new Map([[value, 'Zz9+Yy8/Xx7+Ww6=']]);
    assert.deepEqual(rewriteTokens('/feed?cursor=4witsO%2BF3O6FXo0Vt%2Bi6%2Bx%2Fn&page=3', map), { text: '/feed?cursor=Zz9%2BYy8%2FXx7%2BWw6%3D&page=3', uses: [value] });
    assert.deepEqual(rewriteTokens('/feed?cursor=4witsO%2BF3O6FXo0Vt%2Bi6%2Bx%2Fn', map, encodeURIComponent).text, '/feed?cursor=Zz9%2BYy8%2FXx7%2BWw6%3D');
    assert.deepEqual(rewriteTokens(`{"cursor":"${value}","n":4711}`, map, textEncoding(`{"cursor":"${value}"}`)).text, '{"cursor":"Zz9+Yy8/Xx7+Ww6=","n":4711}');
    // A value the primary issued as one token whose counterpart shows a `+`: the target's query gets it encoded.
    assert.equal(rewriteTokens('/feed?cursor=AbCdEf0123456789xyzW', new Map([['AbCdEf0123456789xyzW', 'Zz9+Yy8/Xx7+Ww6=']]), encodeURIComponent).text, '/feed?cursor=Zz9%2BYy8%2FXx7%2BWw6%3D');
    // Parts around it still rewrite.
    assert.equal(rewriteTokens('/o/4711/feed?cursor=4witsO%2BF3O6FXo0Vt%2Bi6%2Bx%2Fn', new Map([...map, ['4711', '5077']])).text, '/o/5077/feed?cursor=Zz9%2BYy8%2FXx7%2BWw6%3D');
  });
});

describe('responseValues', () => {
  it('reads headers by occurrence and token, Set-Cookie whole, JSON leaves by path (strings and 4+ digit integers)', () => {
    const values = responseValues({
      headers: [
        { name: 'Location', value: '/items/item_abc123' },
        { name: 'Set-Cookie', value: 'sid=a/b+c==; Path=/' },
        { name: 'Date', value: 'Thu, 03 Dec 2026 05:00:00 GMT' },
      ],
      text: '{"id":"item_abc123","n":7,"cursor":123456,"tags":["alpha beta-1"]}',
    });
    assert.deepEqual(values, [
      { place: 'header:location#0~0', value: 'items' },
      { place: 'header:location#0~1', value: 'item_abc123' },
      { place: 'cookie:sid', value: 'a/b+c==' },
      { place: 'body:$.id~0', value: 'item_abc123' },
      { place: 'body:$.cursor', value: '123456' },
      { place: 'body:$.tags[0]~0', value: 'alpha' },
      { place: 'body:$.tags[0]~1', value: 'beta-1' },
    ]);
  });

  it("reads JSON after a packet prefix (Engine.IO's 0{…}), packets joined by \\x1e, and a bare plain-text token", () => {
    assert.deepEqual(responseValues({ headers: [], text: '0{"sid":"lv_VI97HAXpY6yYWAAAC","pingInterval":25000}' }), [
      { place: 'body:$.sid~0', value: 'lv_VI97HAXpY6yYWAAAC' },
      { place: 'body:$.pingInterval', value: '25000' },
    ]);
    assert.deepEqual(responseValues({ headers: [], text: '40{"sid":"abcd1234"}\x1e2' }), [{ place: 'body[0]:$.sid~0', value: 'abcd1234' }]);
    assert.deepEqual(responseValues({ headers: [], text: 'tok_9f8e7d6c\n' }), [{ place: 'body:~0', value: 'tok_9f8e7d6c' }]);
    assert.deepEqual(responseValues({ headers: [], events: ['{"cursor":98765}'] }), [{ place: 'sse[0]:$.cursor', value: '98765' }]);
    // An event's id: a reconnecting client sends the last one back in Last-Event-ID.
    assert.deepEqual(responseValues({ headers: [], events: ['{"n":0}', '{"n":1}'], eventIds: ['', 'evt_Qw3rTy9uIo'] }), [{ place: 'sse[1]@id~0', value: 'evt_Qw3rTy9uIo' }]);
    assert.deepEqual(messageValues('42["joined",{"room":"room_1234"}]', 3), [
      { place: 'ws[3]:$[0]~0', value: 'joined' },
      { place: 'ws[3]:$[1].room~0', value: 'room_1234' },
    ]);
  });

  it('never binds words of prose: error messages, sentences, HTML, prose headers (issue 36 item 3)', () => {
    const values = responseValues({
      headers: [{ name: 'X-Error', value: 'Item not found here' }, { name: 'Location', value: '/items/a1b2c3d4e5f6' }],
      text: '{"errors":[{"message":"Cannot query field \\"name\\" on type \\"Query\\".","code":"GRAPHQL_VALIDATION"}],"id":"a1b2c3d4e5f6"}',
    });
    assert.deepEqual(values, [
      { place: 'header:location#0~0', value: 'items' },
      { place: 'header:location#0~1', value: 'a1b2c3d4e5f6' },
      { place: 'body:$.errors[0].code~0', value: 'GRAPHQL_VALIDATION' },
      { place: 'body:$.id~0', value: 'a1b2c3d4e5f6' },
    ]);
    assert.deepEqual(responseValues({ headers: [], text: '<!DOCTYPE html><html><body><h1>Server error</h1><p>Please retry later</p></body></html>' }), []);
    assert.deepEqual(responseValues({ headers: [], text: 'Internal Server Error' }), []);
    assert.deepEqual(responseValues({ headers: [], events: ['The model is thinking about it'] }), []);
  });

  it("reads an XML answer's leaf texts and attributes by element (a SOAP OrderId), its made tokens only; its words are not issued", () => {
    const soap = '<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><CreateOrderResponse><OrderId>ord_Xk9fQ2aB</OrderId><Order ref="R-20417" kind="retail"/><Status>open</Status><OrderId>ord_7Yt2</OrderId></CreateOrderResponse></soap:Body></soap:Envelope>';
    assert.deepEqual(responseValues({ headers: [{ name: 'Content-Type', value: 'text/xml; charset=utf-8' }], text: soap }), [
      { place: 'xml:OrderId~0', value: 'ord_Xk9fQ2aB' },
      { place: 'xml:Order@ref~0', value: 'R-20417' },
      { place: 'xml:OrderId#1~0', value: 'ord_7Yt2' },
    ]);
    // No type: an XML declaration says it; an XML error's message is prose.
    assert.deepEqual(responseValues({ headers: [], text: '<?xml version="1.0"?><Id>a1b2c3d4e5f6</Id>' }), [{ place: 'xml:Id~0', value: 'a1b2c3d4e5f6' }]);
    assert.deepEqual(responseValues({ headers: [{ name: 'Content-Type', value: 'application/soap+xml' }], text: '<Fault><Reason>No such order was found</Reason></Fault>' }), []);
  });

  it('does not take prose with a brace far in as JSON', () => {
    assert.equal(parseLooseJson('this is a long sentence that has {"a":1} in it'), undefined);
  });
});

describe('rewriteTokens', () => {
  it('replaces whole tokens only, escaped for their context, and lists what it used', () => {
    const map = new Map([['item_abc123', 'item_new/1'], ['<redacted:0123abcd>', 'real"cookie']]);
    assert.deepEqual(rewriteTokens('/items/item_abc123?x=item_abc1234', map, encodeURIComponent), { text: '/items/item_new%2F1?x=item_abc1234', uses: ['item_abc123'] });
    assert.deepEqual(rewriteTokens('{"c":"<redacted:0123abcd>"}', map, (v) => JSON.stringify(v).slice(1, -1)), { text: '{"c":"real\\"cookie"}', uses: ['<redacted:0123abcd>'] });
    assert.deepEqual(rewriteTokens('?v=%7B%22id%22%3A%22item_abc123%22%7D', map), { text: '?v=%7B%22id%22%3A%22item_new/1%22%7D', uses: ['item_abc123'] });
  });
});

describe('sameIssued', () => {
  const base: ResponseView = {
    headers: [
      { name: 'Date', value: 'Sat, 05 Dec 2026 14:00:00 GMT' },
      { name: 'Set-Cookie', value: 'sid=4f2a9b1c7d; Path=/' },
      { name: 'Location', value: '/items/item_abc123' },
      { name: 'Content-Type', value: 'application/json' },
    ],
    text: '{"id":"item_abc123","n":47110}',
    events: ['{"token":"tok_9f8e7d6c"}'],
  };
  const variants: Array<[string, ResponseView, boolean]> = [
    ['the same answer', { ...base, headers: base.headers.map((h) => ({ ...h })) }, true],
    ['another Date, Server and Content-Length (headers that issue nothing)', { ...base, headers: [{ name: 'date', value: 'Sat, 05 Dec 2026 14:00:01 GMT' }, { name: 'Server', value: 'b' }, ...base.headers.slice(1), { name: 'Content-Length', value: '31' }] }, true],
    ['header names in another case', { ...base, headers: base.headers.map((h) => ({ name: h.name.toUpperCase(), value: h.value })) }, true],
    ['another cookie value', { ...base, headers: base.headers.map((h) => (h.name === 'Set-Cookie' ? { ...h, value: 'sid=77aa88bb99; Path=/' } : h)) }, false],
    ['a Location more', { ...base, headers: [...base.headers, { name: 'Location', value: '/items/item_zzz999' }] }, false],
    ['another body', { ...base, text: '{"id":"item_new777","n":47110}' }, false],
    ['no body', { headers: base.headers, events: base.events! }, false],
    ['another event', { ...base, events: ['{"token":"tok_00000000"}'] }, false],
    ['an event fewer', { headers: base.headers, text: base.text! }, false],
    ['a gRPC message more', { ...base, grpc: [encodeItem({ name: 'item_abc123', n: 1 })] }, false],
  ];
  for (const [what, other, same] of variants) {
    it(`${what}: ${same ? 'the same values' : 'may differ'}`, () => {
      assert.equal(sameIssued(base, other), same);
      assert.equal(sameIssued(other, base), same);
      // Its promise: the same, then responseValues gives the same values at the same places (binding them binds nothing).
      if (same) assert.deepEqual(responseValues(other), responseValues(base));
      else assert.notDeepEqual(responseValues(other), responseValues(base));
    });
  }
});

describe('gRPC messages', () => {
  // Item { name = 1 (string), n = 2 (int32) }, as grpc-js sends it (protobufjs).
  const entry = (messages: Array<{ type: 'send' | 'receive'; data: Buffer; cut?: boolean }>): HarEntry =>
    ({
      request: { method: 'POST', url: 'http://127.0.0.1:1/demo.Items/Create', httpVersion: 'HTTP/2', headers: [{ name: 'content-type', value: 'application/grpc' }], cookies: [], queryString: [], headersSize: -1, bodySize: 0 },
      response: { status: 200, statusText: '', httpVersion: 'HTTP/2', headers: [{ name: 'content-type', value: 'application/grpc' }], cookies: [], content: { size: 0, mimeType: 'application/grpc' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      _grpcMessages: messages.map((m) => ({ type: m.type, time: 0, compressed: false, data: m.data.toString('base64'), ...(m.cut ? { _bb: { truncated: 3, length: 9 } } : {}) })),
    }) as unknown as HarEntry;

  it("issues a server message's string tokens and 4+ digit integers at field paths, message by message; a cut message issues nothing", () => {
    const e = entry([
      { type: 'send', data: encodeItem({ name: 'new', n: 0 }) },
      { type: 'receive', data: encodeItem({ name: 'item_9f8e7d6c', n: 4711 }) },
      { type: 'receive', data: encodeItem({ name: 'tok_abc123', n: 7 }), cut: true },
      { type: 'receive', data: encodeItem({ name: 'Item not found in the store', n: 12 }) },
    ]);
    assert.deepEqual(responseValues(recordedResponse(e)), [
      { place: 'grpc[0]:$.1~0', value: 'item_9f8e7d6c' },
      { place: 'grpc[0]:$.2', value: '4711' },
    ]);
  });

  it("reads a client message's values as a JSON body's: string tokens and 4+ digit integers", () => {
    assert.deepEqual(protoTokens(encodeItem({ name: '/items/item_9f8e7d6c?x=1', n: 4711 })), ['items', 'item_9f8e7d6c', '4711']);
    assert.deepEqual(protoTokens(encodeItem({ name: 'ab', n: 999 })), []);
    assert.deepEqual(protoTokens(Buffer.from([0x08, 0x96])), []);
  });

  it("rewrites a client message's string tokens and integer ids with their counterparts, its lengths with them, and lists the uses", () => {
    const map = new Map([['item_9f8e7d6c', 'item_0123456789abcdef'], ['4711', '5017'], ['1000', 'not-a-number']]);
    const r = rewriteProtoMessage(encodeItem({ name: 'get item_9f8e7d6c', n: 4711 }), map);
    assert.deepEqual(r.uses, ['item_9f8e7d6c', '4711']);
    assert.deepEqual(Buffer.from(r.bytes), encodeItem({ name: 'get item_0123456789abcdef', n: 5017 }));
    // An integer whose counterpart is not one stays; nothing to replace gives the bytes back.
    const same = encodeItem({ name: 'other', n: 1000 });
    assert.equal(rewriteProtoMessage(same, map).bytes, same);
    assert.deepEqual(rewriteProtoMessage(same, map).uses, []);
  });
});

describe('Last-Modified sent back in a conditional request', () => {
  const date = 'Sat, 05 Dec 2026 18:47:00 GMT';
  const theirs = 'Sat, 05 Dec 2026 18:47:39 GMT';
  it('is issued whole, read whole from If-Modified-Since, and replaced whole; an If-Range ETag by its tokens', () => {
    assert.deepEqual(responseValues({ headers: [{ name: 'Last-Modified', value: date }] }), [{ place: 'header:last-modified#0', value: date }]);
    assert.ok(requestTokens({ target: '/doc', headers: [['If-Modified-Since', date]] }).includes(date));
    const map = new Map([[date, theirs], ['0a1b2c3d4e5f', 'f5e4d3c2b1a0']]);
    assert.deepEqual(rewriteHeaderValue('If-Modified-Since', date, map), { text: theirs, uses: [date] });
    assert.deepEqual(rewriteHeaderValue('If-Range', '"0a1b2c3d4e5f"', map), { text: '"f5e4d3c2b1a0"', uses: ['0a1b2c3d4e5f'] });
    // Another header holding the date is rewritten by tokens: the date is no token there.
    assert.equal(rewriteHeaderValue('X-Seen', date, map).text, date);
  });

  it('makes answers that differ only in it issue differently (bb shadow learns the target\'s date)', () => {
    const view = (value: string): ResponseView => ({ headers: [{ name: 'last-modified', value }], text: '{}' });
    assert.equal(sameIssued(view(date), view(theirs)), false);
  });
});
