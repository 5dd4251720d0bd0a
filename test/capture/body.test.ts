// Content decoding and body text (capture/body.ts), as tables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
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

  it('stops at the decoded cap: a whole body past it stays as sent, a start past it decodes as far as the cap', () => {
    // Each coding of 1 MiB repeating one kilobyte of letters: a few kilobytes on the wire, hundreds of times that decoded.
    const block = Buffer.from(Array.from({ length: 1024 }, (_, i) => 97 + ((i * 7919) % 26)));
    const text = Buffer.concat(Array.from({ length: 1024 }, () => block));
    const encoders: Array<[string, (b: Buffer) => Buffer]> = [
      ['gzip', (b) => gzipSync(b)], ['deflate', (b) => deflateSync(b)], ['deflate', (b) => deflateRawSync(b)], ['br', (b) => brotliCompressSync(b)],
    ];
    for (const [coding, encode] of encoders) {
      const wire = encode(text);
      assert.ok(wire.length < 8192, `${coding}: ${wire.length} bytes on the wire`);
      // Within the cap: decoded whole.
      assert.ok(decodeContent(wire, coding, false, { maxDecoded: 1048576 }).bytes.equals(text), coding);
      // Past it, whole: kept as sent, and said why.
      const kept = decodeContent(wire, coding, false, { maxDecoded: 65536 });
      assert.equal(kept.decoded, false, coding);
      assert.ok(kept.bytes.equals(wire), `${coding}: the bytes as sent`);
      assert.equal(kept.undecoded, `${coding}: decodes to more than 65536 bytes, body kept as sent`);
      // Past it, a start asked for: the decoded start, within the cap, marked cut.
      const start = decodeContent(wire, coding, false, { maxDecoded: 65536, startPastCap: true });
      assert.equal(start.cut, true, coding);
      assert.ok(start.bytes.length > 0 && start.bytes.length <= 65536, `${coding}: ${start.bytes.length} bytes`);
      assert.ok(text.subarray(0, start.bytes.length).equals(start.bytes), `${coding}: a start of the body`);
    }
    // Two codings past the cap: kept as sent (no start of a start).
    const twice = decodeContent(gzipSync(gzipSync(text)), 'gzip, gzip', false, { maxDecoded: 65536, startPastCap: true });
    assert.equal(twice.decoded, false);
    assert.match(twice.undecoded!, /decodes to more than 65536 bytes/);
    // The default cap is 64 MiB: 65 members of 1 MiB (gzip members follow each other in one body) pass it.
    const member = gzipSync(text);
    const bomb = Buffer.concat(Array.from({ length: 65 }, () => member));
    assert.match(decodeContent(bomb, 'gzip', false).undecoded!, /^gzip: decodes to more than 67108864 bytes/);
    assert.equal(decodeContent(bomb.subarray(0, 64 * member.length), 'gzip', false).bytes.length, 64 * 1048576);
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
