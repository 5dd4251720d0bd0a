// Content decoding and body text (capture/body.ts), as tables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { bodyText, decodeContent } from '../../capture/body.js';

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
    assert.equal(r.decoded, true);
    // Level 0 stores the text as is: the 5000 wire bytes less gzip's 10-byte header and a 5-byte block header.
    assert.equal(r.bytes.length, 4985);
    assert.ok(text.subarray(0, r.bytes.length).equals(r.bytes));
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
