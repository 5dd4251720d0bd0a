// A gRPC message as people read it (inspect/grpc-tree.ts): the diff's
// protobuf decoder's reading, as fields with their wire types, in one line
// and in indented lines; named by a .proto file when one defines the method;
// hex (undefined) for what is not a whole protobuf message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtoSchema } from '../../capture/index.js';
import { grpcSchemaAt, grpcShown, shownInline, shownLines } from '../../inspect/grpc-tree.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';

const b64 = (hex: string) => Buffer.from(hex.replace(/\s+/g, ''), 'hex').toString('base64');
const msg = (hex: string, type: 'send' | 'receive' = 'receive') => ({ type, data: b64(hex) });

describe('grpcShown', () => {
  it('reads the encoding guide\'s bytes with their wire types: varint, string, nested message, repeated, fixed32, fixed64', () => {
    // 08 96 01 | 12 07 "testing" | 1a 03 08 96 01 | 28 01 28 02 | 35 01000000 | 39 0200000000000000
    const shown = grpcShown(msg('08 96 01 12 07 74 65 73 74 69 6e 67 1a 03 08 96 01 28 01 28 02 35 01 00 00 00 39 02 00 00 00 00 00 00 00'))!;
    assert.equal(shown.schema, false);
    assert.equal(shownInline(shown), '{1: 150, 2: "testing", 3: {1: 150}, 5: 1, 5: 2, 6: 1, 7: 2}');
    assert.deepEqual(shownLines(shown), ['1  varint  150', '2  string  "testing"', '3  message', '  1  varint  150', '5  varint  1', '5  varint  2', '6  fixed32  1', '7  fixed64  2']);
  });

  it('shows bytes that are neither text nor a message as hex, and markup in a string as the text it is', () => {
    const shown = grpcShown(msg(`0a 02 ff fe 12 0f ${Buffer.from('<script>x</scr>').toString('hex')}`))!;
    assert.deepEqual(shown.fields, [{ name: '1', type: 'bytes', value: 'fffe' }, { name: '2', type: 'string', value: '<script>x</scr>' }]);
    assert.equal(shownInline(shown), '{1: 0xfffe, 2: "<script>x</scr>"}');
  });

  it('leaves a message cut short, still compressed, or not protobuf to the hex dump', () => {
    assert.equal(grpcShown({ ...msg('08 96 01'), _bb: { truncated: 2 } }), undefined);
    assert.equal(grpcShown({ ...msg('08 96 01'), _bb: { undecoded: 'grpc-encoding snappy' } }), undefined);
    assert.equal(grpcShown(msg('08 96')), undefined);
    assert.deepEqual(grpcShown(msg('')), { schema: false, fields: [] });
  });

  it('names the fields when a .proto file defines the call\'s method (request and response types), repeated items by index', () => {
    const cleanups = new Cleanups();
    const dir = tempDir(cleanups).dir;
    const file = join(dir, 'shop.proto');
    writeFileSync(file, [
      'syntax = "proto3";', 'package shop;',
      'message Query { string name = 1; }',
      'message Reply { string title = 1; int32 count = 2; Inner inner = 3; repeated string tags = 4; }',
      'message Inner { string note = 1; }',
      'service Catalog { rpc Get (Query) returns (Reply); }',
    ].join('\n'));
    const schema = ProtoSchema.load([file], 'test');
    const at = { schema, path: '/shop.Catalog/Get' };
    const reply = grpcShown(msg(`0a 01 61 10 2a 1a 03 0a 01 62 22 01 78 22 01 79`), at)!;
    assert.equal(reply.schema, true);
    assert.deepEqual(shownLines(reply), ['title  string  "a"', 'count  number  42', 'inner  message', '  note  string  "b"', 'tags  repeated', '  [0]  string  "x"', '  [1]  string  "y"']);
    assert.equal(shownInline(grpcShown(msg('0a 01 61', 'send'), at)!), '{name: "a"}');
    // A method the files do not define: field numbers.
    assert.equal(shownInline(grpcShown(msg('0a 01 61'), { schema, path: '/shop.Catalog/Other' })!), '{1: "a"}');
    // The method from a call's URL (a gateway prefix kept, as the schema reads it), or a bare path; none without a schema.
    assert.deepEqual(grpcSchemaAt(schema, 'http://127.0.0.1:50051/api/shop.Catalog/Get'), { schema, path: '/api/shop.Catalog/Get' });
    assert.equal(shownInline(grpcShown(msg('0a 01 61', 'send'), grpcSchemaAt(schema, 'http://127.0.0.1:50051/api/shop.Catalog/Get'))!), '{name: "a"}');
    assert.deepEqual(grpcSchemaAt(schema, '/shop.Catalog/Get'), { schema, path: '/shop.Catalog/Get' });
    assert.equal(grpcSchemaAt(undefined, 'http://127.0.0.1:50051/shop.Catalog/Get'), undefined);
    return cleanups.run();
  });
});
