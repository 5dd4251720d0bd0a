// Trailers are fields (docs/diff.md "What is compared"): an HTTP/1.1 chunked
// response's trailer that changed between two recordings of a real server is
// one finding, `response.trailers.x-checksum changed`, and nothing else; the
// same trailer on both sides is no finding. Real node:http server, recorded
// through bb's proxy, compared by the real bb diff.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

/** A server whose chunked response ends with an `x-checksum` trailer of `checksum`. */
async function trailerServer(checksum: string): Promise<number> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', Trailer: 'x-checksum' });
    res.write('part one ');
    res.addTrailers({ 'x-checksum': checksum });
    res.end('part two');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

/** One GET /file through a recording proxy in front of a server sending `checksum`; the HAR's path. */
async function recordOnce(checksum: string, dir: string): Promise<string> {
  const rec = await record(cleanups, `http://127.0.0.1:${await trailerServer(checksum)}`);
  const res = await fetch(`http://127.0.0.1:${rec.port}/file`);
  assert.equal(await res.text(), 'part one part two');
  const har = await rec.finish();
  assert.deepEqual(har.log.entries[0]!.response._trailers, [{ name: 'x-checksum', value: checksum }], 'the HTTP/1.1 trailer is recorded');
  const file = join(dir, `${checksum}-${Math.random()}.har`);
  await writeFile(file, JSON.stringify(har));
  return file;
}

describe('HTTP/1.1 chunked trailers in bb diff', () => {
  it('a changed trailer is exactly one finding, response.trailers.x-checksum changed', async () => {
    const { dir } = tempDir(cleanups);
    const old = await recordOnce('sha-aaaa', dir);
    const neu = await recordOnce('sha-bbbb', dir);
    const json = await runBb(['diff', old, neu, '--json', '-']);
    assert.equal(json.code, 1, json.stderr);
    const report = JSON.parse(json.stdout) as { findings: Array<{ pattern: string; kind: string; old: unknown; new: unknown }> };
    assert.deepEqual(report.findings.map((f) => [f.pattern, f.kind, f.old, f.new]), [['response.trailers.x-checksum', 'changed', 'sha-aaaa', 'sha-bbbb']]);
    const text = await runBb(['diff', old, neu]);
    assert.match(text.stdout, /response\.trailers\.x-checksum changed "sha-aaaa" → "sha-bbbb"/, text.stdout);
  });

  it('the same trailer on both sides is no finding', async () => {
    const { dir } = tempDir(cleanups);
    const r = await runBb(['diff', await recordOnce('sha-cccc', dir), await recordOnce('sha-cccc', dir)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^MATCH/);
  });
});
