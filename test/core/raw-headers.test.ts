import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { headerPairs, headerValue, headerValues, pairValue, pairValues, serializeHead } from '../../core/index.js';

const raw = ['Host', 'a.test', 'Set-Cookie', 'a=1', 'set-cookie', 'b=2', 'X-Empty', ''];

describe('raw headers', () => {
  it('keeps order, case and duplicates as pairs', () => {
    assert.deepEqual(headerPairs(raw), [
      { name: 'Host', value: 'a.test' }, { name: 'Set-Cookie', value: 'a=1' }, { name: 'set-cookie', value: 'b=2' }, { name: 'X-Empty', value: '' },
    ]);
  });

  it('looks names up case-insensitively: the first value, or every value in order', () => {
    assert.equal(headerValue(raw, 'SET-COOKIE'), 'a=1');
    assert.deepEqual(headerValues(raw, 'set-cookie'), ['a=1', 'b=2']);
    assert.equal(headerValue(raw, 'x-empty'), '');
    assert.equal(headerValue(raw, 'absent'), undefined);
    assert.equal(headerValue(['Odd'], 'odd'), undefined, 'a name without a value is not a header');
  });

  it('looks names up in HAR-style name/value lists the same way', () => {
    const pairs = headerPairs(raw);
    assert.equal(pairValue(pairs, 'SET-COOKIE'), 'a=1');
    assert.deepEqual(pairValues(pairs, 'Set-Cookie'), ['a=1', 'b=2']);
    assert.equal(pairValue(pairs, 'x-empty'), '');
    assert.equal(pairValue(pairs, 'absent'), undefined);
    assert.equal(pairValue(undefined, 'host'), undefined);
    assert.deepEqual(pairValues(undefined, 'host'), []);
  });

  it('serializes an HTTP/1.1 head byte for byte as the headers came (RFC 9112 section 2.1)', () => {
    assert.equal(
      serializeHead('HTTP/1.1 103 Early Hints', ['Link', '</a.css>; rel=preload', 'link', '</b.js>; rel=preload']),
      'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nlink: </b.js>; rel=preload\r\n\r\n',
    );
    assert.equal(serializeHead('HTTP/1.1 204 No Content', []), 'HTTP/1.1 204 No Content\r\n\r\n');
  });
});
