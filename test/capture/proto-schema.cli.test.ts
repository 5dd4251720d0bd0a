// gRPC messages decoded with the .proto files the config lists
// (normalize.proto): fields, enums and nested messages by name, a renumbered
// field kept under its number, a method or message the schema does not fit
// read without a schema, and a missing or broken .proto refused up front. The
// messages are encoded by protobufjs from a .proto the test writes; the last
// test records real gRPC-Web traffic through bb's proxy.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import protobuf from 'protobufjs';
import { request } from 'undici';
import { diffCaptures, renderText, validateDiffConfig, type DiffConfig, type DiffResult } from '../../diff/index.js';
import type { Har, HarGrpcMessage } from '../../capture/har.js';
import { capture } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { runBb } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';

const SHOP_PROTO = `syntax = "proto3";
package shop;
enum Stock { STOCK_UNKNOWN = 0; IN_STOCK = 1; SOLD_OUT = 2; }
message Item { string sku = 1; int64 price_cents = 2; Stock stock = 3; repeated string tags = 4; }
message GetItemRequest { string sku = 1; }
message GetItemReply { Item item = 1; map<string, string> labels = 2; }
service Catalog {
  rpc GetItem (GetItemRequest) returns (GetItemReply);
  rpc Watch (GetItemRequest) returns (stream GetItemReply);
}
`;

// The same service a release later: price_cents moved to field 5 (a renumbered field).
const RENUMBERED = SHOP_PROTO.replace('int64 price_cents = 2;', 'int64 price_cents = 5;');

const t = tempDir();
mkdirSync(t.path('protos'));
mkdirSync(t.path('bad'));
writeFileSync(t.path('protos/shop.proto'), SHOP_PROTO);
const show = (r: DiffResult) => renderText(r, { color: false, rows: true });
const rows = (r: DiffResult) => r.differences.map((d) => [d.kind, d.path, d.old, d.new]);

/** protobufjs types of a .proto text (keepCase, as bb reads them). */
function typesOf(text: string) {
  const root = protobuf.parse(text, { keepCase: true }).root;
  return { req: root.lookupType('shop.GetItemRequest'), reply: root.lookupType('shop.GetItemReply') };
}
const v1 = typesOf(SHOP_PROTO);
const v2 = typesOf(RENUMBERED);

type Obj = Record<string, unknown>;
const b64 = (type: protobuf.Type, value: Obj) => Buffer.from(type.encode(type.fromObject(value)).finish()).toString('base64');

/** One gRPC call on `path`: a request message, reply messages (already base64), status 0. */
function call(path: string, req: string, replies: string[]): Har {
  const har = capture([{ url: `http://127.0.0.1:1${path}`, method: 'POST', status: 200, mime: 'application/grpc', body: '' }]);
  const e = har.log.entries[0]!;
  const msgs: HarGrpcMessage[] = [{ type: 'send', time: 1_767_225_600, compressed: false, data: req }];
  replies.forEach((data, i) => msgs.push({ type: 'receive', time: 1_767_225_600.1 + i / 10, compressed: false, data }));
  e._grpcMessages = msgs;
  e.response._trailers = [{ name: 'grpc-status', value: '0' }];
  return har;
}

const item = (over: Obj = {}): Obj => ({ item: { sku: 'A-1', price_cents: '1999', stock: 'IN_STOCK', tags: ['red'], ...over }, labels: { shelf: '4' } });
const getItem = (reply: Obj, types = v1, path = '/shop.Catalog/GetItem') => call(path, b64(types.req, { sku: 'A-1' }), [b64(types.reply, reply)]);

let configs = 0;
/** A config file listing shop.proto beside it, validated as bb diff --config does (paths relative to the config). */
async function shopConfig(): Promise<DiffConfig> {
  const file = t.path(`bb-${configs++}.config.json`);
  const doc = { normalize: { proto: ['protos/shop.proto'] } };
  await writeFile(file, JSON.stringify(doc));
  return validateDiffConfig(doc, file);
}

/** The diff in memory, on the bounded path in this thread and on the bounded path in worker threads. */
async function allPaths(a: Har, b: Har): Promise<DiffResult[]> {
  const config = await shopConfig();
  const name = `${Math.random()}`;
  const oldPath = await t.write(`${name}-old.har`, a);
  const newPath = await t.write(`${name}-new.har`, b);
  return [
    await diffCaptures(oldPath, newPath, { config }),
    await diffCaptures(oldPath, newPath, { config, boundedThreshold: 0, workers: false }),
    await diffCaptures(oldPath, newPath, { config, boundedThreshold: 0, workers: true }),
  ];
}

describe('gRPC messages with field names from .proto files', () => {
  it('the config resolves the paths against its own folder', async () => {
    const config = await shopConfig();
    assert.deepEqual(config.normalize.proto, [t.path('protos/shop.proto')]);
  });

  it('the same call matches; a changed field is one row at its name, the report shows it', async () => {
    for (const r of await allPaths(getItem(item()), getItem(item()))) assert.equal(r.verdict, 'match', show(r));
    for (const r of await allPaths(getItem(item()), getItem(item({ price_cents: '2499' })))) {
      assert.deepEqual(rows(r), [['changed', 'grpc.messages[1].data.item.price_cents', '1999', '2499']], show(r));
      assert.match(show(r), /grpc\.messages\[1\]\.data\.item\.price_cents/);
    }
  });

  it('reads enums by name, 64-bit integers as strings, repeated fields and maps', async () => {
    const big = { price_cents: '9007199254740993', stock: 'SOLD_OUT', tags: ['red', 'blue'] };
    const other = call('/shop.Catalog/GetItem', b64(v1.req, { sku: 'A-1' }), [b64(v1.reply, { ...item(big), labels: { shelf: '5' } })]);
    for (const r of await allPaths(getItem(item()), other)) {
      assert.deepEqual(rows(r).sort(), [
        ['added', 'grpc.messages[1].data.item.tags[1]', undefined, 'blue'],
        ['changed', 'grpc.messages[1].data.item.price_cents', '1999', '9007199254740993'],
        ['changed', 'grpc.messages[1].data.item.stock', 'IN_STOCK', 'SOLD_OUT'],
        ['changed', 'grpc.messages[1].data.labels.shelf', '4', '5'],
      ], show(r));
    }
  });

  it('decodes the request with the request type and each streamed reply with the reply type', async () => {
    const watch = (sku: string, prices: string[]) => call('/shop.Catalog/Watch', b64(v1.req, { sku }), prices.map((p) => b64(v1.reply, item({ price_cents: p }))));
    for (const r of await allPaths(watch('A-1', ['1', '2', '3']), watch('B-2', ['1', '2', '4']))) {
      assert.deepEqual(rows(r).sort(), [
        ['changed', 'grpc.messages[0].data.sku', 'A-1', 'B-2'],
        ['changed', 'grpc.messages[3].data.item.price_cents', '3', '4'],
      ], show(r));
    }
  });

  it('a renumbered field reads as the named field removed and the number the schema does not know added', async () => {
    for (const r of await allPaths(getItem(item()), getItem(item(), v2))) {
      assert.deepEqual(rows(r).sort(), [
        ['added', 'grpc.messages[1].data.item["5"]', undefined, 1999],
        ['removed', 'grpc.messages[1].data.item.price_cents', '1999', undefined],
      ], show(r));
    }
  });

  it('a method the .proto files do not define, and a message its type does not fit, are read without a schema', async () => {
    // Not in shop.proto: field numbers, as without a config.
    const other = (sku: string) => getItem(item({ sku }), v1, '/shop.Other/GetItem');
    for (const r of await allPaths(other('A-1'), other('A-2'))) {
      assert.deepEqual(rows(r), [['changed', 'grpc.messages[1].data["1"]["1"]', 'A-1', 'A-2']], show(r));
    }
    // A reply whose field 1 (declared a message) comes as a varint: field numbers on that side only, no crash.
    const misfit = call('/shop.Catalog/GetItem', b64(v1.req, { sku: 'A-1' }), [Buffer.from('0807', 'hex').toString('base64')]);
    for (const r of await allPaths(getItem(item()), misfit)) {
      assert.deepEqual(r.differences.map((d) => [d.kind, d.path]).sort(), [
        ['added', 'grpc.messages[1].data["1"]'],
        ['removed', 'grpc.messages[1].data.item'],
        ['removed', 'grpc.messages[1].data.labels'],
      ], show(r));
    }
  });
});

describe('normalize.proto in the config', () => {
  it('a missing, unparsable or incomplete .proto stops bb diff with exit 2 and one line naming the file', async () => {
    const a = await t.write('cli-a.har', getItem(item()));
    await t.write('bad/broken.proto', 'syntax = "proto3";\nmessage X { string a = 1 }\n');
    await t.write('bad/dangling.proto', 'syntax = "proto3";\nmessage X { Missing m = 1; }\n');
    await t.write('bad/imports.proto', 'syntax = "proto3";\nimport "gone.proto";\n');
    const cases: Array<[unknown, RegExp]> = [
      [['protos/nope.proto'], /normalize\.proto\[0\]: \S*protos\/nope\.proto does not exist: fix the path/],
      [['bad/broken.proto'], /normalize\.proto\[0\]: \S*bad\/broken\.proto is not a \.proto file protobufjs can parse \(.*line 2.*\): fix the file/],
      [['bad/dangling.proto'], /normalize\.proto\[0\]: \S*bad\/dangling\.proto uses a type no file defines \(.*'Missing'.*\): import the \.proto file/],
      [['bad/imports.proto'], /normalize\.proto\[0\]: \S*bad\/gone\.proto, imported by \S*bad\/imports\.proto, does not exist/],
      [[7], /normalize\.proto\[0\]: must be the path of a \.proto file/],
    ];
    for (const [proto, re] of cases) {
      const config = await t.write(`cfg-${Math.random()}.json`, { normalize: { proto } });
      const r = await runBb(['diff', a, a, '--config', config]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, re);
      assert.match(r.stderr, /BB_CONFIG_INVALID|config/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });
});

describe('gRPC-Web recorded through the proxy, compared with field names', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  /** One length-prefixed gRPC message (flags 0: not compressed). */
  const frame = (payload: Uint8Array, flags = 0) => {
    const head = Buffer.alloc(5);
    head[0] = flags;
    head.writeUInt32BE(payload.length, 1);
    return Buffer.concat([head, payload]);
  };

  /** A gRPC-Web shop: GetItem answers the asked sku at `price`, read and written with protobufjs. */
  async function shop(price: string): Promise<string> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const asked = v1.req.toObject(v1.req.decode(Buffer.concat(chunks).subarray(5))) as { sku: string };
        const reply = v1.reply.encode(v1.reply.fromObject(item({ sku: asked.sku, price_cents: price }))).finish();
        res.writeHead(200, { 'Content-Type': 'application/grpc-web+proto' });
        res.end(Buffer.concat([frame(reply), frame(Buffer.from('grpc-status: 0\r\n'), 0x80)]));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.add(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function recordShop(price: string): Promise<string> {
    const rec = await record(cleanups, await shop(price));
    const res = await request(`http://127.0.0.1:${rec.port}/shop.Catalog/GetItem`, {
      method: 'POST', body: frame(v1.req.encode({ sku: 'A-1' }).finish()), headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
    });
    await res.body.arrayBuffer();
    const har = await rec.finish();
    assert.ok(har.log.entries[0]!._grpcMessages?.length === 2, 'the call was recorded with its two messages');
    return t.write(`shop-${price}.har`, har);
  }

  it('bb diff --config names the changed field of the reply', async () => {
    await shopConfig();
    const config = t.path('bb-0.config.json');
    const [oldHar, newHar] = [await recordShop('1999'), await recordShop('2499')];
    const same = await runBb(['diff', oldHar, oldHar, '--config', config]);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    const r = await runBb(['diff', oldHar, newHar, '--config', config, '--rows']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /grpc\.messages\[1\]\.data\.item\.price_cents/);
    assert.match(r.stdout, /"1999" → "2499"|1999.*2499/);
    const plain = await runBb(['diff', oldHar, newHar, '--rows']);
    assert.match(plain.stdout, /grpc\.messages\[1\]\.data\["1"\]\["2"\]/, 'without the config: field numbers');
  });
});
