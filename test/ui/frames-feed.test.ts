// The frames tab's feed over a real capture (a real server and clients on
// loopback through a recording proxy): an SSE stream's events and a WebSocket
// conversation in one capture come as frames in bb's order, an event read
// late (its stream is read again at most every 100 ms) placed by its time
// before a WebSocket message recorded after it; both streams are lanes
// labelled as `bb frames` labels them.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { captureFeeds } from '../../ui/index.js';
import type { UiEvent } from '../../ui/server.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record, waitUntil as until } from '../helpers/recording.js';
import { closeHttpAndWs } from '../helpers/servers.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

/** The frames as the tab orders them (bb's order, seq), as "kind payload". */
const ordered = (events: UiEvent[]): string[] =>
  events
    .filter((e) => e.type === 'frame')
    .map((e) => e['frame'] as { seq: number; kind?: string; text?: string; data: string; type: string })
    .sort((a, b) => a.seq - b.seq)
    .map((f) => `${f.kind ?? f.type} ${f.text ?? f.data}`);

describe("the frames tab's feed", () => {
  it('lists SSE events among WebSocket messages in bb order, live and when opened later, one labelled lane each', async () => {
    let push: (data: string) => void = () => {};
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.flushHeaders();
      push = (data) => res.write(`data: ${data}\n\n`);
    });
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => { server.closeAllConnections(); return closeHttpAndWs(server, wss); });
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const feed = captureFeeds([{ label: 'one', live: rec.cap.live() }]).find((f) => f.name === 'frames')!;
    const live: UiEvent[] = [];
    const stop = feed.open(undefined, (e) => live.push(e))!;
    cleanups.add(stop);

    const got: string[] = [];
    const sse = http.get(`${rec.cap.url}/events`);
    cleanups.add(() => sse.destroy());
    const res = await new Promise<http.IncomingMessage>((r) => sse.once('response', r));
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => got.push(...chunk.split('\n\n').filter(Boolean)));
    push('A');
    await until(() => got.length === 1, 'event A');
    const ws = new WebSocket(`${rec.cap.url.replace('http', 'ws')}/chat?room=1`);
    cleanups.add(() => ws.close());
    await new Promise((r) => ws.once('open', r));
    const echo = (text: string) => new Promise<void>((r) => { ws.once('message', () => r()); ws.send(text); });
    await echo('x');
    // Event B reaches bb before message y; the feed reads B's stream only later.
    push('B');
    await until(() => got.length === 2, 'event B');
    await echo('y');
    const all = ['sse data: A', 'send x', 'receive echo x', 'sse data: B', 'send y', 'receive echo y'].map((s) => s.replace('sse data: ', 'sse '));
    await until(() => ordered(live).length === 6, 'six frames live');
    assert.deepEqual(ordered(live), all);

    const later: UiEvent[] = [];
    cleanups.add(feed.open(undefined, (e) => later.push(e))!);
    assert.deepEqual(ordered(later), all);
    const lanes = later.filter((e) => e.type === 'connection').map((e) => e['text']);
    assert.match(String(lanes[0]), /^sse stream #\d+ 127\.0\.0\.1:\d+ \/events$/);
    assert.match(String(lanes[1]), /^#\d+ 127\.0\.0\.1:\d+ \/chat \?room=1$/);
  });
});
