// bb capture's line per exchange (cli/live-log.ts). Fed facts directly:
// what it prints for a failed exchange is what the client got. Through a real
// bb capture: the lines are read in terminals and kept in CI logs, so secrets
// in the query are redacted there exactly as in the HAR.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startBb } from '../helpers/cli.js';
import { liveLog } from '../../cli/live-log.js';
import type { Fact } from '../../proxy/index.js';
import { tempDir } from '../helpers/tmp.js';

function run(facts: object[]): string[] {
  const lines: string[] = [];
  const log = liveLog({ color: false, write: (l) => lines.push(l) });
  for (const f of facts) log(f as Fact);
  return lines.map((l) => l.replace(/ \d+ ms/, ' N ms'));
}

const started = { type: 'exchange-started', exchangeId: 1, time: Date.now(), method: 'GET', target: '/x' };
const failure = { code: 'ECONNRESET', message: 'reset', phase: 'response' };

describe('live log', () => {
  it("counts bb's own 502 body, which is what the client received", () => {
    const body = Buffer.from('{"error":"bb_upstream_failed","code":"ECONNREFUSED"}');
    const lines = run([started, { type: 'exchange-failed', exchangeId: 1, time: Date.now(), error: { ...failure, code: 'ECONNREFUSED' }, response: { statusCode: 502, statusMessage: 'Bad Gateway', rawHeaders: [], body } }]);
    assert.deepEqual(lines, [`#1 GET /x 502 ${body.length} B N ms (bb: ECONNREFUSED)`]);
  });

  it('keeps the status the server sent when the upstream fails after the response started', () => {
    const lines = run([
      started,
      { type: 'response-started', exchangeId: 1, time: Date.now(), statusCode: 200 },
      { type: 'response-body', exchangeId: 1, time: Date.now(), chunk: Buffer.alloc(10) },
      { type: 'exchange-failed', exchangeId: 1, time: Date.now(), error: failure },
    ]);
    assert.deepEqual(lines, ['#1 GET /x 200 10 B N ms (bb: ECONNRESET)']);
  });
});

async function upstream(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

async function captureOnce(extra: string[]): Promise<{ stdout: string; har: { log: { entries: Array<{ request: { url: string } }> } } }> {
  const up = await upstream();
  const dir = tempDir().dir;
  const out = join(dir, 'c.har');
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${up.port}`, '--out', out, ...extra], { BB_HOME: join(dir, 'home') }, { timeoutMs: 20_000 });
  try {
    const [, base] = await bb.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
    const res = await fetch(`${base}/items?q=1&token=sekret-value&access_token=abc%20def`);
    assert.equal(await res.text(), 'ok');
    await bb.waitFor(/#1 GET /);
    bb.child.kill('SIGINT');
    assert.equal(await bb.exited, 0, bb.stderr());
    return { stdout: bb.stdout(), har: JSON.parse(await readFile(out, 'utf8')) };
  } finally {
    if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    await up.close();
  }
}

describe('bb capture live log', () => {
  it('prints secret query values as the HAR holds them, never raw', async () => {
    const { stdout, har } = await captureOnce([]);
    assert.doesNotMatch(stdout, /sekret|=abc\b/);
    const line = stdout.split('\n').find((l) => l.startsWith('#1 GET '))!;
    const recorded = har.log.entries[0]!.request.url;
    assert.equal(line.split(' ')[2], recorded.slice(recorded.indexOf('/items')));
    assert.match(line, /^#1 GET \/items\?q=1&token=<redacted:[0-9a-f]{8}>&access_token=<redacted:[0-9a-f]{8}> 200 /);
  });

  it('prints them as they are with --no-redact', async () => {
    const { stdout, har } = await captureOnce(['--no-redact']);
    assert.match(stdout, /^#1 GET \/items\?q=1&token=sekret-value&access_token=abc%20def 200 /m);
    assert.match(har.log.entries[0]!.request.url, /\?q=1&token=sekret-value&access_token=abc%20def$/);
  });
});
