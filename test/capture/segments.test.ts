// A capture written as segments (capture/segments.ts), through a real
// recording proxy and a real server on loopback: cut by size, each segment a
// valid finished HAR, `_bb.seq` running on across them, an exchange kept in
// the segment it started in however long it lasts, and a later segment
// written while an earlier one still waits for its long exchange.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRecording } from '../../scenario/record/index.js';
import { segmentPath } from '../../capture/index.js';
import { openSegmentedCapture } from '../../capture/segments.js';
import { FactBus } from '../../proxy/events.js';
import { exchange } from './capture-harness.js';
import type { Har } from '../../capture/har.js';
import { assertValidHar } from '../helpers/har-schema.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
const servers: Server[] = [];
after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** Answers /long when the test says so. */
let releaseLong = (): void => {};
async function upstream(): Promise<string> {
  const s = createServer((req, res) => {
    const answer = () => res.end('x'.repeat(1500));
    if (req.url === '/long') releaseLong = answer;
    else answer();
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a segmented capture', () => {
  it('cuts by size, keeps a long exchange in its segment, writes later segments first when they are done', async () => {
    const out = join(tmp.dir, 'seg', 'cap.har');
    const finished: number[] = [];
    const rec = await startRecording({
      target: await upstream(),
      out,
      bbHome: tmp.bbHome,
      segments: { rotate: { bytes: 3000 }, onFinished: (index) => finished.push(index) },
    });
    let long: Promise<string> | undefined;
    try {
      long = fetch(`${rec.url}/long`).then((r) => r.text());
      for (let i = 0; i < 8; i++) {
        await (await fetch(`${rec.url}/r${i}`)).text();
        // The size is measured every 100 ms.
        await sleep(130);
      }
      // A later segment is written while segment 1 waits for /long (the machine may be slow: up to 20 s).
      for (let t = 0; t < 200 && finished.length === 0; t++) await sleep(100);
      assert.ok(finished.length >= 1 && !finished.includes(1), `a later segment written, segment 1 held by its long exchange: ${finished}`);
      assert.ok(existsSync(`${segmentPath(out, 1)}.journal`), 'segment 1 still a journal');
    } finally {
      releaseLong();
      await long;
      await rec.close();
    }
    const count = Math.max(...finished);
    assert.ok(count >= 3, `3+ segments: ${finished}`);
    assert.deepEqual([...finished].sort((a, b) => a - b), Array.from({ length: count }, (_, i) => i + 1));
    const seqs: number[] = [];
    for (let k = 1; k <= count; k++) {
      assert.ok(!existsSync(`${segmentPath(out, k)}.journal`), `segment ${k}: no journal left`);
      const har = JSON.parse(readFileSync(segmentPath(out, k), 'utf8')) as Har;
      assertValidHar(har);
      assert.equal(har.log._bb?.complete, true);
      const mine = har.log.entries.map((e) => e._bb!.seq!).sort((a, b) => a - b);
      if (seqs.length && mine.length) assert.ok(mine[0]! > seqs[seqs.length - 1]!, `segment ${k} after ${k - 1}`);
      seqs.push(...mine);
      if (k === 1) assert.ok(har.log.entries.some((e) => e.request.url.endsWith('/long')), 'the long exchange is in the segment it started in');
    }
    assert.equal(seqs.length, 9);
    assert.equal(new Set(seqs).size, 9);
  });
});

describe('a segmented capture redacting by value', () => {
  it('hands the values it remembered on to the next segment: a cookie set in one is hidden where the next reuses it', async () => {
    const sid = 'Zk3v9QpL2mXw8RtY6nBc4HdJ0aFs7GeU';
    const out = join(tmp.dir, 'seg-values', 'cap.har');
    // Segment 2 opens at its first exchange, once segment 1 has seen the cookie set.
    const cap = openSegmentedCapture({
      out, label: 'l', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: tmp.bbHome,
      pick: (fact) => (fact.target.startsWith('/two') ? 2 : 1), mayFinish: () => false,
    });
    const bus = new FactBus();
    bus.on(cap.listener);
    for (const f of exchange({ target: '/login', status: 200, resHeaders: ['Set-Cookie', `sid=${sid}; Path=/`] })) bus.emit(f);
    for (const f of exchange({ at: 10, target: `/two?s=${sid}`, reqHeaders: ['Host', 'x', 'Content-Type', 'application/json'], reqBody: [Buffer.from(JSON.stringify({ session: sid }))], status: 200 })) bus.emit(f);
    bus.emit({ type: 'flush' });
    assert.ok(!readFileSync(`${segmentPath(out, 2)}.journal`, 'utf8').includes(sid), 'its journal never held it');
    await cap.close();
    const [one, two] = [1, 2].map((k) => JSON.parse(readFileSync(segmentPath(out, k), 'utf8')) as Har);
    const p = /sid=(<redacted:[0-9a-f]{8}>)/.exec(one!.log.entries[0]!.response.headers[0]!.value)![1]!;
    const reused = two!.log.entries[0]!.request;
    assert.ok(reused.url.endsWith(`/two?s=${p}`), reused.url);
    assert.equal(reused.postData!.text, JSON.stringify({ session: p }));
  });
});
