// How bb capture ends, as a user stops it: its last lines say what was written
// in plain words (an empty capture says so while it can still be fixed), a
// second signal stops at once and says how to get the HAR back (cli/stop.ts).
// Real child processes and servers on 127.0.0.1.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

async function captureRun(requests: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const dir = tempDir().dir;
  const out = join(dir, 'c.har');
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet'], { BB_HOME: join(dir, 'home') }, { timeoutMs: 20_000 });
  try {
    const [, base] = await bb.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
    for (let i = 0; i < requests; i++) assert.equal(await (await fetch(`${base}/x`)).text(), 'ok');
    bb.child.kill('SIGINT');
    const code = await bb.exited;
    return { code, stdout: bb.stdout(), stderr: bb.stderr().replaceAll(dir, '<DIR>').replace(base!, '<URL>') };
  } finally {
    if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    await new Promise((r) => server.close(r));
  }
}

/**
 * A bb capture (--grace 60000) in front of a server that answers `ok` but
 * holds /hang: each of `first` fetched, then /hang left pending once the server
 * holds it, then `body` with the capture, its --out and its folder.
 */
async function withHangingCapture(first: string[], body: (bb: BbProcess, out: string, dir: string) => Promise<void>): Promise<void> {
  let arrived!: () => void;
  const hanging = new Promise<void>((r) => (arrived = r));
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => (req.url === '/hang' ? (held.push(res), arrived()) : res.end('ok')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const dir = tempDir().dir;
  const out = join(dir, 'c.har');
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet', '--grace', '60000'], { BB_HOME: join(dir, 'home') }, { timeoutMs: 20_000 });
  try {
    const [, base] = await bb.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
    for (const path of first) assert.equal(await (await fetch(`${base}${path}`)).text(), 'ok');
    void fetch(`${base}/hang`).catch(() => undefined);
    await hanging;
    await body(bb, out, dir);
  } finally {
    if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
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

  it('a second SIGINT stops at once (exit 130) and says how to get the HAR back: bb recover, which then writes it', async () => {
    await withHangingCapture(['/done'], async (bb, out, dir) => {
      const finishing = new Promise<void>((resolve) => {
        const look = (): void => void (/SIGINT: finishing/.test(bb.stderr()) && resolve());
        bb.child.stderr!.on('data', look);
        look();
      });
      bb.child.kill('SIGINT');
      await finishing;
      bb.child.kill('SIGINT');
      assert.equal(await bb.exited, 130, bb.stderr());
      assert.match(bb.stderr(), /^bb: SIGINT again: stopped at once, the capture not written; bb recover \S*c\.har writes it from its journal\n$/m);
      assert.equal(existsSync(out), false);
      const recovered = await runBb(['recover', out], { BB_HOME: join(dir, 'home') });
      assert.equal(recovered.code, 0, recovered.stderr);
      const paths = JSON.parse(readFileSync(out, 'utf8')).log.entries.map((e: { request: { url: string } }) => new URL(e.request.url).pathname);
      assert.deepEqual(paths.sort(), ['/done', '/hang']);
    });
  });

  it('a SIGINT and a SIGTERM sent back to back stop at once with exit 130: the second is not lost (the kernel would merge two SIGINTs)', async () => {
    await withHangingCapture([], async (bb) => {
      bb.child.kill('SIGINT');
      bb.child.kill('SIGTERM');
      assert.equal(await bb.exited, 130, bb.stderr());
      // Both pending at once, Node may take them in either order (a fresh-clone CI run saw SIGTERM first).
      const m = /^bb: (SIGINT|SIGTERM): finishing in-flight exchanges, writing captures\nbb: (SIGINT|SIGTERM) again: stopped at once, the capture not written; bb recover \S*c\.har writes it from its journal\n$/m.exec(bb.stderr());
      assert.ok(m, bb.stderr());
      assert.notEqual(m[1], m[2], 'one line for each signal');
    });
  });

  it('stops gracefully on a SIGINT sent the moment it prints its URL (signals are taken before the proxies start)', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const dir = tempDir().dir;
    try {
      for (let i = 0; i < 5; i++) {
        const out = join(dir, `c${i}.har`);
        const bb = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet'], { BB_HOME: join(dir, 'home') }, { timeoutMs: 20_000 });
        // On the data event itself, not a poll: the helper's own listener has already added the chunk to stdout().
        let sent = false;
        bb.child.stdout!.on('data', () => {
          if (!sent && / -> /.test(bb.stdout())) {
            sent = true;
            bb.child.kill('SIGINT');
          }
        });
        assert.deepEqual([await bb.exited, bb.child.signalCode], [0, null], `run ${i}: ${bb.stderr()}`);
        assert.ok(existsSync(out), `run ${i} wrote its capture`);
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
