import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isBbError, parseOrigin } from '../../core/index.js';

/** The message parseOrigin throws for `value`, or undefined when it takes it. */
const refusal = (value: string): string | undefined => {
  try {
    parseOrigin(value, '--target');
    return undefined;
  } catch (err) {
    assert.ok(isBbError(err) && err.code === 'BB_BAD_TARGET', String(err));
    return err.message;
  }
};

describe('parseOrigin', () => {
  it('takes an http(s) origin, with or without its trailing slash', () => {
    for (const [value, origin] of [
      ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
      ['http://127.0.0.1:3000/', 'http://127.0.0.1:3000'],
      ['https://localhost:3443', 'https://localhost:3443'],
      ['http://[::1]:8080', 'http://[::1]:8080'],
    ]) assert.equal(parseOrigin(value!, '--target').origin, origin, value);
  });

  it('refuses a path, a query or a fragment: bb sends each request to its own path, so one would be dropped', () => {
    for (const value of ['http://127.0.0.1:3000/prefix', 'http://127.0.0.1:3000/prefix/', 'http://127.0.0.1:3000/?v=2', 'http://127.0.0.1:3000/#top']) {
      assert.equal(refusal(value), `--target is an origin (scheme, host, port) like http://127.0.0.1:3000, without a path; got '${value}'`);
    }
  });

  it('refuses what is not an http(s) URL, naming the flag', () => {
    for (const value of ['localhost', 'localhost:3000', 'ftp://127.0.0.1', 'ws://127.0.0.1:3000', 'http://', '']) {
      assert.equal(refusal(value), `--target needs a URL like http://127.0.0.1:3000, got '${value}'`, value);
    }
    assert.throws(() => parseOrigin('x', '--candidate'), /^BbError: --candidate needs a URL/);
  });
});
