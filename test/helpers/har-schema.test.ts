// The HAR validator the suite checks every capture with (test/helpers/har-schema.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { harProblems } from './har-schema.js';

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
