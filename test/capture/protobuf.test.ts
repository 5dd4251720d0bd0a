// The schema-less protobuf decoder, on the literal bytes of the protobuf
// encoding guide (https://protobuf.dev/programming-guides/encoding/).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtobuf, protoFields } from '../../capture/protobuf.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('decodeProtobuf', () => {
  it('reads a varint field: "08 96 01" is field 1 = 150 (encoding guide, "A Simple Message")', () => {
    assert.deepEqual(decodeProtobuf(hex('08 96 01')), { 1: 150 });
  });

  it('reads a string: "12 07 74 65 73 74 69 6e 67" is field 2 = "testing" (encoding guide, "Length-Delimited Records")', () => {
    assert.deepEqual(decodeProtobuf(hex('12 07 74 65 73 74 69 6e 67')), { 2: 'testing' });
  });

  it('reads a nested message: "1a 03 08 96 01" is field 3 = { 1: 150 } (encoding guide, "Submessages")', () => {
    assert.deepEqual(decodeProtobuf(hex('1a 03 08 96 01')), { 3: { 1: 150 } });
  });

  it('reads repeated fields as arrays (encoding guide, "Repeated Elements": 22 05 68 65 6c 6c 6f 28 01 28 02 28 03)', () => {
    assert.deepEqual(decodeProtobuf(hex('22 05 68 65 6c 6c 6f 28 01 28 02 28 03')), { 4: 'hello', 5: [1, 2, 3] });
  });

  it('reads fixed32 and fixed64 little-endian, and uint64 past 2^53 as a decimal string', () => {
    assert.deepEqual(decodeProtobuf(hex('0d 01 00 00 00 11 02 00 00 00 00 00 00 00')), { 1: 1, 2: 2 });
    assert.deepEqual(decodeProtobuf(hex('08 ff ff ff ff ff ff ff ff ff 01')), { 1: '18446744073709551615' });
  });

  it('reads printable text as a string even when it would parse as a message ("hi" = 68 69 = field 13 varint 105)', () => {
    assert.deepEqual(decodeProtobuf(hex('0a 02 68 69')), { 1: 'hi' });
  });

  it('keeps bytes that are neither a message nor UTF-8 as base64', () => {
    assert.deepEqual(decodeProtobuf(hex('0a 02 ff ff')), { 1: { $bytes: '//8=' } });
  });

  it('refuses what is not a whole message: a cut record, field 0, a group, a length past the end', () => {
    assert.equal(decodeProtobuf(hex('08 96')), undefined);
    assert.equal(decodeProtobuf(hex('00 01')), undefined);
    assert.equal(decodeProtobuf(hex('0b 0c')), undefined);
    assert.equal(decodeProtobuf(hex('0a 05 61')), undefined);
    assert.deepEqual(decodeProtobuf(hex('')), {});
  });
});

describe('protoFields', () => {
  it('reads records as decodeProtobuf does, in wire order with their wire types, and refuses what it refuses', () => {
    assert.deepEqual(protoFields(hex('08 96 01 1a 03 08 96 01 0a 02 ff ff 12 02 68 69')), [
      { field: 1, type: 'varint', value: 150 },
      { field: 3, type: 'message', value: [{ field: 1, type: 'varint', value: 150 }] },
      { field: 1, type: 'bytes', value: 'ffff' },
      { field: 2, type: 'string', value: 'hi' },
    ]);
    for (const bad of ['08 96', '00 01', '0b 0c', '0a 05 61']) assert.equal(protoFields(hex(bad)), undefined, bad);
  });

  it('reads a megabyte nested 40 deep: 32 levels as messages, the rest as bytes', (t) => {
    // Field 1 of field 1 of ... 40 times, around 1 MB of non-text bytes; nesting past MAX_PROTO_DEPTH stays bytes.
    let m: Buffer = Buffer.concat([Buffer.from([0x0a, 0x80, 0x80, 0x40]), Buffer.alloc(1 << 20, 0xff)]);
    const lengthOf = (n: number) => { const out: number[] = []; for (; n > 127; n >>>= 7) out.push((n & 127) | 128); out.push(n); return Buffer.from(out); };
    for (let i = 0; i < 40; i++) m = Buffer.concat([Buffer.from([0x0a]), lengthOf(m.length), m]);
    const since = performance.now();
    let fields = protoFields(m)!;
    let depth = 0;
    while (fields[0]!.type === 'message') { fields = fields[0]!.value as typeof fields; depth++; }
    assert.equal(depth, 32);
    assert.equal(fields[0]!.type, 'bytes');
    // Its speed is printed, not asserted (a shared machine's load is not the decoder's).
    t.diagnostic(`decoded in ${Math.round(performance.now() - since)} ms`);
  });
});
