// An event stream its client left after a few events (a page closed, a
// reader that had enough) is compared as far as the client read it
// (scenario/shadow/tee.ts cutCopies): each target's copy is cut once it has
// as many events as the primary's client got, waiting for a slower target,
// as bb replay cuts its copy. Before, the copies ran on for a grace period
// and every later event was an `added` row: unclassified without a
// secondary. Over HTTP/1.1 and over h2 (where the copies did not end with the
// primary's stream at all, but at the run's end). A copy that ran ahead of the
// client (its next event came before the client left) is compared as far as
// the primary's got (diff/compare-loop.ts asFarAs), live and in bb diff.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, constants, createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { readFileSync } from 'node:fs';
import { Client } from 'undici';
import { replayCapture, startRecording, startShadow } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import type { Har } from '../../../capture/index.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

/** A feed of ten events 30 ms apart (`firstMs` before the first; `extra`: one more event first, the new build's change; `burst`: all ten at once). */
async function feed(h2: boolean, firstMs = 0, extra = false, burst = false): Promise<string> {
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // The head goes at once (the mirrors start then), before any event.
    if ('flushHeaders' in res) res.flushHeaders();
    let n = 0;
    if (extra) res.write('data: {"n":0,"kind":"hello"}\n\n');
    let timer: NodeJS.Timeout | undefined;
    const start = setTimeout(() => {
      if (burst) {
        res.write(Array.from({ length: 10 }, (_, i) => `data: {"n":${i + 1},"kind":"tick"}\n\n`).join(''));
        return;
      }
      timer = setInterval(() => {
        res.write(`data: {"n":${++n},"kind":"tick"}\n\n`);
        if (n === 10) (clearInterval(timer), res.end());
      }, 30);
    }, firstMs);
    req.once('close', () => (clearTimeout(start), clearInterval(timer)));
  };
  const sessions = new Set<ServerHttp2Session>();
  const server = h2 ? createH2cServer(handle).on('session', (s) => (sessions.add(s), s.once('close', () => sessions.delete(s)))) : createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    for (const s of sessions) s.destroy();
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Reads the feed through `url` until `events` events came, then leaves. */
async function readSome(url: string, h2: boolean, events: number): Promise<void> {
  let got = '';
  const enough = () => got.split('data:').length > events;
  if (!h2) {
    const c = new Client(url);
    const res = await c.request({ method: 'GET', path: '/feed' });
    for await (const chunk of res.body) if (((got += chunk), enough())) break;
    await c.destroy();
    return;
  }
  const session = connect(url);
  await new Promise<void>((resolve) => {
    const stream = session.request({ ':method': 'GET', ':path': '/feed' });
    stream.on('data', (chunk: Buffer) => {
      // Left as a browser leaves a stream (RST_STREAM CANCEL; random-walk.ts says why not NO_ERROR).
      if (((got += chunk), enough())) (stream.close(constants.NGHTTP2_CANCEL), resolve());
    });
  });
  await new Promise<void>((r) => session.close(() => r()));
}

const eventsOf = (path: string) => (JSON.parse(readFileSync(path, 'utf8')) as Har).log.entries.map((e) => (e.response.content.text ?? '').split('data:').length - 1);

describe('bb shadow: an event stream its client left after a few events', () => {
  for (const h2 of [false, true]) {
    const over = h2 ? 'h2' : 'HTTP/1.1';
    it(`is compared as far as the client read it, a slower candidate's copy waited for (${over})`, async () => {
      const [primary, candidate] = [await feed(h2), await feed(h2, 150)];
      const out = tmp.path(`cut-${over}`);
      const shadow = await startShadow({ primary, candidate, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
      await readSome(shadow.url, h2, 2);
      const report = await shadow.close();
      assert.deepEqual(report.findings, [], JSON.stringify(report.findings));
      assert.equal(report.totals.equal, 1);
      assert.deepEqual([eventsOf(`${out}/primary.har`), eventsOf(`${out}/candidate.har`)], [[2], [2]]);
      assert.equal((await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`)).verdict, 'match');
    });

    it(`a copy that ran ahead of the primary's client is compared as far as the client read (${over})`, async () => {
      // The primary is slow to start its feed: the candidate's copy has more events by the time the client leaves.
      const [primary, candidate] = [await feed(h2, 150), await feed(h2)];
      const out = tmp.path(`ahead-${over}`);
      const shadow = await startShadow({ primary, candidate, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
      await readSome(shadow.url, h2, 2);
      const report = await shadow.close();
      assert.ok(eventsOf(`${out}/candidate.har`)[0]! > 2, String(eventsOf(`${out}/candidate.har`)));
      assert.deepEqual(report.findings, [], JSON.stringify(report.findings));
      assert.equal(report.totals.equal, 1);
      // bb diff of the captures too, whichever side the primary's is given on.
      assert.equal((await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`)).verdict, 'match');
      assert.equal((await diffCaptures(`${out}/candidate.har`, `${out}/primary.har`)).verdict, 'match');
    });

    it(`a change within what the client read is still found (${over})`, async () => {
      const [primary, candidate] = [await feed(h2), await feed(h2, 0, true)];
      const out = tmp.path(`cut-changed-${over}`);
      const shadow = await startShadow({ primary, candidate, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
      await readSome(shadow.url, h2, 2);
      const report = await shadow.close();
      assert.equal(report.totals.unclassified, 1, JSON.stringify(report.findings));
      // Its copy was ahead by the extra event when the client left: cut there, at three (what came is recorded).
      assert.ok(eventsOf(`${out}/candidate.har`)[0]! <= 3, String(eventsOf(`${out}/candidate.har`)));
    });
  }
});

// bb replay reads a stream as far as the original's client did, then leaves; a target that sends its events at
// once puts more of them across its recording proxy first. Compared as far as the original got.
describe('bb replay of an event stream its client left after a few events', () => {
  for (const h2 of [false, true]) {
    const over = h2 ? 'h2' : 'HTTP/1.1';
    it(`a replay whose copy ran ahead compares as far as the original got (${over})`, async () => {
      const rec = await startRecording({ target: await feed(h2), out: tmp.path(`orig-${over}.har`), label: 'orig', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
      await readSome(rec.url, h2, 2);
      const original = await rec.close(2000);
      const replay = tmp.path(`replay-${over}.har`);
      await replayCapture(original, { target: await feed(h2, 0, false, true), out: replay, bbHome: tmp.bbHome });
      assert.deepEqual([eventsOf(original), eventsOf(replay)[0]! > 2], [[2], true], String(eventsOf(replay)));
      assert.equal((await diffCaptures(original, replay)).verdict, 'match');
      assert.equal((await diffCaptures(replay, original)).verdict, 'match');
    });
  }
});
