// A small real gRPC service for tests of what bb makes of a call's status,
// trailers and deadline: @grpc/grpc-js over h2c on 127.0.0.1:0, messages
// encoded by protobufjs. `Lookup` fails with the status the server is given;
// `Store` succeeds and ends with the trailing metadata it is given.
// itemsHandlers: Get, List, Sum and Chat (the four call kinds) for tests that
// define their own service of Items (gRPC replay, bb shadow).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { Cleanups } from './cleanups.js';

// { name = 1 (string), n = 2 (int32) }.
const Item = new protobuf.Type('Item').add(new protobuf.Field('name', 1, 'string')).add(new protobuf.Field('n', 2, 'int32'));

/** An Item's protobuf bytes. */
export const encodeItem = (v: ItemValue): Buffer => Buffer.from(Item.encode(Item.create(v)).finish());
/** An Item from its protobuf bytes (defaults filled in). */
export const decodeItem = (b: Buffer): ItemValue => Item.toObject(Item.decode(b), { defaults: true }) as ItemValue;

/** A method definition of Items for grpc-js's generic client and server: its path and which sides stream. */
export function itemMethod(path: string, requestStream: boolean, responseStream: boolean) {
  return { path, requestStream, responseStream, requestSerialize: encodeItem, requestDeserialize: decodeItem, responseSerialize: encodeItem, responseDeserialize: decodeItem };
}

/** How `itemsHandlers` reports and varies: each call heard, Chat's messages kept, List's i-th item named (a build may rename one). */
export interface ItemsHooks {
  onCall?(call: { getPath(): string; getDeadline(): grpc.Deadline; metadata: grpc.Metadata }): void;
  chat?: string[];
  itemName?(i: number): string;
}

/** grpc-js handlers of Get (n doubled), List (n items), Sum (of n) and Chat (an echo per message), for the method definitions of itemMethod. */
export function itemsHandlers(hooks: ItemsHooks = {}) {
  const note = (call: { getPath(): string; getDeadline(): grpc.Deadline; metadata: grpc.Metadata }) => hooks.onCall?.(call);
  return {
    get: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      note(call);
      done(null, { name: `got ${call.request.name}`, n: call.request.n * 2 });
    },
    list: (call: grpc.ServerWritableStream<ItemValue, ItemValue>) => {
      note(call);
      for (let i = 0; i < call.request.n; i++) call.write({ name: hooks.itemName?.(i) ?? `item ${i}`, n: i });
      call.end();
    },
    sum: (call: grpc.ServerReadableStream<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      note(call);
      let total = 0;
      call.on('data', (m: ItemValue) => (total += m.n));
      call.on('end', () => done(null, { name: 'sum', n: total }));
    },
    chat: (call: grpc.ServerDuplexStream<ItemValue, ItemValue>) => {
      note(call);
      call.on('data', (m: ItemValue) => {
        hooks.chat?.push(m.name);
        call.write({ name: `echo ${m.name}`, n: m.n });
      });
      call.on('end', () => call.end());
    },
  };
}

/** An Item message's value. */
export interface ItemValue {
  name: string;
  n: number;
}

const unary = (path: string) => itemMethod(path, false, false);
const SERVICE = { lookup: unary('/demo.Items/Lookup'), store: unary('/demo.Items/Store') } as const;

/** How a server of the service answers. */
export interface ItemsBehaviour {
  /** The status Lookup fails with (grpc.status.NOT_FOUND...). */
  lookupStatus: grpc.status;
  /** Trailing metadata Store ends with. */
  storeTrailers?: Record<string, string>;
}

/** Starts a server of the service on 127.0.0.1:0 (shut down by `cleanups`); its port. */
export async function itemsServer(cleanups: Cleanups, behaviour: ItemsBehaviour): Promise<number> {
  const server = new grpc.Server();
  server.addService(SERVICE as unknown as grpc.ServiceDefinition, {
    lookup: (_call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => done({ code: behaviour.lookupStatus, details: 'no such item' }),
    store: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      const trailers = new grpc.Metadata();
      for (const [k, v] of Object.entries(behaviour.storeTrailers ?? {})) trailers.set(k, v);
      done(null, { name: `stored ${call.request.name}`, n: call.request.n }, trailers);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  return port;
}

/** Calls Lookup then Store through `port`, each with a deadline `deadlineMs` away (sent as grpc-timeout); Lookup's status code. */
export async function driveItems(port: number, deadlineMs?: number): Promise<number> {
  const Client = grpc.makeGenericClientConstructor(SERVICE as unknown as grpc.ServiceDefinition, 'Items');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as Record<string, (...a: unknown[]) => unknown> & grpc.Client;
  const options = (): grpc.CallOptions => (deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs });
  try {
    const code = await new Promise<number>((resolve) => client.lookup!({ name: 'a', n: 1 }, options(), (err: grpc.ServiceError | null) => resolve(err?.code ?? 0)));
    await new Promise<void>((resolve, reject) => client.store!({ name: 'b', n: 2 }, options(), (err: Error | null) => (err ? reject(err) : resolve())));
    return code;
  } finally {
    client.close();
  }
}

/** The service's .proto file, as a user of it would write one. */
export const ITEMS_PROTO = `syntax = "proto3";
package demo;
message Item { string name = 1; int32 n = 2; }
service Items {
  rpc Lookup (Item) returns (Item);
  rpc Store (Item) returns (Item);
}
`;

/** Writes `dir`/protos/items.proto and `dir`/bb.config.json listing it in normalize.proto; the config's path. */
export function writeItemsConfig(dir: string): string {
  mkdirSync(join(dir, 'protos'), { recursive: true });
  writeFileSync(join(dir, 'protos/items.proto'), ITEMS_PROTO);
  const config = join(dir, 'bb.config.json');
  writeFileSync(config, JSON.stringify({ normalize: { proto: ['protos/items.proto'] } }));
  return config;
}
