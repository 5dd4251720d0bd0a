// `bb capture --mode forward` through the real CLI (bin/bb.js loads dist/: `npm test` builds first),
// and what bb capture says about TLS trouble: an upstream certificate bb
// cannot verify (reverse and forward), a client that does not trust bb's CA
// (forward), and forward-mode log lines that name the host (HTTP/1.1 and h2).
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import { curl, startPeers, type ForwardPeers } from './forward-harness.js';

let peers: ForwardPeers;

before(async () => {
  peers = await startPeers();
});
after(async () => {
  await peers?.close();
});

/** Starts bb with the peers' bb home, trusting no extra CA from the environment unless `env` says so. */
const bb = (args: string[], env: NodeJS.ProcessEnv = {}): BbProcess => startBb(args, { BB_HOME: peers.home, NODE_EXTRA_CA_CERTS: '', ...env });

/** Waits (bounded) for the proxy URL on stdout. */
async function proxyUrl(run: BbProcess): Promise<string> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const m = /-> forward proxy/.test(run.stdout()) ? /(http:\/\/127\.0\.0\.1:\d+) ->/.exec(run.stdout()) : null;
    if (m) return m[1]!;
    if (run.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`bb did not start: ${run.stdout()} ${run.stderr()}`);
}

interface HarLike {
  log: { _bb: { target: string }; entries: Array<{ request: { method: string; url: string; postData?: { text?: string } }; response: { status: number }; _bb?: { target?: string } }> };
}

async function stop(run: BbProcess, out: string): Promise<HarLike> {
  run.child.kill('SIGTERM');
  assert.equal(await run.exited, 0, run.stderr());
  return JSON.parse(await readFile(out, 'utf8')) as HarLike;
}

describe('bb capture --mode forward', () => {
  it('records https (intercepted), plain http and a tunnel outside --hosts in one HAR', async () => {
    const out = join(peers.dir, 'fwd.har');
    const run = bb(['capture', '--mode', 'forward', '--listen', '127.0.0.1:0', '--out', out, '--upstream-ca', peers.upstreamCaFile, '--hosts', 'localhost,127.0.0.1']);
    const url = await proxyUrl(run);
    assert.ok(run.stdout().includes(join(peers.home, 'ca.pem')), 'the start line names the CA to trust');
    const https = await curl(['-x', url, '--cacert', peers.caFile, '--data-binary', 'payload', `https://localhost:${peers.httpsPort}/api?x=1`]);
    assert.equal(https.code, 0, https.stderr);
    const plain = await curl(['-x', url, `http://127.0.0.1:${peers.httpPort}/plain`]);
    assert.equal(plain.code, 0, plain.stderr);
    const har = await stop(run, out);
    assert.equal(har.log._bb.target, 'forward');
    const rows = har.log.entries.map((e) => `${e.request.method} ${e.request.url} ${e.response.status}`);
    assert.deepEqual(rows, [`POST https://localhost:${peers.httpsPort}/api?x=1 200`, `GET http://127.0.0.1:${peers.httpPort}/plain 200`]);
    assert.equal(har.log.entries[0]!.request.postData?.text, 'payload');
  });

  it('records a host outside --hosts as a CONNECT tunnel entry', async () => {
    const out = join(peers.dir, 'tunnel.har');
    const run = bb(['capture', '--mode', 'forward', '--listen', '127.0.0.1:0', '--out', out, '--hosts', '*.elsewhere.test']);
    const url = await proxyUrl(run);
    const res = await curl(['-x', url, '--cacert', peers.upstreamCaFile, `https://localhost:${peers.httpsPort}/secret`]);
    assert.equal(res.code, 0, res.stderr);
    const har = await stop(run, out);
    assert.equal(har.log.entries.length, 1);
    const [entry] = har.log.entries;
    assert.equal(entry!.request.method, 'CONNECT');
    assert.equal(entry!.response.status, 200);
    assert.equal(entry!._bb?.target, `localhost:${peers.httpsPort}`);
  });

  it('keeps NODE_EXTRA_CA_CERTS when --upstream-ca adds another CA', async () => {
    const out = join(peers.dir, 'extra.har');
    // The upstream's CA comes only from the environment; --upstream-ca names an unrelated CA (bb's own).
    const run = bb(['capture', '--mode', 'forward', '--listen', '127.0.0.1:0', '--out', out, '--upstream-ca', peers.caFile], { NODE_EXTRA_CA_CERTS: peers.upstreamCaFile });
    const url = await proxyUrl(run);
    const res = await curl(['-x', url, '--cacert', peers.caFile, '-w', '\n%{http_code}', `https://localhost:${peers.httpsPort}/env-ca`]);
    assert.match(res.stdout, /\n200$/, res.stdout);
    await stop(run, out);
  });

  it('verifies an https --target in reverse mode, trusting --upstream-ca on top of the roots', async () => {
    const target = `https://localhost:${peers.httpsPort}`;
    const trusted = bb(['capture', '--target', target, '--listen', '127.0.0.1:0', '--out', join(peers.dir, 'rev.har'), '--upstream-ca', peers.upstreamCaFile]);
    const untrusted = bb(['capture', '--target', target, '--listen', '127.0.0.1:0', '--out', join(peers.dir, 'rev-untrusted.har')]);
    for (const [run, status] of [[trusted, '200'], [untrusted, '502']] as const) {
      const deadline = Date.now() + 15_000;
      let m: RegExpExecArray | null = null;
      while (!(m = /(http:\/\/127\.0\.0\.1:\d+) ->/.exec(run.stdout())) && Date.now() < deadline && run.child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      assert.ok(m, run.stderr());
      const res = await curl(['-w', '\n%{http_code}', `${m[1]}/reverse`]);
      assert.match(res.stdout, new RegExp(`\\n${status}$`), res.stdout);
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0, run.stderr());
    }
  });

  it('refuses what does not make sense, with exit 2 and a sentence', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--target', 'http://127.0.0.1:1'], /--mode forward takes no --target/],
      [['--listen', '0.0.0.0:0'], /--allow-remote/],
      [['--upstream-ca', peers.upstreamCaFile, '--insecure-upstream'], /contradict/],
      [['--upstream-ca', join(peers.dir, 'missing.pem')], /cannot be read/],
    ];
    for (const [extra, message] of cases) {
      const run = bb(['capture', '--mode', 'forward', '--out', join(peers.dir, 'never.har'), ...extra]);
      assert.equal(await run.exited, 2, `${extra.join(' ')}: ${run.stderr()}`);
      assert.match(run.stderr(), message);
    }
    const hostsWithoutForward = bb(['capture', '--target', 'http://127.0.0.1:1', '--hosts', 'x.test', '--out', join(peers.dir, 'never.har')]);
    assert.equal(await hostsWithoutForward.exited, 2);
    assert.match(hostsWithoutForward.stderr(), /--hosts only goes with --mode forward/);
  });
});

/** Starts bb capture with the peers' bb home, trusting no extra CA from the environment. */
function capture(args: string[]): BbProcess {
  return startBb(['capture', ...args], { BB_HOME: peers.home, NODE_EXTRA_CA_CERTS: '' });
}

/** Ends bb capture with SIGINT, as Ctrl-C does; it must exit 0. */
async function interrupt(bb: BbProcess): Promise<void> {
  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 0, bb.stderr());
}

/** A GET straight at a reverse proxy; resolves with status and body. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

test('an upstream certificate bb cannot verify: the 502 body and the log line name --upstream-ca FILE and --insecure-upstream', async () => {
  const out = join(peers.dir, 'reverse-untrusted.har');
  const bb = capture(['--target', `https://127.0.0.1:${peers.httpsPort}`, '--out', out]);
  const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  const res = await get(`${url}/v1/items`);
  assert.equal(res.status, 502);
  const body = JSON.parse(res.body) as { error: string; code: string; message: string };
  assert.equal(body.error, 'bb_upstream_failed');
  assert.match(body.message, /--upstream-ca FILE/);
  assert.match(body.message, /--insecure-upstream/);
  const line = (await bb.waitFor(/^#\d+ GET \/v1\/items 502 .*$/m))[0];
  assert.match(line, /--upstream-ca FILE.*--insecure-upstream/);
  await interrupt(bb);
});

test('forward mode: a client that rejects bb\'s certificate is logged under its CONNECT host with the hint bb ca trust-info, and bb show lists it there', async () => {
  const out = join(peers.dir, 'forward-untrusted.har');
  const bb = capture(['--mode', 'forward', '--listen', '127.0.0.1:0', '--out', out, '--upstream-ca', peers.upstreamCaFile]);
  const proxy = (await bb.waitFor(/forward: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  // curl without --cacert does not trust bb's CA and refuses the handshake.
  const refused = await curl(['-x', proxy, `https://localhost:${peers.httpsPort}/v1/items`]);
  assert.notEqual(refused.code, 0);
  const line = (await bb.waitFor(/^#\d+ .*trust-info.*$/m))[0];
  assert.match(line, new RegExp(`^#1 - https://localhost:${peers.httpsPort}/ `));
  assert.match(line, /the client does not trust bb's CA: bb ca trust-info/);
  assert.doesNotMatch(bb.stdout(), /unparseable request/);
  await interrupt(bb);
  const shown = await runBb(['show', out]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`https://localhost:${peers.httpsPort}/`));
  const har = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(har.log.entries[0].request.url, `https://localhost:${peers.httpsPort}/`);
  assert.equal(har.log.entries[0]._bb.error.phase, 'tls');
});

test('forward mode: each log line names the host the request went to', async () => {
  const out = join(peers.dir, 'forward-hosts.har');
  const bb = capture(['--mode', 'forward', '--listen', '127.0.0.1:0', '--out', out, '--upstream-ca', peers.upstreamCaFile]);
  const proxy = (await bb.waitFor(/forward: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  const tunnelled = await curl(['--cacert', peers.caFile, '-x', proxy, `https://localhost:${peers.httpsPort}/v1/items`]);
  assert.equal(tunnelled.code, 0, tunnelled.stderr);
  const plain = await curl(['-x', proxy, `http://127.0.0.1:${peers.httpPort}/plain`]);
  assert.equal(plain.code, 0, plain.stderr);
  await bb.waitFor(new RegExp(`^#\\d+ GET https://localhost:${peers.httpsPort}/v1/items 200 `, 'm'));
  await bb.waitFor(new RegExp(`^#\\d+ GET http://127\\.0\\.0\\.1:${peers.httpPort}/plain 200 `, 'm'));
  await interrupt(bb);
});

test('forward mode: an h2 stream\'s log line names its host (from :authority) as an HTTP/1.1 line does (from Host)', async () => {
  // An h2-only upstream with a CA of its own: bb mirrors curl's ALPN list upstream, so the request is h2 end to end.
  const upstreamCa = await loadOrCreateCa(join(peers.dir, 'h2-upstream-ca'));
  const leaf = await createLeafFactory(upstreamCa).pemFor('localhost');
  const server = http2.createSecureServer({ key: leaf.keyPem, cert: leaf.chainPem }, (req, res) => res.end(`over ${req.httpVersion}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const caFile = join(peers.dir, 'h2-upstream-ca.pem');
  await writeFile(caFile, upstreamCa.certPem);
  try {
    const bb = capture(['--mode', 'forward', '--listen', '127.0.0.1:0', '--out', join(peers.dir, 'forward-h2.har'), '--upstream-ca', caFile]);
    const proxy = (await bb.waitFor(/forward: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
    const res = await curl(['--http2', '--cacert', peers.caFile, '-x', proxy, '-w', ' %{http_version}', `https://localhost:${port}/v2/items`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'over 2.0 2', 'h2 from curl to bb and from bb to the server');
    await bb.waitFor(new RegExp(`^#\\d+ GET https://localhost:${port}/v2/items 200 `, 'm'));
    await interrupt(bb);
  } finally {
    server.close();
  }
});

test('forward mode: an upstream bb cannot verify names --upstream-ca FILE in the 502 the client gets', async () => {
  const out = join(peers.dir, 'forward-upstream-untrusted.har');
  const bb = capture(['--mode', 'forward', '--listen', '127.0.0.1:0', '--out', out]);
  const proxy = (await bb.waitFor(/forward: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  const res = await curl(['--cacert', peers.caFile, '-x', proxy, `https://localhost:${peers.httpsPort}/v1/items`]);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /"code":"[A-Z_]+".*--upstream-ca FILE.*--insecure-upstream/);
  await bb.waitFor(new RegExp(`^#\\d+ GET https://localhost:${peers.httpsPort}/v1/items 502 .*--upstream-ca FILE`, 'm'));
  await interrupt(bb);
});
