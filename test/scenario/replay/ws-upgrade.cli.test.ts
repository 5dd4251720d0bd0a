// bb replay's WebSocket upgrade, through a real bb capture and bb replay: the
// fresh server gets the head the original client wrote (names in their case
// and order, duplicates kept), with only Host's port and the key its own.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { WebSocketServer } from 'ws';
import { runBb, startBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { afterHead, MASK, OP, parseFrames, wsClose, wsFrame, wsKey } from '../../helpers/ws-frames.js';
import type { Har } from '../../../capture/index.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const closers: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

/** An echo WebSocket server (chat subprotocol, permessage-deflate) that keeps each upgrade's raw header lines. */
async function headRecordingServer(): Promise<{ url: string; port: number; heads: string[][] }> {
  const heads: string[][] = [];
  const server = http.createServer((_req, res) => res.end());
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: true });
  server.on('upgrade', (req, socket, head) => {
    heads.push(req.rawHeaders);
    wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (d) => ws.send(`echo ${String(d)}`)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => closeHttpAndWs(server, wss));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, heads };
}

/** A client that writes its own upgrade head on a socket, says "hi" once switched, waits for the echo and closes with 1000. */
async function rawConversation(port: number, head: string): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const chunks: Buffer[] = [];
  const waiters: Array<() => void> = [];
  socket.on('data', (c: Buffer) => (chunks.push(c), waiters.splice(0).forEach((w) => w())));
  const until = (ready: (bytes: Buffer) => boolean) => new Promise<void>((resolve) => {
    const check = () => (ready(Buffer.concat(chunks)) ? resolve() : waiters.push(check));
    check();
  });
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write(head);
  await until((b) => b.includes('\r\n\r\n'));
  assert.match(Buffer.concat(chunks).toString('latin1'), /^HTTP\/1\.1 101 /);
  socket.write(wsFrame({ opcode: OP.text, payload: 'hi', mask: MASK }));
  // The echo may come compressed (permessage-deflate): the capture decodes it.
  await until((b) => parseFrames(afterHead(b)).frames.some((f) => f.opcode === OP.text));
  socket.write(wsClose(1000, '', true));
  await closed;
}

describe('bb replay: the WebSocket upgrade as recorded', () => {
  it("sends the recorded head: names in their case and order, duplicates kept; only Host's port and the key differ", async () => {
    const original = await headRecordingServer();
    const har = tmp.path('upgrade.har');
    const bb = startBb(['capture', '--target', original.url, '--out', har], env, { timeoutMs: 30_000 });
    closers.push(() => void (bb.child.exitCode === null && bb.child.kill('SIGKILL')));
    const [, proxyPort] = await bb.waitFor(/: http:\/\/127\.0\.0\.1:(\d+) -> /);
    // Upgrade headers lower-cased among the others, a custom header first, a duplicate split by another header.
    await rawConversation(Number(proxyPort), [
      'GET /chat?room=7 HTTP/1.1',
      'X-First: 1',
      `Host: 127.0.0.1:${proxyPort}`,
      'upgrade: websocket',
      'connection: Upgrade',
      `sec-websocket-key: ${wsKey()}`,
      'sec-websocket-version: 13',
      'X-Dup: a',
      'Sec-WebSocket-Protocol: chat',
      'X-Dup: b',
      'sec-websocket-extensions: permessage-deflate; client_max_window_bits',
      'origin: http://app.example',
      'x-lower-case: v',
      '',
      '',
    ].join('\r\n'));
    bb.child.kill('SIGINT');
    assert.equal(await bb.exited, 0, bb.stderr());
    assert.equal(original.heads.length, 1);

    const fresh = await headRecordingServer();
    const out = tmp.path('upgrade-replay.har');
    const run = await runBb(['replay', har, '--target', fresh.url, '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(fresh.heads.length, 1);

    const recorded = original.heads[0]!;
    const replayed = fresh.heads[0]!;
    const at = (raw: string[], name: string) => raw.findIndex((v, i) => i % 2 === 0 && v.toLowerCase() === name);
    assert.equal(replayed[at(replayed, 'host') + 1], `127.0.0.1:${fresh.port}`);
    const key = replayed[at(replayed, 'sec-websocket-key') + 1]!;
    assert.notEqual(key, recorded[at(recorded, 'sec-websocket-key') + 1]);
    assert.equal(Buffer.from(key, 'base64').length, 16, 'a fresh 16-byte key');
    const masked = (raw: string[]) => raw.map((v, i) => (i === at(raw, 'host') + 1 ? 'HOST' : i === at(raw, 'sec-websocket-key') + 1 ? 'KEY' : v));
    assert.deepEqual(masked(replayed), masked(recorded));

    // The conversation went on over it as recorded: the subprotocol and permessage-deflate negotiated, the echo received.
    const entry = (JSON.parse(await readFile(out, 'utf8')) as Har).log.entries[0]!;
    assert.equal(entry.response.status, 101);
    assert.ok(entry._bb!.extensions && 'permessage-deflate' in entry._bb!.extensions, 'deflate negotiated as in the original');
    assert.deepEqual(entry._webSocketMessages!.filter((m) => m.opcode === 1).map((m) => `${m.type} ${m.data}`), ['send hi', 'receive echo hi']);
  });
});
