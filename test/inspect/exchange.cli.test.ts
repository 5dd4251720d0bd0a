// One name per thing, and a look inside one exchange, on a capture bb really
// recorded: the live log, bb show, bb frames and the timeline all call an
// exchange #<seq> and a connection by its id; `bb show --entry '#N' --body`
// prints it whole. Real servers on 127.0.0.1, a real bb capture, real clients.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { runBb, startBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir().dir;
const env = { BB_HOME: join(dir, 'home'), COLUMNS: '200' };
const out = join(dir, 'live.har');
let server: http.Server;
let wss: WebSocketServer;
/** Live log lines of the capture, by what they were for. */
const live: Record<string, string> = {};

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/items' && req.method === 'POST') {
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ created: JSON.parse(Buffer.concat(chunks).toString()) }));
      } else if (req.url === '/items') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"items":[{"id":1,"name":"one"}]}');
      } else if (req.url?.startsWith('/socket.io/')) {
        // Engine.IO long-polling: a packet type digit before the JSON.
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
        res.end('0{"sid":"abc123","upgrades":["websocket"],"pingInterval":25000}');
      } else if (req.url === '/bin') {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        res.end(Buffer.from(Array.from({ length: 100 }, (_, i) => i)));
      } else if (req.url === '/trailers') {
        res.writeHead(200, { 'Content-Type': 'text/plain', Trailer: 'x-checksum' });
        res.write('sum ');
        res.addTrailers({ 'x-checksum': `sha-${req.trailers['x-sent'] ?? 'none'}` });
        res.end('me');
      } else if (req.url === '/hints') {
        res.writeEarlyHints({ link: '</app.css>; rel=preload' });
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('hinted');
      } else if (req.url === '/sse') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.end('event: tick\nid: 1\ndata: {"n":1}\n\ndata: plain\n\n');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo:${data.toString()}`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  const bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out], env);
  const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  // A WebSocket first, so its messages take seqs and the HTTP exchanges' seqs differ from their ids.
  const ws = new WebSocket(`${url.replace('http', 'ws')}/ws`);
  await new Promise((r) => ws.once('open', r));
  for (const text of ['hello', 'again']) {
    ws.send(text);
    await new Promise((r) => ws.once('message', r));
  }
  ws.close(1000, 'done');
  await new Promise((r) => ws.once('close', r));
  live.ws = (await bb.waitFor(/^#\d+ GET \/ws 101 .*$/m))[0];
  await (await fetch(`${url}/items`)).text();
  live.items = (await bb.waitFor(/^#\d+ GET \/items 200 .*$/m))[0];
  await (await fetch(`${url}/items`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"two"}' })).text();
  await (await fetch(`${url}/socket.io/?EIO=4&transport=polling`)).text();
  await (await fetch(`${url}/bin`)).arrayBuffer();
  await (await fetch(`${url}/sse`)).text();
  await bb.waitFor(/GET \/sse 200/);
  await new Promise<void>((resolve, reject) => http.get(`${url}/hints`, (res) => res.resume().on('end', resolve)).on('error', reject));
  await bb.waitFor(/GET \/hints 200/);
  // A chunked request and response, each ending with a trailer.
  await new Promise<void>((resolve, reject) => {
    const req = http.request(`${url}/trailers`, { method: 'PUT', headers: { 'Transfer-Encoding': 'chunked', Trailer: 'x-sent' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.write('data');
    req.addTrailers({ 'x-sent': '42' });
    req.end();
  });
  await bb.waitFor(/PUT \/trailers 200/);
  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 0, bb.stderr());
});

after(() => {
  for (const c of wss.clients) c.terminate();
  wss.close();
  server.closeAllConnections();
  server.close();
});

interface Entry {
  request: { url: string; method: string };
  connection: string;
  _bb: { seq: number };
}
function entries(): Entry[] {
  return JSON.parse(readFileSync(out, 'utf8')).log.entries;
}
function byPath(path: string, method = 'GET'): Entry {
  const e = entries().find((x) => new URL(x.request.url).pathname + new URL(x.request.url).search === path && x.request.method === method);
  assert.ok(e, path);
  return e;
}

test('the live log, bb show, bb frames and the timeline call an exchange #<seq> and a connection its id', async () => {
  const ws = byPath('/ws');
  const items = byPath('/items');
  assert.ok(items._bb.seq > 2, 'messages took seqs before /items');
  assert.match(live.ws!, new RegExp(`^#${ws._bb.seq} GET /ws 101`));
  assert.match(live.items!, new RegExp(`^#${items._bb.seq} GET /items 200`));

  const show = await runBb(['show', out], env);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, new RegExp(`^#${items._bb.seq} .*GET .*/items$`, 'm'));
  assert.match(show.stdout, new RegExp(`^#${ws._bb.seq} .*GET .*101 .*/ws$`, 'm'));

  const frames = await runBb(['frames', out], env);
  assert.equal(frames.code, 0, frames.stderr);
  const heading = frames.stdout.split('\n')[0]!;
  assert.match(heading, new RegExp(`^connection ${ws.connection} {2}#${ws._bb.seq} {2}\\S+/ws {2}\\(6 messages\\)$`));
  assert.doesNotMatch(heading, /entry/, 'the entry index is for --json only');

  const timeline = await runBb(['frames', out, '--timeline'], env);
  assert.match(timeline.stdout, new RegExp(`#${items._bb.seq} +\\S+ ▶ http GET http://127\\.0\\.0\\.1:\\d+/items$`, 'm'));
  assert.match(timeline.stdout, new RegExp(` ${ws.connection} +\\S+ → text +5B  hello$`, 'm'));

  // --conn takes the upgrade's #<seq> as well as the connection id.
  // (The capture's SSE stream is listed after it, as a stream of its own.)
  const one = await runBb(['frames', out, '--conn', `#${ws._bb.seq}`], env);
  assert.equal(one.stdout, frames.stdout.split('\n\n')[0]! + '\n');
  assert.match(frames.stdout, /\n\nsse stream #\d+ {2}\S+\/sse {2}\(2 events; ended by the server\)\n/);
  // The entry index appears in --json, named entry.
  const json = JSON.parse((await runBb(['frames', out, '--json'], env)).stdout);
  assert.equal(json.connections[0].id, ws.connection);
  assert.equal(typeof json.connections[0].entry, 'number');
});

test("bb show --entry '#N' --body prints the exchange whole: request, JSON bodies pretty-printed, status line", async () => {
  const post = byPath('/items', 'POST');
  const r = await runBb(['show', out, '--entry', `#${post._bb.seq}`, '--body'], env);
  assert.equal(r.code, 0, r.stderr);
  const text = r.stdout;
  assert.match(text, new RegExp(`^#${post._bb.seq} POST http://127\\.0\\.0\\.1:\\d+/items  \\(connection c\\d+, `));
  assert.match(text, /^POST \/items HTTP\/1\.1$/m);
  assert.match(text, /^content-type: application\/json$/im);
  assert.match(text, /^\{\n {2}"name": "two"\n\}$/m, 'request body pretty-printed');
  assert.match(text, /^HTTP\/1\.1 201 Created$/m);
  assert.match(text, /^\{\n {2}"created": \{\n {4}"name": "two"\n {2}\}\n\}$/m, 'response body pretty-printed');
  // Without --body: heads, and the body sizes.
  const heads = await runBb(['show', out, '--entry', `#${post._bb.seq}`], env);
  assert.match(heads.stdout, /\(response body \d+B: --body shows it\)/);
  assert.doesNotMatch(heads.stdout, /"created"/);
});

test("bb show --entry shows polling payloads as text, binary as a hex preview with its size, SSE events and WebSocket messages", async () => {
  const poll = await runBb(['show', out, '--entry', `#${byPath('/socket.io/?EIO=4&transport=polling')._bb.seq}`, '--body'], env);
  assert.match(poll.stdout, /^0\{"sid":"abc123","upgrades":\["websocket"\],"pingInterval":25000\}$/m);
  const bin = await runBb(['show', out, '--entry', `#${byPath('/bin')._bb.seq}`, '--body'], env);
  assert.match(bin.stdout, /^\(binary, 100B, application\/octet-stream\)$/m);
  assert.match(bin.stdout, /^00000000 {2}00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f$/m);
  assert.match(bin.stdout, /^… 36 more bytes$/m);
  const sse = await runBb(['show', out, '--entry', `#${byPath('/sse')._bb.seq}`, '--body'], env);
  assert.match(sse.stdout, /^2 events:$/m);
  assert.match(sse.stdout, /event tick id 1: \{"n":1\}$/m);
  assert.match(sse.stdout, /event message id 1: plain$/m, 'the last event id carries over, as the SSE spec says');
  const ws = await runBb(['show', out, '--entry', `#${byPath('/ws')._bb.seq}`, '--body'], env);
  assert.match(ws.stdout, /^HTTP\/1\.1 101 Switching Protocols$/m);
  assert.match(ws.stdout, /^\d+ WebSocket messages:$/m);
  assert.match(ws.stdout, /→ text +5B {2}hello$/m);
  assert.match(ws.stdout, /← text +10B {2}echo:hello$/m);
});

test('bb show --entry prints the request and response trailers after their bodies', async () => {
  const r = await runBb(['show', out, '--entry', `#${byPath('/trailers', 'PUT')._bb.seq}`, '--body'], env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^data\n\ntrailers:\nx-sent: 42$/m);
  assert.match(r.stdout, /^sum me\n\ntrailers:\nx-checksum: sha-42$/m);
  // Without --body too: trailers are part of the heads.
  const heads = await runBb(['show', out, '--entry', `#${byPath('/trailers', 'PUT')._bb.seq}`], env);
  assert.match(heads.stdout, /^trailers:\nx-checksum: sha-42$/m);
});

test('bb show --entry prints the 1xx heads before the response, as they came', async () => {
  const r = await runBb(['show', out, '--entry', `#${byPath('/hints')._bb.seq}`], env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\n\nHTTP\/1\.1 103 Early Hints\nLink: <\/app\.css>; rel=preload\n\nHTTP\/1\.1 200 OK\n/);
});

test("bb show --entry '#N' --json prints the HAR entry as written; an unknown #N is exit 2", async () => {
  const items = byPath('/items');
  const r = await runBb(['show', out, '--entry', `#${items._bb.seq}`, '--json'], env);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), items);
  const missing = await runBb(['show', out, '--entry', '#999'], env);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^bb: .*live\.har has no exchange #999: bb show .*live\.har lists them\n$/);
  const bad = await runBb(['show', out, '--entry', 'four'], env);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^bb: --entry takes an exchange as bb show lists it, like '#4', got 'four'\n$/);
});

test('filters that match nothing say so on stderr and exit 0', async () => {
  const grep = await runBb(['frames', out, '--grep', 'nothing-like-this'], env);
  assert.equal(grep.code, 0, grep.stderr);
  assert.equal(grep.stdout, '');
  assert.equal(grep.stderr, 'bb: no messages match --grep nothing-like-this\n');
  const typed = await runBb(['frames', out, '--grep', 'hello', '--type', 'receive', '--opcode', 'binary'], env);
  assert.equal(typed.stderr, 'bb: no messages match --type receive --opcode binary --grep hello\n');
  const conn = await runBb(['frames', out, '--conn', 'c999'], env);
  assert.equal(conn.code, 0);
  assert.equal(conn.stderr, 'bb: no WebSocket connection, gRPC call or SSE stream matches --conn c999\n');
  const timeline = await runBb(['frames', out, '--timeline', '--grep', 'nothing-like-this'], env);
  assert.equal(timeline.code, 0);
  assert.equal(timeline.stderr, 'bb: no messages match --grep nothing-like-this\n');
  const show = await runBb(['show', out, '--status', '5xx', '--method', 'PUT'], env);
  assert.equal(show.code, 0);
  assert.equal(show.stderr, 'bb: no entries match --method PUT --status 5xx\n');
  const ws = await runBb(['show', out, '--ws', '--method', 'POST'], env);
  assert.equal(ws.stderr, 'bb: no entries match --method POST --ws\n');
});
