// The compare loop (diff/compare-loop.ts) against a reference side: bb
// replay reads a stream as far as the original's client did, then leaves; a
// target that sends its events at once puts more of them across its recording
// proxy first. Such a copy compares as far as the original got (asFarAs),
// either way round.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { replayCapture, startRecording } from '../../scenario/index.js';
import { diffCaptures } from '../../diff/index.js';
import { tempDir } from '../helpers/tmp.js';
import { Cleanups } from '../helpers/cleanups.js';
import { eventsOf, feed, readSome } from '../helpers/sse-feed.js';

const tmp = tempDir();
const cleanups = new Cleanups();
after(() => cleanups.run());

describe('bb replay of an event stream its client left after a few events', () => {
  for (const h2 of [false, true]) {
    const over = h2 ? 'h2' : 'HTTP/1.1';
    it(`a replay whose copy ran ahead compares as far as the original got (${over})`, async () => {
      const rec = await startRecording({ target: await feed(cleanups, h2), out: tmp.path(`orig-${over}.har`), label: 'orig', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
      await readSome(rec.url, h2, 2);
      const original = await rec.close(2000);
      const replay = tmp.path(`replay-${over}.har`);
      await replayCapture(original, { target: await feed(cleanups, h2, 0, false, true), out: replay, bbHome: tmp.bbHome });
      assert.deepEqual([eventsOf(original), eventsOf(replay)[0]! > 2], [[2], true], String(eventsOf(replay)));
      assert.equal((await diffCaptures(original, replay)).verdict, 'match');
      assert.equal((await diffCaptures(replay, original)).verdict, 'match');
    });
  }
});
