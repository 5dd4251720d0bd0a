// Many bb capture processes starting at once on a fresh bb home: the
// redaction key and the CA are made once, atomically, and every process uses
// the same ones. Apart from test/cli/commands/capture.cli.test.ts so each file stays well
// inside the suite's per-file time on a busy machine. Real child processes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBb, startBb } from '../helpers/cli.js';
import { helloServer } from '../helpers/servers.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir().dir;
const servers: http.Server[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function upstream(): Promise<number> {
  const { server, port } = await helloServer();
  servers.push(server);
  return port;
}

test('ten bb capture at once on a fresh bb home share one redaction key', async () => {
  const target = await upstream();
  const home = join(dir, 'fresh-home');
  const runs = Array.from({ length: 10 }, (_, i) =>
    startBb(['capture', '--target', `http://127.0.0.1:${target}`, '--out', join(dir, 'ten', `c${i}.har`), '--quiet'], { BB_HOME: home }),
  );
  const urls = await Promise.all(runs.map(async (bb) => (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]));
  // The same secret in every capture must become the same placeholder.
  await Promise.all(urls.map((url) => fetch(`${url}/s?token=same-secret`).then((r) => r.text())));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(10).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  for (const bb of runs) assert.doesNotMatch(bb.stderr(), /internal error|redaction key/);
  assert.match(readFileSync(join(home, 'redact.key'), 'utf8'), /^[0-9a-f]{64}\n$/);
  assert.deepEqual(readdirSync(home).sort(), ['redact.key'], 'no temporary files left in bb home');
  const placeholders = new Set(
    Array.from({ length: 10 }, (_, i) => new URL(JSON.parse(readFileSync(join(dir, 'ten', `c${i}.har`), 'utf8')).log.entries[0].request.url as string).search),
  );
  assert.equal(placeholders.size, 1, [...placeholders].join('\n'));
  assert.match(decodeURIComponent([...placeholders][0]!), /^\?token=<redacted:[0-9a-f]{8}>$/);
});

test('ten bb capture at once agree on the key even while one of them is slow to write it', async () => {
  const home = join(dir, 'slow-home');
  const preload = fileURLToPath(new URL('../helpers/slow-key-writes.mjs', import.meta.url));
  const runs = Array.from({ length: 10 }, (_, i) =>
    startBb(['capture', '--target', 'http://127.0.0.1:1', '--out', join(dir, 'slow', `c${i}.har`), '--quiet'], { BB_HOME: home, NODE_OPTIONS: `--import ${preload}` }),
  );
  await Promise.all(runs.map((bb) => bb.waitFor(/capture: http/, 60_000).catch(() => undefined)));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(10).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  assert.deepEqual(readdirSync(home), ['redact.key']);
});

test('captures started while the first is still writing the key read no half-written key and use the one key', async () => {
  const target = await upstream();
  const home = join(dir, 'mid-write-home');
  const preload = fileURLToPath(new URL('../helpers/slow-key-writes.mjs', import.meta.url));
  const start = (i: number, env: NodeJS.ProcessEnv) =>
    startBb(['capture', '--target', `http://127.0.0.1:${target}`, '--out', join(dir, 'mid-write', `c${i}.har`), '--quiet'], { BB_HOME: home, ...env });
  // The first writes its key for 4 s; the others start once its file is on disk, so they meet it mid-write whatever the load.
  const first = start(0, { NODE_OPTIONS: `--import ${preload}`, BB_TEST_SLOW_KEY_MS: '4000' });
  for (let i = 0; i < 600 && !(existsSync(home) && readdirSync(home).some((n) => n.startsWith('redact.key'))); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(readdirSync(home).some((n) => n.startsWith('redact.key')), 'the first capture began its key');
  const runs = [first, ...Array.from({ length: 4 }, (_, i) => start(i + 1, {}))];
  const urls = await Promise.all(runs.map(async (bb) => (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]));
  await Promise.all(urls.map((url) => fetch(`${url}/s?token=same-secret`).then((r) => r.text())));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(runs.length).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  assert.deepEqual(readdirSync(home), ['redact.key']);
  const placeholders = new Set(
    runs.map((_, i) => new URL(JSON.parse(readFileSync(join(dir, 'mid-write', `c${i}.har`), 'utf8')).log.entries[0].request.url as string).search),
  );
  assert.equal(placeholders.size, 1, `one key, one placeholder: ${[...placeholders].join(' ')}`);
});

test('ten bb capture --mode forward at once on a fresh bb home share one CA', async () => {
  const home = join(dir, 'fresh-ca-home');
  const runs = Array.from({ length: 10 }, (_, i) =>
    startBb(['capture', '--mode', 'forward', '--listen', '127.0.0.1:0', '--out', join(dir, 'ten-ca', `f${i}.har`), '--quiet'], { BB_HOME: home }),
  );
  await Promise.all(runs.map((bb) => bb.waitFor(/forward: http:\/\/127\.0\.0\.1:\d+/, 60_000)));
  for (const bb of runs) bb.child.kill('SIGINT');
  const codes = await Promise.all(runs.map((bb) => bb.exited));
  assert.deepEqual(codes, Array(10).fill(0), runs.map((bb) => bb.stderr()).join('\n'));
  assert.deepEqual(readdirSync(home).sort(), ['ca.key', 'ca.pem', 'redact.key'], 'one CA, no temporary files');
  const path = await runBb(['ca', 'print'], { BB_HOME: home });
  assert.equal(path.code, 0, path.stderr);
});
