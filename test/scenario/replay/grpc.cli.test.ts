// bb replay of a gRPC capture: a real @grpc/grpc-js client's four call kinds
// (unary, server, client and bidi streaming) recorded through bb's proxy in
// front of a grpc-js server (h2c), replayed by the real bb binary against a
// fresh server of the same build: the calls go over h2c on one connection,
// their messages in order (a bidi message once the target has answered the
// one before, as in the original), and bb diff of the two captures is MATCH.
// A call's deadline goes with it: grpc-timeout is the time left to the
// original deadline, and a target that ignores it is cut there, as the
// original client cut it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { randomBytes, randomInt } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { startRecording } from '../../../scenario/index.js';
import type { Har, HarEntry } from '../../../capture/index.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { runBb, startBb } from '../../helpers/cli.js';
import { settlesWithin } from '../../helpers/bounded.js';
import { tempDir } from '../../helpers/tmp.js';
import { decodeItem as decode, itemMethod, itemsHandlers, type ItemValue } from '../../helpers/grpc-items.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

const method = itemMethod;
const SERVICE = {
  get: method('/demo.Items/Get', false, false),
  list: method('/demo.Items/List', false, true),
  sum: method('/demo.Items/Sum', true, false),
  chat: method('/demo.Items/Chat', true, true),
  slow: method('/demo.Items/Slow', false, false),
  create: method('/demo.Items/Create', false, false),
  find: method('/demo.Items/Find', false, false),
  desk: method('/demo.Items/Desk', true, true),
} as const;

/** What a server saw: each call's path, the ms left to its deadline (from grpc-timeout) and its metadata in order as the server logged it, the messages Chat got, Find's misses. */
interface Seen {
  calls: Array<{ path: string; leftMs?: number; metadata: string[] }>;
  chat: string[];
  notFound: number;
}

/**
 * A grpc-js server of the service on 127.0.0.1:0; Slow answers after 1.5 s; Create issues an item of its own, a random
 * name and number, that Find finds only by both (NOT_FOUND else).
 */
async function grpcServer(): Promise<{ port: number; seen: Seen }> {
  const seen: Seen = { calls: [], chat: [], notFound: 0 };
  const items = new Map<string, number>();
  const note = (call: { getDeadline(): grpc.Deadline; getPath(): string; metadata: grpc.Metadata }) => {
    const deadline = call.getDeadline();
    // grpc-js gives the deadline as epoch ms (Infinity without grpc-timeout).
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    const metadata = Object.entries(call.metadata.getMap()).map(([name, value]) => `${name}: ${String(value)}`);
    seen.calls.push({ path: call.getPath(), ...(Number.isFinite(at) ? { leftMs: at - Date.now() } : {}), metadata });
  };
  const server = new grpc.Server();
  server.addService(SERVICE as unknown as grpc.ServiceDefinition, {
    ...itemsHandlers({ onCall: note, chat: seen.chat }),
    slow: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      note(call);
      setTimeout(() => done(null, { name: 'late', n: 0 }), 1500);
    },
    create: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      note(call);
      const item = { name: `item_${randomBytes(8).toString('hex')}`, n: randomInt(10_000, 2_000_000_000) };
      items.set(item.name, item.n);
      done(null, item);
    },
    // A bidi call: 'hello' gets a ticket of this server's own; a later message must send it back.
    desk: (call: grpc.ServerDuplexStream<ItemValue, ItemValue>) => {
      note(call);
      const tickets = new Set<string>();
      call.on('data', (m: ItemValue) => {
        if (m.name === 'hello') {
          const ticket = `t_${randomBytes(8).toString('hex')}`;
          tickets.add(ticket);
          call.write({ name: ticket, n: 0 });
        } else if (tickets.has(m.name)) call.write({ name: 'ok', n: 1 });
        else {
          seen.notFound++;
          call.write({ name: 'unknown ticket', n: 0 });
        }
      });
      call.on('end', () => call.end());
    },
    find: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) => {
      note(call);
      if (items.get(call.request.name) !== call.request.n) return void (seen.notFound++, done({ code: grpc.status.NOT_FOUND, details: 'no such item' }));
      done(null, { name: `found ${call.request.name}`, n: 1 });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  return { port, seen };
}

/** A bare h2c server that never answers and reads no deadline: each stream's grpc-timeout as it came; `arrived` resolves at the first stream. */
async function silentServer(): Promise<{ url: string; timeouts: string[]; arrived: Promise<void> }> {
  const timeouts: string[] = [];
  const server = http2.createServer();
  let arrive!: () => void;
  const arrived = new Promise<void>((r) => (arrive = r));
  server.on('stream', (stream, headers) => {
    timeouts.push(String(headers['grpc-timeout']));
    stream.on('error', () => {});
    stream.resume();
    arrive();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => sessions.add(s));
  cleanups.add(async () => {
    for (const s of sessions) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, timeouts, arrived };
}

type Client = Record<string, (...a: unknown[]) => unknown> & grpc.Client;

/** Opens a client of the service on `port`. */
function client(port: number): Client {
  const Ctor = grpc.makeGenericClientConstructor(SERVICE as unknown as grpc.ServiceDefinition, 'Items');
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as Client;
}

/** The four call kinds, one after the other; Get with a 5 s deadline. */
async function driveFour(c: Client): Promise<void> {
  const got = await new Promise<ItemValue>((resolve, reject) =>
    c.get!({ name: 'a', n: 21 }, { deadline: Date.now() + 5000 }, (err: Error | null, v: ItemValue) => (err ? reject(err) : resolve(v))));
  assert.equal(got.n, 42);
  await new Promise<void>((resolve, reject) => {
    const call = c.list!({ name: 'l', n: 3 }) as grpc.ClientReadableStream<ItemValue>;
    call.on('data', () => {});
    call.on('end', () => resolve());
    call.on('error', reject);
  });
  await new Promise<ItemValue>((resolve, reject) => {
    const call = c.sum!((err: Error | null, v: ItemValue) => (err ? reject(err) : resolve(v))) as grpc.ClientWritableStream<ItemValue>;
    for (const n of [1, 2, 3, 4]) call.write({ name: 'x', n });
    call.end();
  });
  await new Promise<void>((resolve, reject) => {
    const call = c.chat!() as grpc.ClientDuplexStream<ItemValue, ItemValue>;
    let echoed = 0;
    call.on('data', () => {
      echoed++;
      if (echoed < 3) call.write({ name: `m${echoed}`, n: echoed });
      else call.end();
    });
    call.on('end', () => resolve());
    call.on('error', reject);
    call.write({ name: 'm0', n: 0 });
  });
}

/** Records what `drive` does through a proxy in front of a fresh server into NAME.har; the server's log beside it. */
async function recordCalls(name: string, drive: (c: Client) => Promise<void>): Promise<{ out: string; seen: Seen }> {
  const { port, seen } = await grpcServer();
  const rec = await startRecording({ target: `http://127.0.0.1:${port}`, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
  const c = client(Number(new URL(rec.url).port));
  try {
    await drive(c);
  } finally {
    c.close();
    await rec.close(1000);
  }
  return { out: rec.out, seen };
}

const names = (e: HarEntry): string[] => (e._grpcMessages ?? []).map((m) => `${m.type} ${decode(Buffer.from(m.data, 'base64')).name}`);

describe('bb replay: gRPC', () => {
  let original: string;
  let originalSeen: Seen;
  before(async () => {
    ({ out: original, seen: originalSeen } = await recordCalls('grpc', driveFour));
  });

  it('replays unary, server, client and bidi streaming calls on one h2c connection, each head as the server logged it first; bb diff of the two captures is MATCH', async (t) => {
    const fresh = await grpcServer();
    const out = tmp.path('grpc-replay.har');
    const run = await runBb(['replay', original, '--target', `http://127.0.0.1:${fresh.port}`, '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /^replayed 4 exchanges/);
    assert.deepEqual(fresh.seen.calls.map((c) => c.path), ['/demo.Items/Get', '/demo.Items/List', '/demo.Items/Sum', '/demo.Items/Chat']);
    assert.deepEqual(fresh.seen.chat, ['m0', 'm1', 'm2']);
    // The server's own log of each call's head: the metadata grpc-js sent, in its order, as the first server logged it.
    assert.deepEqual(fresh.seen.calls.map((c) => c.metadata), originalSeen.calls.map((c) => c.metadata));
    assert.ok(originalSeen.calls[0]!.metadata.some((m) => m.startsWith('user-agent: grpc-node-js/')), originalSeen.calls[0]!.metadata.join(' | '));
    t.diagnostic(originalSeen.calls[0]!.metadata.join(' | '));
    // The deadline: what was left of the original client's 5 s (grpcTimeoutLeft's own test has the arithmetic;
    // the time the target read it at is this machine's, printed).
    const left = fresh.seen.calls[0]!.leftMs!;
    assert.ok(left > 0 && left <= 5000, JSON.stringify(fresh.seen.calls));
    t.diagnostic(`Get reached the target with ${left} ms left of 5000`);
    assert.equal(fresh.seen.calls[1]!.leftMs, undefined);
    const replayed = JSON.parse(await readFile(out, 'utf8')) as Har;
    const entries = replayed.log.entries;
    assert.ok(entries.every((e) => e.request.httpVersion === 'HTTP/2.0'));
    assert.equal(new Set(entries.map((e) => e.connection)).size, 1);
    const chat = entries.find((e) => e.request.url.endsWith('/Chat'))!;
    assert.deepEqual(names(chat), ['send m0', 'receive echo m0', 'send m1', 'receive echo m1', 'send m2', 'receive echo m2']);
    assert.deepEqual(names(entries.find((e) => e.request.url.endsWith('/Sum'))!), ['send x', 'send x', 'send x', 'send x', 'receive sum']);
    const diff = await runBb(['diff', original, out], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });

  it("follows an item a call's answer issued into a later call's message: the target finds its own item; bb diff of the two captures is MATCH", async () => {
    const call = (c: Client, m: 'create' | 'find', v: ItemValue) => new Promise<ItemValue>((resolve, reject) => c[m]!(v, (err: Error | null, r: ItemValue) => (err ? reject(err) : resolve(r))));
    const { out: made, seen } = await recordCalls('issued', async (c) => {
      // The name (a string field) and the number (a varint, here 5 to 10 digits) both go back.
      const item = await call(c, 'create', { name: 'widget', n: 1 });
      assert.equal((await call(c, 'find', item)).n, 1);
    });
    assert.equal(seen.notFound, 0);
    const fresh = await grpcServer();
    const out = tmp.path('issued-replay.har');
    const run = await runBb(['replay', made, '--target', `http://127.0.0.1:${fresh.port}`, '--out', out, '--json', tmp.path('issued-replay.json')], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(fresh.seen.notFound, 0, 'the target got its own item back');
    const report = JSON.parse(await readFile(tmp.path('issued-replay.json'), 'utf8')) as { rewritten: Array<{ from: { path: string }; uses: number }> };
    assert.deepEqual(report.rewritten.map((r) => `${r.from.path} ${r.uses}`).sort(), ['grpc[0]:$.1~0 1', 'grpc[0]:$.2 1']);
    const diff = await runBb(['diff', made, out], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });

  it("sends back, in a bidi call's later message, the ticket the target's previous message issued: bb diff of the two captures is MATCH", async () => {
    const { out: made, seen } = await recordCalls('desk', async (c) => {
      const desk = c.desk!() as grpc.ClientDuplexStream<ItemValue, ItemValue>;
      const ended = new Promise<void>((resolve, reject) => (desk.on('end', () => resolve()), desk.on('error', reject)));
      const next = () => new Promise<ItemValue>((resolve) => desk.once('data', resolve));
      desk.write({ name: 'hello', n: 0 });
      desk.write({ name: (await next()).name, n: 0 });
      assert.equal((await next()).name, 'ok');
      desk.end();
      await ended;
    });
    assert.equal(seen.notFound, 0);
    const fresh = await grpcServer();
    const out = tmp.path('desk-replay.har');
    const run = await runBb(['replay', made, '--target', `http://127.0.0.1:${fresh.port}`, '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(fresh.seen.notFound, 0, 'the target got its own ticket back');
    const diff = await runBb(['diff', made, out], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });

  it('a call past its deadline is cut at the deadline, as the original client cut it, even when the target ignores grpc-timeout', async (t) => {
    const { out: slow } = await recordCalls('slow', (c) => new Promise<void>((resolve) => {
      c.slow!({ name: 's', n: 1 }, { deadline: Date.now() + 400 }, (err: grpc.ServiceError | null) => {
        assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED);
        resolve();
      });
    }));
    const { url, timeouts } = await silentServer();
    const out = tmp.path('slow-replay.har');
    const run = await runBb(['replay', slow, '--target', url, '--out', out, '--json', tmp.path('slow.json')], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(timeouts.length, 1);
    const ms = Number(/^(\d+)m$/.exec(timeouts[0]!)?.[1]);
    assert.ok(ms > 200 && ms <= 400, timeouts[0]);
    const report = JSON.parse(await readFile(tmp.path('slow.json'), 'utf8')) as { cut: Array<{ why: string; afterMs: number }> };
    assert.equal(report.cut.length, 1);
    assert.equal(report.cut[0]!.why, 'client');
    t.diagnostic(`grpc-timeout ${timeouts[0]}; cut after ${report.cut[0]!.afterMs} ms`);
    const entry = (JSON.parse(await readFile(out, 'utf8')) as Har).log.entries[0]!;
    assert.equal(entry._bb?.aborted, 'client');
  });

  it('SIGINT while a call waits on a target that never answers stops at once: exit 130, the capture written, the call recorded as aborted', async () => {
    const { url, arrived } = await silentServer();
    const out = tmp.path('grpc-interrupted.har');
    const bb = startBb(['replay', original, '--target', url, '--out', out], env, { timeoutMs: 60_000 });
    await settlesWithin(arrived, 20_000, 'the first call');
    bb.child.kill('SIGINT');
    // Far less than the 5 s deadline and 30 s --timeout the call would otherwise be given.
    const code = await settlesWithin(bb.exited, 10_000, 'bb after SIGINT');
    assert.equal(code, 130, bb.stdout() + bb.stderr());
    assert.ok(existsSync(out), 'the capture is written');
    const entries = (JSON.parse(await readFile(out, 'utf8')) as Har).log.entries;
    assert.deepEqual(entries.map((e) => [new URL(e.request.url).pathname, e.request.httpVersion, e._bb?.aborted ?? null]), [['/demo.Items/Get', 'HTTP/2.0', 'client']]);
  });
});
