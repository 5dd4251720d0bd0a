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
      // The original's client left after two events; a third may cross first when the machine is busy (30 ms apart).
      const [got, copied] = [eventsOf(original)[0]!, eventsOf(replay)[0]!];
      assert.ok(got >= 2 && copied > got, `original ${got}, replay ${copied}`);
      assert.equal((await diffCaptures(original, replay)).verdict, 'match');
      assert.equal((await diffCaptures(replay, original)).verdict, 'match');
    });
  }
});

// Two independent recordings, neither a reference: each client left after two events, and how many more crossed
// before its reset reached the server is timing (a server that sends in bursts puts them all across).
describe('two recordings of a client that left an event stream after a few events', () => {
  const record = async (name: string, h2: boolean, target: string, events: number) => {
    const rec = await startRecording({ target, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    await readSome(rec.url, h2, events);
    return rec.close(2000);
  };
  for (const h2 of [false, true]) {
    const over = h2 ? 'h2' : 'HTTP/1.1';
    it(`compare as far as both got: MATCH however many more crossed; a changed event within that is still a change (${over})`, async () => {
      const paced = await record(`paced-${over}`, h2, await feed(cleanups, h2), 2);
      const burst = await record(`burst-${over}`, h2, await feed(cleanups, h2, 0, false, true), 2);
      // Each client left after two events; the paced side may get a third across first when the machine is busy.
      const [slow, fast] = [eventsOf(paced)[0]!, eventsOf(burst)[0]!];
      assert.ok(slow >= 2 && fast > slow, `paced ${slow}, burst ${fast}`);
      assert.equal((await diffCaptures(paced, burst)).verdict, 'match');
      assert.equal((await diffCaptures(burst, paced)).verdict, 'match');
      // The new build's extra first event: within what both got, so it shows.
      const changed = await record(`changed-${over}`, h2, await feed(cleanups, h2, 0, true, true), 2);
      assert.equal((await diffCaptures(burst, changed)).verdict, 'diff');
    });
  }

  it('a stream read to its end against one its client left is compared whole (the events the other client never got are removed)', async () => {
    const whole = await record('whole', false, await feed(cleanups, false), 10);
    const left = await record('left', false, await feed(cleanups, false), 2);
    const r = await diffCaptures(whole, left);
    assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['real removed response.events[]']);
  });
});
