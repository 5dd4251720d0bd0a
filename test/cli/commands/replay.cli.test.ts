// bb replay's flags around waiting: --timeout bounds every exchange, Ctrl-C
// (SIGINT, SIGTERM) stops a replay at once whatever it waits on, with the
// capture written and exit 130; --server-home is recorded as in bb capture.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { runBb, startBb } from '../../helpers/cli.js';
import { settlesWithin } from '../../helpers/bounded.js';
import { tempDir } from '../../helpers/tmp.js';
import { get, readHar, recordPatience, startPatientServer, type PatientServer } from '../../scenario/replay/patience.js';
import { startRecording } from '../../../scenario/index.js';
import { atFileEnd } from '../../helpers/cleanups.js';
import { closeHttpAndWs } from '../../helpers/servers.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

/** A server whose answer names a file under its HOME, `home`; its URL. */
async function homeServer(home: string): Promise<string> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ log: `${home}/logs/app.log` })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  atFileEnd(() => closeHttpAndWs(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Records GET /where against a server whose HOME is `home`, told to bb with serverHome, into `out`. */
async function recordHome(out: string, bbHome: string, home: string): Promise<string> {
  const rec = await startRecording({ target: await homeServer(home), out, label: 'home', bbHome, serverHome: home, listen: { host: '127.0.0.1', port: 0 } });
  try {
    assert.equal(await get(rec.url, '/where'), 200);
  } finally {
    await rec.close(1000);
  }
  return rec.out;
}

/** A fresh server that holds /slow open (the original got its answer at once). */
const slowServer = (): Promise<PatientServer> => startPatientServer(['/slow']);

describe('bb replay: waiting, bounded and interrupted', () => {
  let original: string;
  before(async () => {
    original = await recordPatience(tmp.path('answered.har'), tmp.bbHome, '/slow');
  });

  it('--timeout MS cuts an exchange the target does not answer in time: named on stderr, counted, exit 1', async () => {
    const server = await slowServer();
    const out = tmp.path('timeout.har');
    const report = tmp.path('timeout.json');
    const run = await settlesWithin(runBb(['replay', original, '--target', server.url, '--out', out, '--timeout', '500', '--json', report], env), 20_000, 'the replay');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /, 1 cut → .* \(1 of 3 got no response\)$/m);
    assert.match(run.stderr, /#\d+: no response within --timeout 500 ms/);
    assert.deepEqual(server.arrived, ['GET /first', 'GET /slow', 'GET /last']);
    const json = JSON.parse(await readFile(report, 'utf8'));
    assert.equal(json.replayed, 2);
    assert.deepEqual(json.cut.map((c: { why: string }) => c.why), ['timeout']);
    assert.ok(json.cut[0].afterMs >= 500, `cut once the 500 ms had passed (${json.cut[0].afterMs})`);
    const slow = (await readHar(out)).log.entries.find((e) => e.request.url.endsWith('/slow'))!;
    assert.equal(slow._bb?.aborted, 'client');
  });

  it('refuses a --timeout that is not a positive number', async () => {
    for (const value of ['soon', '0']) {
      const run = await runBb(['replay', original, '--target', 'http://127.0.0.1:9', '--timeout', value], env);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /--timeout needs a number/);
    }
  });

  // A value that starts with '-' is the flag's, refused by its own check (before: "Unknown arguments: 2, x").
  it('refuses a negative --pace as it refuses any bad one: one line, exit 2', async () => {
    const run = await runBb(['replay', original, '--target', 'http://127.0.0.1:9', '--pace', '-2x'], env);
    assert.equal(run.code, 2);
    assert.equal(run.stderr, "bb: --pace needs asap, original or a speed like 2x, got '-2x'\n");
  });

  it('refuses a --json in a folder that does not exist before it sends anything (exit 2: nothing was sent)', async () => {
    const server = await startPatientServer([]);
    const out = tmp.path('never-sent.har');
    const run = await runBb(['replay', original, '--target', server.url, '--out', out, '--json', tmp.path('no-such-folder', 'r.json')], env);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /^bb: cannot write --json .*r\.json \(its folder does not exist\): choose another path\.\n$/);
    assert.deepEqual(server.arrived, [], 'nothing was sent');
    assert.equal(existsSync(out), false, 'no capture was written');
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} during a long wait on the target stops at once: exit 130, the capture written`, async () => {
      const server = await slowServer();
      const out = tmp.path(`${signal}.har`);
      const bb = startBb(['replay', original, '--target', server.url, '--out', out], env, { timeoutMs: 60_000 });
      await settlesWithin(server.arrival('/slow'), 20_000, 'the request for /slow');
      bb.child.kill(signal);
      // Far less than the 30 s the exchange would otherwise be given.
      const code = await settlesWithin(bb.exited, 10_000, `bb after ${signal}`);
      assert.equal(code, 130, bb.stdout() + bb.stderr());
      assert.match(bb.stderr(), /interrupted/);
      assert.ok(existsSync(out), 'the capture is written');
      const entries = (await readHar(out)).log.entries.map((e) => [new URL(e.request.url).pathname, e._bb?.aborted ?? null]);
      assert.deepEqual(entries, [['/first', null], ['/slow', 'client']]);
      assert.deepEqual(server.arrived, ['GET /first', 'GET /slow']);
    });
  }

  it('--server-home DIR is recorded in the new capture, as bb capture does', async () => {
    const server = await slowServer();
    server.hang.clear();
    const out = tmp.path('home.har');
    const run = await runBb(['replay', original, '--target', server.url, '--out', out, '--server-home', '/srv/app-home'], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await readHar(out)).log._bb?.serverHome, '/srv/app-home');
  });

  it('--server-home DIR: paths under the target\'s HOME in its answers compare as the original\'s under its own (bb diff MATCH; without it, a finding)', async () => {
    const original = await recordHome(tmp.path('home-original.har'), tmp.bbHome, '/home/alice');
    const fresh = await homeServer('/srv/candidate');
    const withHome = tmp.path('home-replay.har');
    assert.equal((await runBb(['replay', original, '--target', fresh, '--out', withHome, '--server-home', '/srv/candidate'], env)).code, 0);
    const diff = await runBb(['diff', original, withHome], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
    const without = tmp.path('home-replay-bare.har');
    assert.equal((await runBb(['replay', original, '--target', fresh, '--out', without], env)).code, 0);
    const bare = await runBb(['diff', original, without], env);
    assert.equal(bare.code, 1, bare.stdout + bare.stderr);
    assert.match(bare.stdout, /candidate/);
  });
});
