// Issue 35's measured target on trial-like pairs: the same kinds of upgrade
// the trials ran (a web framework's, a GraphQL server's, a gRPC service's, a
// Socket.IO chat's), each a real server in two builds recorded through bb
// while a real client drives it the same way. bb diff with no config finds
// every true change, the findings it lists are at most 1.3 × the true
// changes (the trials had 14 true changes make 49 findings), and `--rows`
// still lists every difference row.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { WebSocketServer } from 'ws';
import { diffCaptures, renderText, type DiffResult } from '../../diff/index.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { engineIoSession } from '../helpers/engine-io-client.js';

type Build = 'old' | 'new';

/** One trial: its server (answering as `build()` says), how a client drives it, and the true changes of its new build. */
interface Trial {
  name: string;
  /** Starts the server on 127.0.0.1:0 (closed by `cleanups`); its URL. */
  start(cleanups: Cleanups, build: () => Build): Promise<string>;
  /** Drives it through bb at `base` as a client of the trial drove `build` (the same calls, bar what a client does not decide). */
  drive(base: string, build: Build): Promise<void>;
  /** The true changes, each as [what changed, the pattern of the listed real finding that must show it]. */
  changes: Array<[string, string]>;
  /** What the text report must say (without --rows) of some of them. */
  says?: RegExp[];
}

/** Starts `server` on 127.0.0.1:0 (closed by `cleanups`); its URL. */
async function listen(cleanups: Cleanups, server: http.Server, wss?: WebSocketServer): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => { wss?.close(); server.closeAllConnections(); server.close(r); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Reads a request's body, then calls `answer` with it. */
function withBody(answer: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(req, res, Buffer.concat(chunks).toString('utf8')));
  };
}

// A REST app across a framework's major version: the default X-Powered-By
// and the JSON charset go, a list's currency codes are upper-cased, the
// not-found body takes the framework's new shape, a create answers 201, a
// retired route falls to the framework's 404 page, and a call the old build
// never answered (the client gave up) now fails fast with a 500.
const framework: Trial = {
  name: 'web framework upgrade',
  changes: [
    ['X-Powered-By dropped', 'response.headers.x-powered-by'],
    ['JSON without its charset', 'response.headers.content-type'],
    ['currency codes upper-cased', 'response.body.items[].currency'],
    ['the not-found body reshaped', 'response.body.message'],
    ['a create answers 201', 'response.status'],
    ['the retired route is a 404 page', 'response.status'],
    ['a call the client gave up on now fails fast', 'response.status'],
  ],
  says: [
    /\] no response in old \(new answered 500\) in 1 of 1 GET \/slow\n/,
    /\] response\.status changed 200 → 404 in 3 of 3 GET \/legacy\n( {6}↳ [^\n]+\n){3}/,
  ],
  async start(cleanups, build) {
    const server = http.createServer(withBody((req, res, body) => {
      const url = new URL(req.url!, 'http://x');
      const neu = build() === 'new';
      if (!neu) res.setHeader('X-Powered-By', 'Express');
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { 'Content-Type': neu ? 'application/json' : 'application/json; charset=utf-8' });
        res.end(JSON.stringify(v));
      };
      if (url.pathname === '/slow') {
        if (neu) return json(500, { error: 'upstream timed out' });
        return; // never answers: the client gives up
      }
      if (url.pathname === '/legacy' && neu) {
        res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': "default-src 'none'" });
        return res.end(`<!DOCTYPE html><html><body><pre>Cannot GET ${url.pathname}${url.search}</pre></body></html>`);
      }
      if (url.pathname === '/legacy') return json(200, { id: Number(url.searchParams.get('id')), legacy: true });
      if (url.pathname === '/health') return json(200, { ok: true });
      if (url.pathname === '/items' && req.method === 'POST') return json(neu ? 201 : 200, { id: 4, ...(JSON.parse(body) as object) });
      if (url.pathname === '/items') return json(200, { items: [1, 2, 3].map((id) => ({ id, name: `item ${id}`, currency: neu ? 'USD' : 'usd' })) });
      const id = Number(url.pathname.split('/')[2]);
      if (id <= 3) return json(200, { id, name: `item ${id}` });
      // Express 4's app answered its own error body; the new framework's default handler answers its shape.
      return json(404, neu ? { message: 'Not Found', statusCode: 404 } : { error: 'not found' });
    }));
    return listen(cleanups, server);
  },
  async drive(base) {
    const get = (path: string) => fetch(`${base}${path}`).then((r) => r.text());
    for (const path of ['/health', '/items', '/items/1', '/items/2', '/items/999', '/legacy?id=1', '/legacy?id=2', '/items/998', '/legacy?id=3']) await get(path);
    await fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'd' }) }).then((r) => r.text());
    // The client gives up on a call the old build never answers.
    await fetch(`${base}/slow`, { signal: AbortSignal.timeout(300) }).then((r) => r.text()).catch(() => undefined);
    await get('/health');
  },
};

// A GraphQL server upgrade (no GraphQL library: the operation decides the
// answer): a list gains a total, a validation error is worded anew, a count
// becomes a string (an Int field turned into a String).
const OPERATIONS: Record<string, object> = {
  ListItems: { operationName: 'ListItems', query: 'query ListItems { items { id name } }' },
  GetItem: { query: 'query GetItem($id: ID!) { item(id: $id) { id name } }', variables: { id: 2 } },
  CreateItem: { query: 'mutation CreateItem($name: String!) { createItem(name: $name) { id } }', variables: {} },
  Stats: { query: '{ stats { count } }' },
};
const graphql: Trial = {
  name: 'GraphQL server upgrade',
  changes: [
    ['the list gains a total', 'response.body.data.total'],
    ['a validation error worded anew', 'response.body.errors[].message'],
    ['a count turned into a string', 'response.body.data.stats.count'],
  ],
  async start(cleanups, build) {
    const server = http.createServer(withBody((_req, res, body) => {
      const neu = build() === 'new';
      const { query, operationName, variables } = JSON.parse(body) as { query: string; operationName?: string; variables?: { id?: number; name?: string } };
      const op = operationName ?? /(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? 'anonymous';
      const data =
        op === 'ListItems' ? { items: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }], ...(neu ? { total: 2 } : {}) }
        : op === 'GetItem' ? { item: { id: variables?.id, name: 'b' } }
        : op === 'CreateItem' ? undefined
        : { stats: { count: neu ? '2' : 2 } };
      const answer = data ? { data } : { errors: [{ message: neu ? 'Variable "$name" of required type "String!" was not provided.' : 'Variable "$name" of non-null type "String!" must not be null.' }] };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(answer));
    }));
    return listen(cleanups, server);
  },
  async drive(base) {
    for (const op of ['ListItems', 'GetItem', 'CreateItem', 'Stats', 'ListItems', 'GetItem']) {
      await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(OPERATIONS[op]) }).then((r) => r.text());
    }
  },
};

// A gRPC service change: List streams its stock in another order with a
// price added, Lookup of an unknown sku fails as INVALID_ARGUMENT with its own
// message (was NOT_FOUND), Store's cache trailer says hit.
// { sku = 1, name = 2, stock = 3, price = 4 }: bb decodes it without the schema.
const Stock = new protobuf.Type('Stock')
  .add(new protobuf.Field('sku', 1, 'string'))
  .add(new protobuf.Field('name', 2, 'string'))
  .add(new protobuf.Field('stock', 3, 'string'))
  .add(new protobuf.Field('price', 4, 'int32'));
interface StockValue { sku: string; name: string; stock: string; price?: number }
const method = (path: string, responseStream: boolean) => ({
  path, requestStream: false, responseStream,
  requestSerialize: (v: object) => Buffer.from(Stock.encode(Stock.create(v)).finish()),
  requestDeserialize: (b: Buffer) => Stock.toObject(Stock.decode(b)) as StockValue,
  responseSerialize: (v: object) => Buffer.from(Stock.encode(Stock.create(v)).finish()),
  responseDeserialize: (b: Buffer) => Stock.toObject(Stock.decode(b)) as StockValue,
});
const STOCK_SERVICE = { list: method('/demo.Stock/List', true), lookup: method('/demo.Stock/Lookup', false), store: method('/demo.Stock/Store', false) };
const SKUS: StockValue[] = [
  { sku: 'a-1', name: 'Apple', stock: 'IN_STOCK' },
  { sku: 'b-2', name: 'Banana', stock: 'SOLD_OUT' },
  { sku: 'c-3', name: 'Cherry', stock: 'IN_STOCK' },
  { sku: 'd-4', name: 'Date', stock: 'SOLD_OUT' },
];
const grpcService: Trial = {
  name: 'gRPC service change',
  changes: [
    ['the stream comes in another order', 'grpc.messages[]'],
    ['each streamed item gains a price', 'grpc.messages[].data["4"]'],
    ['Lookup fails as INVALID_ARGUMENT with its own message', 'grpc.status'],
    ['the cache trailer says hit', 'response.trailers.x-cache'],
  ],
  says: [/\] grpc\.status changed NOT_FOUND \(5\) → INVALID_ARGUMENT \(3\) in 1 of 1 POST \/demo\.Stock\/Lookup\n {6}↳ [^\n]*grpc\.message changed/],
  async start(cleanups, build) {
    const server = new grpc.Server();
    server.addService(STOCK_SERVICE as unknown as grpc.ServiceDefinition, {
      list: (call: grpc.ServerWritableStream<StockValue, StockValue>) => {
        const neu = build() === 'new';
        for (const i of neu ? [2, 0, 3, 1] : [0, 1, 2, 3]) call.write({ ...SKUS[i]!, ...(neu ? { price: 100 + i } : {}) });
        call.end();
      },
      lookup: (_call: unknown, done: grpc.sendUnaryData<StockValue>) =>
        done(build() === 'new' ? { code: grpc.status.INVALID_ARGUMENT, details: 'sku must look like x-9' } : { code: grpc.status.NOT_FOUND, details: 'no such sku' }),
      store: (call: grpc.ServerUnaryCall<StockValue, StockValue>, done: grpc.sendUnaryData<StockValue>) => {
        const trailers = new grpc.Metadata();
        trailers.set('x-cache', build() === 'new' ? 'hit' : 'miss');
        done(null, call.request, trailers);
      },
    });
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
    return `http://127.0.0.1:${port}`;
  },
  async drive(base) {
    const Client = grpc.makeGenericClientConstructor(STOCK_SERVICE as unknown as grpc.ServiceDefinition, 'Stock');
    const client = new Client(new URL(base).host, grpc.credentials.createInsecure()) as unknown as Record<string, (...a: unknown[]) => grpc.ClientReadableStream<StockValue>> & grpc.Client;
    try {
      const stream = client.list!({ sku: '*' });
      stream.on('data', () => {});
      await once(stream, 'end');
      await new Promise<void>((resolve) => client.lookup!({ sku: 'zz' }, (err: Error | null) => resolve(assert.ok(err))));
      await new Promise<void>((resolve, reject) => client.store!({ sku: 'a-1', name: 'Apple', stock: 'IN_STOCK' }, (err: Error | null) => (err ? reject(err) : resolve())));
    } finally {
      client.close();
    }
  },
};

// A browser chat over Socket.IO (both ends written out: socket.io is no
// dependency of bb): two connections, each a polling handshake, the upgrade
// and one chat event whose text the new build changes; the old run's first
// session polled once more before the upgrade (the upgrade races the poll).
const chat: Trial = {
  name: 'Socket.IO chat',
  changes: [['the chat event’s text', 'ws.messages[].data.args[].text']],
  async start(cleanups, build) {
    const server = http.createServer(withBody((req, res) => {
      const url = new URL(req.url!, 'http://x');
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
      if (req.method === 'POST') return res.end('ok');
      if (!url.searchParams.get('sid')) {
        return res.end(`0${JSON.stringify({ sid: randomBytes(15).toString('base64url'), upgrades: ['websocket'], pingInterval: 25000, pingTimeout: 20000, maxPayload: 1000000 })}`);
      }
      res.end(url.searchParams.get('n') === 'connect' ? `40${JSON.stringify({ sid: 'socket-1' })}` : '6');
    }));
    const wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data) => {
        const m = String(data);
        if (m === '2probe') ws.send('3probe');
        else if (m === '5') ws.send(`42${JSON.stringify(['chat', { room: 'a', text: build() === 'new' ? 'hello!' : 'hello', from: 'u1' }])}`);
        else if (m.startsWith('41')) ws.close(1000, 'bye');
      });
    }));
    return listen(cleanups, server, wss);
  },
  async drive(base, build) {
    for (const noopPoll of [build === 'old', false]) await engineIoSession(base, noopPoll);
  },
};

/** Records `trial` in both builds through bb; the two HARs' paths. */
async function recordBoth(cleanups: Cleanups, trial: Trial): Promise<[string, string]> {
  let build: Build = 'old';
  const target = await trial.start(cleanups, () => build);
  const out: string[] = [];
  for (const b of ['old', 'new'] as const) {
    build = b;
    const rec = await record(cleanups, target);
    await trial.drive(`http://127.0.0.1:${rec.port}`, b);
    await rec.finish();
    out.push(join(rec.dir, 'cap.har'));
  }
  return [out[0]!, out[1]!];
}

const show = (r: DiffResult) => renderText(r, { color: false, rows: true });

describe('trial-like upgrades: one change, one finding', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const results: Array<{ trial: Trial; result: DiffResult }> = [];

  for (const trial of [framework, graphql, grpcService, chat]) {
    it(`${trial.name}: every true change is a listed real finding; --rows lists every row`, async () => {
      const [a, b] = await recordBoth(cleanups, trial);
      const r = await diffCaptures(a, b);
      results.push({ trial, result: r });
      const listed = r.findings.filter((f) => f.class === 'real');
      for (const [what, pattern] of trial.changes) assert.ok(listed.some((f) => f.pattern === pattern), `${what}: no listed finding ${pattern}\n${show(r)}`);
      const text = renderText(r, { color: false });
      for (const said of trial.says ?? []) assert.match(text, said, text);
      const rows = show(r);
      for (const d of r.differences) assert.ok(rows.includes(`[${d.id}]`), `--rows lists ${d.id}:\n${rows}`);
    });
  }

  it('the findings listed are at most 1.3 × the true changes', (t) => {
    assert.equal(results.length, 4, 'every trial ran');
    let findings = 0;
    let changes = 0;
    for (const { trial, result } of results) {
      const listed = result.findings.filter((f) => f.class === 'real');
      t.diagnostic(`${trial.name}: ${trial.changes.length} true changes, ${listed.length} findings (${result.differences.length} rows): ${listed.map((f) => `${f.kind} ${f.pattern}`).join('; ')}`);
      findings += listed.length;
      changes += trial.changes.length;
    }
    t.diagnostic(`all trials: ${changes} true changes, ${findings} findings`);
    assert.ok(findings <= 1.3 * changes, `${findings} findings for ${changes} true changes:\n${results.map(({ result }) => show(result)).join('\n')}`);
  });
});
