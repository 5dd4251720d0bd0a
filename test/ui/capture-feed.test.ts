// The capture view's feeds over a real capture (a real server and client on
// loopback through a recording proxy): an exchange opened while its event
// stream grows is sent again, each time built from the journal, at a pace set
// by what building it costs (paced.ts), and the last one sent is the HAR's.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { captureFeeds } from '../../ui/index.js';
import type { UiEvent } from '../../ui/server.js';
import { LIVE_ROWS, type HarEntry } from '../../capture/index.js';
import WebSocket from 'ws';
import { ENTRY_MESSAGES, ENTRY_MESSAGES_MAX, exchangesFeed } from '../../ui/capture-feed.js';
import { Cleanups } from '../helpers/cleanups.js';
import { echoServer, record, waitUntil as until } from '../helpers/recording.js';
import { pushedStream } from '../helpers/servers.js';
import { assertPaced, followStream, pushTicks, timedEntries } from '../helpers/live-feeds.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

describe("the exchange feed (an exchange opened in the view)", () => {
  it('sends a growing stream again paced by what building it costs, ending with the HAR entry', async () => {
    const { url, push, end, close } = await pushedStream();
    cleanups.add(close);
    const rec = await record(cleanups, url);
    const live = rec.cap.live();
    const { live: timed, builds } = timedEntries(live);
    const feed = captureFeeds([{ label: 'one', live: timed }]).find((f) => f.name === 'exchange')!;
    await followStream(cleanups, `${rec.cap.url}/ticks`);
    await until(() => live.rows().length === 1, 'the stream listed');
    const seq = live.rows()[0]!.seq;
    const sent: UiEvent[] = [];
    const stop = feed.open(`one/${seq}`, (e) => sent.push(e))!;
    cleanups.add(stop);
    // 40,000 events of ~100 bytes, 2,000 every 50 ms: each build reads the whole stream so far.
    const events = 40_000;
    await pushTicks(push, events);
    end();
    const entries = () => sent.filter((e) => e.type === 'entry').map((e) => e['entry'] as HarEntry);
    await until(() => entries().at(-1)?._eventSourceMessages?.length === events && entries().at(-1)?._bb?.inFlight === undefined, 'the ended stream sent', 60_000);
    assert.ok(builds.length >= 2, `builds: ${builds.length}`);
    assertPaced(builds, 200, 9, 'build');
    assert.ok(builds.some((b) => b.end - b.start > 200 / 9), 'some build cost more than 22 ms (else the spacing is the 200 ms floor alone)');
    stop();
    const har = await rec.finish();
    assert.deepEqual(entries().at(-1), har.log.entries[0]);
  });

  it('the exchanges list says when older rows are not listed: the live capture let them go', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise((r) => server.close(r)));
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const live = rec.cap.live({ rows: 20, keep: 5 });
    for (let i = 0; i < 60; i++) await (await fetch(`${rec.cap.url}/item/${i}`)).text();
    await until(() => live.forgottenRows + live.rows().length === 60, 'every exchange a row or let go');
    const feed = captureFeeds([{ label: 'one', live }]).find((f) => f.name === 'exchanges')!;
    const sent: UiEvent[] = [];
    feed.open(undefined, (e) => sent.push(e))!();
    assert.deepEqual(sent.filter((e) => e.type === 'window').map((e) => [e['label'], e['limit'], e['cut']]), [['one', LIVE_ROWS, true]]);
    assert.deepEqual(sent.filter((e) => e.type === 'row').map((e) => (e['row'] as { seq: number }).seq), live.rows().map((r) => r.seq));
    assert.ok(live.rows().length < 40 && live.rows().at(-1)!.url.endsWith('/item/59'));
  });

  it("opens a conversation with its latest messages (a page may ask for up to 10,000), the earlier ones counted, then the new ones", async () => {
    const echo = await echoServer(cleanups);
    const rec = await record(cleanups, echo.url);
    const live = rec.cap.live();
    const ws = new WebSocket(`${rec.cap.url.replace(/^http/, 'ws')}/room`);
    cleanups.add(() => ws.terminate());
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    for (let i = 0; i < 6000; i++) {
      ws.send(`m${i}`);
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    await until(() => live.rows()[0]?.messages === 12_000, 'every message and its echo', 20_000);
    const seq = live.rows()[0]!.seq;
    const whole = live.entry(seq)!._webSocketMessages!;
    const feed = captureFeeds([{ label: 'one', live }]).find((f) => f.name === 'exchange')!;
    const opened = (key: string): UiEvent[] => {
      const sent: UiEvent[] = [];
      const stop = feed.open(key, (e) => sent.push(e))!;
      cleanups.add(stop);
      return sent;
    };
    for (const [key, window] of [[`one/${seq}`, ENTRY_MESSAGES], [`one/${seq}~5000`, 5000], [`one/${seq}~99999`, ENTRY_MESSAGES_MAX], [`one/${seq}~0`, 1]] as const) {
      const [event] = opened(key);
      assert.equal(event!.type, 'entry');
      assert.equal(event!['window'], window, key);
      assert.equal(event!['earlier'], whole.length - window, key);
      assert.deepEqual((event!['entry'] as HarEntry)._webSocketMessages, whole.slice(-window), key);
    }
    const later = opened(`one/${seq}`);
    // Opened by a page asking for the most (the server lets the entry be made over turns): a round trip relayed while
    // it is made follows it, not counted among the earlier ones.
    const stepped: UiEvent[] = [];
    let made = false;
    const stop = feed.open(`one/${seq}~${ENTRY_MESSAGES_MAX}`, (e) => stepped.push(e), () => () => void (made = true))!;
    cleanups.add(stop);
    assert.equal(made, false, 'not made in one turn');
    const reply = new Promise((r) => ws.once('message', r));
    ws.send('after');
    await reply;
    assert.equal(made, false, 'the proxy relayed a round trip while the entry was made');
    await until(() => later.filter((e) => e.type === 'message').length === 2, 'the new message and its echo');
    assert.deepEqual(later.filter((e) => e.type === 'message').map((e) => (e['message'] as { data: string }).data), ['after', 'after']);
    await until(() => made && stepped.filter((e) => e.type === 'message').length === 2, 'the entry, then the round trip');
    assert.deepEqual(stepped.map((e) => e.type).filter((t) => t !== 'row'), ['entry', 'message', 'message']);
    const [entry] = stepped;
    assert.equal(entry!['earlier'], whole.length - ENTRY_MESSAGES_MAX);
    assert.deepEqual((entry!['entry'] as HarEntry)._webSocketMessages, whole.slice(-ENTRY_MESSAGES_MAX));
    // Closed: the entry comes again (its close) without its messages, which the page got one by one.
    ws.close(1000, 'bye');
    await until(() => later.some((e) => e.type === 'entry' && e['messagesKept'] === true), 'the closed entry');
    const closed = later.find((e) => e.type === 'entry' && e['messagesKept'] === true)!;
    assert.deepEqual((closed['entry'] as HarEntry)._bb!.close, { ...(closed['entry'] as HarEntry)._bb!.close, code: 1000, reason: 'bye', by: 'client' });
    assert.deepEqual((closed['entry'] as HarEntry)._webSocketMessages, []);
    assert.equal(closed['earlier'], whole.length + 4, 'every message listed: the round trip and both closes too');
    assert.deepEqual(later.filter((e) => e.type === 'message').map((e) => (e['message'] as { opcode: number }).opcode), [1, 1, 8, 8]);
  });

  it('makes the list of rows over turns while the proxy records: a change of a row not sent yet is in that row, later ones follow', async () => {
    const held: Array<() => void> = [];
    const server = http.createServer((req, res) => {
      if (req.url?.startsWith('/hold')) return void held.push(() => res.end('late'));
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise((r) => server.close(r)));
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const live = rec.cap.live();
    const answers: Array<Promise<string>> = [];
    const ask = (path: string) => answers.push(fetch(`${rec.cap.url}${path}`).then((r) => r.text()));
    // An exchange open from the start (listed first), 2,000 finished ones, one open at the end (listed last).
    ask('/hold-first');
    await until(() => held.length === 1, 'the first exchange open');
    for (let i = 0; i < 2000; i += 50) await Promise.all(Array.from({ length: 50 }, async (_, k) => (await fetch(`${rec.cap.url}/item/${i + k}`)).text()));
    ask('/hold-last');
    await until(() => held.length === 2 && live.rows().length === 2002, 'the last exchange open');
    const [first, last] = [live.rows()[0]!.seq, live.rows().at(-1)!.seq];

    // A row a turn (limits): the list takes ~2,000 turns; both held exchanges end meanwhile, and a new one comes.
    let made = false;
    let endedWhileMade: boolean[] = [];
    live.on((e) => {
      if (e.type === 'row' && e.row.state === 'done' && (e.row.seq === first || e.row.seq === last)) endedWhileMade.push(!made);
    });
    const sent: UiEvent[] = [];
    const stop = exchangesFeed([{ label: 'one', live }], { rowsStep: 1, turnMs: 0 }).open(undefined, (e) => sent.push(e), () => () => void (made = true))!;
    cleanups.add(stop);
    assert.equal(made, false, 'not made in one turn');
    for (const release of held) release();
    ask('/after');
    assert.deepEqual(await Promise.all(answers), ['late', 'late', 'ok']);
    await until(() => made && live.rows().length === 2003 && sent.some((e) => e.type === 'row' && (e['row'] as { seq: number }).seq === live.rows().at(-1)!.seq), 'the list, then the new row');
    assert.deepEqual(endedWhileMade, [true, true], 'both held exchanges ended while the list was made');
    const rows = sent.filter((e) => e.type === 'row').map((e) => e['row'] as { seq: number; state: string });
    const madeRows = rows.slice(0, 2002);
    assert.deepEqual(madeRows.map((r) => r.seq), live.rows().slice(0, 2002).map((r) => r.seq), 'the list in seq order');
    // The first row was sent open, then its end followed; the last one was sent as it stood when made: ended, once.
    assert.equal(madeRows[0]!.state, 'waiting');
    assert.equal(madeRows.at(-1)!.state, 'done');
    assert.equal(rows.filter((r) => r.seq === last).length, 1, 'the last row sent once');
    const later = rows.slice(2002);
    assert.ok(later.some((r) => r.seq === first && r.state === 'done'), 'the first row\'s end follows the list');
    // The page ends where the capture is.
    const final = new Map(rows.map((r) => [r.seq, r.state]));
    assert.deepEqual([...final], live.rows().map((r) => [r.seq, r.state]));
  });
});
