// bb capture's line per exchange through a real bb capture: the lines are
// read in terminals and kept in CI logs, so secrets in the query are redacted
// there exactly as in the HAR (the lines themselves: live-log.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { startBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { Cleanups } from '../helpers/cleanups.js';
import { driveItems, itemsServer } from '../helpers/grpc-items.js';

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
    // A JWT in the path (a magic link).
    assert.equal(await (await fetch(`${base}/m/${PATH_JWT}`)).text(), 'ok');
    await bb.waitFor(/ GET \/m\//);
    bb.child.kill('SIGINT');
    assert.equal(await bb.exited, 0, bb.stderr());
    return { stdout: bb.stdout(), har: JSON.parse(await readFile(out, 'utf8')) };
  } finally {
    if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    await up.close();
  }
}

const PATH_JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.zqlive-sig';
const PATH_JWT_LINE = /^#\d+ GET \/m\/eyJ[\w.-]+zqlive-sig 200 /m;

describe('bb capture live log', () => {
  it('prints secret query values as the HAR holds them, never raw', async () => {
    const { stdout, har } = await captureOnce([]);
    assert.doesNotMatch(stdout, /sekret|=abc\b|zqlive/);
    const line = stdout.split('\n').find((l) => l.startsWith('#1 GET '))!;
    const recorded = har.log.entries[0]!.request.url;
    assert.equal(line.split(' ')[2], recorded.slice(recorded.indexOf('/items')));
    assert.match(line, /^#1 GET \/items\?q=1&token=<redacted:[0-9a-f]{8}>&access_token=<redacted:[0-9a-f]{8}> 200 /);
    assert.match(stdout, /^#\d+ GET \/m\/<redacted:[0-9a-f]{8}> 200 /m);
    assert.doesNotMatch(stdout, PATH_JWT_LINE);
  });

  it('prints them as they are with --no-redact', async () => {
    const { stdout, har } = await captureOnce(['--no-redact']);
    assert.match(stdout, /^#1 GET \/items\?q=1&token=sekret-value&access_token=abc%20def 200 /m);
    assert.match(stdout, PATH_JWT_LINE);
    assert.match(har.log.entries[0]!.request.url, /\?q=1&token=sekret-value&access_token=abc%20def$/);
  });

  it('says a gRPC call that failed is one, by its status code and name, not 200', async () => {
    const cleanups = new Cleanups();
    const dir = tempDir(cleanups).dir;
    const port = await itemsServer(cleanups, { lookupStatus: grpc.status.NOT_FOUND });
    const bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', join(dir, 'g.har')], { BB_HOME: join(dir, 'home') }, { timeoutMs: 20_000 });
    try {
      const [, base] = await bb.waitFor(/: http:\/\/127\.0\.0\.1:(\d+) -> /);
      assert.equal(await driveItems(Number(base)), grpc.status.NOT_FOUND);
      const [failed] = await bb.waitFor(/^#\d+ POST \/demo\.Items\/Lookup .*$/m);
      const [stored] = await bb.waitFor(/^#\d+ POST \/demo\.Items\/Store .*$/m);
      assert.match(failed!, /^#\d+ POST \/demo\.Items\/Lookup grpc 5 NOT_FOUND \d+ B \d+ ms$/);
      assert.match(stored!, /^#\d+ POST \/demo\.Items\/Store 200 \d+ B \d+ ms$/, 'a call that succeeded keeps its HTTP status');
      bb.child.kill('SIGINT');
      assert.equal(await bb.exited, 0, bb.stderr());
    } finally {
      if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
      await cleanups.run();
    }
  });
});
