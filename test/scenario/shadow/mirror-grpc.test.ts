// A mirrored gRPC request body's messages get each target's own values
// (scenario/shadow/mirror-grpc.ts): framed again with their new lengths, a
// compressed one compressed again; a message that does not decompress and a
// cut last frame go as sent. Then the whole relay through bb shadow: a gRPC
// id issued in a response message and sent back in a later call's request
// message (Create returns an item's random id, Get reads it) reaches each
// target as its own, so the candidate's real change (Get's n 5 → 7) is one
// regression, live and in `bb diff` of the captures alike, where before the
// mirrors answered NOT_FOUND and the change hid as noise. The same when the
// client compresses its messages, when a server stream issued the id and
// another call sends it back while the stream goes on (message-pairs.ts
// grpcFeed), and when a bidi call's client sends back what the server's
// previous message issued (ClientMessages).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { ClientMessages, grpcBodyTokens, rewriteGrpcBody } from '../../../scenario/shadow/mirror-grpc.js';
import { startShadow, type Shadow, type ShadowReport } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import type { Har } from '../../../capture/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { decodeItem, encodeItem, itemMethod, type ItemValue } from '../../helpers/grpc-items.js';
import { compared, findingKeys, offlineKeys } from './compared.js';

/** One length-prefixed message (PROTOCOL-HTTP2.md "Length-Prefixed-Message"). */
const frame = (message: Buffer, compressed = false): Buffer => {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
};

/** The body's whole frames: flags and message each. */
const frames = (body: Buffer): Array<{ flags: number; item: ItemValue | Buffer }> => {
  const out: Array<{ flags: number; item: ItemValue | Buffer }> = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const end = at + 5 + body.readUInt32BE(at + 1);
    const message = body.subarray(at + 5, end);
    out.push({ flags: body[at]!, item: body[at]! & 1 ? message : decodeItem(message) });
    at = end;
  }
  return out;
};

describe('rewriteGrpcBody', () => {
  const map = new Map([['item_9f8e7d6c', 'item_0123456789abcdef0123'], ['48213', '7']]);

  it("puts each target's values in every message, each prefix with its new length, a gzip one compressed again (grpc-encoding gzip)", () => {
    const body = Buffer.concat([frame(encodeItem({ name: 'item_9f8e7d6c', n: 48213 })), frame(gzipSync(encodeItem({ name: 'zipped item_9f8e7d6c', n: 3 })), true), frame(encodeItem({ name: 'and item_9f8e7d6c', n: 2 }))]);
    const out = frames(rewriteGrpcBody(body, map, 'gzip'));
    assert.equal(out[1]!.flags, 1);
    assert.deepEqual(decodeItem(gunzipSync(out[1]!.item as Buffer)), { name: 'zipped item_0123456789abcdef0123', n: 3 });
    assert.deepEqual([out[0], out[2]], [
      { flags: 0, item: { name: 'item_0123456789abcdef0123', n: 7 } },
      { flags: 0, item: { name: 'and item_0123456789abcdef0123', n: 2 } },
    ]);
  });

  it('sends a compressed message that does not decompress as it came: an unknown encoding, identity, bytes that are not gzip', () => {
    const zipped = frame(gzipSync(encodeItem({ name: 'item_9f8e7d6c', n: 1 })), true);
    const garbage = frame(Buffer.from('1f8b0800000000000003', 'hex'), true);
    for (const encoding of ['snappy', 'identity', undefined]) assert.equal(rewriteGrpcBody(zipped, map, encoding), zipped, String(encoding));
    assert.equal(rewriteGrpcBody(garbage, map, 'gzip'), garbage);
  });

  it('keeps a cut last frame as it came, and gives the body itself back when nothing changed or nothing is bound', () => {
    const cut = frame(encodeItem({ name: 'item_9f8e7d6c', n: 1 })).subarray(0, 9);
    const out = rewriteGrpcBody(Buffer.concat([frame(encodeItem({ name: 'x', n: 48213 })), cut]), map, undefined);
    assert.deepEqual(out.subarray(out.length - cut.length), cut);
    assert.deepEqual(frames(out.subarray(0, out.length - cut.length)), [{ flags: 0, item: { name: 'x', n: 7 } }]);
    const plain = frame(encodeItem({ name: 'other', n: 5 }));
    assert.equal(rewriteGrpcBody(plain, map, undefined), plain);
    const bound = frame(encodeItem({ name: 'item_9f8e7d6c', n: 5 }));
    assert.equal(rewriteGrpcBody(bound, new Map(), undefined), bound);
  });
});

describe('grpcBodyTokens', () => {
  it("lists the values a body's messages carry, a compressed one's when it decompresses", () => {
    const body = Buffer.concat([frame(encodeItem({ name: 'item_9f8e7d6c', n: 48213 })), frame(gzipSync(encodeItem({ name: 'item_zipped1', n: 0 })), true)]);
    assert.deepEqual(grpcBodyTokens(body, 'gzip'), ['item_9f8e7d6c', '48213', 'item_zipped1']);
    assert.deepEqual(grpcBodyTokens(body, undefined), ['item_9f8e7d6c', '48213']);
  });
});

describe('ClientMessages: a streaming call\'s client messages as they cross', () => {
  it('cuts messages out of any chunking, lets one that waits hold back those after it, writes each with the values known when it goes', async () => {
    const bindings = new Map<string, string>();
    const waits: Array<() => void> = [];
    const written: Buffer[] = [];
    let ended = false;
    const messages = new ClientMessages(
      {
        bindings,
        // A message carrying the ticket waits (the target has not said its own yet); others go at once.
        whenReady: (tokens, go) => (tokens().has('item_9f8e7d6c') ? waits.push(go) : go()),
      },
      { write: (b) => written.push(b), end: () => (ended = true) },
      undefined,
    );
    const body = Buffer.concat([frame(encodeItem({ name: 'hello', n: 1 })), frame(encodeItem({ name: 'item_9f8e7d6c', n: 2 })), frame(encodeItem({ name: 'after', n: 3 }))]);
    for (let i = 0; i < body.length; i += 3) messages.write(body.subarray(i, i + 3));
    messages.end();
    assert.deepEqual(frames(Buffer.concat(written)), [{ flags: 0, item: { name: 'hello', n: 1 } }]);
    assert.equal(ended, false);
    // The target said its ticket: the waiting message goes with it, then the rest, then the end.
    bindings.set('item_9f8e7d6c', 'item_0123456789abcdef0123');
    waits.shift()!();
    assert.deepEqual(frames(Buffer.concat(written)), [
      { flags: 0, item: { name: 'hello', n: 1 } },
      { flags: 0, item: { name: 'item_0123456789abcdef0123', n: 2 } },
      { flags: 0, item: { name: 'after', n: 3 } },
    ]);
    assert.equal(ended, true);
  });

  it('passes a message past 4 MiB through as it crosses, and a cut last one at the end, byte for byte', () => {
    const written: Buffer[] = [];
    const messages = new ClientMessages({ bindings: new Map([['x', 'y']]), whenReady: (_t, go) => go() }, { write: (b) => written.push(b), end: () => {} }, undefined);
    const big = frame(Buffer.alloc(4 * 1024 * 1024 + 10, 0x41));
    const cut = frame(encodeItem({ name: 'item_9f8e7d6c', n: 2 })).subarray(0, 7);
    const body = Buffer.concat([big, cut]);
    for (let i = 0; i < body.length; i += 65536) messages.write(body.subarray(i, i + 65536));
    messages.end();
    assert.ok(Buffer.concat(written).equals(body));
  });
});

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
    // A call whose metadata names a ticket (x-ticket) must name one this build issued.
    desk: (call: grpc.ServerDuplexStream<ItemValue, ItemValue>) => {
      const named = call.metadata.get('x-ticket')[0];
      if (named !== undefined && !ids.has(String(named))) notFound++;
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

/** A desk call (with `metadata`): hello, the ticket it hands out sent back, then the ok (n 5 on the primary). */
async function visitDesk(client: Client, metadata = new grpc.Metadata()): Promise<void> {
  const desk = client.desk!(metadata) as grpc.ClientDuplexStream<ItemValue, ItemValue>;
  const ended = new Promise<void>((resolve, reject) => (desk.on('end', () => resolve()), desk.on('error', reject)));
  const next = () => new Promise<ItemValue>((resolve) => desk.once('data', resolve));
  desk.write({ name: 'hello', n: 0 });
  desk.write({ name: (await next()).name, n: 0 });
  assert.deepEqual(await next(), { name: 'ok', n: 5 });
  desk.end();
  await ended;
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

  // A call still arriving goes at once, but its head waits as a whole request does: its metadata carries an id.
  it("a bidi call opened right after a creation, its metadata naming the new id, waits for a slow candidate's own answer: each target gets its own", async () => {
    await shadowed('grpc-desk-metadata', async (client) => {
      const metadata = new grpc.Metadata();
      metadata.set('x-ticket', (await unary(client, 'create', { name: '', n: 0 })).name);
      await visitDesk(client, metadata);
    }, {}, 300);
  });

  it("a bidi call's client sends back what the server's previous message issued: each target gets its own; the changed field is a regression, live and in bb diff of the captures", async () => {
    await shadowed('grpc-desk', async (client) => {
      await visitDesk(client);
    });
  });
});

// A server-streaming call its client cancels after a few messages (RST_STREAM CANCEL): each target's call is cancelled
// too, once it has sent as many as the client read, and compared as far as that. A probe's candidate ran its copy to
// the end (100 messages and an OK status) and the run reported grpc.status and grpc.messages[] extra, live and in bb
// diff: only h2 calls whose request body was still arriving were cancelled on the targets.
describe('bb shadow: a server-streaming gRPC call its client cancels', () => {
  const feed = itemMethod('/probe.Feed/Ticks', false, true);
  async function ticker(delayMs: number) {
    const seen = { cancelled: 0, finished: 0 };
    const server = new grpc.Server();
    server.addService({ ticks: feed } as unknown as grpc.ServiceDefinition, {
      ticks: (call: grpc.ServerWritableStream<ItemValue, ItemValue>) => {
        let n = 0;
        let timer: NodeJS.Timeout | undefined;
        const tick = () => {
          if (call.cancelled) return;
          call.write({ name: 'tick', n: ++n });
          if (n === 100) return (seen.finished++, call.end());
          timer = setTimeout(tick, 10);
        };
        call.on('cancelled', () => (clearTimeout(timer), seen.cancelled++));
        timer = setTimeout(tick, delayMs);
      },
    });
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    after(() => new Promise<void>((r) => server.tryShutdown(() => r())));
    return { url: `http://127.0.0.1:${port}`, seen };
  }

  it("cancels each target's call as far as the client read: equal, live and in bb diff of the captures", async () => {
    // The candidate starts 100 ms later: its copy is cut once it caught up with the client's count.
    const [primary, candidate] = [await ticker(0), await ticker(100)];
    const out = tmp.path('grpc-cancel');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: out, bbHome: tmp.bbHome, mirror: ['POST /probe.Feed/Ticks'], reportEveryMs: 50 });
    const Ctor = grpc.makeGenericClientConstructor({ ticks: feed } as unknown as grpc.ServiceDefinition, 'Feed');
    const client = new Ctor(new URL(shadow.url).host, grpc.credentials.createInsecure()) as unknown as { ticks(req: ItemValue): grpc.ClientReadableStream<ItemValue> };
    try {
      await new Promise<void>((resolve) => {
        const call = client.ticks({ name: 'go', n: 0 });
        let got = 0;
        call.on('data', () => {
          if (++got === 4) call.cancel();
        });
        call.on('error', () => resolve());
        call.on('end', () => resolve());
      });
    } finally {
      (client as unknown as grpc.Client).close();
    }
    // The candidate's call is cancelled while the run goes on, not run to its 100th message.
    for (let i = 0; i < 300 && candidate.seen.cancelled === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const report = await shadow.close();
    assert.deepEqual(candidate.seen, { cancelled: 1, finished: 0 });
    assert.deepEqual(report.findings, [], JSON.stringify(report.findings));
    assert.equal(report.totals.equal, 1, JSON.stringify(report.totals));
    assert.equal((await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`)).verdict, 'match');
  });
});
