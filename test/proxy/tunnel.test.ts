// Bad input to bb in forward mode (an HTTP(S)_PROXY for clients): malformed
// CONNECT targets, origin-form requests, tunnels that carry garbage or a
// broken TLS handshake, clients that vanish mid-tunnel. The offender gets an
// HTTP error or a closed connection, a good client alongside is unaffected,
// and the refusals are in the HAR with `_bb.error`.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FREED_HOST, freedPort } from '../helpers/freed-port.js';
import { rawClient } from '../helpers/raw.js';
import { garbageBytes } from '../helpers/scripted-upstream.js';
import { Cleanups } from '../helpers/cleanups.js';
import { Steps } from '../helpers/steps.js';
import { alongside, echoServer, record, waitUntil, type Recording } from '../helpers/recording.js';

describe('bad input to the forward proxy', () => {
  const cleanups = new Cleanups();
  let rec: Recording;
  let echo: { url: string; port: number };
  let closedPort: number;
  let good = 0;

  before(async () => {
    echo = await echoServer(cleanups);
    // On 127.0.0.3: a server of another test that gets the same port number meanwhile does not answer there.
    closedPort = await freedPort();
    rec = await record(cleanups, 'http://unused.invalid', { mode: 'forward' });
  });
  after(() => cleanups.run());

  // Each offence runs once, with a good client alongside, by its own test or by the HAR test, which needs them all.
  const steps = new Steps();
  const offend = (fn: () => Promise<void>) => steps.add(async () => {
    good += await alongside(rec.port, fn, 'fwd-good', echo.url);
  });

  /** Sends bytes on a fresh connection; resolves with what came back once bb closed it. */
  async function exchangeRaw(bytes: string | Buffer, then?: (c: Awaited<ReturnType<typeof rawClient>>) => Promise<void>): Promise<string> {
    const c = await rawClient(rec.port);
    c.send(bytes);
    if (then) await then(c);
    const timer = setTimeout(() => c.socket.destroy(), 5000);
    await c.closed;
    clearTimeout(timer);
    return c.bytes().toString('latin1');
  }

  const badConnects = ['CONNECT nohost HTTP/1.1', 'CONNECT :443 HTTP/1.1', 'CONNECT 127.0.0.1:99999 HTTP/1.1', 'CONNECT [::1 HTTP/1.1', 'CONNECT host:port:extra HTTP/1.1'];
  for (const line of badConnects) {
    it(`refuses '${line}' with a 4xx and keeps serving`, offend(async () => {
      const reply = await exchangeRaw(`${line}\r\nHost: x\r\n\r\n`);
      assert.match(reply, /^HTTP\/1\.1 4\d\d /, reply.slice(0, 200));
    }));
  }

  it('answers an origin-form request (not a proxy request) with an error, not with some server', offend(async () => {
    const reply = await exchangeRaw('GET /not-absolute HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 (4\d\d|502) /);
  }));

  it('answers 502 for an absolute-form request to a port nobody listens on', offend(async () => {
    const reply = await exchangeRaw(`GET http://${FREED_HOST}:${closedPort}/x HTTP/1.1\r\nHost: ${FREED_HOST}:${closedPort}\r\nConnection: close\r\n\r\n`);
    assert.match(reply, /^HTTP\/1\.1 502 /);
  }));

  it('closes a tunnel whose TLS handshake is garbage', offend(async () => {
    await exchangeRaw(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nHost: 127.0.0.1:${echo.port}\r\n\r\n`, async (c) => {
      await waitUntil(() => c.bytes().includes('\r\n\r\n'), 'the 200 to CONNECT');
      assert.match(c.bytes().toString('latin1'), /^HTTP\/1\.1 200 /);
      // A TLS record header (handshake, TLS 1.0) followed by junk.
      c.send(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x40]), garbageBytes(64, 11)]));
    });
  }));

  it('passes on (or closes) a tunnel that carries neither TLS nor HTTP', offend(async () => {
    await exchangeRaw(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nHost: 127.0.0.1:${echo.port}\r\n\r\n`, async (c) => {
      await waitUntil(() => c.bytes().includes('\r\n\r\n'), 'the 200 to CONNECT');
      c.send(garbageBytes(200, 12));
      await new Promise((r) => setTimeout(r, 100));
      c.socket.end();
    });
  }));

  it('survives clients that vanish right after CONNECT, and mid-handshake', offend(async () => {
    for (let i = 0; i < 5; i++) {
      const c = await rawClient(rec.port);
      c.send(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nHost: x\r\n\r\n`);
      if (i % 2 === 1) c.send(Buffer.from([0x16, 0x03, 0x01]));
      c.socket.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
  }));

  it('records the refusals with _bb.error and every good request once', async (t) => {
    await steps.runAll(t);
    const har = await rec.finish();
    const refused = har.log.entries.filter((e) => e.request.method === 'CONNECT' && e._bb?.error);
    assert.ok(refused.length >= badConnects.length, `${refused.length} refused CONNECTs recorded`);
    const goods = har.log.entries.filter((e) => e.request.url.includes('/fwd-good/'));
    assert.equal(goods.length, good);
    assert.equal(new Set(goods.map((e) => e.request.url)).size, good);
    assert.ok(goods.every((e) => e.response.status === 200));
    const refusedPort = har.log.entries.find((e) => e.request.url.includes(`:${closedPort}/x`));
    assert.equal(refusedPort?._bb?.error?.code, 'ECONNREFUSED');
  });
});
