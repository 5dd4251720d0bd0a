// A new user's walkthrough, end to end (docs/replay.md "Correlation: following the server's ids",
// docs/diff.md "Redacted secrets"): curl records five requests through
// `bb capture` (the third with a bearer token, the fifth logging in with a
// password), `bb replay` sends them again with the token given by --header
// (so every replayed request carries it) and the password from the config,
// and `bb diff` of the two captures reports the header the replay added where
// the original had none, and nothing where both sent the same secret.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { atFileEnd } from '../../helpers/cleanups.js';
import { runBb, startBb } from '../../helpers/cli.js';
import { curl } from '../../helpers/curl.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

/** A small JSON server: echoes the path and the request body's length. */
async function jsonServer(): Promise<string> {
  const server = http.createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url, n })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  atFileEnd(() => closeHttpAndWs(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The redaction placeholders a file holds, each with how often. */
async function placeholders(path: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const p of (await readFile(path, 'utf8')).match(/<redacted:[0-9a-f]{8}>/g) ?? []) out.set(p, (out.get(p) ?? 0) + 1);
  return out;
}

describe('bb diff of a capture and its replay with --header', () => {
  it('reads the same secret as the same placeholder: only the header the replay added differs', async () => {
    const target = await jsonServer();
    const old = tmp.path('old.har');
    const bb = startBb(['capture', '--target', target, '--out', old], env, { timeoutMs: 60_000 });
    try {
      const [, proxy] = await bb.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
      await curl([`${proxy}/items`]);
      await curl([`${proxy}/items/1`]);
      await curl([`${proxy}/me`, '-H', 'Authorization: Bearer secret123']);
      await curl([`${proxy}/items?page=2`]);
      await curl([`${proxy}/login`, '-H', 'Content-Type: application/json', '--data-binary', '{"user":"ann","password":"hunter22"}']);
      await bb.waitFor(/#\d+ POST \/login 200/);
      bb.child.kill('SIGINT');
      assert.equal(await bb.exited, 0, bb.stderr());
    } finally {
      if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    }
    const config = await tmp.write('bb.config.json', { replay: { values: { password: 'hunter22' } } });
    const replayed = tmp.path('replayed.har');
    const replay = await runBb(['replay', old, '--target', target, '--header', 'Authorization: Bearer secret123', '--config', config, '--out', replayed], env);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);

    // The premise: one placeholder for the token on both sides (the bb home's key), on one request there, on all five here.
    const [a, b] = [await placeholders(old), await placeholders(replayed)];
    const token = [...a].find(([p]) => b.get(p) === 5)?.[0];
    assert.ok(token, `the token's placeholder is in both captures: ${JSON.stringify([[...a], [...b]])}`);
    assert.equal(a.get(token), 1);

    const diff = await runBb(['diff', old, replayed], env);
    assert.equal(diff.code, 1, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^DIFF: 1 real finding \(4 differences\)/, diff.stdout);
    assert.match(diff.stdout, /request\.headers\.authorization added "Bearer <REDACTED:1>" in 4 of 4 entries/);
    assert.doesNotMatch(diff.stdout, /changed/, 'GET /me sent the same token on both sides');
  });
});
