// A gRPC service's status and trailers in bb diff, on real calls recorded
// through bb's h2 tap (@grpc/grpc-js client and server): a changed status
// reads with its names (`NOT_FOUND (5) → INVALID_ARGUMENT (3)`), a changed
// trailing metadata is `response.trailers.NAME`, grpc-status is compared once
// (as grpc.status, never again as a trailer), and the grpc-timeout header (the
// deadline left when the call went out) is no finding.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { driveItems, itemsServer, type ItemsBehaviour } from '../../helpers/grpc-items.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

/** Records Lookup and Store against a server behaving so, with the calls' deadline `deadlineMs` away; the HAR's path. */
async function recordCalls(dir: string, name: string, behaviour: ItemsBehaviour, deadlineMs: number): Promise<string> {
  const rec = await record(cleanups, `http://127.0.0.1:${await itemsServer(cleanups, behaviour)}`);
  assert.equal(await driveItems(rec.port, deadlineMs), behaviour.lookupStatus);
  const har = await rec.finish();
  assert.ok(har.log.entries.every((e) => e.request.headers.some((h) => h.name === 'grpc-timeout')), 'each call carries its deadline');
  const file = join(dir, `${name}.har`);
  await writeFile(file, JSON.stringify(har));
  return file;
}

describe('gRPC status and trailers in bb diff', () => {
  it('finds the changed status, named, and the changed trailer; grpc-timeout and grpc-status as a trailer are no findings', async () => {
    const { dir } = tempDir(cleanups);
    // The same calls twice; the deadlines differ for sure here (between two runs they differ by the ms that passed).
    const old = await recordCalls(dir, 'old', { lookupStatus: grpc.status.NOT_FOUND, storeTrailers: { 'x-cache': 'miss' } }, 20_000);
    const neu = await recordCalls(dir, 'new', { lookupStatus: grpc.status.INVALID_ARGUMENT, storeTrailers: { 'x-cache': 'hit' } }, 30_000);
    const json = await runBb(['diff', old, neu, '--json', '-']);
    assert.equal(json.code, 1, json.stderr);
    const report = JSON.parse(json.stdout) as { findings: Array<{ pattern: string; old: unknown; new: unknown; routes: string[] }> };
    assert.deepEqual(report.findings.map((f) => [f.pattern, f.old, f.new, f.routes.join()]).sort(), [
      ['grpc.status', 5, 3, 'POST /demo.Items/Lookup'],
      ['response.trailers.x-cache', 'miss', 'hit', 'POST /demo.Items/Store'],
    ]);
    const text = await runBb(['diff', old, neu, '--rows']);
    assert.match(text.stdout, /\] grpc\.status changed NOT_FOUND \(5\) → INVALID_ARGUMENT \(3\) in 1 of 1 POST \/demo\.Items\/Lookup$/m, text.stdout);
    assert.match(text.stdout, /grpc\.status: NOT_FOUND \(5\) → INVALID_ARGUMENT \(3\)$/m, `the row too: ${text.stdout}`);
    assert.doesNotMatch(text.stdout, /grpc-timeout|trailers\.grpc-status/);
    const html = await runBb(['diff', old, neu, '--html', join(dir, 'report.html')]);
    assert.equal(html.code, 1, html.stderr);
    // The page wraps tokens in spans; its text reads the same.
    assert.match((await readFile(join(dir, 'report.html'), 'utf8')).replace(/<[^>]+>/g, ''), /NOT_FOUND \(5\) → INVALID_ARGUMENT \(3\)/);
  });

  it('two runs of the same calls with deadlines match', async () => {
    const { dir } = tempDir(cleanups);
    const behaviour = { lookupStatus: grpc.status.NOT_FOUND, storeTrailers: { 'x-cache': 'miss' } };
    const r = await runBb(['diff', await recordCalls(dir, 'a', behaviour, 20_000), await recordCalls(dir, 'b', behaviour, 25_000)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^MATCH/);
  });
});
