// The last lines of bb capture say what was written in plain words, and an
// empty capture (clients pointed elsewhere) says so while it can still be fixed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBb } from '../helpers/cli.js';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { BB_BIN } from '../helpers/cli.js';

async function captureRun(requests: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const dir = await mkdtemp(join(tmpdir(), 'bb-qa-summary-'));
  const out = join(dir, 'c.har');
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet'], { BB_HOME: join(dir, 'home') });
  const killer = setTimeout(() => bb.child.kill('SIGKILL'), 20_000);
  try {
    const [, base] = await bb.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
    for (let i = 0; i < requests; i++) assert.equal(await (await fetch(`${base}/x`)).text(), 'ok');
    bb.child.kill('SIGINT');
    const code = await bb.exited;
    return { code, stdout: bb.stdout(), stderr: bb.stderr().replaceAll(dir, '<DIR>').replace(base!, '<URL>') };
  } finally {
    clearTimeout(killer);
    if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  }
}

describe('bb capture summary', () => {
  it('counts one entry as "1 entry"', async () => {
    const r = await captureRun(1);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /: wrote \S+c\.har \(1 entry, 0 WebSocket messages\)\n$/);
  });

  it('says an empty capture holds nothing and where clients should have gone', async () => {
    const r = await captureRun(0);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /: wrote \S+c\.har \(0 entries, 0 WebSocket messages\)\n$/);
    assert.match(r.stderr, /^bb: capture: nothing went through <URL>: point your clients at that URL \(bb diff refuses an empty capture\)$/m);
  });

  it('stops gracefully on a SIGINT sent the moment it prints its URL (signals are taken before the proxies start)', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const dir = await mkdtemp(join(tmpdir(), 'bb-qa-sigint-'));
    try {
      for (let i = 0; i < 5; i++) {
        const out = join(dir, `c${i}.har`);
        const child = spawn(process.execPath, [BB_BIN, 'capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet'], {
          env: { ...process.env, NO_COLOR: '1', BB_HOME: join(dir, 'home') },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        let sent = false;
        child.stdout!.on('data', (c: Buffer) => {
          stdout += c;
          if (!sent && / -> /.test(stdout)) {
            sent = true;
            child.kill('SIGINT');
          }
        });
        child.stderr!.on('data', (c: Buffer) => (stderr += c));
        const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('close', (c, sg) => r([c, sg])));
        clearTimeout(killer);
        assert.deepEqual([code, signal], [0, null], `run ${i}: ${stderr}`);
        assert.ok(existsSync(out), `run ${i} wrote its capture`);
      }
    } finally {
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
