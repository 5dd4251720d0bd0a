// bb replay's pacing and progress: --pace original keeps the gaps, <N>x
// scales them, asap keeps only the order; a terminal sees "done / total".
// What a cut exchange's target sent is learned, as a whole response's is.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Client } from 'undici';
import { startRecording } from '../../../scenario/index.js';
import { readFile } from 'node:fs/promises';
import { runBb, startBb, startBbOnTty } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { firstOf } from '../../helpers/bounded.js';
import { atFileEnd } from '../../helpers/cleanups.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { startReplayService, type ReplayService } from './service.js';
import { readHar } from './patience.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const services: ReplayService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

/** A fresh service and the times its requests arrived. */
async function timedService(): Promise<{ s: ReplayService; times: number[] }> {
  const s = await startReplayService();
  services.push(s);
  return { s, times: s.arrivals };
}

describe('bb replay: pacing', () => {
  let original: string;
  before(async () => {
    const { s } = await timedService();
    const rec = await startRecording({ target: s.url, out: tmp.path('gaps.har'), label: 'gaps', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const c = new Client(rec.url);
    for (let i = 0; i < 3; i++) {
      await (await c.request({ method: 'GET', path: '/items' })).body.text();
      if (i < 2) await new Promise((r) => setTimeout(r, 500));
    }
    await c.close();
    original = await rec.close(1000);
  });

  // The schedule runs from the first exchange's start: arrivals keep the original span,
  // give or take the first connection's set-up (generous bounds: the machine is shared).
  const span = (t: number[]) => t.at(-1)! - t[0]!;

  it('--pace original keeps the 2 × 500 ms gaps; --pace 2x halves them', async () => {
    const one = await timedService();
    assert.equal((await runBb(['replay', original, '--target', one.s.url, '--out', tmp.path('p1.har'), '--pace', 'original'], env)).code, 0);
    assert.ok(span(one.times) >= 800, `span ${span(one.times).toFixed(0)} ms`);
    const two = await timedService();
    assert.equal((await runBb(['replay', original, '--target', two.s.url, '--out', tmp.path('p2.har'), '--pace', '2x'], env)).code, 0);
    assert.ok(span(two.times) >= 350 && span(two.times) < 800, `span ${span(two.times).toFixed(0)} ms`);
  });

  it('asap keeps the order only', async () => {
    const fast = await timedService();
    assert.equal((await runBb(['replay', original, '--target', fast.s.url, '--out', tmp.path('p0.har')], env)).code, 0);
    assert.deepEqual(fast.s.log, ['GET /items 200', 'GET /items 200', 'GET /items 200']);
    assert.ok(span(fast.times) < 800, `span ${span(fast.times).toFixed(0)} ms`);
  });

  it('Ctrl-C stops a paced replay at once: exit 130, the capture written with what crossed', async () => {
    const { s, times } = await timedService();
    const out = tmp.path('interrupted.har');
    const bb = startBb(['replay', original, '--target', s.url, '--out', out, '--pace', '0.1x'], env, { timeoutMs: 30_000 });
    for (let i = 0; i < 200 && times.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(times.length, 1, 'the first exchange went');
    bb.child.kill('SIGINT');
    // The next exchange was 5 s away at 0.1x: bb exited before it fell due, the sleep cut short.
    assert.equal(await firstOf(bb.exited, 4_000), 'first', 'bb exited before the next exchange was due');
    assert.equal(await bb.exited, 130, bb.stderr());
    assert.equal(times.length, 1, 'no second exchange went');
    assert.match(bb.stderr(), /bb replay was interrupted; what it replayed is in /);
    const har = JSON.parse(await readFile(out, 'utf8'));
    assert.equal(har.log.entries.length, 1);
  });

  it('on a terminal a progress line counts exchanges done out of the total', async () => {
    const { s } = await timedService();
    const bb = startBbOnTty(['replay', original, '--target', s.url, '--out', tmp.path('tty.har'), '--pace', 'original'], { ...env, BB_PROGRESS_AFTER_MS: '0' }, { timeoutMs: 30_000 });
    assert.equal(await bb.exited, 0, bb.stdout());
    assert.match(bb.stdout(), /bb replay: [12] \/ 3 exchanges/);
    assert.match(bb.stdout(), /replayed 3 exchanges/);
  });
});

// An EventSource that read one event and left, then came back with Last-Event-ID: the id is the one the server
// issued in the event it read. The replay cuts the stream where the original client did; the target's id must
// still be learned from what it read, or the reconnection carries the recorded id, which the target never issued.
describe('bb replay: a stream the client cut still issues values', () => {
  /**
   * A stream that sends one event (a fresh id) and holds; a reconnection with an id it issued gets "resumed", an
   * unknown id 400. `left` resolves when a client left a stream.
   */
  const resumableStream = async () => {
    const issued = new Set<string>();
    const log: string[] = [];
    let leave!: () => void;
    const left = new Promise<void>((r) => (leave = r));
    const server = http.createServer((req, res) => {
      const last = req.headers['last-event-id'];
      if (last === undefined) {
        const id = randomBytes(9).toString('base64url');
        issued.add(id);
        log.push('GET /events 200');
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).write(`id: ${id}\ndata: {"n":1}\n\n`);
        res.once('close', leave);
        return;
      }
      const known = issued.has(String(last));
      log.push(`GET /events ${known ? 200 : 400}`);
      if (!known) return res.writeHead(400).end('unknown Last-Event-ID');
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: resumed\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    atFileEnd(() => closeHttpAndWs(server));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log, left };
  };

  /** Reads the stream at `url` up to its first event, then leaves: that event's id. */
  const firstEventId = (url: string) => new Promise<string>((resolve, reject) => {
    const req = http.get(`${url}/events`, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => {
        text += d.toString();
        const id = /^id: (.+)$/m.exec(text);
        if (id && text.includes('\n\n')) (req.destroy(), resolve(id[1]!));
      });
    });
    req.on('error', () => {});
    req.on('close', () => reject(new Error('the stream closed before its first event')));
  });

  /** GET /events with Last-Event-ID: `id`, read to its end: the status. */
  const resume = (url: string, id: string) => new Promise<number>((resolve, reject) => {
    http.get(`${url}/events`, { agent: false, headers: { accept: 'text/event-stream', 'last-event-id': id } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    }).on('error', reject);
  });

  it('sends the target its own event id in Last-Event-ID after a stream the original client read one event of', async () => {
    const original = await resumableStream();
    const rec = await startRecording({ target: original.url, out: tmp.path('cut-stream.har'), label: 'cut-stream', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    try {
      const id = await firstEventId(rec.url);
      // As an EventSource reconnects: after the stream ended (here once bb, and so the server, saw the client leave).
      await original.left;
      assert.equal(await resume(rec.url, id), 200);
    } finally {
      await rec.close(1000);
    }
    const recorded = (await readHar(rec.out)).log.entries;
    assert.deepEqual(recorded.map((e) => e._bb?.aborted ?? null), ['client', null], 'the original capture records the client leaving');

    const fresh = await resumableStream();
    const report = tmp.path('cut-stream.json');
    const run = await runBb(['replay', rec.out, '--target', fresh.url, '--out', tmp.path('cut-stream-replay.har'), '--json', report], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.deepEqual(fresh.log, ['GET /events 200', 'GET /events 200']);
    const json = JSON.parse(await readFile(report, 'utf8')) as { cut: Array<{ why: string }>; rewritten: Array<{ from: { path: string }; uses: number }> };
    assert.deepEqual(json.cut.map((c) => c.why), ['client']);
    assert.equal(json.rewritten.length, 1, JSON.stringify(json.rewritten));
    assert.equal(json.rewritten[0]!.uses, 1);
  });
});
