// Progress of long work on a terminal: `bb recover` of a long journal and
// finalizing a capture at Ctrl-C show where they are on a TTY, never on a
// pipe, never with --quiet. BB_PROGRESS_AFTER_MS=0 lifts the ~2 s wait so a
// test needs no long capture. Real bb processes, a real pseudo-terminal.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { runBb, startBb, startBbOnTty } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir().dir;
const env = { BB_HOME: join(dir, 'home'), BB_PROGRESS_AFTER_MS: '0' };
const EXCHANGES = 600;
let server: http.Server;
let port: number;
/** A journal (and bodies) left by a capture that was killed, copied per test. */
const crashed = join(dir, 'crashed.har');

async function drive(url: string): Promise<void> {
  for (let i = 0; i < EXCHANGES; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, k) => fetch(`${url}/n/${i + k}`).then((r) => r.text())));
  }
}

before(async () => {
  server = http.createServer((req, res) => res.end(`ok ${req.url}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', crashed, '--quiet'], env);
  const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  await drive(url);
  bb.child.kill('SIGKILL');
  await bb.exited;
  assert.ok(existsSync(`${crashed}.journal`));
});
after(() => {
  server.closeAllConnections();
  server.close();
});

/** A fresh copy of the crashed capture's journal and bodies, as `name`. */
function journalCopy(name: string): string {
  const out = join(dir, name);
  copyFileSync(`${crashed}.journal`, `${out}.journal`);
  copyFileSync(`${crashed}.bodies`, `${out}.bodies`);
  return out;
}

test('bb recover of a long journal shows progress on a TTY', async () => {
  const out = journalCopy('tty.har');
  const bb = startBbOnTty(['recover', out], env);
  assert.equal(await bb.exited, 0, bb.stdout());
  assert.match(bb.stdout(), /\r\x1b\[Kbb: recovering tty\.har: \d[\d,]* entries, \d+% of the journal read/);
  assert.match(bb.stdout(), /recovered 600 exchanges/);
  assert.equal(JSON.parse(readFileSync(out, 'utf8')).log.entries.length, EXCHANGES);
});

test('bb recover shows no progress on a pipe, nor with --quiet on a TTY', async () => {
  const piped = await runBb(['recover', journalCopy('pipe.har')], env);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr, '');
  assert.doesNotMatch(piped.stdout, /journal read|\x1b/);
  const quiet = startBbOnTty(['recover', journalCopy('quiet.har'), '--quiet'], env);
  assert.equal(await quiet.exited, 0, quiet.stdout());
  assert.doesNotMatch(quiet.stdout(), /journal read|\x1b\[K/);
  assert.match(quiet.stdout(), /recovered 600 exchanges/);
});

test('finalizing a capture at Ctrl-C shows entries written of the total on a TTY', async () => {
  const out = join(dir, 'ctrl-c.har');
  const bb = startBbOnTty(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out, '--quiet'], env);
  const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  await drive(url);
  bb.type('\x03');
  assert.equal(await bb.exited, 0, bb.stdout());
  // --quiet is for the per-exchange lines of capture; its finalize shows nothing either.
  assert.doesNotMatch(bb.stdout(), /writing ctrl-c\.har/);
  assert.equal(JSON.parse(readFileSync(out, 'utf8')).log.entries.length, EXCHANGES);

  const loud = join(dir, 'ctrl-c-loud.har');
  const bb2 = startBbOnTty(['capture', '--target', `http://127.0.0.1:${port}`, '--out', loud], env);
  const url2 = (await bb2.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  await drive(url2);
  bb2.type('\x03');
  assert.equal(await bb2.exited, 0, bb2.stdout().slice(-2000));
  assert.match(bb2.stdout(), /\r\x1b\[Kbb: writing ctrl-c-loud\.har: \d+ of 600 entries \(\d+%\)/);
  assert.match(bb2.stdout(), /wrote .*ctrl-c-loud\.har \(600 entries/);
});

test('finalizing at SIGINT on a pipe prints no progress', async () => {
  const out = join(dir, 'pipe-stop.har');
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out], env);
  const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  await drive(url);
  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 0, bb.stderr());
  assert.doesNotMatch(bb.stderr() + bb.stdout(), /writing pipe-stop\.har|\x1b\[K/);
});

test('bb diff shows the stage it is in on a TTY, never on a pipe or with --quiet', async () => {
  // A small capture against itself through the bounded path (BB_DIFF_BOUNDED_BYTES=0), the path big captures take.
  const recovered = join(dir, 'diff-a.har');
  copyFileSync(`${crashed}.journal`, `${recovered}.journal`);
  copyFileSync(`${crashed}.bodies`, `${recovered}.bodies`);
  assert.equal((await runBb(['recover', recovered, '--quiet'], env)).code, 0);
  const diffEnv = { ...env, BB_DIFF_BOUNDED_BYTES: '0' };
  const tty = startBbOnTty(['diff', recovered, recovered, '--allow-incomplete'], diffEnv);
  assert.equal(await tty.exited, 0, tty.stdout());
  assert.match(tty.stdout(), /\r\x1b\[Kbb diff: (read|normalize|pair|compare)/);
  assert.match(tty.stdout(), /MATCH/);
  const piped = await runBb(['diff', recovered, recovered, '--allow-incomplete'], diffEnv);
  assert.equal(piped.code, 0, piped.stderr);
  assert.doesNotMatch(piped.stderr + piped.stdout, /bb diff: |\x1b\[K/);
  const quiet = startBbOnTty(['diff', recovered, recovered, '--allow-incomplete', '--quiet'], diffEnv);
  assert.equal(await quiet.exited, 0, quiet.stdout());
  assert.doesNotMatch(quiet.stdout(), /bb diff: |\x1b\[K/);
});
