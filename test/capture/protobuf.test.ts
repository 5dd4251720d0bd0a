// The schema-less protobuf decoder, on the literal bytes of the protobuf
// encoding guide (https://protobuf.dev/programming-guides/encoding/).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { decodeProtobuf, protoFields, rewriteProtobuf, type ProtoRewrite } from '../../capture/protobuf.js';

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

describe('rewriteProtobuf', () => {
  const texts = (map: Record<string, string>): ProtoRewrite => ({ text: (s) => map[s], varint: () => undefined });
  const varints = (map: Map<bigint, bigint>): ProtoRewrite => ({ text: () => undefined, varint: (v) => map.get(v) });

  it('rewrites a string and its length prefix: "12 07 74 65 73 74 69 6e 67" ("testing") becomes field 2 = "retested"', () => {
    const out = rewriteProtobuf(hex('12 07 74 65 73 74 69 6e 67'), texts({ testing: 'retested' }))!;
    assert.equal(Buffer.from(out).toString('hex'), '1208' + Buffer.from('retested').toString('hex'));
    assert.deepEqual(decodeProtobuf(out), { 2: 'retested' });
  });

  it("rewrites a varint inside a submessage and the submessage's length: 1a 03 08 96 01 (field 3 = { 1: 150 }) with 150 → 2^21", () => {
    const out = rewriteProtobuf(hex('1a 03 08 96 01'), varints(new Map([[150n, 1n << 21n]])))!;
    // 2^21 is 80 80 80 01: four bytes where 150 took two, so field 3's length goes 3 → 5.
    assert.equal(Buffer.from(out).toString('hex'), '1a050880808001');
    assert.deepEqual(decodeProtobuf(out), { 3: { 1: 2097152 } });
  });

  it('copies every record it does not change byte for byte, in order (repeated fields, fixed64, bytes, a non-minimal varint key)', () => {
    // 22 05 "hello" | 28 01 28 02 28 03 | 09 + 8 bytes (fixed64) | 0a 02 ff ff (bytes) | 90 00 07 (field 2 varint 7 with a two-byte key).
    const before = hex('22 05 68 65 6c 6c 6f 28 01 28 02 28 03 09 01 02 03 04 05 06 07 08 0a 02 ff ff 90 00 07');
    const out = rewriteProtobuf(before, texts({ hello: 'goodbye' }))!;
    assert.equal(Buffer.from(out).toString('hex'), '2207' + Buffer.from('goodbye').toString('hex') + '2801280228030901020304050607080a02ffff900007');
  });

  it('reads a value as decodeProtobuf does: printable text stays text even where it would parse as a message', () => {
    // "hi" (68 69) also parses as field 13 = 105; a rewrite of the text sees it, a rewrite of varint 105 does not.
    assert.deepEqual(decodeProtobuf(rewriteProtobuf(hex('0a 02 68 69'), texts({ hi: 'hello' }))!), { 1: 'hello' });
    assert.equal(rewriteProtobuf(hex('0a 02 68 69'), varints(new Map([[105n, 106n]]))), undefined);
  });

  it('is undefined when nothing changed or the bytes are not a whole message; never writes a negative or 65-bit varint', () => {
    assert.equal(rewriteProtobuf(hex('12 07 74 65 73 74 69 6e 67'), texts({ other: 'x' })), undefined);
    assert.equal(rewriteProtobuf(hex('12 07 74 65 73 74 69 6e 67'), texts({ testing: 'testing' })), undefined);
    for (const bad of ['08 96', '00 01', '0b 0c', '0a 05 61']) assert.equal(rewriteProtobuf(hex(bad), texts({ a: 'b' })), undefined, bad);
    assert.equal(rewriteProtobuf(hex('08 96 01'), varints(new Map([[150n, -1n]]))), undefined);
    assert.equal(rewriteProtobuf(hex('08 96 01'), varints(new Map([[150n, 1n << 64n]]))), undefined);
  });

  it('gives what protobufjs reads as the same message with the values replaced (random messages, two levels deep)', () => {
    // Order { id = 1 (string), number = 2 (uint64), lines = 3 (repeated Line), note = 4 (string) }, Line { sku = 1 (string), qty = 2 (int32), ref = 3 (string) }.
    const Line = new protobuf.Type('Line').add(new protobuf.Field('sku', 1, 'string')).add(new protobuf.Field('qty', 2, 'int32')).add(new protobuf.Field('ref', 3, 'string'));
    const Order = new protobuf.Type('Order')
      .add(new protobuf.Field('id', 1, 'string'))
      .add(new protobuf.Field('number', 2, 'uint64'))
      .add(new protobuf.Field('lines', 3, 'Line', 'repeated'))
      .add(new protobuf.Field('note', 4, 'string'));
    new protobuf.Root().add(Line).add(Order);
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const id = () => Array.from({ length: 4 + rand(40) }, () => 'abcdef0123456789'[rand(16)]).join('');
    for (let round = 0; round < 200; round++) {
      const ids = Array.from({ length: 6 }, id);
      const order = { id: ids[0], number: 1000 + rand(1e9), lines: Array.from({ length: rand(4) }, (_, i) => ({ sku: `sku-${ids[1 + i]}`, qty: rand(500), ref: ids[1 + i] })), note: `for ${ids[5]}` };
      const bytes = Order.encode(Order.create(order)).finish();
      // Each id to another of a random length (a length prefix grows or shrinks), the number to another.
      const next = new Map(ids.map((v) => [v, id()]));
      const number = BigInt(1 + rand(2 ** 30)) * BigInt(1 + rand(2 ** 20));
      const rewrite: ProtoRewrite = {
        text: (s) => {
          const out = s.replace(/[0-9a-f]{4,}/g, (t) => next.get(t) ?? t);
          return out === s ? undefined : out;
        },
        varint: (v) => (v === BigInt(order.number) ? number : undefined),
      };
      const out = rewriteProtobuf(bytes, rewrite);
      assert.ok(out, `round ${round}`);
      const swap = (s: string) => s.replace(/[0-9a-f]{4,}/g, (t) => next.get(t) ?? t);
      const expected = { id: swap(order.id!), number: number.toString(), lines: order.lines.map((l) => ({ sku: swap(l.sku), qty: l.qty, ref: swap(l.ref!) })), note: swap(order.note) };
      assert.deepEqual(Order.toObject(Order.decode(out), { longs: String, defaults: true }), { ...expected, lines: expected.lines.map((l) => ({ ...l })) }, `round ${round}`);
    }
  });
});
