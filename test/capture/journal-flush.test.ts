// One loop turn can carry hundreds of thousands of records: libuv reads a
// socket up to 32 times a turn (2 MB), 700,000 one-byte WebSocket messages.
// The journal held their lines, the views of their bytes and a live view's
// records until the turn's end (a capture of 3M such messages peaked at
// 460 MB, 650 MB with --ui). It now writes once a turn has queued 1 MiB of
// lines or 16,384 bodies, so what waits for the turn's end stays bounded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { FactBus, type Fact } from '../../proxy/events.js';
import { openCapture } from '../../capture/index.js';
import type { Har } from '../../capture/har.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
const T = 1764625000123.25;
const MESSAGES = 60_000;

describe('a turn of many records', () => {
  it('is written as it goes, not only at the turn\'s end, and the live view follows it', async () => {
    const out = join(tmp.dir, 'flood.har');
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome });
    const live = capture.live();
    const bus = new FactBus();
    bus.on(capture.listener);
    const sock = () => new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
    bus.emit({ type: 'exchange-started', exchangeId: 1, connectionId: 'c1', time: T, scheme: 'http', method: 'GET', target: '/feed', httpVersion: '1.1', rawHeaders: ['Upgrade', 'websocket'], upstream: 'http://127.0.0.1:3001', upgrade: true } as Fact);
    bus.emit({ type: 'request-ended', exchangeId: 1, time: T, rawTrailers: [] });
    bus.emit({ type: 'upgrade-opened', exchangeId: 1, time: T + 1, statusCode: 101, statusMessage: 'Switching Protocols', httpVersion: '1.1', rawHeaders: ['Upgrade', 'websocket'], client: sock(), upstream: sock() });
    // All in this one turn, as a socket's reads of one turn would bring them.
    for (let i = 0; i < MESSAGES; i++) {
      bus.emit({ type: 'ws-message', exchangeId: 1, time: T + 2 + i / 1000, direction: 'receive', opcode: 1, data: Buffer.from(String(i % 10)), frames: 1, compressed: false });
    }
    const lines = readFileSync(`${out}.journal`, 'utf8').split('\n').filter((l) => l.startsWith('{"r":"wsm"'));
    // Written at least every 16,384 messages (their bodies) within the turn; before, none until it ended.
    assert.ok(lines.length >= MESSAGES - 16_384, `${lines.length} of ${MESSAGES} messages in the journal within the turn`);
    assert.ok(statSync(`${out}.bodies`).size >= lines.length, 'their bytes before them');
    assert.ok(live.rows()[0]!.messages >= MESSAGES - 16_384, 'the live view is told as the lines are written');
    await new Promise((r) => setImmediate(r));
    await capture.close();
    assert.equal(bus.listenerErrors.length, 0);
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    const messages = har.log.entries[0]!._webSocketMessages!;
    assert.equal(messages.length, MESSAGES);
    assert.deepEqual(messages.slice(0, 12).map((m) => m.data), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '1']);
  });
});
