// bb capture as a user runs it: a child process, real servers, curl-like
// clients. How it ends (its last lines, a second signal) is in
// test/cli/stop.cli.test.ts; its start-up (addresses, ports in use) in
// test/cli/listen.cli.test.ts.
import { describe, it, test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { writeFileSync, readFileSync, statSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { FREED_HOST, freedPort } from '../../helpers/freed-port.js';
import { runBb, startBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { createLeafFactory, loadOrCreateCa } from '../../../proxy/tls/index.js';
import { curl } from '../../proxy/forward-harness.js';
import { startHttp1Upstream, type AlpnUpstream } from '../../proxy/tls/alpn-peers.js';

const dir = tempDir().dir;
const env = { BB_HOME: join(dir, 'home') };
const servers: http.Server[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function server(name: string): Promise<number> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/slow') {
        setTimeout(() => res.end('slow done'), 300);
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ server: name, path: req.url }));
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

const badFlags: Array<[string, string[], RegExp]> = [
  ['no target', ['capture'], /needs --target/],
  ['a target without scheme', ['capture', '--target', 'localhost'], /--target needs a URL like http:\/\/127\.0\.0\.1:3000, got 'localhost'/],
  ['a non-http target', ['capture', '--target', 'ftp://127.0.0.1:21'], /--target needs a URL/],
  ['a bad listen', ['capture', '--target', 'http://127.0.0.1:1', '--listen', 'nowhere'], /--listen needs host:port/],
  ['more listens than targets', ['capture', '--target', 'http://127.0.0.1:1', '--listen', '1', '--listen', '2'], /at most one --listen per --target/],
  ['a non-loopback admin', ['capture', '--target', 'http://127.0.0.1:1', '--admin', '0.0.0.0:9000'], /--admin must bind a loopback address/],
  ['a bad body cap', ['capture', '--target', 'http://127.0.0.1:1', '--body-cap', 'lots'], /--body-cap needs a size/],
  // An entry holds what it records as JSON text; readers parse one of at most 480 MB.
  ['a body cap past 128MiB', ['capture', '--target', 'http://127.0.0.1:1', '--body-cap', '1GiB'], /^bb: --body-cap 1GiB is past 128MiB: a HAR entry holds what it records as JSON text, and readers parse an entry of at most 480 MB; give 128MiB or less \(what passes it is hashed, and compared by its hash\)\.\n$/],
  ['a bad WebSocket budget', ['capture', '--target', 'http://127.0.0.1:1', '--ws-budget', '200MiB'], /^bb: --ws-budget 200MiB is past 128MiB/],
  ['an unknown flag', ['capture', '--target', 'http://127.0.0.1:1', '--bogus'], /unknown flag --bogus: bb capture --help lists the flags/],
];
for (const [what, args, message] of badFlags) {
  test(`refuses ${what} with exit 2 and one line`, async () => {
    const { code, stderr } = await runBb([...args, '--out', join(dir, 'never.har')], env);
    assert.equal(code, 2, stderr);
    assert.match(stderr, message);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.ok(!existsSync(join(dir, 'never.har')));
  });
}

test('an --out or BB_HOME under /proc is one line, exit 2 (node\'s recursive mkdir never returned there)', async () => {
  const out = await runBb(['capture', '--target', 'http://127.0.0.1:1', '--out', '/proc/nope/x.har'], env, { timeoutMs: 20_000 });
  assert.equal(out.code, 2, out.stderr);
  assert.match(out.stderr, /^bb: cannot write --out \/proc\/nope \(its folder does not exist\): choose another path\.\n$/);
  const home = await runBb(['ca', 'path'], { BB_HOME: '/proc/nope/home' }, { timeoutMs: 20_000 });
  assert.equal(home.code, 2, home.stderr);
  assert.match(home.stderr, /^bb: cannot create bb's home \/proc\/nope\/home \(ENOENT\): set BB_HOME to a writable folder\.\n$/);
});

test('records two targets to two files and stops cleanly on SIGTERM, finishing an in-flight exchange', async () => {
  const [p1, p2] = [await server('old'), await server('new')];
  const out = join(dir, 'two');
  const bb = startBb(['capture', '--target', `old=http://127.0.0.1:${p1}`, '--target', `new=http://127.0.0.1:${p2}`, '--out', out + '/'], env);
  const oldUrl = (await bb.waitFor(/old: (http:\/\/127\.0\.0\.1:\d+)/))[1];
  const newUrl = (await bb.waitFor(/new: (http:\/\/127\.0\.0\.1:\d+)/))[1];
  assert.deepEqual(await (await fetch(`${oldUrl}/a`)).json(), { server: 'old', path: '/a' });
  assert.deepEqual(await (await fetch(`${newUrl}/b`)).json(), { server: 'new', path: '/b' });
  const slow = fetch(`${oldUrl}/slow`).then((r) => r.text());
  await bb.waitFor(/#\d+ GET \/b 200/);
  await new Promise((r) => setTimeout(r, 50));
  bb.child.kill('SIGTERM');
  assert.equal(await slow, 'slow done', 'in-flight exchange finished during shutdown');
  assert.equal(await bb.exited, 0, bb.stderr());
  const oldHar = JSON.parse(readFileSync(join(out, 'old.har'), 'utf8'));
  const newHar = JSON.parse(readFileSync(join(out, 'new.har'), 'utf8'));
  assert.deepEqual(oldHar.log.entries.map((e: { request: { url: string } }) => new URL(e.request.url).pathname).sort(), ['/a', '/slow']);
  assert.deepEqual(newHar.log.entries.map((e: { request: { url: string } }) => new URL(e.request.url).pathname), ['/b']);
  assert.equal(oldHar.log._bb.label, 'old');
  assert.equal(oldHar.log._bb.target, `http://127.0.0.1:${p1}`);
  assert.equal(statSync(join(out, 'old.har')).mode & 0o777, 0o600);
  assert.ok(!existsSync(join(out, 'old.har.journal')));
});

test('starts when the target is down, answering 502 until it is up', async () => {
  const out = join(dir, 'down.har');
  const bb = startBb(['capture', '--target', `http://${FREED_HOST}:${await freedPort()}`, '--out', out, '--quiet'], env);
  const url = (await bb.waitFor(/(http:\/\/127\.0\.0\.1:\d+) ->/))[1];
  const res = await fetch(url);
  assert.equal(res.status, 502);
  assert.equal((await res.json()).code, 'ECONNREFUSED');
  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 0);
  const har = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(har.log.entries[0].response.status, 502);
  assert.equal(har.log.entries[0]._bb.error.code, 'ECONNREFUSED');
});

test('never overwrites a capture without --force, and stops on a leftover journal', async () => {
  const port = await server('x');
  const out = join(dir, 'exists.har');
  writeFileSync(out, 'precious');
  const r1 = await runBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out], env);
  assert.equal(r1.code, 2);
  assert.match(r1.stderr, /exists: pass --force/);
  assert.equal(readFileSync(out, 'utf8'), 'precious');
  const out2 = join(dir, 'left.har');
  writeFileSync(`${out2}.journal`, '');
  const r2 = await runBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out2, '--force'], env);
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, new RegExp(`bb recover ${out2.replace(/[.]/g, '\\.')}`));
});

test('marks steps through the admin endpoint; the proxied port never answers admin routes', async () => {
  const port = await server('steps');
  const out = join(dir, 'steps.har');
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out, '--admin', '127.0.0.1:0'], env);
  const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/))[1];
  const admin = (await bb.waitFor(/admin: (http:\/\/127\.0\.0\.1:\d+)/))[1];
  await fetch(`${url}/before`).then((r) => r.text());
  const step = await fetch(`${admin}/step`, { method: 'POST', body: JSON.stringify({ name: 'login' }) });
  assert.equal(step.status, 200);
  await fetch(`${url}/after`).then((r) => r.text());
  const proxiedStep = await fetch(`${url}/step`, { method: 'POST', body: '{"name":"x"}' });
  assert.deepEqual(await proxiedStep.json(), { server: 'steps', path: '/step' }, 'the proxied port forwards /step to the server');
  const status = await (await fetch(`${admin}/status`)).json();
  assert.equal(status.captures[0].label, 'capture');
  assert.equal((await fetch(`${admin}/step`, { method: 'POST', body: '{"name": "x", "label": "nope"}' })).status, 404);
  assert.equal((await fetch(`${admin}/step`, { method: 'POST', body: 'not json' })).status, 400);
  bb.child.kill('SIGTERM');
  assert.equal(await bb.exited, 0);
  const har = JSON.parse(readFileSync(out, 'utf8'));
  assert.deepEqual(har.log.pages.map((p: { title: string }) => p.title), ['login']);
  const byPath = Object.fromEntries(har.log.entries.map((e: { request: { url: string }; pageref?: string }) => [new URL(e.request.url).pathname, e.pageref]));
  assert.equal(byPath['/before'], undefined);
  assert.equal(byPath['/after'], har.log.pages[0].id);
  assert.equal(byPath['/step'], har.log.pages[0].id);
});

// `bb capture --listen-tls` through the real CLI (bin/bb.js loads dist/: `npm test` builds first).
describe('bb capture --listen-tls', () => {
  let dir: string;
  let home: string;
  let upstreamCaFile: string;
  let h1: AlpnUpstream;

  before(async () => {
    dir = tempDir().dir;
    home = join(dir, 'home');
    const upstreamCa = await loadOrCreateCa(join(dir, 'upstream-ca'));
    upstreamCaFile = join(dir, 'upstream-ca.pem');
    await writeFile(upstreamCaFile, upstreamCa.certPem);
    h1 = await startHttp1Upstream(createLeafFactory(upstreamCa));
  });
  after(async () => {
    await h1?.close();
  });

  it('listens on https://, records what curl sends through it, and names the CA', async () => {
    const out = join(dir, 'tls.har');
    const run = startBb(['capture', '--listen-tls', '--target', `https://localhost:${h1.port}`, '--upstream-ca', upstreamCaFile, '--out', out], { BB_HOME: home, NODE_EXTRA_CA_CERTS: '' }, { timeoutMs: 60_000 });
    const [, url] = await run.waitFor(/(https:\/\/127\.0\.0\.1:\d+) -> https:\/\/localhost:\d+/, 20_000);
    const port = new URL(url!).port;
    assert.ok(run.stdout().includes(`clients trust ${join(home, 'ca.pem')}`), run.stdout());
    const res = await curl(['--cacert', join(home, 'ca.pem'), '--http1.1', `https://localhost:${port}/cli-tls?q=1`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'h1 /cli-tls?q=1');
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.stderr());
    const har = JSON.parse(await readFile(out, 'utf8')) as { log: { _bb: { listen: string }; entries: Array<{ request: { url: string }; response: { status: number } }> } };
    assert.match(har.log._bb.listen, /^https:\/\//);
    assert.deepEqual(har.log.entries.map((e) => `${e.request.url} ${e.response.status}`), [`https://localhost:${port}/cli-tls?q=1 200`]);
  });

  it('refuses an http:// target in one line, exit 2, before anything starts', async () => {
    const out = join(dir, 'never.har');
    const res = await runBb(['capture', '--listen-tls', '--target', 'http://127.0.0.1:3000', '--out', out], { BB_HOME: home });
    assert.equal(res.code, 2);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /--listen-tls needs an https:\/\/ target .*got http:\/\/127\.0\.0\.1:3000/);
    await assert.rejects(readFile(out), /ENOENT/);
  });

  it('refuses --listen-tls with --mode forward', async () => {
    const res = await runBb(['capture', '--mode', 'forward', '--listen-tls'], { BB_HOME: home });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--listen-tls is for reverse mode/);
  });
});

test('--rotate: finished segments while it runs, seqs running on across them, each said as written; bad values refused', async () => {
  const port = await server('rot');
  const out = join(dir, 'rot', 'cap.har');
  const bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', out, '--quiet', '--rotate', '300ms'], env);
  const url = (await bb.waitFor(/(http:\/\/127\.0\.0\.1:\d+) ->/))[1];
  // Requests until two segments were written while it runs (bounded), then one more for a third.
  let sent = 0;
  while (sent < 80 && !/wrote \S*cap-0002\.har \(segment 2\)/.test(bb.stdout() + bb.stderr())) {
    await (await fetch(`${url}/r${sent++}`)).text();
    await new Promise((r) => setTimeout(r, 50));
  }
  await bb.waitFor(/wrote \S*cap-0001\.har \(segment 1\)/);
  await bb.waitFor(/wrote \S*cap-0002\.har \(segment 2\)/);
  await (await fetch(`${url}/r${sent++}`)).text();
  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 0, bb.stderr());
  const names = readdirSync(join(dir, 'rot')).sort();
  assert.ok(names.length >= 3 && names.every((n) => /^cap-\d{4}\.har$/.test(n)), names.join(' '));
  assert.match(bb.stdout(), new RegExp(`wrote ${names.length} segments of \\S*cap-\\*\\.har \\(${sent} entries`));
  const seqs = names.flatMap((n) => (JSON.parse(readFileSync(join(dir, 'rot', n), 'utf8')) as { log: { entries: Array<{ _bb: { seq: number } }> } }).log.entries.map((e) => e._bb.seq));
  assert.equal(seqs.length, sent);
  assert.equal(new Set(seqs).size, sent);
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  for (const bad of ['0', 'banana']) {
    const run = await runBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', join(dir, 'never.har'), '--rotate', bad], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--rotate needs a segment size/);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  }
});
