// A bb capture process SIGKILLed under traffic, then `bb recover`: every
// exchange its clients saw complete is in the recovered HAR.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import type { Har } from '../../capture/har.js';
import { assertValidHar } from '../helpers/har-schema.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ path: req.url, pad: 'p'.repeat(2000) }));
  });
});
let bb: BbProcess | undefined;
after(async () => {
  if (bb && bb.child.exitCode === null && bb.child.signalCode === null) bb.child.kill('SIGKILL');
  server.closeAllConnections();
  server.close();
});

test('recovers every exchange a client saw complete after SIGKILL', async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const out = join(tmp.dir, 'killed.har');
  bb = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet'], env);
  const url = (await bb.waitFor(/(http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const completed: string[] = [];
  let stop = false;
  const worker = async (w: number) => {
    // Bounded: stops at the kill, or after 2000 requests.
    for (let i = 0; i < 2000 && !stop; i++) {
      const path = `/w${w}/r${i}`;
      const ok = await new Promise<boolean>((resolve) => {
        const req = http.get(`${url}${path}`, { agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(res.statusCode === 200 && JSON.parse(body).path === path));
          res.on('error', () => resolve(false));
        });
        req.on('error', () => resolve(false));
      });
      if (!ok) return;
      completed.push(path);
    }
  };
  const workers = [0, 1, 2, 3].map(worker);
  // Kill once traffic is well under way.
  for (let i = 0; i < 500 && completed.length < 200; i++) await new Promise((r) => setTimeout(r, 10));
  bb.child.kill('SIGKILL');
  stop = true;
  await Promise.all(workers);
  await bb.exited;
  agent.destroy();
  assert.ok(completed.length >= 200, `only ${completed.length} exchanges before the kill`);
  assert.ok(existsSync(`${out}.journal`), 'the journal is left behind');
  assert.ok(!existsSync(out));

  const r = await runBb(['recover', out], env);
  assert.equal(r.code, 0, r.stderr);
  const [path, summary] = r.stdout.trim().split('\n');
  assert.equal(path, out);
  assert.match(summary!, /^recovered \d+ exchanges/);
  const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
  assertValidHar(har);
  assert.equal(har.log._bb?.complete, false);
  const recorded = new Map(har.log.entries.map((e) => [new URL(e.request.url).pathname, e]));
  const missing = completed.filter((p) => !recorded.get(p) || recorded.get(p)!._bb?.seqEnd === undefined);
  assert.deepEqual(missing, [], `${missing.length} of ${completed.length} completed exchanges are missing or unfinished`);
  for (const p of completed.slice(0, 50)) assert.equal(JSON.parse(recorded.get(p)!.response.content.text!).path, p);
  assert.ok(!existsSync(`${out}.journal`));
});

test('h2: recovers every stream a client saw complete after SIGKILL, with many streams\' heads held at once (a kill lands between turns: this catches a lost or unwritten done, not a flush moved after the forwarding within a turn)', async () => {
  // An h2c upstream answering each stream at once: a chunk of bb's reads carries several streams' HEADERS, then their DATA.
  const h2 = http2.createServer();
  h2.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(JSON.stringify({ path: headers[':path'], pad: 'p'.repeat(2000) }));
  });
  h2.on('sessionError', () => {});
  h2.listen(0, '127.0.0.1');
  await once(h2, 'listening');
  const out = join(tmp.dir, 'killed-h2.har');
  const killed = startBb(['capture', '--target', `http://127.0.0.1:${(h2.address() as AddressInfo).port}`, '--out', out, '--quiet'], env);
  const sessions: http2.ClientHttp2Session[] = [];
  try {
    const url = (await killed.waitFor(/(http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
    const completed: string[] = [];
    let stop = false;
    // 4 connections with 8 streams in flight each, until the kill (or 2000 rounds).
    const stream = (session: http2.ClientHttp2Session, path: string) =>
      new Promise<boolean>((resolve) => {
        const req = session.request({ ':path': path });
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (c: string) => (body += c));
        req.on('end', () => resolve(JSON.parse(body || '{}').path === path));
        req.on('error', () => resolve(false));
        req.on('close', () => resolve(false));
      });
    const worker = async (w: number) => {
      const session = http2.connect(url);
      session.on('error', () => {});
      sessions.push(session);
      for (let i = 0; i < 2000 && !stop; i++) {
        const paths = Array.from({ length: 8 }, (_, s) => `/h${w}/r${i}/s${s}`);
        const oks = await Promise.all(paths.map((p) => stream(session, p)));
        paths.forEach((p, s) => oks[s] && completed.push(p));
        if (oks.includes(false)) return;
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    for (let i = 0; i < 500 && completed.length < 400; i++) await new Promise((r) => setTimeout(r, 10));
    killed.child.kill('SIGKILL');
    stop = true;
    await Promise.all(workers);
    await killed.exited;
    assert.ok(completed.length >= 400, `only ${completed.length} streams before the kill`);
    const r = await runBb(['recover', out], env);
    assert.equal(r.code, 0, r.stderr);
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    assertValidHar(har);
    const recorded = new Map(har.log.entries.map((e) => [new URL(e.request.url).pathname, e]));
    const missing = completed.filter((p) => !recorded.get(p) || recorded.get(p)!._bb?.seqEnd === undefined || JSON.parse(recorded.get(p)!.response.content.text!).path !== p);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${completed.length} completed streams are missing, unfinished or wrong`);
    assert.ok(har.log.entries.every((e) => e.request.httpVersion === 'HTTP/2.0'));
  } finally {
    for (const s of sessions) s.destroy();
    if (killed.child.exitCode === null && killed.child.signalCode === null) killed.child.kill('SIGKILL');
    h2.close();
  }
});

test('bb recover says so in one line and exits 2 without a journal, and never overwrites without --force', async () => {
  const r = await runBb(['recover', join(tmp.dir, 'nothing.har')], env);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^bb: no journal at .*nothing\.har\.journal/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  const out = join(tmp.dir, 'taken.har');
  writeFileSync(out, 'precious');
  writeFileSync(`${out}.journal`, '');
  const r2 = await runBb(['recover', out], env);
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, /already exists: .*--force/);
  assert.equal(readFileSync(out, 'utf8'), 'precious');
});

/** `bb capture` of the test's server into `out` (the server started on first use); its process and URL. */
async function captureTo(out: string): Promise<{ bb: BbProcess; url: string }> {
  if (!server.listening) {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  }
  const capture = startBb(['capture', '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out, '--quiet'], env);
  return { bb: capture, url: (await capture.waitFor(/(http:\/\/127\.0\.0\.1:\d+) ->/))[1]! };
}

test('a capture still running: a second bb capture to its --out and bb recover both refuse (naming its pid), its journal untouched; stopped, it writes its HAR', async () => {
  const out = join(tmp.dir, 'live.har');
  const { bb: live, url } = await captureTo(out);
  try {
    assert.equal((await fetch(`${url}/before`)).status, 200);
    const second = await runBb(['capture', '--target', 'http://127.0.0.1:9', '--out', out], env);
    assert.equal(second.code, 2, second.stderr);
    assert.match(second.stderr, new RegExp(`^bb: a capture that is still running \\(pid ${live.child.pid}\\) is writing .*live\\.har\\.journal: give this capture another --out\\.\\n$`));
    const recover = await runBb(['recover', out], env);
    assert.equal(recover.code, 2, recover.stdout + recover.stderr);
    assert.match(recover.stderr, new RegExp(`^bb: a capture that is still running \\(pid ${live.child.pid}\\) is writing .*live\\.har\\.journal: stop it \\(Ctrl-C\\) and it writes the HAR itself; bb recover is for a capture that was killed\\.\\n$`));
    assert.ok(existsSync(`${out}.journal`), 'the live journal is left alone');
    assert.equal((await fetch(`${url}/after`)).status, 200);
    live.child.kill('SIGINT');
    assert.equal(await live.exited, 0, live.stderr());
    const paths = (JSON.parse(readFileSync(out, 'utf8')) as Har).log.entries.map((e) => new URL(e.request.url).pathname);
    assert.deepEqual(paths, ['/before', '/after']);
  } finally {
    if (live.child.exitCode === null) live.child.kill('SIGKILL');
  }
});

test('killed between writing its HAR and removing its journal: bb recover sees the HAR is that capture\'s, complete, and only removes the leftovers', async () => {
  const out = join(tmp.dir, 'finished.har');
  const { bb: run, url } = await captureTo(out);
  assert.equal((await fetch(`${url}/one`)).status, 200);
  // The journal and bodies as the kill would have left them (their header is what identifies the capture).
  const journal = readFileSync(`${out}.journal`);
  const bodies = readFileSync(`${out}.bodies`);
  run.child.kill('SIGINT');
  assert.equal(await run.exited, 0, run.stderr());
  const har = readFileSync(out);
  writeFileSync(`${out}.journal`, journal);
  writeFileSync(`${out}.bodies`, bodies);

  const r = await runBb(['recover', out], env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${out}\nthe capture had finished: its HAR is complete (1 exchange); removed the journal it left behind\n`);
  assert.ok(!existsSync(`${out}.journal`) && !existsSync(`${out}.bodies`));
  assert.deepEqual(readFileSync(out), har, 'the HAR is left as it was');

  // Another capture's HAR at the path (another start): still refused, nothing touched.
  const other = JSON.parse(har.toString('utf8')) as Har;
  other.log._bb!.startedDateTime = new Date(Date.parse(other.log._bb!.startedDateTime) - 60_000).toISOString();
  writeFileSync(out, JSON.stringify(other));
  writeFileSync(`${out}.journal`, journal);
  const refused = await runBb(['recover', out], env);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /already exists: .*--force/);
  assert.ok(existsSync(`${out}.journal`));
});
