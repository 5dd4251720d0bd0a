// ALPN mirrored in forward mode (docs/forward-mode-and-tls.md "ALPN: mirrored,
// never translated"): bb offers the upstream exactly the client's ALPN list and
// answers the client with what the upstream chose, over the one upstream
// connection it made for that. Real peers: curl, node:tls clients, a node:http2
// server, a node:https one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { join } from 'node:path';
import { FactBus } from '../../../proxy/events.js';
import { startForwardProxy, type RunningForwardProxy } from '../../../proxy/forward.js';
import { createLeafFactory, loadOrCreateCa } from '../../../proxy/tls/index.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { curl, FactLog, startPeers, type ForwardPeers } from '../forward-harness.js';
import { startH2Upstream, startHttp1Upstream, type AlpnUpstream } from './alpn-peers.js';

let peers: ForwardPeers;
let proxy: RunningForwardProxy;
let log: FactLog;
let h2: AlpnUpstream;
let h1: AlpnUpstream;
let closedPort: number;
const cleanups = new Cleanups();

before(async () => {
  peers = await startPeers();
  const upstreamLeaves = createLeafFactory(await loadOrCreateCa(join(peers.dir, 'upstream-ca')));
  h2 = await startH2Upstream(upstreamLeaves);
  h1 = await startHttp1Upstream(upstreamLeaves);
  const bus = new FactBus();
  log = new FactLog(bus);
  proxy = await startForwardProxy({ ca: peers.ca, bus, upstreamTls: { extraCa: [peers.upstreamCaPem] } });
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closedPort = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
});
after(async () => {
  await cleanups.run();
  await proxy?.close(100);
  await h2?.close();
  await h1?.close();
  await peers?.close();
});

/** Opens a CONNECT tunnel through bb and a TLS client inside it offering `alpn`; resolves once the handshake ends either way. */
function tlsThroughProxy(port: number, alpn: string[] | undefined): Promise<{ socket?: tls.TLSSocket; error?: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    const connect = http.request({ host: proxy.host, port: proxy.port, method: 'CONNECT', path: `localhost:${port}`, headers: { Host: `localhost:${port}` } });
    connect.once('connect', (_res, raw) => {
      const socket = tls.connect({ socket: raw, servername: 'localhost', ca: [peers.ca.certPem], ...(alpn ? { ALPNProtocols: alpn } : {}) });
      socket.once('secureConnect', () => resolve({ socket }));
      socket.once('error', (error) => resolve({ error }));
    });
    connect.once('error', (error) => resolve({ error }));
    connect.end();
  });
}

/** Sends one HTTP/1.1 GET on a socket and reads until the server closes. */
function getOver(socket: tls.TLSSocket, path: string): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  });
}

describe('ALPN mirrored through forward mode', () => {
  it('gives curl --http2 h2 with an h2-only upstream, over the one upstream connection bb made', async () => {
    const before = h2.connections.length;
    const res = await curl(['-x', proxy.url, '--cacert', peers.caFile, '--http2', '--data-binary', 'ping', '-w', '\n%{http_version}', `https://localhost:${h2.port}/alpn-h2`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'h2 /alpn-h2 ping\n2', 'curl spoke h2 and the bytes crossed both ways');
    assert.deepEqual(h2.connections.slice(before), ['h2'], 'the upstream negotiated h2 on exactly one connection');
  });

  it('gives a node:http2 client h2 end to end through a CONNECT tunnel', async () => {
    const before = h2.connections.length;
    const { socket, error } = await tlsThroughProxy(h2.port, ['h2']);
    assert.ifError(error);
    assert.equal(socket!.alpnProtocol, 'h2');
    const session = http2.connect(`https://localhost:${h2.port}`, { createConnection: () => socket! });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ':path': '/node-h2', ':method': 'GET' });
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => resolve(Buffer.concat(chunks).toString()));
        req.on('error', reject);
        req.end();
      });
      assert.equal(body, 'h2 /node-h2 ');
    } finally {
      session.destroy();
    }
    assert.deepEqual(h2.connections.slice(before), ['h2']);
  });

  it('gives a client offering h2 and http/1.1 http/1.1 from an http/1.1-only upstream, recorded as before', async () => {
    const before = h1.connections.length;
    const from = log.mark();
    const res = await curl(['-x', proxy.url, '--cacert', peers.caFile, '--http2', '-w', '\n%{http_version}', `https://localhost:${h1.port}/alpn-both`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'h1 /alpn-both\n1.1');
    assert.deepEqual(h1.connections.slice(before), ['http/1.1'], 'one upstream connection: the tap used the one bb made for the handshake');
    const started = log.since(from).find((f) => f.type === 'exchange-started' && f.target === '/alpn-both');
    assert.ok(started && started.type === 'exchange-started');
    assert.equal(started.scheme, 'https');
    assert.equal(started.upstream, `https://localhost:${h1.port}`);
    await log.waitFor('exchange-completed', (f) => f.type === 'exchange-completed' && f.exchangeId === started.exchangeId, 5_000, from);
  });

  it('offers no ALPN upstream when the client offers none, and none to the client', async () => {
    const before = h1.connections.length;
    const { socket, error } = await tlsThroughProxy(h1.port, undefined);
    assert.ifError(error);
    assert.equal(socket!.alpnProtocol, false);
    const answer = await getOver(socket!, '/no-alpn');
    assert.match(answer, /^HTTP\/1\.1 200 [\s\S]*\r\nh1 \/no-alpn\r\n0\r\n\r\n$/);
    assert.deepEqual(h1.connections.slice(before), [false]);
  });

  it('refuses a client offering only h2 to an http/1.1-only upstream with no_application_protocol, recorded', async () => {
    const before = h1.connections.length;
    const from = log.mark();
    const { error } = await tlsThroughProxy(h1.port, ['h2']);
    assert.equal(error?.code, 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL', String(error));
    const fact = await log.waitFor('client-error', (f) => f.type === 'client-error' && f.error.phase === 'tls', 5_000, from);
    assert.ok(fact.type === 'client-error');
    assert.equal(fact.error.code, 'ERR_SSL_NO_APPLICATION_PROTOCOL');
    assert.match(fact.error.message, new RegExp(`localhost:${h1.port} failed: the upstream accepts none of the protocols`));
    assert.doesNotMatch(fact.error.message, /trust-info/, 'not blamed on bb\'s CA');
    assert.equal(h1.connections.length, before, 'the upstream refused the handshake: no connection was accepted');
  });

  it('finishes the handshake with http/1.1 when the upstream is down, and the tap answers and records its 502', async () => {
    const from = log.mark();
    const res = await curl(['-x', proxy.url, '--cacert', peers.caFile, '--http2', '-w', '\n%{http_version} %{http_code}', `https://localhost:${closedPort}/down`]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /bb_upstream_failed[\s\S]*\n1\.1 502$/);
    const started = log.since(from).find((f) => f.type === 'exchange-started' && f.target === '/down');
    assert.ok(started && started.type === 'exchange-started');
    const failed = await log.waitFor('exchange-failed', (f) => f.type === 'exchange-failed' && f.exchangeId === started.exchangeId, 5_000, from);
    assert.ok(failed.type === 'exchange-failed');
    assert.equal(failed.error.code, 'ECONNREFUSED');
  });
});

describe('h2 through forward mode in the HAR', () => {
  it('records curl --http2 to an h2 upstream as HTTP/2.0 entries', async () => {
    const rec = await record(cleanups, 'http://unused.invalid', { mode: 'forward', upstreamTls: { extraCa: [peers.upstreamCaPem] } });
    const res = await curl(['-x', `http://127.0.0.1:${rec.port}`, '--cacert', join(rec.dir, 'home', 'ca.pem'), '--http2', `https://localhost:${h2.port}/har-h2`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'h2 /har-h2 ');
    const har = await rec.finish();
    const entry = har.log.entries.find((e) => e.request.url === `https://localhost:${h2.port}/har-h2`);
    assert.ok(entry, 'one entry for the stream');
    assert.equal(entry.request.httpVersion, 'HTTP/2.0');
    assert.equal(entry.response.httpVersion, 'HTTP/2.0');
    assert.equal(entry.response.status, 200);
    assert.ok(entry.response.headers.some((h) => h.name === 'x-upstream' && h.value === 'h2'));
  });

  it('answers an h2-only client whose upstream is down with a recorded 502 per stream', async () => {
    const from = log.mark();
    const { socket, error } = await tlsThroughProxy(closedPort, ['h2']);
    assert.ifError(error);
    assert.equal(socket!.alpnProtocol, 'h2', 'an h2-only client gets h2 from bb, which answers for the missing upstream');
    const session = http2.connect(`https://localhost:${closedPort}`, { createConnection: () => socket! });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no response within 10 s')), 10_000);
        const req = session.request({ ':path': '/h2-down' });
        req.once('response', (headers) => {
          clearTimeout(timer);
          resolve(Number(headers[':status']));
        });
        req.once('error', reject);
        req.once('close', () => reject(new Error('the stream closed without a response')));
        session.once('error', reject);
        req.end();
      });
      assert.equal(status, 502);
    } finally {
      session.destroy();
    }
    await log.waitFor('exchange-failed', (f) => f.type === 'exchange-failed', 5_000, from);
  });
});
