// A capture followed live (Capture.live()): real servers and clients on
// loopback through a real recording proxy. Rows show exchanges in flight with
// their state and change as they go; entries are the ones the HAR ends up
// holding, redacted; WebSocket messages come one by one in order.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { LiveCaptureClosed, MESSAGES_LISTED, type LiveEvent, type LiveRow } from '../../capture/index.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record, waitUntil, type Recording } from '../helpers/recording.js';
import { closeHttpAndWs } from '../helpers/servers.js';
import { driveItems, itemsServer } from '../helpers/grpc-items.js';
import { captureFeeds } from '../../ui/index.js';
import type { UiEvent } from '../../ui/server.js';
import type { HarEntry } from '../../capture/har.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

/** Waits until `check` holds (up to 5 s). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** A server that answers /hold only when release() is called, echoes WebSocket text, and answers the rest at once. */
async function server() {
  let release: () => void = () => {};
  const s = http.createServer((req, res) => {
    if (req.url === '/hold') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('first ');
      release = () => res.end('last');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Set-Cookie': 'sid=s3cret' });
    res.end(JSON.stringify({ path: req.url, token: 'tok-123', ok: true }));
  });
  const wss = new WebSocketServer({ server: s });
  wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  cleanups.add(() => closeHttpAndWs(s, wss));
  return { target: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, release: () => release() };
}

/** A WebSocket client of the capture's /chat, open. */
async function openChat(rec: Recording): Promise<WebSocket> {
  const ws = new WebSocket(`${rec.cap.url.replace(/^http/, 'ws')}/chat`);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  return ws;
}

/** Sends `text` and waits for the answer. */
function roundTrip(ws: WebSocket, text: string): Promise<void> {
  const reply = new Promise<void>((r) => ws.once('message', () => r()));
  ws.send(text);
  return reply;
}

describe('a capture followed live', () => {
  it('shows an exchange in flight with its state, then done, and its entry is the HAR entry', async () => {
    const srv = await server();
    const rec = await record(cleanups, srv.target);
    await (await request(`${rec.cap.url}/before?token=abc`, { headers: { authorization: 'Bearer secret-1' } })).body.text();
    // Made after traffic: what was recorded before comes too.
    const live = rec.cap.live();
    assert.equal(live.rows().length, 1);
    const events: LiveEvent[] = [];
    live.on((e) => events.push(e));
    // Seqs count ends and messages too: the held exchange is found by its path.
    const held = (): LiveRow[] => events.flatMap((e) => (e.type === 'row' && e.row.url.endsWith('/hold') ? [e.row] : []));

    const answer = request(`${rec.cap.url}/hold`).then((r) => r.body.text());
    await until(() => held().some((r) => r.state === 'receiving'), 'the held exchange to be receiving');
    const open = live.rows().at(-1)!;
    assert.deepEqual([open.method, open.status, open.state, open.endedAt, open.responseBytes], ['GET', 200, 'receiving', undefined, 'first '.length]);
    assert.equal(live.entry(open.seq)!._bb!.inFlight, true);
    assert.equal(live.entry(open.seq)!.comment, undefined, 'no note that the capture ended');
    assert.equal(live.entry(open.seq)!.response.content.text, 'first ');
    srv.release();
    assert.equal(await answer, 'first last');
    await until(() => held().some((r) => r.state === 'done'), 'the held exchange to be done');
    assert.equal(held().at(-1)!.responseBytes, 'first last'.length);

    const first = live.rows()[0]!;
    assert.equal(first.url, `${rec.cap.url}/before?token=${first.url.split('token=')[1]}`);
    assert.match(first.url, /token=<redacted:[0-9a-f]{8}>$/);
    const before = live.entry(1)!;
    assert.match(before.request.headers.find((h) => h.name.toLowerCase() === 'authorization')!.value, /^Bearer <redacted:[0-9a-f]{8}>$|^<redacted:[0-9a-f]{8}>$/);
    assert.doesNotMatch(JSON.stringify(before), /secret-1|tok-123|s3cret/);

    const entries = live.rows().map((r) => live.entry(r.seq));
    const har = await rec.finish();
    const bySeq = new Map(har.log.entries.map((e) => [e._bb!.seq, e]));
    assert.deepEqual(entries, live.rows().map((r) => bySeq.get(r.seq)));
  });

  it('tells WebSocket messages one by one, in order, after the row of their connection', async () => {
    const srv = await server();
    const rec = await record(cleanups, srv.target);
    const live = rec.cap.live();
    const events: LiveEvent[] = [];
    live.on((e) => events.push(e));
    const ws = await openChat(rec);
    for (const text of ['one', 'two', 'three']) await roundTrip(ws, text);
    await until(() => events.filter((e) => e.type === 'message').length === 6, 'six messages');
    const firstMessage = events.findIndex((e) => e.type === 'message');
    const rowBefore = events.slice(0, firstMessage).findLast((e) => e.type === 'row');
    assert.ok(rowBefore && rowBefore.type === 'row' && rowBefore.row.kind === 'websocket' && rowBefore.row.state === 'open');
    const messages = events.flatMap((e) => (e.type === 'message' ? [`${e.message.type} ${e.message.data}`] : []));
    assert.deepEqual(messages, ['send one', 'receive echo one', 'send two', 'receive echo two', 'send three', 'receive echo three']);
    ws.close(1000, 'bye');
    await until(() => live.rows()[0]!.state === 'closed', 'the connection to be closed');
    // Both close frames are messages too.
    assert.equal(live.rows()[0]!.messages, 8);
    assert.deepEqual(events.flatMap((e) => (e.type === 'message' ? [e.message.opcode] : [])).slice(6), [8, 8]);
  });

  it('hands out its latest messages to build later, read a step at a time; closed, it reads and builds nothing more', async () => {
    const srv = await server();
    const rec = await record(cleanups, srv.target);
    const live = rec.cap.live();
    const ws = await openChat(rec);
    for (const text of ['one', 'two']) await roundTrip(ws, text);
    await until(() => live.rows()[0]?.messages === 4, 'four messages');
    const recent = live.recentMessages(3);
    assert.deepEqual(recent.map((m) => [m.seq, m.time > 0]), [[1, true], [1, true], [1, true]]);
    assert.deepEqual(recent.map((m) => m.build().data), ['echo one', 'two', 'echo two']);
    assert.deepEqual(recent.map((m) => m.build()._bb?.seq), recent.map((m) => m.messageSeq));
    const steps = live.recentMessageSteps(3);
    assert.equal(steps.next().done, false, 'a step read');
    ws.close();
    await rec.finish();
    // Its files are closed (their numbers may be another file's): the rest of the read, and a build, give nothing.
    const rest = steps.next();
    assert.equal(rest.done, true);
    assert.deepEqual(rest.value, []);
    assert.throws(() => recent[0]!.build(), LiveCaptureClosed);
  });

  it("opens a long conversation with its latest messages: its first and last lines read back, never its middle", async () => {
    const srv = await server();
    const rec = await record(cleanups, srv.target);
    const live = rec.cap.live();
    const ws = await openChat(rec);
    const seq = (): number => live.rows()[0]!.seq;
    /** latestOf(seq, n) against the whole entry's last n messages, and the count of those before them. */
    const sameAsWhole = (n: number, whole: HarEntry, what: string): void => {
      const listed = whole._webSocketMessages!;
      const latest = live.latestOf(seq(), n)!;
      assert.deepEqual(latest.entry, { ...whole, _webSocketMessages: listed.slice(-n) }, `${what}: the latest ${n}`);
      assert.equal(latest.earlier, Math.max(0, listed.length - n), `${what}: earlier than the latest ${n}`);
    };
    const burst = async (from: number, count: number): Promise<void> => {
      for (let i = from; i < from + count; i++) {
        ws.send(`m${i}`);
        if (i % 500 === 499) await new Promise((r) => setImmediate(r));
      }
    };
    // A short conversation: its records are held (entry-assembly.ts WS_HELD).
    await burst(0, 10);
    await until(() => live.rows()[0]?.messages === 20, 'twenty messages');
    assert.ok(live.heldExchanges === 1);
    for (const n of [1, 5, 20, 1000]) sameAsWhole(n, live.entry(seq())!, 'held');
    // A long one: read back from the journal.
    await burst(10, 2990);
    await waitUntil(() => live.rows()[0]?.messages === 6000, 'six thousand messages', 20_000);
    assert.equal(live.heldExchanges, 0);
    for (const n of [1, 1000, 5990, 5999, 6000, 10_000]) sameAsWhole(n, live.entry(seq())!, 'open');

    // A message's line in the middle made a close of the conversation: the whole entry ends there, the latest 1,000
    // do not (never read).
    const journal = join(rec.dir, 'cap.har.journal');
    const text = readFileSync(journal);
    const lines: Array<[number, number]> = [];
    for (let at = 0, nl = text.indexOf(10); nl >= 0; at = nl + 1, nl = text.indexOf(10, at)) {
      if (text.toString('utf8', at, Math.min(nl, at + 12)).includes('"wsm"')) lines.push([at, nl - at]);
    }
    const [at, bytes] = lines[Math.floor(lines.length / 2)]!;
    const saved = text.subarray(at, at + bytes);
    const before = live.entry(seq())!;
    const m = JSON.parse(saved.toString('utf8')) as { x: number; ts: number; seq: number };
    const close = Buffer.from(JSON.stringify({ r: 'wsc', x: m.x, ts: m.ts, seq: m.seq, by: 'client' }));
    assert.ok(close.length <= bytes);
    const fd = openSync(journal, 'r+');
    try {
      writeSync(fd, Buffer.concat([close, Buffer.alloc(bytes - close.length, ' ')]), 0, bytes, at);
      assert.ok(live.entry(seq())!._webSocketMessages!.length < 5000, 'the whole entry reads the middle');
      sameAsWhole(1000, before, 'the middle changed');
    } finally {
      writeSync(fd, saved, 0, bytes, at);
      closeSync(fd);
    }
    ws.close(1000, 'bye');
    await until(() => live.rows()[0]!.state === 'closed', 'the conversation to close');
    const closed = live.entry(seq())!;
    assert.equal(closed._webSocketMessages!.length, 6002);
    for (const n of [1, 1000, 6002]) sameAsWhole(n, closed, 'closed');
    const har = await rec.finish();
    assert.deepEqual(closed, har.log.entries[0]);
  });

  it('lists a gRPC call as a grpc row with its messages counted, its entry with the messages split', async () => {
    const port = await itemsServer(cleanups, { lookupStatus: 5 });
    const rec = await record(cleanups, `http://127.0.0.1:${port}`);
    const live = rec.cap.live();
    assert.equal(await driveItems(rec.port), 5);
    await until(() => live.rows().filter((r) => r.state === 'done').length === 2, 'two calls done');
    const [lookup, store] = live.rows();
    assert.deepEqual([lookup!.kind, lookup!.url.endsWith('/demo.Items/Lookup'), lookup!.messages], ['grpc', true, 1]);
    assert.deepEqual([store!.kind, store!.messages], ['grpc', 2]);
    const entry = live.entry(store!.seq)!;
    assert.deepEqual(entry._grpcMessages!.map((m) => m.type), ['send', 'receive']);
    assert.deepEqual(live.entry(lookup!.seq)!._bb!.grpc, { status: 5, message: 'no such item' });
  });

  it('a listener that throws is counted and does not stop the recording or the other listeners', async () => {
    const srv = await server();
    const rec = await record(cleanups, srv.target);
    const live = rec.cap.live();
    const seen: number[] = [];
    let told = 0;
    live.on(() => {
      throw new Error('a broken view');
    });
    live.on((e) => {
      told++;
      if (e.type === 'row') seen.push(e.row.seq);
    });
    await (await request(`${rec.cap.url}/x`)).body.text();
    await until(() => seen.length > 0, 'a row');
    // The broken listener threw once for each event the other one was told (and the other was told them all).
    assert.equal(live.listenerErrors, told);
    const har = await rec.finish();
    assert.equal(har.log.entries.length, 1);
  });

  it('holds the records of a bounded window of exchanges; an older one opened in the view is read back from the journal, the HAR entry exactly', async () => {
    const srv = await server();
    const rec = await record(cleanups, srv.target);
    const keep = 5;
    const live = rec.cap.live({ keep });
    const exchanges = 60;
    let most = 0;
    for (let i = 0; i < exchanges; i++) {
      const body = i % 3 === 0 ? JSON.stringify({ n: i, token: `tok-${i}` }) : undefined;
      const res = await request(`${rec.cap.url}/item/${i}?token=t${i}`, { method: body ? 'POST' : 'GET', ...(body ? { body, headers: { 'content-type': 'application/json' } } : {}) });
      await res.body.text();
      most = Math.max(most, live.heldExchanges);
    }
    // A WebSocket conversation longer than the messages an open exchange holds (entry-assembly.ts WS_HELD).
    const ws = await openChat(rec);
    for (let i = 0; i < 70; i++) await roundTrip(ws, `m${i}`);
    most = Math.max(most, live.heldExchanges);
    ws.close(1000, 'bye');
    await until(() => live.rows().length === exchanges + 1 && live.rows().every((r) => r.endedAt !== undefined), 'every exchange to end');
    assert.ok(most <= keep + 1, `at most the window and the one open exchange held, saw ${most}`);
    assert.ok(live.heldExchanges <= keep, `at most ${keep} held once all ended, saw ${live.heldExchanges}`);

    // The view's exchange feed (what the page opens): its first event is the entry.
    const feed = captureFeeds([{ label: 'one', live }]).find((f) => f.name === 'exchange')!;
    const opened = (seq: number): HarEntry => {
      const events: UiEvent[] = [];
      const stop = feed.open(`one/${seq}`, (e) => events.push(e));
      assert.ok(stop, `the view opens #${seq}`);
      stop();
      return events[0]!['entry'] as HarEntry;
    };
    const seqs = live.rows().map((r) => r.seq);
    const seen = seqs.map((seq) => opened(seq));
    assert.equal(seen.at(-1)!._webSocketMessages!.length, 142);
    const har = await rec.finish();
    const bySeq = new Map(har.log.entries.map((e) => [e._bb!.seq, e]));
    assert.deepEqual(seen, seqs.map((seq) => bySeq.get(seq)));
  });

  it('folds a conversation\'s messages past the list as they come: no line place each, and its entry is the HAR entry', async () => {
    let got = 0;
    const s = http.createServer((_req, res) => res.end('x'));
    const wss = new WebSocketServer({ server: s });
    wss.on('connection', (ws) => ws.on('message', (data) => {
      got++;
      // A few answers, so the other direction is listed whole.
      if (got % 25_000 === 0) ws.send(`at ${got} ${String(data)}`);
    }));
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    cleanups.add(() => closeHttpAndWs(s, wss));
    const rec = await record(cleanups, `http://127.0.0.1:${(s.address() as AddressInfo).port}`);
    const live = rec.cap.live();
    let told = 0;
    live.on((e) => {
      if (e.type === 'message') told++;
    });
    const past = 300;
    const sent = MESSAGES_LISTED + past;
    const ws = new WebSocket(`${rec.cap.url.replace(/^http/, 'ws')}/flood`);
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    for (let i = 0; i < sent; i++) {
      // Text and binary, payloads that differ: the hash past the list covers each one.
      ws.send(i % 7 === 0 ? Buffer.from([i & 255, (i >> 8) & 255]) : `m${i}`);
      if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    // The server's answers too (one each 25,000): they may cross after the client's last message did.
    const answers = Math.floor(sent / 25_000);
    await until(() => got === sent && told === sent + answers, 'every message through the proxy and told');
    // The messages past the list took no line place (each listed one takes one; the start and the upgrade a few).
    assert.ok(live.placedLines < MESSAGES_LISTED + 20, `lines placed: ${live.placedLines}`);
    const seq = live.rows().find((r) => r.kind === 'websocket')!.seq;
    assert.equal(live.row(seq)!.messages, sent + answers);
    const open = live.entry(seq)!;
    assert.equal(open._webSocketMessages!.filter((m) => m.type === 'send').length, MESSAGES_LISTED);
    assert.deepEqual(open._bb!.unlisted, { request: past });
    ws.close(1000, 'bye');
    await until(() => live.row(seq)!.endedAt !== undefined, 'the conversation to end');
    const ended = live.entry(seq)!;
    // Asked twice: the fold's digest is taken from copies.
    assert.deepEqual(live.entry(seq), ended);
    const har = await rec.finish();
    assert.deepEqual(ended, har.log.entries.find((e) => e._bb!.seq === seq));
    assert.match(String(ended._bb!.unlistedHash!.request), /^hmac-sha256:/);
  });
});

describe('a live capture of a long run', () => {
  it('keeps its latest rows and the open ones: the older let go, counted, entries of those kept still the HAR\'s', async () => {
    const srv = await server();
    const rec = await record(cleanups, srv.target);
    const rows = 50;
    const live = rec.cap.live({ rows, keep: 5 });
    // What a page is told of each row, the last time (rows are told by seq, whatever compactions move).
    const told = new Map<number, LiveRow>();
    live.on((e) => {
      if (e.type === 'row') told.set(e.row.seq, e.row);
    });
    // A conversation open from the start, through every compaction.
    const ws = await openChat(rec);
    const echo = (text: string) => roundTrip(ws, text);
    // Longer than the messages an open conversation's records hold (WS_HELD): its records are read back, not held.
    for (let k = 0; k < 40; k++) await echo(`first ${k}`);
    const long = `/long?${'q'.repeat(5_000)}`;
    const total = 230;
    // Ten at a time: a turn's batch of records holds several exchanges, and a compaction may come within it.
    for (let i = 0; i < total; i += 10) {
      await Promise.all(Array.from({ length: 10 }, async (_, k) => (await request(`${rec.cap.url}${i + k === total - 3 ? long : `/item/${i + k}`}`)).body.text()));
      if (i % 40 === 0) await echo(`m${i}`);
    }
    await until(() => live.forgottenRows + live.rows().length === total + 1, 'every exchange a row or let go');
    const kept = live.rows();
    assert.ok(kept.length >= rows && kept.length < 2 * rows, `rows kept: ${kept.length}`);
    const chat = kept.find((r) => r.kind === 'websocket');
    assert.ok(chat, 'the open conversation kept');
    assert.equal(chat.messages, 2 * (40 + Math.ceil(total / 40)));
    // The latest rows, in seq order, the last one's URL cut for the row (its entry has it whole).
    assert.deepEqual(kept.map((r) => r.seq), [...kept.map((r) => r.seq)].sort((a, b) => a - b));
    const cut = kept.find((r) => r.url.includes('/long?'))!;
    assert.equal(cut.url.length, 2048);
    assert.ok(cut.url.endsWith('…'));
    assert.ok(live.entry(cut.seq)!.request.url.endsWith(long));
    await echo('after');
    ws.close(1000, 'bye');
    await until(() => live.row(chat.seq)!.state === 'closed', 'the conversation to end');
    const seen = new Map(live.rows().map((r) => [r.seq, live.entry(r.seq)]));
    // Every exchange was told as it ended, under its own seq.
    assert.equal(told.size, total + 1);
    for (const [seq, row] of told) assert.equal(row.state, row.kind === 'websocket' ? 'closed' : 'done', `#${seq}: ${row.url} ${row.state}`);
    const har = await rec.finish();
    assert.equal(har.log.entries.length, total + 1);
    for (const e of har.log.entries) assert.ok(told.get(e._bb!.seq)!.url.startsWith(e.request.url.slice(0, 100)), `#${e._bb!.seq}`);
    // A row let go has no entry in the view; the HAR has them all.
    const gone = har.log.entries.map((e) => e._bb!.seq).filter((s) => !seen.has(s));
    assert.equal(gone.length, live.forgottenRows);
    assert.equal(live.entry(gone[0]!), undefined);
    for (const e of har.log.entries) if (seen.has(e._bb!.seq)) assert.deepEqual(seen.get(e._bb!.seq), e);
  });
});
