// H2Session differential against real h2 peers: node:http2 servers and
// clients (seeded random traffic), curl --http2-prior-knowledge and nghttp,
// talking through a plain TCP relay that copies the bytes unchanged and feeds
// a copy to the session. What the session decodes must equal what the peers
// themselves report: headers in order, never-indexed flags, bodies byte for
// byte, trailers, reset codes, pushes, GOAWAY.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { errorName } from '../../../proxy/h2/frames.js';
import { startH2Relay, streamsOf, type SeenStream } from '../../helpers/h2-relay.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { tempDir } from '../../helpers/tmp.js';
import { mulberry32 } from '../../../core/index.js';

const run = promisify(execFile);
type Pairs = Array<[string, string]>;
const pairs = (raw: string[]): Pairs => Array.from({ length: raw.length / 2 }, (_, i) => [raw[2 * i]!, raw[2 * i + 1]!]);

/** mulberry32: a small seeded generator, so a failing seed can be replayed. */
function random(seed: number) {
  const next = mulberry32(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  const text = (n: number) => Array.from({ length: n }, () => pick('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/=;,'.split(''))).join('');
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  return { next, int, pick, text, bytes };
}
type Random = ReturnType<typeof random>;

type Outcome = 'respond' | 'push' | 'server-reset' | 'client-reset';
interface Plan {
  id: number;
  method: string;
  path: string;
  headers: Pairs;
  sensitive: string[];
  body: Buffer;
  requestTrailers?: Pairs;
  outcome: Outcome;
  informational: boolean;
  status: number;
  responseHeaders: Pairs;
  responseBody: Buffer;
  responseTrailers?: Pairs;
  resetCode: number;
}

// Names node lets repeat (it refuses a second user-agent or authorization).
const NAMES = ['accept', 'cookie', 'via', 'x-trace', 'x-a', 'x-b', 'x-big'];
function headerList(r: Random, values: string[]): Pairs {
  return Array.from({ length: r.int(20) }, (): [string, string] => {
    const name = r.next() < 0.7 ? r.pick(NAMES) : `x-${r.text(1 + r.int(12)).toLowerCase().replace(/[^a-z0-9-]/g, 'z')}`;
    // Reused values hit the dynamic table; long ones (up to 4000) make it evict.
    const value = r.next() < 0.4 ? r.pick(values) : r.text(r.next() < 0.15 ? 500 + r.int(3500) : r.int(40));
    return [name, value];
  });
}

function makePlan(r: Random, id: number, values: string[]): Plan {
  const outcome = r.pick<Outcome>(['respond', 'respond', 'respond', 'push', 'server-reset', 'client-reset']);
  const post = r.next() < 0.5;
  return {
    id,
    method: post ? 'POST' : 'GET',
    path: `/${r.text(r.int(60))}`,
    headers: headerList(r, values),
    sensitive: r.next() < 0.3 ? ['x-a'] : [],
    body: post ? r.bytes(r.pick([0, 10, 1000, 70000, 150000])) : Buffer.alloc(0),
    ...(r.next() < 0.3 ? { requestTrailers: [['x-checksum', r.text(8)] as [string, string]] } : {}),
    outcome,
    informational: r.next() < 0.2,
    status: r.pick([200, 201, 404, 500]),
    responseHeaders: headerList(r, values),
    responseBody: r.bytes(r.pick([0, 5, 2000, 40000, 200000])),
    ...(r.next() < 0.3 ? { responseTrailers: [['grpc-status', String(r.int(16))] as [string, string], ['grpc-message', r.text(5)] as [string, string]] } : {}),
    resetCode: r.pick([http2.constants.NGHTTP2_CANCEL, http2.constants.NGHTTP2_REFUSED_STREAM, http2.constants.NGHTTP2_INTERNAL_ERROR]),
  };
}

/** Node's header object from ordered pairs; repeated names become arrays, which node sends as repeated fields in order. */
function headerObject(list: Pairs, sensitive: string[] = []): http2.OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of list) {
    const had = out[name];
    out[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return Object.assign(out, { [http2.sensitiveHeaders]: sensitive });
}

interface ServerSaw {
  request: Pairs;
  sensitive: string[];
  body: Buffer[];
  trailers?: Pairs;
}
interface ClientSaw {
  id?: number;
  informational: Pairs[];
  response?: Pairs;
  body: Buffer[];
  trailers?: Pairs;
  rstCode?: number;
}
interface PushSaw {
  id: number;
  parent: number;
  request: Pairs;
  response?: Pairs;
  body: Buffer[];
}

function serve(plans: Map<number, Plan>, saw: Map<number, ServerSaw>, settings: http2.Settings, padded: boolean): http2.Http2Server {
  const server = http2.createServer({ settings, ...(padded ? { paddingStrategy: http2.constants.PADDING_STRATEGY_MAX } : {}) });
  server.on('stream', (stream, headers, _flags, raw) => {
    const plan = plans.get(Number(headers['x-plan']))!;
    const seen: ServerSaw = { request: pairs(raw as unknown as string[]), sensitive: [...((headers[http2.sensitiveHeaders] as string[]) ?? [])], body: [] };
    saw.set(plan.id, seen);
    stream.on('error', () => {});
    stream.on('data', (c: Buffer) => seen.body.push(c));
    stream.on('trailers', (_t, _f, rawTrailers: string[]) => (seen.trailers = pairs(rawTrailers)));
    if (plan.outcome === 'server-reset') return stream.close(plan.resetCode);
    if (plan.outcome === 'client-reset') return stream.respond({ ':status': 200 });
    stream.on('end', () => {
      if (stream.destroyed) return;
      if (plan.informational) stream.additionalHeaders({ ':status': 103, link: '</style.css>; rel=preload' });
      if (plan.outcome === 'push') {
        stream.pushStream({ ':path': `/pushed/${plan.id}`, 'x-pushed-for': String(plan.id) }, (err, push) => {
          if (err) return;
          push.on('error', () => {});
          push.respond({ ':status': 200, 'x-pushed': 'yes' });
          push.end(plan.responseBody.subarray(0, 3000));
        });
      }
      const trailers = plan.responseTrailers;
      stream.respond({ ':status': plan.status, ...headerObject(plan.responseHeaders) }, { waitForTrailers: Boolean(trailers) });
      if (trailers) stream.on('wantTrailers', () => stream.sendTrailers(headerObject(trailers)));
      stream.end(plan.responseBody);
    });
  });
  return server;
}

function request(client: http2.ClientHttp2Session, plan: Plan): { saw: ClientSaw; done: Promise<void> } {
  const saw: ClientSaw = { informational: [], body: [] };
  const trailers = plan.requestTrailers;
  const req = client.request(
    { ':method': plan.method, ':path': plan.path, 'x-plan': String(plan.id), ...headerObject(plan.headers, plan.sensitive) },
    { waitForTrailers: Boolean(trailers), endStream: plan.body.length === 0 && !trailers },
  );
  req.on('error', () => {});
  req.on('headers', (_h, _f, raw: string[]) => saw.informational.push(pairs(raw)));
  req.on('response', (_h, _f, raw: string[]) => {
    saw.response = pairs(raw);
    if (plan.outcome === 'client-reset') req.close(plan.resetCode);
  });
  req.on('data', (c: Buffer) => saw.body.push(c));
  req.on('trailers', (_t, _f, raw: string[]) => (saw.trailers = pairs(raw)));
  if (trailers) req.on('wantTrailers', () => req.sendTrailers(headerObject(trailers)));
  if (plan.body.length > 0 || trailers) req.end(plan.body);
  // Not once(): it rejects on the 'error' a reset stream emits.
  const done = new Promise<void>((resolve) => req.on('close', () => {
    saw.id = req.id;
    saw.rstCode = req.rstCode;
    resolve();
  }));
  return { saw, done };
}

function assertStream(plan: Plan, ours: SeenStream | undefined, server: ServerSaw | undefined, client: ClientSaw): void {
  const what = `plan ${plan.id} (${plan.outcome}) on stream ${client.id}`;
  assert.ok(ours, `${what}: the session saw the stream`);
  if (server) {
    assert.deepEqual(ours.request, server.request, `${what}: request headers`);
    assert.deepEqual([...ours.requestNeverIndexed].sort(), [...server.sensitive].sort(), `${what}: never-indexed fields`);
    if (plan.outcome !== 'server-reset') {
      assert.ok(ours.requestBody.equals(Buffer.concat(server.body)), `${what}: request body`);
      assert.deepEqual(ours.requestTrailers, server.trailers, `${what}: request trailers`);
    }
  }
  assert.deepEqual(ours.informational, client.informational, `${what}: 1xx heads`);
  assert.deepEqual(ours.response, client.response, `${what}: response headers`);
  if (plan.outcome !== 'client-reset') {
    assert.ok(ours.responseBody.equals(Buffer.concat(client.body)), `${what}: response body`);
    assert.deepEqual(ours.responseTrailers, client.trailers, `${what}: response trailers`);
  }
  const resetBy = plan.outcome === 'server-reset' ? 'server' : plan.outcome === 'client-reset' ? 'client' : undefined;
  if (resetBy) assert.deepEqual(ours.reset, { from: resetBy, error: errorName(client.rstCode!) }, `${what}: reset`);
  else assert.equal(client.rstCode, 0, `${what}: no reset`);
}

describe('H2Session against node:http2 through a relay', () => {
  const configs = [
    { seed: 1, client: { headerTableSize: 4096 }, server: { headerTableSize: 4096 }, padded: false },
    { seed: 2, client: { headerTableSize: 256 }, server: { headerTableSize: 0 }, padded: true },
    { seed: 3, client: { headerTableSize: 0, maxFrameSize: 65536 }, server: { headerTableSize: 65536, maxFrameSize: 1 << 20 }, padded: false, later: { headerTableSize: 512 } },
    { seed: 4, client: { headerTableSize: 65536 }, server: { headerTableSize: 256 }, padded: true, later: { headerTableSize: 0, maxFrameSize: 32768 } },
  ];
  for (const config of configs) {
    it(`decodes what the peers report, seed ${config.seed} (tables ${config.client.headerTableSize}/${config.server.headerTableSize}${config.padded ? ', padded' : ''})`, async () => {
      const cleanups = new Cleanups();
      try {
        const r = random(config.seed);
        const values = Array.from({ length: 8 }, () => r.text(r.pick([3, 30, 300])));
        const plans = new Map<number, Plan>();
        for (let id = 0; id < 24; id++) plans.set(id, makePlan(r, id, values));
        const serverSaw = new Map<number, ServerSaw>();
        const listSize = { maxHeaderListSize: 256 * 1024 };
        const server = serve(plans, serverSaw, { ...config.server, ...listSize }, config.padded);
        const sessions: http2.ServerHttp2Session[] = [];
        server.on('session', (s) => sessions.push(s));
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        cleanups.add(() => new Promise((done) => {
          server.close(done);
          for (const s of sessions) s.destroy();
        }));
        const relay = await startH2Relay((server.address() as AddressInfo).port);
        cleanups.add(() => relay.close());
        const client = http2.connect(`http://127.0.0.1:${relay.port}`, {
          settings: { ...config.client, ...listSize },
          ...(config.padded ? { paddingStrategy: http2.constants.PADDING_STRATEGY_MAX } : {}),
        });
        client.on('error', () => {});
        cleanups.add(() => client.destroy());
        const pushes: PushSaw[] = [];
        client.on('stream', (pushed, _h, _f, raw) => {
          const saw: PushSaw = { id: pushed.id!, parent: -1, request: pairs(raw as unknown as string[]), body: [] };
          pushes.push(saw);
          pushed.on('push', (_h2, _f2, rawResponse: string[]) => (saw.response = pairs(rawResponse)));
          pushed.on('data', (c: Buffer) => saw.body.push(c));
          pushed.on('error', () => {});
        });
        await once(client, 'connect');
        // Half the plans run concurrently, then new SETTINGS mid-connection, then the rest.
        const ids = [...plans.keys()];
        const clientSaw = new Map<number, ClientSaw>();
        for (const half of [ids.slice(0, 12), ids.slice(12)]) {
          const started = half.map((id) => {
            const { saw, done } = request(client, plans.get(id)!);
            clientSaw.set(id, saw);
            return done;
          });
          await Promise.all(started);
          if (config.later && half[0] === 0) {
            client.settings(config.later);
            await once(client, 'localSettings');
          }
        }
        sessions[0]!.goaway(http2.constants.NGHTTP2_NO_ERROR, 0, Buffer.from(`bye-${config.seed}`));
        await new Promise((done) => setTimeout(done, 50));
        client.close();
        await relay.connections[0]!.closed;

        assert.equal(relay.connections.length, 1);
        const facts = relay.connections[0]!.facts;
        assert.deepEqual(facts.filter((f) => f.type === 'error'), [], 'no connection error');
        const streams = streamsOf(facts);
        for (const plan of plans.values()) {
          const saw = clientSaw.get(plan.id)!;
          assertStream(plan, streams.get(saw.id!), serverSaw.get(plan.id), saw);
        }
        for (const push of pushes) {
          const ours = streams.get(push.id)!;
          assert.deepEqual(ours.request, push.request, `pushed stream ${push.id}: promised request`);
          assert.deepEqual(ours.response, push.response, `pushed stream ${push.id}: response`);
          assert.ok(ours.responseBody.equals(Buffer.concat(push.body)), `pushed stream ${push.id}: body`);
        }
        const goaway = facts.find((f) => f.type === 'goaway' && f.from === 'server');
        assert.ok(goaway && goaway.type === 'goaway' && goaway.debug.toString() === `bye-${config.seed}` && goaway.error === 'NO_ERROR');
        // An empty DATA piece is reported only when it ends its stream (the bodies above already match byte for byte).
        const emptyMidStream = facts.filter((f) => f.type === 'data' && f.data.length === 0 && !f.endStream);
        assert.deepEqual(emptyMidStream, [], 'no empty DATA piece that does not end its stream');
      } finally {
        await cleanups.run();
      }
    });
  }
});

describe('H2Session against curl and nghttp through a relay', () => {
  it('decodes curl --http2-prior-knowledge and nghttp requests and the responses they print', async (t) => {
    const cleanups = new Cleanups();
    t.after(() => cleanups.run());
    const upload = await tempDir(cleanups).write('upload.bin', random(9).bytes(100000));
    const serverSaw: Array<{ request: Pairs; body: Buffer[] }> = [];
    const sent: Pairs[] = [];
    const server = http2.createServer();
    server.on('stream', (stream, _headers, _flags, raw) => {
      const seen = { request: pairs(raw as unknown as string[]), body: [] as Buffer[] };
      serverSaw.push(seen);
      stream.on('data', (c: Buffer) => seen.body.push(c));
      stream.on('end', () => {
        const body = Buffer.concat(seen.body);
        const response: Pairs = [['content-type', 'application/octet-stream'], ['x-echo', String(body.length)], ['x-dup', 'a'], ['x-dup', 'b']];
        sent.push(response);
        stream.respond({ ':status': 200, ...headerObject(response) });
        stream.end(Buffer.concat([body, Buffer.from('!')]));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.add(() => new Promise((done) => server.close(done)));
    const relay = await startH2Relay((server.address() as AddressInfo).port);
    cleanups.add(() => relay.close());
    const url = `http://127.0.0.1:${relay.port}/upload?x=1`;
    const clients = [
      { name: 'curl', argv: ['curl', ['-s', '--http2-prior-knowledge', '-H', 'x-a: 1', '-H', 'x-a: 2', '-H', `x-long: ${'z'.repeat(3000)}`, '--data-binary', `@${upload}`, url]] },
      { name: 'nghttp', argv: ['nghttp', ['-H', 'x-a: 1', '-H', `x-long: ${'z'.repeat(3000)}`, '-d', upload, url]] },
    ] as const;
    for (const [index, c] of clients.entries()) {
      const { stdout } = await run(c.argv[0], [...c.argv[1]], { encoding: 'buffer', maxBuffer: 1 << 24 });
      await relay.connections[index]!.closed;
      const facts = relay.connections[index]!.facts;
      assert.deepEqual(facts.filter((f) => f.type === 'error'), [], `${c.name}: no connection error`);
      const streams = [...streamsOf(facts).values()];
      assert.equal(streams.length, 1, `${c.name}: one stream`);
      const ours = streams[0]!;
      assert.deepEqual(ours.request, serverSaw[index]!.request, `${c.name}: request headers`);
      assert.ok(ours.requestBody.equals(Buffer.concat(serverSaw[index]!.body)) && ours.requestBody.length === 100000, `${c.name}: request body`);
      assert.ok(ours.responseBody.equals(stdout), `${c.name}: response body as printed`);
      assert.deepEqual(ours.response!.filter(([n]) => n !== 'date'), [[':status', '200'], ...sent[index]!], `${c.name}: response headers`);
    }
  });
});
