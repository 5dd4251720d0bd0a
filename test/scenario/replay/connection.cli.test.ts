// The original client's patience: a request it aborted is aborted after the
// same time in replay, recorded as aborted, and counted as cut; the replay
// goes on. Times are printed (t.diagnostic), not asserted: the recorded
// abort and the cut's reason ("client", not "timeout") are what show it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startRecording } from '../../../scenario/index.js';
import { atFileEnd } from '../../helpers/cleanups.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { readHar, recordPatience, startPatientServer } from './patience.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

describe('bb replay keeps the original client’s patience', () => {
  it('a request the client aborted at 2 s is cut after that time, recorded as aborted, and the replay goes on', async (t) => {
    const original = await recordPatience(tmp.path('aborted.har'), tmp.bbHome, '/hang', 2000);
    const hung = (await readHar(original)).log.entries.find((e) => e.request.url.endsWith('/hang'))!;
    assert.equal(hung._bb?.aborted, 'client', 'the original capture records the client abort');
    t.diagnostic(`the original client gave up after ${hung.time} ms`);

    const server = await startPatientServer(['/hang']);
    const out = tmp.path('aborted-replay.har');
    const report = tmp.path('aborted-replay.json');
    // --timeout far past the original's patience: a cut at it would say "timeout" and fail the exchange.
    const run = await runBb(['replay', original, '--target', server.url, '--out', out, '--json', report, '--timeout', '120000'], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /, 1 cut → /);
    assert.deepEqual(server.arrived, ['GET /first', 'GET /hang', 'GET /last']);
    // Cut before the next request went: the server saw the client leave first.
    assert.deepEqual(server.abandoned, ['GET /hang']);
    const replayed = (await readHar(out)).log.entries.sort((a, b) => a._bb!.seq - b._bb!.seq);
    assert.deepEqual(replayed.map((e) => [new URL(e.request.url).pathname, e._bb?.aborted ?? null]), [['/first', null], ['/hang', 'client'], ['/last', null]]);
    const json = JSON.parse(await readFile(report, 'utf8'));
    assert.equal(json.replayed, 2);
    assert.deepEqual(json.failed, []);
    assert.equal(json.cut.length, 1);
    assert.equal(json.cut[0].why, 'client');
    assert.equal(json.cut[0].entry, `#${hung._bb!.seq}`);
    t.diagnostic(`the replay cut it after ${json.cut[0].afterMs} ms; its capture records ${replayed[1]!.time} ms`);
  });
});

// A client that read part of an event stream and left (an EventSource consumer that had what it needed): the
// replay reads as much of the target's stream, then leaves. Cut after the original's time instead, a target a
// little slower gave fewer events and a faster one more, and bb diff of the two captures read the stream as
// changed when the build was the same.
describe('bb replay: a stream the client read in part', () => {
  /** An event stream of numbered events, one every `everyMs`, until the client leaves. */
  const ticking = async (everyMs: number) => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let n = 0;
      const timer = setInterval(() => res.write(`data: ${JSON.stringify({ n: ++n })}\n\n`), everyMs);
      req.once('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    atFileEnd(() => closeHttpAndWs(server));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  it('reads as many events as the original client did, from a slower and from a faster target: bb diff MATCH', async () => {
    const out = join(tmp.dir, 'feed.har');
    const rec = await startRecording({ target: await ticking(30), out, label: 'feed', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    // Three events read, then the client leaves.
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${rec.url}/feed`, { agent: false }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
          if (text.split('\n\n').length > 3) (req.destroy(), resolve());
        });
      });
      req.on('error', () => {});
      req.on('close', () => resolve());
      setTimeout(() => reject(new Error('no three events')), 5000);
    });
    const recorded = await rec.close(1000);
    const original = await readHar(recorded);
    assert.equal(original.log.entries[0]!._bb?.aborted, 'client');
    assert.equal(original.log.entries[0]!._eventSourceMessages?.length, 3);
    for (const everyMs of [150, 5]) {
      const replayed = join(tmp.dir, `feed-${everyMs}.har`);
      const run = await runBb(['replay', recorded, '--target', await ticking(everyMs), '--out', replayed], env);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const again = await readHar(replayed);
      // The replay read three and left; an event that crossed bb before its leaving reached the proxy stays in the
      // capture (docs/replay.md: a target 5 ms apart under load put a fourth across), and bb diff compares the
      // stream as far as the original got.
      const events = again.log.entries[0]!._eventSourceMessages?.length ?? 0;
      assert.ok(events >= 3, `a target with an event every ${everyMs} ms: ${events} events`);
      const diff = await runBb(['diff', recorded, replayed], env);
      assert.match(diff.stdout, /^MATCH/, diff.stdout + diff.stderr);
    }
  });
});
