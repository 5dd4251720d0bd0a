// What each HAR timing phase measures (issue 19: timings must measure the
// server, not bb or the client). A server of our own waits D ms after the
// request's last byte before its first response byte, then E ms before the
// last; the client (curl) sends its body S ms after its head. Timers fire
// late on a busy machine, so each phase is checked against what the server
// itself saw (its own clock, around its own writes): send ≥ S, wait ≈ its
// end of request → first write,
// receive ≈ first → last write. Each wrong reading (wait from the request's
// start, receive to the head) is off by S, D or E, far more than the slack.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';

const S = 150;
const D = 300;
const E = 400;
// The proxy sees each byte a little after the server sent it or before the
// server read it (one loopback hop, one turn of an event loop it shares with
// this test: tens of ms either way on a loaded machine). Well under S, D, E.
const UNDER = 120;
const OVER = 120;

function within(actual: number, expected: number, what: string): void {
  assert.ok(actual >= expected - UNDER && actual <= expected + OVER, `${what} = ${actual} ms, the server saw ${expected.toFixed(3)} ms (−${UNDER}, +${OVER})`);
}

describe('HAR timings at the proxy', () => {
  it('send is the client\'s upload, wait the server\'s time to first byte, receive its time to last byte', async () => {
    const cleanups = new Cleanups();
    try {
      const seen = { head: 0, end: 0, first: 0, last: 0 };
      const server = http.createServer((req, res) => {
        seen.head = performance.now();
        req.resume();
        req.on('end', async () => {
          seen.end = performance.now();
          await sleep(D);
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          seen.first = performance.now();
          res.write('first ');
          await sleep(E);
          seen.last = performance.now();
          res.end('last');
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      cleanups.add(() => new Promise((r) => server.close(r)));
      const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const rec = await record(cleanups, target);
      // curl in its own process (its timers are not this process's): the
      // body from stdin, chunked, its second part S ms after the first.
      const curl = spawn('curl', ['-sS', '--no-buffer', '-H', 'Content-Type: text/plain', '-H', 'Expect:', '-X', 'POST', '-T', '-', `http://127.0.0.1:${rec.port}/slow`], { stdio: ['pipe', 'pipe', 'inherit'] });
      cleanups.add(() => curl.kill());
      let body = '';
      curl.stdout.setEncoding('utf8').on('data', (c: string) => (body += c));
      curl.stdin.write('part one ');
      // The exchange starts when its head reaches the proxy: S ms from then.
      const started = Date.now();
      const deadline = started + 5000;
      while (rec.cap.stats().entries + rec.cap.stats().inFlight === 0 && Date.now() < deadline) await sleep(1);
      await sleep(S);
      curl.stdin.end('part two');
      const [code] = (await once(curl, 'exit')) as [number];
      assert.equal(code, 0);
      assert.equal(body, 'first last');
      const har = await rec.finish();
      const t = har.log.entries[0]!.timings;
      // The server's phases were really apart (D, E at least), and bb's match them.
      assert.ok(seen.first - seen.end >= D - 1 && seen.last - seen.first >= E - 1, JSON.stringify(seen));
      // The upload: at least the S ms the client took between its two parts
      // (the server cannot see when the client began: the proxy forwards the head).
      assert.ok(t.send >= S - UNDER && t.send < S + D, `send = ${t.send} ms, the client took ${S} ms or more`);
      within(t.wait, seen.first - seen.end, 'wait');
      within(t.receive, seen.last - seen.first, 'receive');
      assert.equal(har.log.entries[0]!.time, Math.round((t.send + t.wait + t.receive) * 1000) / 1000);
    } finally {
      await cleanups.run();
    }
  });
});
