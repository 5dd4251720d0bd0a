// Application heartbeats over a WebSocket (diff/normalize/heartbeats.ts): the
// keep-alive messages of Action Cable, graphql-ws, SignalR, Phoenix, STOMP,
// SockJS and MQTT are left out under ws-ping-pong, as ping and pong frames
// are: how many cross depends on how long a conversation lasted.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { isAppHeartbeat } from '../../../diff/normalize/heartbeats.js';
import { diffCaptures, renderText } from '../../../diff/index.js';
import { startRecording } from '../../../scenario/index.js';
import { tempDir } from '../../helpers/tmp.js';

describe('isAppHeartbeat', () => {
  const plain = { url: 'ws://127.0.0.1:1/cable', subprotocol: '' };
  const table: Array<[string, number, string, { url: string; subprotocol: string }, boolean]> = [
    ['Action Cable ping', 1, '{"type":"ping","message":1765143181}', plain, true],
    ['graphql-ws ping and pong, a payload or none', 1, '{"type":"pong","payload":{"t":1}}', plain, true],
    ['graphql-ws ping', 1, '{"type":"ping"}', plain, true],
    ['subscriptions-transport-ws keep-alive', 1, '{"type":"ka"}', plain, true],
    ['SignalR Ping', 1, '{"type":6}\x1e', plain, true],
    ['Phoenix heartbeat (1.0)', 1, '{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"5"}', plain, true],
    ['Phoenix reply on its topic (2.0)', 1, '[null,"5","phoenix","phx_reply",{"status":"ok","response":{}}]', plain, true],
    ['STOMP heart-beat', 1, '\n', plain, true],
    ['SockJS heartbeat on a SockJS socket', 1, 'h', { url: 'ws://127.0.0.1:1/stomp/123/abcdef/websocket', subprotocol: '' }, true],
    ['MQTT PINGREQ', 2, 'wAA=', { url: 'ws://127.0.0.1:1/mqtt', subprotocol: 'mqtt' }, true],
    // Near misses: the protocols' own traffic.
    ['a ping that carries a text', 1, '{"type":"ping","message":"hello"}', plain, false],
    ['a ping with an id', 1, '{"type":"ping","id":"1"}', plain, false],
    ['an Action Cable welcome', 1, '{"type":"welcome"}', plain, false],
    ['a SignalR invocation', 1, '{"type":1,"target":"send","arguments":["hi"]}\x1e', plain, false],
    ['SignalR Ping with more', 1, '{"type":6,"x":1}\x1e', plain, false],
    ['type 6 without the separator', 1, '{"type":6}', plain, false],
    ['a Phoenix message on a room topic', 1, '[null,"5","room:lobby","heartbeat",{}]', plain, false],
    ['an `h` elsewhere', 1, 'h', plain, false],
    ['MQTT bytes on another socket', 2, 'wAA=', plain, false],
    ['a STOMP frame', 1, 'MESSAGE\ndestination:/q\n\nhi\0', plain, false],
  ];
  for (const [name, opcode, data, ctx, want] of table) it(`${name}: ${want ? 'a heartbeat' : 'compared'}`, () => assert.equal(isAppHeartbeat(opcode, data, ctx), want));
});

describe('two conversations of different lengths with an Action Cable-style server', () => {
  const t = tempDir();
  const closers: Array<() => void> = [];
  after(() => closers.forEach((c) => c()));

  // Pings every 20 ms, and an answer to each message; `greeting` is what it answers with.
  const server = async (greeting: string): Promise<string> => {
    const http = createServer();
    const wss = new WebSocketServer({ server: http });
    wss.on('connection', (ws) => {
      ws.send('{"type":"welcome"}');
      const timer = setInterval(() => ws.send(JSON.stringify({ type: 'ping', message: Math.floor(Date.now() / 1000) })), 20);
      ws.on('message', (m) => ws.send(JSON.stringify({ message: { greeting, echo: String(m) } })));
      ws.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    closers.push(() => {
      for (const c of wss.clients) c.terminate();
      http.close();
    });
    return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  };

  // One conversation through bb: three messages `gap` ms apart.
  const record = async (greeting: string, gap: number, slug: string): Promise<string> => {
    const rec = await startRecording({ target: await server(greeting), out: t.path(`${slug}.har`), label: slug, bbHome: t.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const ws = new WebSocket(`${rec.url.replace('http', 'ws')}/cable`);
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    for (const text of ['a', 'b', 'c']) {
      ws.send(text);
      await new Promise((r) => setTimeout(r, gap));
    }
    ws.close(1000);
    await new Promise((r) => ws.once('close', r));
    await rec.close(1000);
    return rec.out;
  };

  it('compares equal though one lasted longer and heard more pings; a changed answer is the one finding', async () => {
    const [short, long] = [await record('hi', 30, 'short'), await record('hi', 110, 'long')];
    const same = await diffCaptures(short, long, {});
    assert.equal(same.verdict, 'match', renderText(same, { color: false }));
    const changed = await diffCaptures(short, await record('hello', 70, 'changed'), {});
    assert.deepEqual(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['real changed ws.messages[].data.message.greeting']);
  });
});
