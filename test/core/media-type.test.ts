import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  mediaType, isJsonMedia, isJsonLinesMedia, isEventStreamMedia, isTextMedia, isFormMedia, isZipMedia, isBinaryMedia, isTextualMedia,
} from '../../core/index.js';

describe('media types', () => {
  it('reads the media type alone, whatever the parameters and case', () => {
    assert.equal(mediaType('Application/JSON; charset=UTF-8'), 'application/json');
    assert.equal(mediaType(undefined), '');
    assert.equal(mediaType('  text/event-stream ;x=1'), 'text/event-stream');
  });

  it('agrees, one table, on what each kind is', () => {
    const rows: [string, ('json' | 'jsonl' | 'sse' | 'text' | 'form' | 'zip' | 'binary')[]][] = [
      ['application/json', ['json']],
      ['application/json; charset=utf-8', ['json']],
      ['application/problem+json', ['json']],
      ['application/vnd.api+json', ['json']],
      ['text/json', ['json', 'text']],
      // AWS's JSON protocols (Cognito, DynamoDB, KMS...) and the old x- spelling.
      ['application/x-amz-json-1.1', ['json']],
      ['application/x-amz-json-1.0', ['json']],
      ['application/x-json', ['json']],
      ['application/x-amz-json-2.0', []],
      ['application/x-ndjson', ['jsonl']],
      ['application/jsonl', ['jsonl']],
      ['application/json-seq', ['jsonl']],
      ['text/event-stream', ['sse', 'text']],
      ['text/plain', ['text']],
      ['text/html; charset=utf-8', ['text']],
      ['application/xml', ['text']],
      ['application/atom+xml', ['text']],
      ['application/x-www-form-urlencoded', ['text', 'form']],
      ['Application/X-WWW-Form-Urlencoded; charset=utf-8', ['text', 'form']],
      ['application/x-www-form-urlencoded-v2', []],
      ['application/zip', ['zip', 'binary']],
      ['application/x-zip-compressed', ['zip']],
      ['application/epub+zip', ['zip']],
      ['image/png', ['binary']],
      ['application/octet-stream', ['binary']],
      ['application/grpc', ['binary']],
      ['application/jsonx', []],
      ['application/notjson', []],
      ['', []],
    ];
    for (const [type, kinds] of rows) {
      const got = [
        isJsonMedia(type) && 'json', isJsonLinesMedia(type) && 'jsonl', isEventStreamMedia(type) && 'sse',
        isTextMedia(type) && 'text', isFormMedia(type) && 'form', isZipMedia(type) && 'zip', isBinaryMedia(type) && 'binary',
      ].filter(Boolean);
      assert.deepEqual(got, kinds, type);
      assert.equal(isTextualMedia(type), kinds.some((k) => k === 'json' || k === 'jsonl' || k === 'sse' || k === 'text'), `${type} textual`);
    }
  });
});
