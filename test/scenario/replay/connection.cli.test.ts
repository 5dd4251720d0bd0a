// The original client's patience: a request it aborted is aborted after the
// same time in replay, recorded as aborted, and counted as cut; the replay
// goes on. Times are printed (t.diagnostic), not asserted: the recorded
// abort and the cut's reason ("client", not "timeout") are what show it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
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
