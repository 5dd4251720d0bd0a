// `bb frames --follow` on a live capture shows what `bb frames` shows of the
// finished HAR: the same connection, URL (query redacted), message types,
// payloads, truncation and _bb fields, because the follower builds messages
// with the writer's own functions (capture/to-har.ts).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { startCapture } from '../../index.js';
import { runBb, startBb } from '../helpers/cli.js';

describe('bb frames --follow', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it('prints, message for message, what bb frames prints of the same capture once written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bb-follow-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const home = join(dir, 'home');
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => new Promise((r) => wss.close(r)));
    await new Promise((r) => wss.once('listening', r));
    wss.on('connection', (socket) => {
      socket.on('message', (data, isBinary) => socket.send(isBinary ? Buffer.concat([Buffer.from([0xff]), data as Buffer]) : `echo ${String(data)}`));
    });
    const out = join(dir, 'live.har');
    const cap = await startCapture({ target: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, out, bbHome: home, bodyCap: 24 });
    cleanups.push(() => cap.close(0));

    const follower = startBb(['frames', out, '--follow', '--json'], { BB_HOME: home });
    cleanups.push(async () => follower.child.exitCode === null && follower.child.kill('SIGKILL'));
    const client = new WebSocket(`${cap.url.replace('http', 'ws')}/chat?room=7&token=s3cret`);
    await new Promise((r, j) => client.once('open', r).once('error', j));
    const replies: unknown[] = [];
    client.on('message', (d) => replies.push(d));
    const sent = ['hello', 'a message longer than the body cap of 24 bytes', Buffer.from([0, 1, 2, 250])];
    for (const m of sent) {
      client.send(m);
      while (replies.length < sent.indexOf(m) + 1) await new Promise((r) => setTimeout(r, 10));
    }
    client.close(1000, 'done');
    await new Promise((r) => client.once('close', r));
    // Every message (6 data, 2 close) reaches the follower before the capture stops.
    await follower.waitFor(/("opcode":8[^\n]*\n[^\n]*){2}/, 15_000);
    await cap.close();
    assert.equal(await follower.exited, 0, follower.stderr());

    const followed = follower.stdout().trim().split('\n').map((l) => JSON.parse(l) as { connection: string; url: string; message: unknown });
    const written = await runBb(['frames', out, '--json'], { BB_HOME: home });
    assert.equal(written.code, 0, written.stderr);
    const { connections } = JSON.parse(written.stdout) as { connections: { id: string; url: string; messages: unknown[] }[] };
    assert.equal(connections.length, 1);
    const [conn] = connections;
    assert.match(conn!.url, /\/chat\?room=7&token=(?!s3cret)/, 'the query is redacted in the HAR');
    assert.equal(followed.length, conn!.messages.length);
    assert.equal(followed.length, 8);
    for (const [i, ev] of followed.entries()) {
      assert.equal(ev.connection, conn!.id, `message ${i}: connection`);
      assert.equal(ev.url, conn!.url, `message ${i}: url`);
      assert.deepEqual(ev.message, conn!.messages[i], `message ${i}`);
    }
    const long = followed.find((e) => JSON.stringify(e.message).includes('longer'))!.message as { _bb: { truncated?: number } };
    assert.equal(long._bb.truncated, 24, 'a message past the body cap says how much was kept');
  });
});
