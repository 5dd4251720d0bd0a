// A gRPC client's seeded random walk over the shop service
// (test/scenario/shadow/grpc-service.ts), through whatever listens at `url`
// (bb shadow, bb capture), on one h2c connection: logins whose token later
// calls carry, items created and read back, item streams whose ids are read
// back, bidi chats that send issued ids back. Several at once make traffic
// whose interleaving changes run to run.
import * as grpc from '@grpc/grpc-js';
import { SHOP } from '../scenario/shadow/grpc-service.js';
import type { ItemValue } from './grpc-items.js';

type Shop = grpc.Client & {
  login(req: ItemValue, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: ItemValue) => void): void;
  create(req: ItemValue, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: ItemValue) => void): void;
  get(req: ItemValue, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: ItemValue) => void): void;
  list(req: ItemValue, md: grpc.Metadata): grpc.ClientReadableStream<ItemValue>;
  chat(md: grpc.Metadata): grpc.ClientDuplexStream<ItemValue, ItemValue>;
};

/** One client's random walk (seeded by `random`) of `steps` calls through `url` (http://host:port, or https:// trusting `ca`). */
export async function grpcWalk(url: string, user: number, random: () => number, steps = 14, ca?: string): Promise<void> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const Ctor = grpc.makeGenericClientConstructor(SHOP as unknown as grpc.ServiceDefinition, 'Shop');
  const credentials = url.startsWith('https://') ? grpc.credentials.createSsl(ca ? Buffer.from(ca) : null) : grpc.credentials.createInsecure();
  const client = new Ctor(url.replace(/^https?:\/\//, ''), credentials) as unknown as Shop;
  let token = '';
  const ids: string[] = [];
  const metadata = () => {
    const md = new grpc.Metadata();
    md.set('x-user', `user-${user}`);
    if (token) md.set('authorization', `Bearer ${token}`);
    return md;
  };
  const unary = (call: 'login' | 'create' | 'get', req: ItemValue) =>
    new Promise<ItemValue | undefined>((resolve) => client[call](req, metadata(), (err, res) => resolve(err ? undefined : res)));
  try {
    for (let i = 0; i < steps; i++) {
      const step = pick(['login', 'create', 'get', 'list', 'chat'] as const);
      if (step === 'login') token = (await unary('login', { name: `user-${user}`, n: 0 }))?.name ?? token;
      else if (step === 'create') {
        const made = await unary('create', { name: 'widget', n: 1 });
        if (made) ids.push(made.name);
      } else if (step === 'get') await unary('get', { name: ids.length ? pick(ids) : 'none', n: 0 });
      else if (step === 'list') {
        const stream = client.list({ name: 'all', n: 1 + Math.floor(random() * 3) }, metadata());
        for await (const item of stream as AsyncIterable<ItemValue>) ids.push(item.name);
      } else {
        const chat = client.chat(metadata());
        const replies: ItemValue[] = [];
        chat.on('data', (m: ItemValue) => replies.push(m));
        const ended = new Promise<void>((resolve) => (chat.on('end', resolve), chat.on('error', () => resolve())));
        for (let k = 0, n = 1 + Math.floor(random() * 3); k < n; k++) {
          const heard = replies.length + 1;
          chat.write({ name: ids.length ? pick(ids) : `hello ${user}`, n: k + 1 });
          while (replies.length < heard) await new Promise((r) => chat.once('data', r));
        }
        chat.end();
        await ended;
      }
      if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 30)));
    }
  } finally {
    client.close();
  }
}
