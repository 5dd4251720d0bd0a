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
import { FRAMES_SHOWN, framesFeed } from '../../ui/frames-feed.js';
import type { LiveCapture, LiveRow } from '../../capture/index.js';
import type { UiEvent } from '../../ui/server.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record, waitUntil as until } from '../helpers/recording.js';
import { closeHttpAndWs, pushedStream } from '../helpers/servers.js';
import { assertPaced, followStream, pushTicks, timedEntries } from '../helpers/live-feeds.js';

const cleanups = new Cleanups();
/** The frames feed over one live capture. */
const feed = (live: LiveCapture) => captureFeeds([{ label: 'one', live }]).find((f) => f.name === 'frames')!;
after(() => cleanups.run());

/** The frames as the tab orders them (bb's order, seq), as "kind payload". */
const ordered = (events: UiEvent[]): string[] =>
  events
    .filter((e) => e.type === 'frame')
    .map((e) => e['frame'] as { seq: number; kind?: string; text?: string; data: string; type: string })
    .sort((a, b) => a.seq - b.seq)
    .map((f) => `${f.kind ?? f.type} ${f.text ?? f.data}`);

/** A capture (followed live) in front of a WebSocket server that answers each message with `echo <message>`. */
async function echoCapture() {
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => closeHttpAndWs(server, wss));
  const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return { rec, live: rec.cap.live() };
}

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
    const frames = feed(rec.cap.live());
    const live: UiEvent[] = [];
    const stop = frames.open(undefined, (e) => live.push(e))!;
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
    cleanups.add(frames.open(undefined, (e) => later.push(e))!);
    assert.deepEqual(ordered(later), all);
    const lanes = later.filter((e) => e.type === 'connection').map((e) => e['text']);
    assert.match(String(lanes[0]), /^sse stream #\d+ 127\.0\.0\.1:\d+ \/events$/);
    assert.match(String(lanes[1]), /^#\d+ 127\.0\.0\.1:\d+ \/chat \?room=1$/);
  });
});

describe("the frames tab's feed over a long capture", () => {
  it('sends the window when opened: the latest FRAMES_SHOWN messages, as the HAR holds them, and says the rest are not listed', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      for (let i = 0; i < 50; i++) res.write(`data: early ${i}\n\n`);
      res.end();
    });
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => closeHttpAndWs(server, wss));
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const live = rec.cap.live();
    // An event stream that ended before the window, then two conversations of round trips, interleaved, a little
    // more than the window together.
    await new Promise<void>((r, j) => http.get(`${rec.cap.url}/early`, (res) => res.resume().on('end', r)).on('error', j));
    const clients = await Promise.all(['a', 'b'].map(async (room) => {
      const ws = new WebSocket(`${rec.cap.url.replace('http', 'ws')}/chat?room=${room}`);
      await new Promise((r, j) => ws.once('open', r).once('error', j));
      return ws;
    }));
    const trips = FRAMES_SHOWN / 4 + 500;
    await Promise.all(clients.map(async (ws, c) => {
      for (let i = 0; i < trips; i++) {
        const reply = new Promise((r) => ws.once('message', r));
        ws.send(`${c}:${i}`);
        await reply;
      }
    }));
    await until(() => live.rows().filter((r) => r.kind === 'websocket').every((r) => r.messages === 2 * trips), 'every message recorded');
    const events: UiEvent[] = [];
    feed(live).open(undefined, (e) => events.push(e))!();
    const frames = events.filter((e) => e.type === 'frame').map((e) => e['frame'] as { seq: number; data: string });
    assert.equal(frames.length, FRAMES_SHOWN);
    assert.deepEqual(events.filter((e) => e.type === 'window').map((e) => [e['limit'], e['cut']]), [[FRAMES_SHOWN, true]]);
    // The ended stream has nothing in the window: no lane; both conversations have one.
    assert.deepEqual(events.filter((e) => e.type === 'connection').map((e) => (e['row'] as LiveRow).kind), ['websocket', 'websocket']);

    // Opened by a page (the server says the snapshot may go on), the window is made a few ms a turn: the proxy on
    // the same thread records a round trip meanwhile, and its frames come after the window's, the window the same.
    const stepped: UiEvent[] = [];
    let made = false;
    const stop = feed(live).open(undefined, (e) => stepped.push(e), () => () => void (made = true))!;
    cleanups.add(stop);
    assert.equal(made, false, 'the window is not made in one turn');
    const reply = new Promise((r) => clients[0]!.once('message', r));
    clients[0]!.send('late');
    await reply;
    assert.equal(made, false, 'the proxy relayed a round trip while the window was made');
    await until(() => made && stepped.some((e) => e.type === 'frame' && (e['frame'] as { data: string }).data === 'echo late'), 'the window, then the late round trip');
    const steppedFrames = stepped.filter((e) => e.type === 'frame').map((e) => e['frame'] as { seq: number; data: string });
    assert.deepEqual(steppedFrames.slice(0, FRAMES_SHOWN), frames, 'the same window');
    assert.deepEqual(steppedFrames.slice(FRAMES_SHOWN).map((f) => f.data), ['late', 'echo late']);
    stop();

    // A busy capture: past the events a snapshot may keep waiting, the rest of it is made at once (here the first
    // event of the round trip), before the echo comes back; the round trip still follows the window.
    const hurried: UiEvent[] = [];
    let hurriedMade = false;
    const stopHurried = framesFeed([{ label: 'one', live }], { waitingMax: 0 }).open(undefined, (e) => hurried.push(e), () => () => void (hurriedMade = true))!;
    cleanups.add(stopHurried);
    assert.equal(hurriedMade, false);
    const again = new Promise((r) => clients[0]!.once('message', r));
    clients[0]!.send('later');
    await again;
    assert.equal(hurriedMade, true, 'made at once when the first event waited');
    await until(() => hurried.some((e) => e.type === 'frame' && (e['frame'] as { data: string }).data === 'echo later'), 'the round trip after the window');
    const hurriedFrames = hurried.filter((e) => e.type === 'frame').map((e) => (e['frame'] as { data: string }).data);
    assert.deepEqual(hurriedFrames.slice(-2), ['later', 'echo later']);
    assert.equal(hurriedFrames.length, FRAMES_SHOWN + 2);
    stopHurried();
    for (const ws of clients) ws.close();
    const har = await rec.finish();
    const all = har.log.entries.flatMap((e) => e._webSocketMessages ?? []).filter((m) => m.opcode === 1).sort((x, y) => x._bb!.seq! - y._bb!.seq!);
    assert.equal(all.length, 4 * trips + 4);
    assert.deepEqual(frames.map((f) => [f.seq, f.data]), all.slice(0, -4).slice(-FRAMES_SHOWN).map((m) => [m._bb!.seq, m.data]));
  });

  it('reads a growing stream it cannot follow again in rounds spaced by what a read costs: at most about a tenth of the thread', async () => {
    // An event stream with a Content-Encoding (identity here, so the events can be counted in flight): the live
    // capture follows no coded stream (a coded one is parsed from its decoded whole), so each read builds the entry.
    const { url, push, end, close } = await pushedStream({ 'Content-Type': 'text/event-stream', 'Content-Encoding': 'identity' });
    cleanups.add(close);
    const rec = await record(cleanups, url);
    const live = rec.cap.live();
    // The same live capture, its entry() timed: each read of the stream is one.
    const { live: timed, builds: reads } = timedEntries(live);
    let told = 0;
    const stop = feed(timed).open(undefined, (e) => { if (e.type === 'frame') told++; })!;
    cleanups.add(stop);
    await followStream(cleanups, `${rec.cap.url}/ticks`);
    // 40,000 events of ~100 bytes, 2,000 every 50 ms: reads grow with the stream.
    const events = 40_000;
    await pushTicks(push, events);
    end();
    await until(() => told === events, 'every event told', 60_000);
    assert.ok(reads.length >= 2, `reads: ${reads.length}`);
    assertPaced(reads, 100, 9, 'read');
    assert.ok(reads.some((r) => r.end - r.start > 100 / 9), 'some read cost more than 11 ms (else the spacing is the 100 ms floor alone)');
  });

  it('follows an event stream as it grows, each chunk read once and no entry built: its events as the HAR lists them', async () => {
    const { url, push, end, close } = await pushedStream({ 'Content-Type': 'text/event-stream; charset=utf-8' });
    cleanups.add(close);
    const rec = await record(cleanups, url);
    const live = rec.cap.live();
    const { live: counted, builds } = timedEntries(live);
    const frames: Array<{ data: string }> = [];
    const stop = feed(counted).open(undefined, (e) => { if (e.type === 'frame') frames.push(e['frame'] as { data: string }); })!;
    cleanups.add(stop);
    await followStream(cleanups, `${rec.cap.url}/ticks`);
    // Events with multi-byte text and a secret, the bytes cut anywhere (mid-line, mid-character), sent a piece at a time.
    const events = 3_000;
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${Buffer.from('{"sub":"u1"}').toString('base64url')}.c2lnbmF0dXJlLXNpZ25hdHVyZQ`;
    let text = '';
    for (let n = 0; n < events; n++) text += `event: tick\nid: ${n}\ndata: {"n":${n},"word":"héllo wörld ✓","auth":"${n % 100 === 0 ? jwt : 'none'}"}\n\n`;
    const bytes = Buffer.from(text);
    for (let at = 0, k = 0; at < bytes.length; k++) {
      const size = 1 + ((k * 7919) % 4096);
      push(bytes.subarray(at, at + size));
      at += size;
      if (k % 20 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    end();
    await until(() => frames.length === events, 'every event told', 30_000);
    assert.equal(builds.length, 0, 'no entry built for a stream the live capture follows');
    const har = await rec.finish();
    const listed = har.log.entries[0]!._eventSourceMessages!;
    assert.equal(listed.length, events);
    assert.deepEqual(frames.map((f) => f.data), listed.map((e) => e.data.slice(0, 512)));
    assert.ok(!frames.some((f) => f.data.includes(jwt)) && frames.some((f) => f.data.includes('<redacted:')), 'the secret redacted as the HAR has it');
  });

  it('opened after hundreds of short conversations, names a lane for each one with frames in the window', async () => {
    const { rec, live } = await echoCapture();
    const conversations = 600;
    for (let k = 0; k < conversations; k += 20) {
      await Promise.all(Array.from({ length: 20 }, async (_, j) => {
        const ws = new WebSocket(`${rec.cap.url.replace('http', 'ws')}/room?u=${k + j}`);
        await new Promise((r, j2) => ws.once('open', r).once('error', j2));
        await new Promise<void>((r) => { ws.once('message', () => r()); ws.send(`hi ${k + j}`); });
        ws.close(1000);
        await new Promise((r) => ws.once('close', r));
      }));
    }
    await until(() => live.rows().filter((r) => r.state === 'closed').length === conversations, 'every conversation closed', 20_000);
    const events: UiEvent[] = [];
    feed(live).open(undefined, (e) => events.push(e))!();
    const named = new Set(events.filter((e) => e.type === 'connection').map((e) => (e['row'] as LiveRow).seq));
    const framed = new Set(events.filter((e) => e.type === 'frame').map((e) => e['exchange'] as number));
    assert.equal(framed.size, conversations);
    assert.deepEqual([...framed].filter((seq) => !named.has(seq)), []);
  });

  it("tells a lane again only when what the page shows of it changes: its label or its end, not each message's count", async () => {
    const { rec, live } = await echoCapture();
    const events: UiEvent[] = [];
    const stop = feed(live).open(undefined, (e) => events.push(e))!;
    cleanups.add(stop);
    const ws = new WebSocket(`${rec.cap.url.replace('http', 'ws')}/chat`);
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const trips = 50;
    for (let i = 0; i < trips; i++) {
      const reply = new Promise((r) => ws.once('message', r));
      ws.send(`m${i}`);
      await reply;
    }
    ws.close(1000);
    await until(() => events.filter((e) => e.type === 'frame').length === 2 * trips + 2, 'every frame, the closes too');
    // Relabelled 50 ms after its first messages (its label names the query or first message that tells it apart).
    await new Promise((r) => setTimeout(r, 200));
    const told = events.filter((e) => e.type === 'connection').map((e) => [(e['row'] as LiveRow).state, e['text']]);
    // Its rows changed 100 times and more (each message counted); the page was told when the lane began, when its
    // label changed (at most once), and when it closed.
    assert.ok(told.length >= 2 && told.length <= 3, JSON.stringify(told));
    assert.equal(told.at(-1)![0], 'closed');
    assert.equal(told.filter(([state]) => state === 'closed').length, 1);
  });
});
