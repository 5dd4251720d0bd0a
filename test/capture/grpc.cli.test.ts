// gRPC through the h2 tap: a real @grpc/grpc-js server and client (h2c with
// prior knowledge, as grpc-js speaks without TLS), the four call kinds, and
// protobuf messages encoded by protobufjs. Each call is one HAR entry whose
// _grpcMessages hold the messages as sent, in order, and whose _bb.grpc holds
// the status from the trailers; `bb diff` of two recordings finds a changed
// field and a changed status and nothing else.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import type { Har, HarEntry } from '../../capture/har.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

// A message type built in code: { name = 1 (string), n = 2 (int32) }.
const Item = new protobuf.Type('Item').add(new protobuf.Field('name', 1, 'string')).add(new protobuf.Field('n', 2, 'int32'));
interface ItemValue { name: string; n: number }
const encode = (v: ItemValue): Buffer => Buffer.from(Item.encode(Item.create(v)).finish());
const decode = (b: Buffer): ItemValue => Item.toObject(Item.decode(b), { defaults: true }) as ItemValue;

const method = (path: string, requestStream: boolean, responseStream: boolean) => ({
  path, requestStream, responseStream,
  requestSerialize: encode, requestDeserialize: decode, responseSerialize: encode, responseDeserialize: decode,
});
const SERVICE = {
  get: method('/demo.Items/Get', false, false),
  list: method('/demo.Items/List', false, true),
  sum: method('/demo.Items/Sum', true, false),
  chat: method('/demo.Items/Chat', true, true),
  fail: method('/demo.Items/Fail', false, false),
} as const;

/** A gRPC server; `variant` changes one field and one status, the way a new build might. */
async function grpcServer(variant: 'old' | 'new'): Promise<number> {
  const server = new grpc.Server();
  server.addService(SERVICE as unknown as grpc.ServiceDefinition, {
    get: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) =>
      done(null, { name: `got ${call.request.name}`, n: variant === 'old' ? call.request.n * 2 : call.request.n * 3 }),
    list: (call: grpc.ServerWritableStream<ItemValue, ItemValue>) => {
      for (let i = 0; i < call.request.n; i++) call.write({ name: `item ${i}`, n: i });
      call.end();
    },
    sum: (call: grpc.ServerReadableStream<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      let total = 0;
      call.on('data', (m: ItemValue) => (total += m.n));
      call.on('end', () => done(null, { name: 'sum', n: total }));
    },
    chat: (call: grpc.ServerDuplexStream<ItemValue, ItemValue>) => {
      call.on('data', (m: ItemValue) => call.write({ name: `echo ${m.name}`, n: m.n }));
      call.on('end', () => call.end());
    },
    fail: (_call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) =>
      done({ code: variant === 'old' ? grpc.status.NOT_FOUND : grpc.status.PERMISSION_DENIED, details: 'no such item' }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  return port;
}

/** Runs the four call kinds and a failing call through `port`. */
async function drive(port: number): Promise<void> {
  const Client = grpc.makeGenericClientConstructor(SERVICE as unknown as grpc.ServiceDefinition, 'Items');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as Record<string, (...a: unknown[]) => unknown> & grpc.Client;
  try {
    const unary = await new Promise<ItemValue>((resolve, reject) => client.get!({ name: 'a', n: 21 }, (err: Error | null, v: ItemValue) => (err ? reject(err) : resolve(v))));
    assert.equal(unary.name, 'got a');
    const listed: ItemValue[] = [];
    await new Promise<void>((resolve, reject) => {
      const call = client.list!({ name: 'l', n: 3 }) as grpc.ClientReadableStream<ItemValue>;
      call.on('data', (m: ItemValue) => listed.push(m));
      call.on('end', () => resolve());
      call.on('error', reject);
    });
    assert.deepEqual(listed.map((m) => m.name), ['item 0', 'item 1', 'item 2']);
    const sum = await new Promise<ItemValue>((resolve, reject) => {
      const call = client.sum!((err: Error | null, v: ItemValue) => (err ? reject(err) : resolve(v))) as grpc.ClientWritableStream<ItemValue>;
      for (const n of [1, 2, 3, 4]) call.write({ name: 'x', n });
      call.end();
    });
    assert.equal(sum.n, 10);
    const echoed: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const call = client.chat!() as grpc.ClientDuplexStream<ItemValue, ItemValue>;
      call.on('data', (m: ItemValue) => {
        echoed.push(m.name);
        if (echoed.length < 3) call.write({ name: `m${echoed.length}`, n: echoed.length });
        else call.end();
      });
      call.on('end', () => resolve());
      call.on('error', reject);
      call.write({ name: 'm0', n: 0 });
    });
    assert.deepEqual(echoed, ['echo m0', 'echo m1', 'echo m2']);
    const failure = await new Promise<grpc.ServiceError>((resolve) => client.fail!({ name: 'z', n: 0 }, (err: grpc.ServiceError) => resolve(err)));
    assert.equal(failure.details, 'no such item');
  } finally {
    client.close();
  }
}

const call = (har: Har, name: string): HarEntry => har.log.entries.find((e) => e.request.url.endsWith(`/demo.Items/${name}`))!;
const messages = (e: HarEntry) => e._grpcMessages!.map((m) => [m.type, decode(Buffer.from(m.data, 'base64'))]);

describe('gRPC with @grpc/grpc-js through the h2 tap', () => {
  it('records unary, server streaming, client streaming and bidi calls with their messages and status', async () => {
    const rec = await record(cleanups, `http://127.0.0.1:${await grpcServer('old')}`);
    await drive(rec.port);
    const har = await rec.finish();
    const get = call(har, 'Get');
    assert.equal(get.request.httpVersion, 'HTTP/2.0');
    assert.equal(get.request.method, 'POST');
    assert.match(get.request.headers.find((h) => h.name === 'content-type')!.value, /^application\/grpc/);
    assert.deepEqual(messages(get), [['send', { name: 'a', n: 21 }], ['receive', { name: 'got a', n: 42 }]]);
    assert.equal(get._bb!.grpc!.status, 0);
    assert.deepEqual(messages(call(har, 'List')).map(([t, m]) => [t, (m as ItemValue).name]), [['send', 'l'], ['receive', 'item 0'], ['receive', 'item 1'], ['receive', 'item 2']]);
    assert.deepEqual(messages(call(har, 'Sum')).map(([t, m]) => [t, (m as ItemValue).n]), [['send', 1], ['send', 2], ['send', 3], ['send', 4], ['receive', 10]]);
    // Each message took its seq when its last byte crossed: a bidi call reads in causal order.
    const chat = messages(call(har, 'Chat')).map(([t, m]) => `${t} ${(m as ItemValue).name}`);
    assert.deepEqual(chat, ['send m0', 'receive echo m0', 'send m1', 'receive echo m1', 'send m2', 'receive echo m2']);
    for (const name of ['Get', 'List', 'Sum', 'Chat']) {
      const e = call(har, name);
      const seqs = e._grpcMessages!.map((m) => m._bb?.seq);
      assert.ok(seqs.every((q) => typeof q === 'number'), `${name}: every message has a seq`);
      assert.deepEqual([...seqs].sort((a, b) => a! - b!), seqs, `${name}: messages in seq order`);
      assert.ok(seqs[0]! > e._bb!.seq && seqs.at(-1)! < e._bb!.seqEnd!, `${name}: within the call's own seq range`);
    }
    const fail = call(har, 'Fail');
    assert.equal(fail._bb!.grpc!.status, grpc.status.NOT_FOUND);
    assert.equal(fail._bb!.grpc!.message, 'no such item');
    // All calls share the client's one h2 connection, each on its own stream.
    const grpcEntries = har.log.entries.filter((e) => e.request.url.includes('/demo.Items/'));
    assert.equal(new Set(grpcEntries.map((e) => e.connection)).size, 1);
    assert.equal(new Set(grpcEntries.map((e) => e._bb!.stream)).size, grpcEntries.length);
  });

  it('bb diff of an old and a new build finds the changed field and the changed status, nothing else', async () => {
    const { dir } = tempDir(cleanups);
    const paths: string[] = [];
    for (const variant of ['old', 'new'] as const) {
      const rec = await record(cleanups, `http://127.0.0.1:${await grpcServer(variant)}`);
      await drive(rec.port);
      const har = await rec.finish();
      const file = join(dir, `${variant}.har`);
      await writeFile(file, JSON.stringify(har));
      paths.push(file);
    }
    const out = await runBb(['diff', paths[0]!, paths[1]!, '--json', '-']);
    assert.equal(out.code, 1, out.stderr);
    const report = JSON.parse(out.stdout) as { findings: Array<{ pattern: string; old: unknown; new: unknown; routes: string[] }> };
    const found = report.findings.map((f) => [f.pattern, f.old, f.new, f.routes.join()]);
    // Get answers n * 3 instead of n * 2 (field 2 of the response message); Fail says PERMISSION_DENIED (7), not NOT_FOUND (5).
    assert.deepEqual(found, [
      ['grpc.messages[].data["2"]', 42, 63, 'POST /demo.Items/Get'],
      ['grpc.status', 5, 7, 'POST /demo.Items/Fail'],
    ]);
  });
});
