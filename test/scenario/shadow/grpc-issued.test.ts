// A gRPC id issued in a response message and sent back in a later call's
// request message (Create returns an item's random id, Get reads it): the
// relay sends each target its own id, as it does for JSON bodies (the
// binding reads the string fields and integers of uncompressed messages, and
// the mirror rewrites them, framing each message again: mirror-grpc.ts), so
// the candidate's real change (Get's n 5 → 7) is one regression, live and in
// `bb diff` of the captures alike, where before the mirrors answered
// NOT_FOUND and the change hid as noise. The same when the client compresses
// its messages (each is decompressed, rewritten and compressed again), when
// a server stream issued the id and another call sends it back while the
// stream goes on (message-pairs.ts grpcFeed), and when a bidi call's client
// sends back what the server's previous message issued (ClientMessages).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { startShadow, type Shadow, type ShadowReport } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import type { Har } from '../../../capture/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { itemMethod, type ItemValue } from '../../helpers/grpc-items.js';
import { compared, findingKeys, offlineKeys } from './compared.js';

const tmp = tempDir();
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

const SERVICE = {
  create: itemMethod('/demo.Items/Create', false, false),
  get: itemMethod('/demo.Items/Get', false, false),
  watch: itemMethod('/demo.Items/Watch', false, true),
  desk: itemMethod('/demo.Items/Desk', true, true),
} as const;

/**
 * A build: Create issues a random 24-hex id (in `name`); Watch, a server stream, issues one in its first message and
 * ends 300 ms later; Get finds only ids it issued (n 5, the new build's 7).
 */
async function build(kind: 'old' | 'new', createDelayMs = 0): Promise<{ url: string; notFound: () => number }> {
  const ids = new Set<string>();
  let notFound = 0;
  const server = new grpc.Server();
  server.addService(SERVICE as unknown as grpc.ServiceDefinition, {
    create: (_call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      const id = randomBytes(12).toString('hex');
      ids.add(id);
      setTimeout(() => done(null, { name: id, n: 1 }), createDelayMs);
    },
    watch: (call: grpc.ServerWritableStream<ItemValue, ItemValue>) => {
      const id = randomBytes(12).toString('hex');
      ids.add(id);
      call.write({ name: id, n: 0 });
      setTimeout(() => call.end(), 300);
    },
    // A bidi call: the first message gets a ticket; a later one that sends a known ticket back gets n 5 (the new build's 7).
    desk: (call: grpc.ServerDuplexStream<ItemValue, ItemValue>) => {
      call.on('data', (m: ItemValue) => {
        if (m.name === 'hello') {
          const id = randomBytes(12).toString('hex');
          ids.add(id);
          call.write({ name: id, n: 0 });
        } else if (ids.has(m.name)) call.write({ name: 'ok', n: kind === 'new' ? 7 : 5 });
        else {
          notFound++;
          call.write({ name: 'unknown ticket', n: 0 });
        }
      });
      call.on('end', () => call.end());
    },
    get: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      if (!ids.has(call.request.name)) return void (notFound++, done({ code: grpc.status.NOT_FOUND, details: 'no such item' }));
      done(null, { name: call.request.name, n: kind === 'new' ? 7 : 5 });
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  closers.push(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  return { url: `http://127.0.0.1:${port}`, notFound: () => notFound };
}

type Client = Record<string, (...a: unknown[]) => unknown> & grpc.Client;

/**
 * Runs `traffic` through bb shadow in front of the old build, the new build as candidate and the old one as
 * secondary, then checks what every case here checks: no target was sent an id it did not issue; the live
 * findings equal bb diff's of the written captures, and are the new build's one change (Get's or Desk's n).
 * Returns the report and the captures' folder.
 */
async function shadowed(name: string, traffic: (client: Client, shadow: Shadow) => Promise<void>, options: grpc.ChannelOptions = {}, candidateCreateDelayMs = 0): Promise<{ report: ShadowReport; out: string }> {
  const [primary, candidate, secondary] = [await build('old'), await build('new', candidateCreateDelayMs), await build('old')];
  const out = tmp.path(name);
  const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
  const Ctor = grpc.makeGenericClientConstructor(SERVICE as unknown as grpc.ServiceDefinition, 'Items');
  const client = new Ctor(new URL(shadow.url).host, grpc.credentials.createInsecure(), options) as unknown as Client;
  try {
    await traffic(client, shadow);
  } finally {
    client.close();
  }
  const report = await shadow.close();
  assert.deepEqual({ candidate: candidate.notFound(), secondary: secondary.notFound() }, { candidate: 0, secondary: 0 }, 'each target got its own ids');
  const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
  assert.deepEqual(offlineKeys(offline), findingKeys(report));
  assert.deepEqual(findingKeys(report), ['real changed grpc.messages[].data["2"]']);
  return { report, out };
}

/** A unary call's answer. */
const unary = (client: Client, method: string, v: ItemValue) => new Promise<ItemValue>((resolve, reject) => client[method]!(v, (err: Error | null, r: ItemValue) => (err ? reject(err) : resolve(r))));

/** Get's regressions and noise in a report. */
const gets = (report: ShadowReport) => {
  const r = report.routes['POST /demo.Items/Get'];
  return r && { regressions: r.regressions, noise: r.noise };
};

describe('bb shadow: an id a gRPC answer issued, sent back in a later call', () => {
  // grpc-js compresses its messages with gzip when its channel's default algorithm says so (2: gzip).
  for (const [what, options, compressed] of [['plain messages', {}, false], ['gzip messages (grpc-encoding gzip)', { 'grpc.default_compression_algorithm': 2 }, true]] as const)
  it(`reaches each target as its own; the changed field is a regression, live and in bb diff of the captures: ${what}`, async () => {
    const { report, out } = await shadowed(compressed ? 'grpc-gzip' : 'grpc', async (client, shadow) => {
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push((await unary(client, 'create', { name: '', n: 0 })).name);
      await compared(shadow, 2);
      for (const id of ids) assert.equal((await unary(client, 'get', { name: id, n: 0 })).n, 5);
    }, options);
    assert.deepEqual(gets(report), { regressions: 2, noise: 0 }, JSON.stringify(report.routes));
    const sent = (JSON.parse(readFileSync(`${out}/primary.har`, 'utf8')) as Har).log.entries.flatMap((e) => (e._grpcMessages ?? []).filter((m) => m.type === 'send').map((m) => m.compressed));
    assert.deepEqual(sent, [compressed, compressed, compressed, compressed], 'the client compressed its messages or not, as asked');
  });

  // An h2 connection's streams are not in order as an HTTP/1 lane's requests are: the Get goes before the slow
  // candidate's Create answered, and must wait for it (as a request on another connection does).
  it("a call right after the creation on the same connection waits for a slow candidate's own answer: each target gets its own id", async () => {
    const { report } = await shadowed('grpc-at-once', async (client) => {
      for (let i = 0; i < 2; i++) assert.equal((await unary(client, 'get', { name: (await unary(client, 'create', { name: '', n: 0 })).name, n: 0 })).n, 5);
    }, {}, 300);
    assert.deepEqual(gets(report), { regressions: 2, noise: 0 }, JSON.stringify(report.routes));
  });

  it('an id a server stream issued, sent back in a call while the stream goes on: each target gets its own; the changed field is a regression, live and in bb diff of the captures', async () => {
    const { report } = await shadowed('grpc-watch', async (client) => {
      const watch = client.watch!({ name: '', n: 0 }) as grpc.ClientReadableStream<ItemValue>;
      const ended = new Promise<void>((resolve, reject) => (watch.on('end', () => resolve()), watch.on('error', reject)));
      const id = await new Promise<string>((resolve) => watch.once('data', (v: ItemValue) => resolve(v.name)));
      assert.equal((await unary(client, 'get', { name: id, n: 0 })).n, 5);
      await ended;
    });
    assert.deepEqual(gets(report), { regressions: 1, noise: 0 }, JSON.stringify(report.routes));
  });

  it("a bidi call's client sends back what the server's previous message issued: each target gets its own; the changed field is a regression, live and in bb diff of the captures", async () => {
    await shadowed('grpc-desk', async (client) => {
      const desk = client.desk!() as grpc.ClientDuplexStream<ItemValue, ItemValue>;
      const ended = new Promise<void>((resolve, reject) => (desk.on('end', () => resolve()), desk.on('error', reject)));
      const next = () => new Promise<ItemValue>((resolve) => desk.once('data', resolve));
      desk.write({ name: 'hello', n: 0 });
      desk.write({ name: (await next()).name, n: 0 });
      assert.deepEqual(await next(), { name: 'ok', n: 5 });
      desk.end();
      await ended;
    });
  });
});
