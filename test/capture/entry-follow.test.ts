// Following a running capture's journal (what `bb shadow` compares): a long
// WebSocket conversation, its later records read back from the journal at
// its close (or, deferred, when the reader asks), is the entry the finished HAR holds; lines are cut by bytes, so
// a multi-byte character split across two reads stays whole.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { FactBus, type Fact } from '../../proxy/events.js';
import { followEntries, openCapture, redactorFor, type HarEntry, type WholeEntry } from '../../capture/index.js';
import { WS_HELD } from '../../capture/entry-assembly.js';
import { tailLines } from '../../capture/journal-follow.js';
import type { Har } from '../../capture/har.js';
import { exchange, TEST_T0 } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();

/** Records a 1,000-message WebSocket conversation among small exchanges while followEntries follows it (with `holdFilesUntil` when given). */
async function followLongConversation(name: string, holdFilesUntil?: Promise<unknown>) {
  const out = join(tmp.dir, name);
  const capture = await openCapture({ label: 'p', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, out });
  const bus = new FactBus();
  bus.on(capture.listener);
  const sock = () => new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
  const t = TEST_T0 + 1000;
  const x = 1_000;
  bus.emit({ type: 'exchange-started', exchangeId: x, connectionId: 'c9', time: t, scheme: 'http', method: 'GET', target: '/ws', httpVersion: '1.1', rawHeaders: ['Host', 'h:8080', 'Upgrade', 'websocket', 'Connection', 'Upgrade'], upstream: 'http://127.0.0.1:3001', upgrade: true } as Fact);
  bus.emit({ type: 'request-ended', exchangeId: x, time: t + 1, rawTrailers: [] });
  bus.emit({ type: 'upgrade-opened', exchangeId: x, time: t + 2, statusCode: 101, statusMessage: 'Switching Protocols', httpVersion: '1.1', rawHeaders: ['Upgrade', 'websocket', 'Connection', 'Upgrade'], client: sock(), upstream: sock() });
  const entries: Array<{ entry: HarEntry; whole?: WholeEntry }> = [];
  const stop = new AbortController();
  const following = followEntries({
    journalPath: `${out}.journal`, bodiesPath: `${out}.bodies`, onEntry: (entry, whole) => entries.push({ entry, ...(whole ? { whole } : {}) }),
    redactorFor: (h) => redactorFor(h, tmp.bbHome), pollMs: 5, signal: stop.signal, ...(holdFilesUntil ? { holdFilesUntil } : {}),
  });
  for (let i = 0; i < 1_000; i++) {
    bus.emit({ type: 'ws-message', exchangeId: x, time: t + 3 + i, direction: i % 2 ? 'receive' : 'send', opcode: 1, data: Buffer.from(`{"n":${i},"s":"été ✓"}`), frames: 1, compressed: false });
    if (i % 50 === 0) for (const f of exchange({ id: i + 1, status: 200, resHeaders: [], resBody: [Buffer.from(`ok ${i}`)] })) bus.emit(f);
    if (i % 100 === 0) await sleep(10);
  }
  bus.emit({ type: 'upgrade-closed', exchangeId: x, time: t + 2_000, code: 1000, reason: 'bye', by: 'client' });
  // Until the follower has the conversation (it ends last).
  for (let i = 0; i < 500 && !entries.some((e) => e.entry._webSocketMessages); i++) await sleep(10);
  stop.abort();
  return { out, capture, entries, following };
}

describe('followEntries', () => {
  it('builds a long WebSocket conversation as the finished HAR holds it', async () => {
    const { out, capture, entries, following } = await followLongConversation('long-ws.har');
    await following;
    await capture.close();
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    const followed = entries.find((e) => e.entry._webSocketMessages)!;
    const written = har.log.entries.find((e) => e._webSocketMessages)!;
    assert.equal(written._webSocketMessages!.length, 1_000);
    assert.equal(followed.whole, undefined);
    assert.deepEqual(followed.entry, written);
    assert.equal(entries.length, har.log.entries.length);
  });

  it('hands a long conversation over with its first messages, built whole when asked after following ended and the capture was finalized', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { out, capture, entries, following } = await followLongConversation('long-ws-deferred.har', held);
    // Following ended and the capture finalized (its journal gone) before the conversation is built whole.
    await following;
    await capture.close();
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    const written = har.log.entries.find((e) => e._webSocketMessages)!;
    const followed = entries.find((e) => e.entry._webSocketMessages)!;
    assert.equal(followed.entry._webSocketMessages!.length, WS_HELD);
    assert.deepEqual({ ...followed.entry, _webSocketMessages: [] }, { ...written, _webSocketMessages: [] });
    assert.equal(followed.whole!.messages, 1_000);
    // The follower's descriptors of the capture's journal and bodies: open until the last conversation handed over is built.
    const open = () => readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).includes('long-ws-deferred.har.');
      } catch {
        return false;
      }
    }).length;
    assert.equal(open(), 2);
    assert.deepEqual(followed.whole!.build(), written);
    assert.equal(open(), 0);
    // Short exchanges come whole, as before.
    assert.ok(entries.filter((e) => e !== followed).every((e) => e.whole === undefined));
    assert.equal(entries.length, har.log.entries.length);
    release();
  });
});

describe('tailLines', () => {
  it('gives each line its byte offset and length, a character cut between two reads whole', async () => {
    const path = join(tmp.dir, 'cut.journal');
    const first = Buffer.from('{"a":"café"}\n{"b":"✓✓"}\n');
    // The second line's last character split in two writes.
    writeFileSync(path, first.subarray(0, first.length - 4));
    const got: Array<[string, number, number]> = [];
    const stop = new AbortController();
    const tailing = tailLines(path, (line, at, bytes) => void got.push([line, at, bytes]), 5, stop.signal);
    await sleep(50);
    appendFileSync(path, first.subarray(first.length - 4));
    for (let i = 0; i < 200 && got.length < 2; i++) await sleep(5);
    stop.abort();
    await tailing;
    assert.deepEqual(got, [['{"a":"café"}', 0, 13], ['{"b":"✓✓"}', 14, 14]]);
    for (const [line, at, bytes] of got) assert.equal(first.toString('utf8', at, at + bytes), line);
  });
});
