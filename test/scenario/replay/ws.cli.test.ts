// bb replay's WebSocket conversations against servers that do not answer as
// the original did: a bounded wait that runs out is reported and the
// conversation goes on; a refused upgrade is an exchange without a response;
// --ws timing keeps the original gaps instead of waiting.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import WebSocket, { WebSocketServer } from 'ws';
import { startRecording } from '../../../scenario/index.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startReplayService, type ReplayService } from './service.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const closers: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

/** A server that takes any WebSocket and says nothing unless spoken to; records what it got and when. */
async function quietServer(): Promise<{ url: string; got: Array<{ text: string; at: number }> }> {
  const server = http.createServer((_req, res) => res.end());
  const wss = new WebSocketServer({ server });
  const got: Array<{ text: string; at: number }> = [];
  wss.on('connection', (ws) => ws.on('message', (d) => got.push({ text: d.toString(), at: performance.now() })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => {
    for (const c of wss.clients) c.terminate();
    server.closeAllConnections();
    server.close(() => r());
  }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

describe('bb replay: WebSockets that do not go as recorded', () => {
  let original: string;
  let service: ReplayService;
  before(async () => {
    service = await startReplayService();
    closers.push(() => service.close());
    const rec = await startRecording({ target: service.url, out: tmp.path('ws.har'), label: 'ws', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const ws = new WebSocket(rec.url.replace('http', 'ws') + '/ws');
    const hello = await new Promise<any>((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
    // 600 ms between the hello and the subscribe: what --ws timing keeps.
    await new Promise((r) => setTimeout(r, 600));
    ws.send(JSON.stringify({ type: 'subscribe', session: hello.session, cursor: hello.cursor }));
    await new Promise((r) => ws.once('message', r));
    ws.close(1000);
    await new Promise((r) => ws.once('close', r));
    original = await rec.close(1000);
  });

  it('--ws wait: a server that never sends the hello makes the wait run out; it is reported and the message still goes', async () => {
    const quiet = await quietServer();
    const report = tmp.path('quiet.json');
    const started = performance.now();
    const run = await runBb(['replay', original, '--target', quiet.url, '--out', tmp.path('quiet.har'), '--wait-ms', '400', '--json', report], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /bb replay: #\d+ message \d+: waited for server message 1 \(0 arrived\) \(gave up after \d+ ms\)/);
    assert.equal(quiet.got.length, 1);
    assert.equal(JSON.parse(quiet.got[0]!.text).type, 'subscribe');
    const json = JSON.parse(await readFile(report, 'utf8'));
    assert.ok(json.timeouts.length >= 1 && json.timeouts[0].waitedMs >= 350, JSON.stringify(json.timeouts));
    assert.ok(performance.now() - started < 20_000);
  });

  it('--ws timing: the subscribe goes about 600 ms after the opening, without waiting for anything', async () => {
    const quiet = await quietServer();
    const run = await runBb(['replay', original, '--target', quiet.url, '--out', tmp.path('timing.har'), '--ws', 'timing', '--pace', 'original'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /waited for/);
    const har = JSON.parse(await readFile(tmp.path('timing.har'), 'utf8'));
    const msgs = har.log.entries[0]._webSocketMessages.filter((m: { opcode: number }) => m.opcode === 1);
    const opened = Date.parse(har.log.entries[0].startedDateTime) / 1000;
    assert.ok(msgs[0].time - opened >= 0.5, `sent ${(msgs[0].time - opened).toFixed(3)} s after the upgrade`);
  });

  it('a server that refuses the upgrade: exit 1, the refusal named with its status', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('no websockets here');
    });
    server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const out = tmp.path('refused.har');
    const run = await runBb(['replay', original, '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out], env);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /bb replay: #\d+: the server refused the WebSocket with 403/);
    assert.match(run.stdout, /\(1 of 1 got no response\)/);
    const har = JSON.parse(await readFile(out, 'utf8'));
    assert.equal(har.log.entries[0].response.status, 403);
  });
});
