// Stream messages aligned by identity (diff/streams.ts, docs/diff.md
// "Streams"), on recordings of real servers through bb: a gRPC server stream,
// a WebSocket connection and an SSE response whose messages come in another
// order and carry one more field are `reordered` rows plus one `added`
// finding, never per-position value changes; a moved message that also
// changed says so at its own fields.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { WebSocket, WebSocketServer } from 'ws';
import { renderText, type DiffResult } from '../../diff/index.js';
import { alignMessages } from '../../diff/streams.js';
import { diffMessages } from '../../diff/compare.js';
import { canonical } from '../../core/index.js';
import { arrayRules } from '../../diff/arrays.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { tempDir } from '../helpers/tmp.js';
import { diffAgreeing } from './diff-bounded.js';

const showRows = (r: DiffResult) => renderText(r, { color: false, rows: true });

/** One stock item as the servers send it; `price` only in the extended build. */
interface Item {
  sku: string;
  name: string;
  stock: string;
  price?: number;
}

const ITEMS: Item[] = [
  { sku: 'a-1', name: 'Apple', stock: 'IN_STOCK' },
  { sku: 'b-2', name: 'Banana', stock: 'SOLD_OUT' },
  { sku: 'c-3', name: 'Cherry', stock: 'IN_STOCK' },
  { sku: 'd-4', name: 'Date', stock: 'SOLD_OUT' },
];

/** The items in `order` (indices into ITEMS), each with a price when `priced`, with `change` applied to the one at ITEMS index `change.at`. */
function items(order: number[], priced = false, change?: { at: number; stock: string }): Item[] {
  return order.map((i) => ({ ...ITEMS[i]!, ...(change?.at === i ? { stock: change.stock } : {}), ...(priced ? { price: 100 + i } : {}) }));
}

const ORIGINAL = [0, 1, 2, 3];
const SHUFFLED = [2, 0, 3, 1];

// { sku = 1, name = 2, stock = 3, price = 4 }: bb decodes it without the schema, by field number.
const ItemType = new protobuf.Type('Item')
  .add(new protobuf.Field('sku', 1, 'string'))
  .add(new protobuf.Field('name', 2, 'string'))
  .add(new protobuf.Field('stock', 3, 'string'))
  .add(new protobuf.Field('price', 4, 'int32'));
const serialize = (v: object) => Buffer.from(ItemType.encode(ItemType.create(v)).finish());
const deserialize = (b: Buffer) => ItemType.toObject(ItemType.decode(b)) as Item;
const STOCK = {
  list: { path: '/demo.Stock/List', requestStream: false, responseStream: true, requestSerialize: serialize, requestDeserialize: deserialize, responseSerialize: serialize, responseDeserialize: deserialize },
};

/** A gRPC server (h2c, 127.0.0.1:0) whose List streams `answer`, recorded through bb while a client calls it once; the HAR's path. */
async function recordGrpc(cleanups: Cleanups, answer: Item[]): Promise<string> {
  const server = new grpc.Server();
  server.addService(STOCK as unknown as grpc.ServiceDefinition, {
    list: (call: grpc.ServerWritableStream<Item, Item>) => {
      for (const item of answer) call.write(item);
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  const rec = await record(cleanups, `http://127.0.0.1:${port}`);
  const Client = grpc.makeGenericClientConstructor(STOCK as unknown as grpc.ServiceDefinition, 'Stock');
  const client = new Client(`127.0.0.1:${rec.port}`, grpc.credentials.createInsecure()) as unknown as { list(req: object): grpc.ClientReadableStream<Item> } & grpc.Client;
  try {
    const got: Item[] = [];
    const stream = client.list({ sku: '*' });
    stream.on('data', (m: Item) => got.push(m));
    await once(stream, 'end');
    assert.equal(got.length, answer.length);
  } finally {
    client.close();
  }
  await rec.finish();
  return join(rec.dir, 'cap.har');
}

/** An HTTP server on 127.0.0.1:0 that answers GET /events with `answer` as SSE and sends `answer` on a WebSocket once subscribed; recorded through bb while a client takes both; the HAR's path. */
async function recordWsAndSse(cleanups: Cleanups, answer: Item[], ids: boolean): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    for (const item of answer) res.write(`event: item\ndata: ${JSON.stringify(ids ? { id: item.sku, ...item } : item)}\n\n`);
    res.end();
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on('message', () => {
      for (const item of answer) ws.send(JSON.stringify({ type: 'item', ...(ids ? { id: item.sku } : {}), ...item }));
      ws.close(1000, 'done');
    });
  }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => { wss.close(); server.closeAllConnections(); server.close(r); }));
  const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const base = `http://127.0.0.1:${rec.port}`;
  await fetch(`${base}/events`).then((r) => r.text());
  const ws = new WebSocket(`${base.replace('http', 'ws')}/feed`);
  await once(ws, 'open');
  ws.send(JSON.stringify({ type: 'subscribe' }));
  await once(ws, 'close');
  await rec.finish();
  return join(rec.dir, 'cap.har');
}

describe('alignMessages', () => {
  const msg = (data: unknown) => ({ type: 'receive', opcode: 1, data });
  const read = { token: (_side: 0 | 1, v: unknown) => canonical(v), value: (_side: 0 | 1, v: unknown) => v };
  const line = (a: unknown[], b: unknown[]) => alignMessages(a.map(msg), b.map(msg), read, ['id']).map((l) => `${l.old ?? '-'}→${l.new ?? '-'} ${l.status}`);

  it('pairs a swap as one reordered message, not as two changes', () => {
    assert.deepEqual(line(['a', 'b', 'c'], ['b', 'a', 'c']), ['0→1 reordered', '1→0 paired', '2→2 paired']);
  });

  it('pairs messages by their data’s identity key before content', () => {
    assert.deepEqual(line([{ id: 1, v: 'x' }, { id: 2, v: 'y' }], [{ id: 2, v: 'x' }, { id: 1, v: 'y' }]), ['0→1 reordered', '1→0 paired']);
  });

  it('takes identity keys for messages from pairing.arrayKeys (path ws.messages or grpc.messages)', () => {
    const a = [msg({ sku: 'a', n: 1, m: 1 }), msg({ sku: 'b', n: 2, m: 2 })];
    const b = [msg({ sku: 'b', n: 1, m: 1 }), msg({ sku: 'a', n: 2, m: 2 })];
    const rows = (rules?: ReturnType<typeof arrayRules>) => {
      const out: Array<{ kind: string; path: string }> = [];
      diffMessages(a, b, out, 'direction', rules);
      return out.map((r) => `${r.kind} ${r.path}`);
    };
    assert.deepEqual(rows(arrayRules([{ path: 'ws.messages', key: 'sku' }])), ['reordered ws.messages[0]', 'changed ws.messages[0].data.n', 'changed ws.messages[0].data.m', 'changed ws.messages[1].data.n', 'changed ws.messages[1].data.m']);
    assert.deepEqual(rows(), ['changed ws.messages[0].data.sku', 'changed ws.messages[1].data.sku']);
  });

  // A conversation whose every message changed in place is not read as moves by the equal contents it happens to
  // share: [1, 2, 3] → [2, 3, 4] was the first message moved to the end and changed 1 → 4.
  it('pairs messages that all changed in place by place: a counter off by one in every message', () => {
    const tick = (seq: number) => ({ type: 'tick', seq, room: 'lobby' });
    assert.deepEqual(line([tick(1), tick(2), tick(3)], [tick(2), tick(3), tick(4)]), ['0→0 paired', '1→1 paired', '2→2 paired']);
    // The same messages in another order are still moves, and so are messages too unlike to have changed in place.
    assert.deepEqual(line([tick(1), tick(2)], [tick(2), tick(1)]), ['0→1 reordered', '1→0 paired']);
    assert.deepEqual(line([{ sym: 'X', p: 1 }, { sym: 'Y', p: 2 }, { sym: 'Z', p: 3 }], [{ sym: 'Y', p: 2 }, { sym: 'Z', p: 3 }, { sym: 'W', p: 4 }]), ['0→- missing', '1→0 paired', '2→1 paired', '-→2 extra']);
  });

  it('an echo that doubles what it is sent: each answer changed, none moved (gRPC bidi messages, both directions)', () => {
    const conversation = (k: number) => [1, 2, 3].flatMap((n) => [{ type: 'send', opcode: 2, data: { '1': 'hello', '2': n } }, { type: 'receive', opcode: 2, data: { '1': 'echo hello', '2': n * k } }]);
    const out: Array<{ kind: string; path: string; old?: unknown; new?: unknown }> = [];
    diffMessages(conversation(1), conversation(2), out, 'direction', undefined, 'grpc');
    assert.deepEqual(out.map((r) => `${r.kind} ${r.path} ${String(r.old)} → ${String(r.new)}`), ['changed grpc.messages[1].data["2"] 1 → 2', 'changed grpc.messages[3].data["2"] 2 → 4', 'changed grpc.messages[5].data["2"] 3 → 6']);
  });

  it('pairs messages of another data.type only by identity, never by place: missing and extra', () => {
    assert.deepEqual(line([{ type: 'a', n: 1 }], [{ type: 'b', n: 1 }]), ['0→- missing', '-→0 extra']);
  });
});

describe('stream messages align by identity, like array items', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const t = tempDir();
  const read = (p: string) => import('node:fs/promises').then((fs) => fs.readFile(p, 'utf8')).then((s) => JSON.parse(s) as unknown);
  const diff = async (a: string, b: string) => diffAgreeing(t, await read(a), await read(b));

  /** The rows of `r` under `root`: kinds other than reordered and added, and the added rows' patterns. */
  function streamRows(r: DiffResult, root: string) {
    const mine = r.differences.filter((d) => d.path.startsWith(root));
    return {
      reordered: mine.filter((d) => d.kind === 'reordered').length,
      added: [...new Set(mine.filter((d) => d.kind === 'added').map((d) => d.pattern))],
      addedRows: mine.filter((d) => d.kind === 'added').length,
      other: mine.filter((d) => d.kind !== 'reordered' && d.kind !== 'added').map((d) => `${d.kind} ${d.path} ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`),
    };
  }

  it('a gRPC server stream both reordered and extended by a field: reordered rows plus one added finding, no value changes', async () => {
    const a = await recordGrpc(cleanups, items(ORIGINAL));
    const b = await recordGrpc(cleanups, items(SHUFFLED, true));
    const r = await diff(a, b);
    const s = streamRows(r, 'grpc.messages');
    assert.deepEqual(s.other, [], showRows(r));
    assert.ok(s.reordered > 0, showRows(r));
    assert.deepEqual(s.added, ['grpc.messages[].data["4"]'], showRows(r));
    assert.equal(s.addedRows, 4, showRows(r));
    const added = r.findings.filter((f) => f.kind === 'added');
    assert.deepEqual(added.map((f) => f.pattern), ['grpc.messages[].data["4"]'], showRows(r));
    assert.ok(r.findings.every((f) => f.kind === 'reordered' || f.kind === 'added'), showRows(r));
  });

  it('moved gRPC messages that also changed: reordered rows plus the field changes of the moved messages', async () => {
    const a = await recordGrpc(cleanups, items(ORIGINAL));
    const b = await recordGrpc(cleanups, items(SHUFFLED, true, { at: 1, stock: 'IN_STOCK' }));
    const r = await diff(a, b);
    const s = streamRows(r, 'grpc.messages');
    assert.ok(s.reordered > 0, showRows(r));
    assert.deepEqual(s.added, ['grpc.messages[].data["4"]'], showRows(r));
    // The Banana message (old place 2: after the request) changed its stock, nothing else did.
    assert.deepEqual(s.other, ['changed grpc.messages[2].data["3"] "SOLD_OUT" → "IN_STOCK"'], showRows(r));
  });

  for (const ids of [false, true]) {
    const how = ids ? 'with an id field' : 'without an id field (by content)';
    it(`WebSocket messages and SSE events ${how}, reordered and extended by a field: reordered rows plus one added finding each`, async () => {
      const a = await recordWsAndSse(cleanups, items(ORIGINAL), ids);
      const b = await recordWsAndSse(cleanups, items(SHUFFLED, true), ids);
      const r = await diff(a, b);
      for (const root of ['ws.messages', 'response.events']) {
        const s = streamRows(r, root);
        assert.deepEqual(s.other, [], showRows(r));
        assert.ok(s.reordered > 0, `${root}: ${showRows(r)}`);
        assert.deepEqual(s.added, [`${root}[].data.price`], showRows(r));
        assert.equal(s.addedRows, 4, showRows(r));
      }
      const added = r.findings.filter((f) => f.kind === 'added');
      assert.deepEqual(added.map((f) => f.pattern).sort(), ['response.events[].data.price', 'ws.messages[].data.price'], showRows(r));
    });
  }
});
