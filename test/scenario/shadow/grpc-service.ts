// Two builds of one small gRPC service (h2c, @grpc/grpc-js) for random-traffic
// tests, on loopback: the "old" build (primary and secondary) and the "new"
// one (candidate). Login issues a random token that later calls must carry as
// `authorization: Bearer …` metadata (a server that sees another server's
// token answers UNAUTHENTICATED); Create issues a random id (24 hex digits) and
// its quantity; Get reads an id back (NOT_FOUND for
// one this server did not issue); List streams items with random ids; Chat
// echoes each message. The new build's changes: Get's stock (n 5 → 7), Chat's
// echo (n + 100), List's trailing metadata `x-served-by` gone.
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { itemMethod, type ItemValue } from '../../helpers/grpc-items.js';

/** The service's methods for grpc-js's generic client and server. */
export const SHOP = {
  login: itemMethod('/demo.Shop/Login', false, false),
  create: itemMethod('/demo.Shop/Create', false, false),
  get: itemMethod('/demo.Shop/Get', false, false),
  list: itemMethod('/demo.Shop/List', false, true),
  chat: itemMethod('/demo.Shop/Chat', true, true),
} as const;

/** One running build. */
export interface GrpcShopService {
  /** host:port for grpc-js; `http://host:port` is `url`. */
  address: string;
  url: string;
  /** Calls received, by method name. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

const id = () => randomBytes(12).toString('hex');

/** Starts one build ('old' or 'new'). */
export async function startGrpcShop(build: 'old' | 'new', tls?: { key: string; cert: string }): Promise<GrpcShopService> {
  const tokens = new Set<string>();
  const issued = new Set<string>();
  const hits = new Map<string, number>();
  const heard = (name: string) => hits.set(name, (hits.get(name) ?? 0) + 1);
  const authorized = (metadata: grpc.Metadata) => tokens.has(String(metadata.get('authorization')[0] ?? '').replace(/^Bearer /, ''));
  const denied = { code: grpc.status.UNAUTHENTICATED, details: 'no such token' };
  const server = new grpc.Server();
  server.addService(SHOP as unknown as grpc.ServiceDefinition, {
    login: (_call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      heard('login');
      const token = randomBytes(12).toString('base64url');
      tokens.add(token);
      done(null, { name: token, n: 0 });
    },
    create: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      heard('create');
      if (!authorized(call.metadata)) return done(denied);
      const made = id();
      issued.add(made);
      done(null, { name: made, n: call.request.n });
    },
    get: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      heard('get');
      if (!authorized(call.metadata)) return done(denied);
      if (!issued.has(call.request.name)) return done({ code: grpc.status.NOT_FOUND, details: 'no such item' });
      done(null, { name: call.request.name, n: build === 'new' ? 7 : 5 });
    },
    list: (call: grpc.ServerWritableStream<ItemValue, ItemValue>) => {
      heard('list');
      for (let i = 0; i < call.request.n; i++) {
        const made = id();
        issued.add(made);
        call.write({ name: made, n: i });
      }
      const trailers = new grpc.Metadata();
      if (build === 'old') trailers.set('x-served-by', 'catalog');
      call.end(trailers);
    },
    chat: (call: grpc.ServerDuplexStream<ItemValue, ItemValue>) => {
      heard('chat');
      call.on('data', (m: ItemValue) => call.write({ name: `echo ${m.name}`, n: build === 'new' ? m.n + 100 : m.n }));
      call.on('end', () => call.end());
    },
  });
  const credentials = tls ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) }]) : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (err, p) => (err ? reject(err) : resolve(p))));
  return {
    address: `${tls ? 'localhost' : '127.0.0.1'}:${port}`,
    url: tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise<void>((r) => server.tryShutdown(() => r())),
  };
}
