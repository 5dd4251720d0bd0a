// Protocol-aware route keys (diff/normalize/route-keys.ts, docs/diff.md
// "Route keys"), on recordings of real servers through bb: a GraphQL and
// JSON-RPC server driven twice with its calls in another order pairs each
// call with the same call (only `reordered` rows, each entry named by its
// operation or method); an Engine.IO session with one polling request fewer
// is that one `entry missing`, the WebSocket upgrade paired with the upgrade,
// and a changed chat event is one finding on every connection that carries it;
// `pairing.keys` takes `query:NAME` and `header:NAME`; each detector is
// switched off by name in `pairing.disable`. The text report's samples show
// the key and the `bb show` command that opens the first one, which works;
// the HTML report shows both too.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { renderText, type DiffResult } from '../../../diff/index.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { engineIoSession } from '../../helpers/engine-io-client.js';
import { record } from '../../helpers/recording.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';

const show = (r: DiffResult) => renderText(r, { color: false });
const rows = (r: DiffResult) => r.differences.map((d) => [d.kind, d.entry, d.path]);

/** What the app answers; `build` 2 changes the chat event's `text`. */
interface Build {
  build: 1 | 2;
}

/**
 * One app: POST /graphql answers per operation (no GraphQL library: the
 * operation name or the document decides), POST /rpc is JSON-RPC 2.0, GET
 * /api and POST /cmd answer per `op` (query) and `X-Op` (header), and
 * /socket.io/ speaks enough Engine.IO v4 for a polling handshake and a
 * WebSocket upgrade.
 */
async function app(cleanups: Cleanups, opts: Build): Promise<string> {
  const sessions = new Set<string>();
  const json = (res: http.ServerResponse, v: unknown) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(v));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/graphql') {
        const { query, operationName, variables } = JSON.parse(text) as { query: string; operationName?: string; variables?: { name?: string } };
        const op = operationName ?? /(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? 'anonymous';
        if (op === 'ListItems') return json(res, { data: { items: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }] } });
        if (op === 'CreateItem') return json(res, { data: { createItem: { id: 3, name: variables?.name } } });
        if (op === 'GetItem') return json(res, { data: { item: { id: 1, name: 'a' } } });
        return json(res, { data: { stats: { count: 2 } } });
      }
      if (url.pathname === '/rpc') {
        const call = JSON.parse(text) as { id: number; method: string; params: number[] };
        return json(res, { jsonrpc: '2.0', id: call.id, result: call.method === 'sum' ? call.params.reduce((a, b) => a + b, 0) : call.params.length });
      }
      if (url.pathname === '/api') return json(res, { op: url.searchParams.get('op'), items: url.searchParams.get('op') === 'list' ? [1, 2] : [] });
      if (url.pathname === '/cmd') return json(res, { done: req.headers['x-op'], count: req.headers['x-op'] === 'create' ? 1 : 0 });
      if (url.pathname === '/socket.io/') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
        const sid = url.searchParams.get('sid');
        if (req.method === 'POST') return res.end('ok');
        if (!sid) {
          const id = randomBytes(15).toString('base64url');
          sessions.add(id);
          return res.end(`0${JSON.stringify({ sid: id, upgrades: ['websocket'], pingInterval: 25000, pingTimeout: 20000, maxPayload: 1000000 })}`);
        }
        // The first poll gets the CONNECT answer (its Socket.IO id fixed here: binding issued values is not this test's), a later one
        // is what the upgrade leaves pending: a noop.
        return res.end(url.searchParams.get('n') === 'connect' ? `40${JSON.stringify({ sid: 'socket-1' })}` : '6');
      }
      res.writeHead(404).end();
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on('message', (data) => {
      const m = String(data);
      if (m === '2probe') ws.send('3probe');
      else if (m === '5') ws.send(`42${JSON.stringify(['chat', { room: 'a', text: opts.build === 1 ? 'hello' : 'hello!', from: 'u1' }])}`);
      else if (m.startsWith('41')) ws.close(1000, 'bye');
    });
  }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => { wss.close(); server.closeAllConnections(); server.close(r); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** How one session drives the app: the calls in `order`, then one Engine.IO session per item of `sockets`, with the noop poll (true) or without. */
interface Drive {
  order: string[];
  sockets?: boolean[];
}

const GRAPHQL: Record<string, unknown> = {
  ListItems: { operationName: 'ListItems', query: 'query ListItems { items { id name } }' },
  CreateItem: { query: 'mutation CreateItem($name: String!) { createItem(name: $name) { id name } }', variables: { name: 'c' } },
  GetItem: { operationName: 'GetItem', query: 'query GetItem { item(id: 1) { id name } }' },
  Stats: { query: '{ stats { count } }' },
};

async function drive(base: string, d: Drive): Promise<void> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((r) => r.text());
  for (const step of d.order) {
    const [kind, name] = step.split(':') as [string, string];
    if (kind === 'gql') await post('/graphql', GRAPHQL[name]);
    else if (kind === 'rpc') await post('/rpc', { jsonrpc: '2.0', id: 7, method: name, params: [1, 2, 3] });
    else if (kind === 'api') await fetch(`${base}/api?op=${name}`).then((r) => r.text());
    else if (kind === 'cmd') await post('/cmd', {}, { 'X-Op': name });
  }
  for (const noopPoll of d.sockets ?? []) await engineIoSession(base, noopPoll);
}

/** Records one session of `drive` against a fresh app of `build`; the HAR's path. */
async function session(cleanups: Cleanups, build: Build, d: Drive): Promise<string> {
  const rec = await record(cleanups, await app(cleanups, build));
  await drive(`http://127.0.0.1:${rec.port}`, d);
  await rec.finish();
  return join(rec.dir, 'cap.har');
}

describe('protocol-aware route keys on recordings of real servers', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const t = tempDir();
  const read = (p: string) => import('node:fs/promises').then((fs) => fs.readFile(p, 'utf8')).then((s) => JSON.parse(s) as unknown);
  const diff = async (a: string, b: string, config?: unknown) => diffAgreeing(t, await read(a), await read(b), config);

  const first = ['gql:ListItems', 'gql:CreateItem', 'gql:GetItem', 'gql:Stats', 'rpc:sum', 'rpc:count'];
  const second = ['gql:CreateItem', 'gql:Stats', 'gql:ListItems', 'gql:GetItem', 'rpc:count', 'rpc:sum'];

  it('GraphQL and JSON-RPC calls in another order pair by operation and method: only reordered rows', async () => {
    const [a, b] = [await session(cleanups, { build: 1 }, { order: first }), await session(cleanups, { build: 1 }, { order: second })];
    const r = await diff(a, b);
    assert.ok(r.differences.length > 0 && r.differences.every((d) => d.kind === 'reordered'), show(r));
    assert.deepEqual(r.pairs.map((p) => p.id).sort(), [
      '/POST /graphql[#d1f9c869]#1',
      '/POST /graphql[CreateItem]#1',
      '/POST /graphql[GetItem]#1',
      '/POST /graphql[ListItems]#1',
      '/POST /rpc[count]#1',
      '/POST /rpc[sum]#1',
    ], show(r));
    assert.ok(r.pairs.every((p) => p.status === 'paired' || p.status === 'reordered'), show(r));
    // Each reordered finding is named by its operation or method, in its route and its sample's request line.
    assert.ok(r.findings.length > 0 && r.findings.every((f) => f.kind === 'reordered' && f.routes.every((route) => /^POST \/(graphql|rpc)\[[^\]]+\]$/.test(route))), show(r));
    assert.ok(r.findings.every((f) => f.samples.every((x) => /^POST \/(graphql|rpc)\[[^\]]+\]$/.test(x.request))), show(r));
    // The same order is a MATCH with no config.
    const same = await diff(a, await session(cleanups, { build: 1 }, { order: first }));
    assert.equal(same.verdict, 'match', show(same));
  });

  it('pairing.disable switches a detector off: GraphQL calls are plain POST /graphql, paired by what each sent', async () => {
    const [a, b] = [await session(cleanups, { build: 1 }, { order: first }), await session(cleanups, { build: 1 }, { order: second })];
    const r = await diff(a, b, { pairing: { disable: ['graphql'] } });
    // No operation in the route: the calls pair within POST /graphql by their requests (pairByRequest), never one call with another.
    assert.ok(r.pairs.filter((p) => p.route === 'POST /graphql').length === 4 && r.pairs.every((p) => !p.id.startsWith('/POST /graphql[')), show(r));
    assert.ok(r.differences.every((d) => d.kind === 'reordered'), show(r));
    assert.ok(r.findings.some((f) => f.routes.includes('POST /graphql')), show(r));
    assert.ok(r.pairs.some((p) => p.id === '/POST /rpc[sum]#1'), 'jsonrpc stays on');
  });

  it('an Engine.IO session with one polling request fewer is that one entry missing; the upgrade pairs with the upgrade', async () => {
    const a = await session(cleanups, { build: 1 }, { order: [], sockets: [true] });
    const b = await session(cleanups, { build: 1 }, { order: [], sockets: [false] });
    const r = await diff(a, b);
    assert.deepEqual(rows(r), [['missing', '/GET /socket.io/[noop]?transport=polling#1', '']], show(r));
    assert.deepEqual(r.pairs.map((p) => [p.id, p.status]), [
      ['/GET /socket.io/[open]?transport=polling#1', 'paired'],
      ['/POST /socket.io/[message]?transport=polling#1', 'paired'],
      ['/GET /socket.io/[message]?transport=polling#1', 'paired'],
      ['/GET /socket.io/[noop]?transport=polling#1', 'missing'],
      ['/GET /socket.io/?transport=websocket#1', 'paired'],
    ], show(r));
    // A changed event field in the new build is found on the WebSocket, not as an upgrade paired with a poll.
    const c = await session(cleanups, { build: 2 }, { order: [], sockets: [false] });
    const changed = await diff(a, c);
    assert.deepEqual(rows(changed), [
      ['missing', '/GET /socket.io/[noop]?transport=polling#1', ''],
      ['changed', '/GET /socket.io/?transport=websocket#1', 'ws.messages[3].data.args[0].text'],
    ], show(changed));
    const text = show(changed);
    assert.match(text, /e\.g\. GET \/socket\.io\/\?transport=websocket\n/, text);
  });

  it('two Socket.IO connections, the first with one polling request fewer in new: that one entry missing, the changed event field one finding on both connections', async () => {
    const a = await session(cleanups, { build: 1 }, { order: [], sockets: [true, false] });
    const b = await session(cleanups, { build: 2 }, { order: [], sockets: [false, false] });
    const r = await diff(a, b);
    const text = renderText(r, { color: false, rows: true });
    assert.deepEqual(rows(r), [
      ['missing', '/GET /socket.io/[noop]?transport=polling#1', ''],
      ['changed', '/GET /socket.io/?transport=websocket#1', 'ws.messages[3].data.args[0].text'],
      ['changed', '/GET /socket.io/?transport=websocket#2', 'ws.messages[3].data.args[0].text'],
    ], text);
    assert.deepEqual(r.findings.map((f) => [f.kind, f.pattern, f.entries, f.of]), [
      ['changed', 'ws.messages[].data.args[].text', 2, 2],
      ['missing', '', 1, 1],
    ], text);
    assert.match(text, /\] ws\.messages\[\]\.data\.args\[\]\.text changed "hello" → "hello!" in 2 of 2 GET \/socket\.io\/\?transport=websocket\n/, text);
  });

  it('pairing.keys takes query:NAME and header:NAME', async () => {
    const config = { pairing: { keys: [{ route: 'GET /api', by: 'query:op' }, { route: 'POST /cmd', by: 'header:X-Op' }] } };
    const a = await session(cleanups, { build: 1 }, { order: ['api:list', 'api:get', 'cmd:create', 'cmd:delete'] });
    const b = await session(cleanups, { build: 1 }, { order: ['api:get', 'api:list', 'cmd:delete', 'cmd:create'] });
    const r = await diff(a, b, config);
    assert.ok(r.differences.every((d) => d.kind === 'reordered'), show(r));
    assert.deepEqual(r.pairs.map((p) => p.id).sort(), ['/GET /api?op=get#1', '/GET /api?op=list#1', '/POST /cmd[create]#1', '/POST /cmd[delete]#1'], show(r));
    // Without the keys the same captures pair by what each request sent (pairByRequest): reordered too, named by route alone.
    const plain = await diff(a, b);
    assert.ok(plain.differences.every((d) => d.kind === 'reordered'), show(plain));
    assert.deepEqual(plain.pairs.map((p) => p.id).sort(), ['/GET /api#1', '/GET /api#2', '/POST /cmd#1', '/POST /cmd#2'], show(plain));
  });

  it('a finding names its call by key and says which bb show command opens its first sample; that command works', async () => {
    const a = await session(cleanups, { build: 1 }, { order: [], sockets: [false] });
    const b = await session(cleanups, { build: 2 }, { order: [], sockets: [false] });
    const r = await runBb(['diff', a, b], { NO_COLOR: '1' });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const open = /^ {6}(bb show .* --entry '#(\d+)' --body)$/m.exec(r.stdout);
    assert.ok(open, r.stdout);
    assert.ok(open[1]!.startsWith(`bb show ${b} `), r.stdout);
    const shown = await runBb(['show', b, '--entry', `#${open[2]}`, '--body'], { NO_COLOR: '1' });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /transport=websocket/, shown.stdout);
    assert.match(shown.stdout, /hello!/, shown.stdout);
    // The HTML report says the same under the finding: the keyed request line and the command.
    const page = join(t.dir, `${Math.random()}.html`);
    assert.equal((await runBb(['diff', a, b, '--html', page])).code, 1);
    const html = (await import('node:fs/promises').then((fs) => fs.readFile(page, 'utf8'))).replace(/<[^>]+>/g, '');
    assert.ok(html.includes('e.g. GET /socket.io/?transport=websocket ('), html);
    assert.ok(html.includes(`open the first: ${open[1]!.replace(/'/g, '&#39;')}`), html);
  });
});
