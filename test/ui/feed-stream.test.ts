// A page that stops reading its feed must not make bb hold its updates
// without bound: past the cap the page falls behind (the feed stops for it,
// what it missed is dropped), and when it reads again it gets
// {type:"resync"} and a snapshot of the state as it is then. A page that
// reads meanwhile gets every event, in order. Real loopback sockets: a raw
// one that stops reading, undici for the page that keeps up.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startUi, type UiServer } from '../../ui/index.js';
import type { UiEvent, UiFeed } from '../../ui/server.js';
import type { FeedStat } from '../../ui/feed-stream.js';
import { openStalledPage } from '../helpers/stalled-page.js';

const CAP = 64 * 1024;
const EVENTS = 4000;
// 2 KB an event: 8 MB in all, past the cap and the kernel's buffers on both ends.
const FILLER = 'x'.repeat(2048);

/** A counter feed: its snapshot is the count so far; each tick is one event. */
function counterFeed(): UiFeed & { tick(): void } {
  const sends = new Set<(e: UiEvent) => void>();
  let n = 0;
  return {
    name: 'counter',
    open(_key, send) {
      send({ type: 'count', n });
      sends.add(send);
      return () => sends.delete(send);
    },
    tick() {
      n++;
      for (const send of sends) send({ type: 'tick', n, filler: FILLER });
    },
  };
}

async function stats(ui: UiServer): Promise<{ max: number; pages: FeedStat[] }> {
  const res = await request(ui.url + 'api/feeds');
  assert.equal(res.statusCode, 200);
  return (await res.body.json()) as { max: number; pages: FeedStat[] };
}

describe('a feed whose page stops reading', () => {
  let ui: UiServer;
  const feed = counterFeed();
  before(async () => {
    ui = await startUi({ title: 'bb test', views: [], feeds: [feed], feedQueueMax: CAP });
  });
  after(() => ui.close());

  it('holds at most the cap for it, keeps serving a page that reads, and resyncs the slow page from a snapshot when it reads again', async () => {
    const stalled = await openStalledPage(ui.url, '/feed/counter');
    // The page that keeps up reads every event as it comes.
    const reader = await request(ui.url + 'feed/counter');
    let seen = '';
    const readAll = (async () => {
      for await (const chunk of reader.body) {
        seen += String(chunk);
        if (seen.includes(`"n":${EVENTS},`)) break;
      }
    })();
    for (let i = 0; i < EVENTS; i++) {
      feed.tick();
      // A turn of the event loop now and then, as traffic comes.
      if (i % 20 === 19) await new Promise((r) => setImmediate(r));
    }
    await readAll;
    reader.body.destroy();
    const ticks = [...seen.matchAll(/"type":"tick","n":(\d+)/g)].map((m) => Number(m[1]));
    assert.deepEqual(ticks, Array.from({ length: EVENTS }, (_, i) => i + 1), 'the page that reads gets every event, in order');
    assert.doesNotMatch(seen, /resync/);

    const { max, pages } = await stats(ui);
    assert.equal(max, CAP);
    const slow = pages.find((p) => p.feed === 'counter');
    assert.ok(slow, JSON.stringify(pages));
    assert.equal(slow.state, 'behind', `the stalled page fell behind: ${JSON.stringify(slow)}`);
    assert.ok(slow.most <= CAP, `queued for the stalled page at most ${slow.most} bytes, the cap is ${CAP}`);
    assert.ok(slow.queued <= CAP);

    stalled.resume();
    await stalled.waitFor(new RegExp(`"type":"resync"\\}\\n\\n[\\s\\S]*"type":"count","n":${EVENTS}\\}`));
    const after = await stats(ui);
    assert.deepEqual(after.pages.map((p) => [p.state, p.resyncs]), [['live', 1]]);
    // Once resynced it follows again.
    feed.tick();
    await stalled.waitFor(new RegExp(`"type":"tick","n":${EVENTS + 1},`));
    stalled.close();
  });
});

describe('a feed with a big snapshot', () => {
  const ROWS = 200_000;
  const TICKS = 40;
  const sends = new Set<(e: UiEvent) => void>();
  const big: UiFeed = {
    name: 'big',
    open(_key, send) {
      for (let n = 0; n < ROWS; n++) send({ type: 'row', n, text: 'r'.repeat(80) });
      sends.add(send);
      return () => sends.delete(send);
    },
  };
  let ui: UiServer;
  before(async () => {
    ui = await startUi({ title: 'bb test', views: [], feeds: [big], feedQueueMax: CAP });
  });
  after(() => ui.close());

  it('writes it a slice at a time: the server answers meanwhile, and updates sent meanwhile follow it, in order, not held against the cap', async () => {
    const page = await request(ui.url + 'feed/big');
    assert.equal(page.statusCode, 200);
    // Updates while the snapshot goes out: 80 KB in all, past the 64 KB cap.
    for (let n = 1; n <= TICKS; n++) for (const send of sends) send({ type: 'tick', n, filler: FILLER, ...(n === TICKS ? { last: 'LAST-TICK' } : {}) });
    const during = (await stats(ui)).pages.find((p) => p.feed === 'big');
    const chunks: string[] = [];
    let tail = '';
    for await (const chunk of page.body) {
      const text = String(chunk);
      chunks.push(text);
      if ((tail + text).includes('LAST-TICK') || (tail + text).includes('"type":"resync"')) break;
      tail = text.slice(-16);
    }
    page.body.destroy();
    const seen = chunks.join('');
    const whole = Buffer.byteLength(seen.slice(0, seen.indexOf('data: {"type":"tick"')));
    assert.ok(during && during.snapshot < whole / 2, `the server answered while the snapshot went out: ${during?.snapshot} of its ${whole} bytes written then`);
    const events = [...seen.matchAll(/^data: \{"type":"(row|tick)","n":(\d+)/gm)].map((m) => `${m[1]} ${m[2]}`);
    const expected = [...Array.from({ length: ROWS }, (_, n) => `row ${n}`), ...Array.from({ length: TICKS }, (_, n) => `tick ${n + 1}`)];
    assert.equal(events.length, expected.length);
    assert.ok(events.every((e, i) => e === expected[i]), 'the snapshot whole, then the updates, in order');
    assert.doesNotMatch(seen, /resync/);
  });
});

describe('a feed that makes its snapshot over turns', () => {
  // Each part of the snapshot is past the cap: a snapshot is never held against it, however long it takes to make.
  const PART = 'p'.repeat(100 * 1024);
  const made: UiFeed = {
    name: 'made',
    open(_key, send, snapshotGoesOn) {
      send({ type: 'part', n: 0, text: PART });
      const done = snapshotGoesOn!();
      setImmediate(() => {
        send({ type: 'part', n: 1, text: PART });
        setTimeout(() => {
          send({ type: 'part', n: 2, text: PART });
          done();
          send({ type: 'tick', n: 1 });
        }, 20);
      });
      return () => undefined;
    },
  };
  let ui: UiServer;
  before(async () => {
    ui = await startUi({ title: 'bb test', views: [], feeds: [made], feedQueueMax: CAP });
  });
  after(() => ui.close());

  it('sends what the feed makes meanwhile as the snapshot, then its updates', async () => {
    const page = await request(ui.url + 'feed/made');
    let seen = '';
    let pages: FeedStat[] = [];
    for await (const chunk of page.body) {
      seen += String(chunk);
      if (!seen.includes('"type":"tick"') && !seen.includes('"type":"resync"')) continue;
      // Asked while the page is open (leaving the loop ends it).
      pages = (await stats(ui)).pages;
      break;
    }
    assert.deepEqual([...seen.matchAll(/"type":"(part|tick)","n":(\d)/g)].map((m) => `${m[1]} ${m[2]}`), ['part 0', 'part 1', 'part 2', 'tick 1']);
    assert.doesNotMatch(seen, /resync/);
    const stat = pages.find((p) => p.feed === 'made');
    assert.ok(stat && stat.snapshot > 3 * PART.length, `the three parts are the snapshot: ${stat?.snapshot} bytes`);
  });
});
