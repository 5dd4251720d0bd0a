// What bb capture says about TLS trouble, through the real CLI: an upstream
// certificate bb cannot verify (reverse and forward), a client that does not
// trust bb's CA (forward), and forward-mode log lines that name the host.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import { curl, startPeers, type ForwardPeers } from './forward-harness.js';

let peers: ForwardPeers;
before(async () => {
  peers = await startPeers();
});
after(async () => {
  await peers?.close();
});

/** Starts bb capture with the peers' bb home, trusting no extra CA from the environment. */
function capture(args: string[]): BbProcess {
  return startBb(['capture', ...args], { BB_HOME: peers.home, NODE_EXTRA_CA_CERTS: '' });
}

async function stop(bb: BbProcess): Promise<void> {
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
  await stop(bb);
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
  await stop(bb);
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
  await stop(bb);
});

test('forward mode: an upstream bb cannot verify names --upstream-ca FILE in the 502 the client gets', async () => {
  const out = join(peers.dir, 'forward-upstream-untrusted.har');
  const bb = capture(['--mode', 'forward', '--listen', '127.0.0.1:0', '--out', out]);
  const proxy = (await bb.waitFor(/forward: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  const res = await curl(['--cacert', peers.caFile, '-x', proxy, `https://localhost:${peers.httpsPort}/v1/items`]);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /"code":"[A-Z_]+".*--upstream-ca FILE.*--insecure-upstream/);
  await bb.waitFor(new RegExp(`^#\\d+ GET https://localhost:${peers.httpsPort}/v1/items 502 .*--upstream-ca FILE`, 'm'));
  await stop(bb);
});
