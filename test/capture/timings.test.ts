// What each HAR timing phase measures (issue 19: timings must measure the
// server, not bb or the client). A server of our own waits D ms after the
// request's last byte before its first response byte, then E ms before the
// last; the client sends its body S ms after its head. At the proxy:
// send ≈ S (first → last request byte from the client), wait ≈ D (last
// request byte forwarded → first response byte back), receive ≈ E (first →
// last response byte).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';

const S = 60;
const D = 80;
const E = 120;
// Timers fire late, never early, but a phase's start is seen a little after
// the byte that began it left (the proxy shares this process's loop): a few
// ms under, more over.
const UNDER = 6;
const OVER = 40;

function within(actual: number, expected: number, what: string): void {
  assert.ok(actual >= expected - UNDER && actual <= expected + OVER, `${what} = ${actual} ms, expected ${expected} ms (−${UNDER}, +${OVER})`);
}

describe('HAR timings at the proxy', () => {
  it('send is the client\'s upload, wait the server\'s time to first byte, receive its time to last byte', async () => {
    const cleanups = new Cleanups();
    try {
      const server = http.createServer((req, res) => {
        req.resume();
        req.on('end', async () => {
          await sleep(D);
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.write('first ');
          await sleep(E);
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
      const curl = spawn('curl', ['-sS', '--no-buffer', '-H', 'Content-Type: text/plain', '-X', 'POST', '-T', '-', `http://127.0.0.1:${rec.port}/slow`], { stdio: ['pipe', 'pipe', 'inherit'] });
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
      within(t.send, S, 'send');
      within(t.wait, D, 'wait');
      within(t.receive, E, 'receive');
      assert.equal(har.log.entries[0]!.time, Math.round((t.send + t.wait + t.receive) * 1000) / 1000);
    } finally {
      await cleanups.run();
    }
  });
});
