// bb in forward mode with real clients: curl -x, undici's ProxyAgent, ws over wss, raw CONNECT sockets.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import WebSocket from 'ws';
import { ProxyAgent, fetch } from 'undici';
import { FactBus } from '../../proxy/events.js';
import { isLoopbackHost } from '../../core/index.js';
import { startForwardProxy, hostMatcher, type RunningForwardProxy } from '../../proxy/forward.js';
import { curl, FactLog, header, startPeers, type ForwardPeers } from './forward-harness.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';

let peers: ForwardPeers;
let proxy: RunningForwardProxy;
let log: FactLog;

before(async () => {
  peers = await startPeers();
  const bus = new FactBus();
  log = new FactLog(bus);
  proxy = await startForwardProxy({ ca: peers.ca, bus, upstreamTls: { extraCa: [peers.upstreamCaPem] } });
});
after(async () => {
  await proxy?.close(100);
  await peers?.close();
});

describe('forward proxy', () => {
  it('intercepts curl -x https (bb CA via --cacert) and records method, headers and body', async () => {
    const from = log.mark();
    const url = `https://localhost:${peers.httpsPort}/items?q=1`;
    const res = await curl(['-x', proxy.url, '--cacert', peers.caFile, '-H', 'X-Test: One', '--data-binary', 'hello body', url]);
    assert.equal(res.code, 0, res.stderr);
    const seen = JSON.parse(res.stdout) as { method: string; url: string; body: string; tls: boolean; rawHeaders: string[] };
    assert.deepEqual([seen.method, seen.url, seen.body, seen.tls], ['POST', '/items?q=1', 'hello body', true]);
    assert.equal(header(seen.rawHeaders, 'X-Test'), 'One');

    const started = log.started((f) => f.target === '/items?q=1');
    assert.equal(started.length, 1, 'the request inside the tunnel is an exchange');
    const start = started[0]!;
    assert.equal(start.scheme, 'https');
    assert.equal(start.method, 'POST');
    assert.equal(start.upstream, `https://localhost:${peers.httpsPort}`);
    assert.equal(header(start.rawHeaders, 'Host'), `localhost:${peers.httpsPort}`);
    assert.ok(start.rawHeaders.includes('X-Test'), 'header name case kept');
    const facts = log.of(start.exchangeId);
    const body = facts.filter((f) => f.type === 'request-body').map((f) => (f as { chunk: Buffer }).chunk);
    assert.equal(Buffer.concat(body).toString(), 'hello body');
    const response = facts.find((f) => f.type === 'response-started') as { statusCode: number; rawHeaders: string[] } | undefined;
    assert.equal(response?.statusCode, 200);
    assert.equal(header(response!.rawHeaders, 'X-Upstream'), 'yes');
    assert.ok(facts.some((f) => f.type === 'exchange-completed'));
    const connects = log.since(from).filter((f) => f.type === 'exchange-started' && f.method === 'CONNECT');
    assert.equal(connects.length, 0, 'an intercepted CONNECT is not an entry of its own');
    assert.equal(proxy.leaves.stats.issued, 1, 'one leaf so far: for localhost, the first host this proxy intercepted');
  });

  it('intercepts undici ProxyAgent to an IP host (leaf with an IP SAN)', async () => {
    const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: peers.ca.certPem } });
    try {
      const res = await fetch(`https://127.0.0.1:${peers.httpsPort}/undici`, { dispatcher: agent, method: 'PUT', body: 'u-body' });
      assert.equal(res.status, 200);
      const seen = (await res.json()) as { method: string; body: string };
      assert.deepEqual([seen.method, seen.body], ['PUT', 'u-body']);
    } finally {
      await agent.close();
    }
    const started = log.started((f) => f.target === '/undici');
    assert.equal(started.length, 1);
    const start = started[0]!;
    assert.equal(start.scheme, 'https');
    assert.equal(start.upstream, `https://127.0.0.1:${peers.httpsPort}`);
    const body = log.of(start.exchangeId).filter((f) => f.type === 'request-body').map((f) => (f as { chunk: Buffer }).chunk);
    assert.equal(Buffer.concat(body).toString(), 'u-body');
  });

  it('records the messages of a ws client over wss through the proxy', async () => {
    // ws has no proxy support of its own: an agent whose sockets are CONNECT tunnels through bb.
    const agent = new https.Agent({ keepAlive: false });
    Object.assign(agent, {
      createConnection(options: { host: string; port: number; servername?: string }, done: (err: Error | null, socket?: net.Socket) => void) {
        const connect = http.request({ host: proxy.host, port: proxy.port, method: 'CONNECT', path: `${options.host}:${options.port}`, headers: { Host: `${options.host}:${options.port}` } });
        connect.once('connect', (res, socket) => {
          if (res.statusCode !== 200) return done(new Error(`CONNECT answered ${res.statusCode}`));
          done(null, tls.connect({ socket, servername: options.servername || options.host, ca: [peers.ca.certPem], ALPNProtocols: ['http/1.1'] }));
        });
        connect.once('error', done);
        connect.end();
      },
    });
    const ws = new WebSocket(`wss://localhost:${peers.httpsPort}/ws`, { agent });
    const reply = await new Promise<string>((resolve, reject) => {
      ws.once('open', () => ws.send('hello over wss'));
      ws.once('message', (data) => resolve(data.toString()));
      ws.once('error', reject);
    });
    assert.equal(reply, 'echo:hello over wss');
    ws.close(1000, 'done');
    await new Promise((r) => ws.once('close', r));
    const [start] = log.started((f) => f.target === '/ws' && f.upgrade);
    assert.ok(start, 'the upgrade inside the tunnel is an exchange');
    assert.equal(start.scheme, 'https');
    assert.equal(start.upstream, `https://localhost:${peers.httpsPort}`);
    await log.waitFor('upgrade-closed', (f) => f.type === 'upgrade-closed' && f.exchangeId === start.exchangeId);
    const messages = log
      .of(start.exchangeId)
      .filter((f): f is Extract<typeof f, { type: 'ws-message' }> => f.type === 'ws-message' && f.opcode === 1)
      .map((f) => `${f.direction} ${f.data.toString()}`);
    assert.deepEqual(messages, ['send hello over wss', 'receive echo:hello over wss']);
  });

  it('proxies plain http absolute-form requests to the host they name', async () => {
    const url = `http://127.0.0.1:${peers.httpPort}/plain?x=2`;
    const res = await curl(['-x', proxy.url, url]);
    assert.equal(res.code, 0, res.stderr);
    const seen = JSON.parse(res.stdout) as { url: string; tls: boolean };
    assert.deepEqual([seen.url, seen.tls], ['/plain?x=2', false], 'the server gets origin-form');
    const [start] = log.started((f) => f.target === url);
    assert.ok(start, 'the exchange keeps the absolute-form target');
    assert.equal(start.scheme, 'http');
    assert.equal(start.upstream, `http://127.0.0.1:${peers.httpPort}`);
  });

  it('hands plain HTTP inside a CONNECT tunnel to the same recorder', async () => {
    const res = await curl(['-x', proxy.url, '--proxytunnel', `http://127.0.0.1:${peers.httpPort}/in-tunnel`]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal((JSON.parse(res.stdout) as { url: string }).url, '/in-tunnel');
    const started = log.started((f) => f.target === '/in-tunnel');
    assert.equal(started.length, 1);
    const start = started[0]!;
    assert.equal(start.scheme, 'http');
    assert.equal(start.upstream, `http://127.0.0.1:${peers.httpPort}`);
  });

  it('answers 502 with a tls-phase failure when the upstream certificate does not verify', async () => {
    const bus = new FactBus();
    const strictLog = new FactLog(bus);
    const strict = await startForwardProxy({ leaves: proxy.leaves, bus }); // no extra CA: the upstream's CA is unknown
    try {
      const res = await curl(['-x', strict.url, '--cacert', peers.caFile, '-w', '\n%{http_code}', `https://localhost:${peers.httpsPort}/strict`]);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /\n502$/);
      assert.match(res.stdout, /bb_upstream_failed/);
      const started = strictLog.started((f) => f.target === '/strict');
      assert.equal(started.length, 1);
      const start = started[0]!;
      const failed = strictLog.of(start.exchangeId).find((f) => f.type === 'exchange-failed') as { error: { phase: string; code: string } } | undefined;
      assert.equal(failed?.error.phase, 'tls', JSON.stringify(failed));
    } finally {
      await strict.close(100);
    }
    const insecure = await startForwardProxy({ leaves: proxy.leaves, upstreamTls: { insecure: true } });
    try {
      const res = await curl(['-x', insecure.url, '--cacert', peers.caFile, '-w', '\n%{http_code}', `https://localhost:${peers.httpsPort}/insecure`]);
      assert.match(res.stdout, /\n200$/, res.stderr);
    } finally {
      await insecure.close(100);
    }
  });

  it('refuses a non-loopback listen without allowRemote', async () => {
    await assert.rejects(startForwardProxy({ leaves: proxy.leaves, listen: { host: '0.0.0.0' } }), (err: Error & { code?: string }) => {
      assert.ok(isBbError(err), String(err));
      assert.equal(err.code, 'BB_FORWARD_REMOTE');
      assert.equal(exitStatusFor(err), 2);
      assert.match(err.message, /--allow-remote/);
      return true;
    });
    const open = await startForwardProxy({ leaves: proxy.leaves, listen: { host: '0.0.0.0' }, allowRemote: true });
    try {
      assert.equal(open.remote, true);
    } finally {
      await open.close(100);
    }
    assert.equal(proxy.remote, false);
  });

  it('matches host globs and loopback names', () => {
    const only = hostMatcher(['*.example.com', 'API.test']);
    const table: Array<[string, boolean]> = [
      ['a.example.com', true],
      ['A.B.Example.com.', true],
      ['example.com', false],
      ['api.test', true],
      ['api.test.evil', false],
    ];
    for (const [host, want] of table) assert.equal(only(host), want, host);
    assert.equal(hostMatcher([])('anything'), true);
    for (const [host, want] of [['127.0.0.1', true], ['[::1]', true], ['localhost', true], ['0.0.0.0', false], ['10.0.0.1', false]] as const) {
      assert.equal(isLoopbackHost(host), want, host);
    }
  });

  it('refuses origin-form requests and requests for bb itself with a recorded failure', async () => {
    const origin = await curl(['-w', '\n%{http_code}', `${proxy.url}/not-absolute`]);
    assert.match(origin.stdout, /\n502$/);
    const started = log.started((f) => f.target === '/not-absolute');
    assert.equal(started.length, 1);
    const start = started[0]!;
    assert.ok(log.of(start.exchangeId).some((f) => f.type === 'exchange-failed'));
    const loop = await curl(['-x', proxy.url, '-w', '\n%{http_code}', `http://127.0.0.1:${proxy.port}/loop`]);
    assert.match(loop.stdout, /names bb's own address[\s\S]*\n502$/);
  });
});

describe('forward proxy tunnels', () => {
  /** Sends CONNECT on a raw socket; resolves once bb answered, with the socket and the answer. */
  function connectRaw(port: number, target: string): Promise<{ socket: net.Socket; answer: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
      socket.once('error', reject);
      socket.once('data', (chunk: Buffer) => resolve({ socket, answer: chunk.toString('latin1') }));
    });
  }

  it('pipes a non-HTTP, non-TLS tunnel opaquely and records it as a CONNECT entry', async () => {
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const port = (echo.address() as net.AddressInfo).port;
    try {
      const { socket, answer } = await connectRaw(proxy.port, `127.0.0.1:${port}`);
      assert.match(answer, /^HTTP\/1\.1 200 /);
      const bytes = Buffer.from('00ff10bbcafe', 'hex');
      const back = await new Promise<Buffer>((resolve) => {
        socket.once('data', resolve);
        socket.write(bytes);
      });
      assert.deepEqual(back, bytes);
      socket.end();
      const [start] = log.started((f) => f.method === 'CONNECT' && f.target === `127.0.0.1:${port}`);
      assert.ok(start, 'the tunnel is an entry');
      assert.equal(start.upstream, `tcp://127.0.0.1:${port}`);
      await log.waitFor('exchange-completed', (f) => f.type === 'exchange-completed' && f.exchangeId === start.exchangeId);
      const response = log.of(start.exchangeId).find((f) => f.type === 'response-started') as { statusCode: number } | undefined;
      assert.equal(response?.statusCode, 200);
      assert.equal(log.of(start.exchangeId).filter((f) => f.type === 'request-body' || f.type === 'response-body').length, 0, 'opaque bytes are not bodies');
    } finally {
      echo.close();
    }
  });

  it('keeps a tunnel opened after plain requests on the same connection when their upstream closes', async () => {
    // The plain request's upstream ends its keep-alive connection 150 ms after
    // the answer. That connection is no longer the client's: its close must
    // not end the tunnel now carried by the client socket.
    const plain = http.createServer((_req, res) => res.end('plain'));
    plain.keepAliveTimeout = 150;
    const echo = net.createServer((s) => s.pipe(s));
    await Promise.all([new Promise<void>((r) => plain.listen(0, '127.0.0.1', r)), new Promise<void>((r) => echo.listen(0, '127.0.0.1', r))]);
    const plainPort = (plain.address() as net.AddressInfo).port;
    const echoPort = (echo.address() as net.AddressInfo).port;
    const upstreamClosed = new Promise<void>((r) => plain.once('connection', (s: net.Socket) => s.once('close', () => r())));
    const socket = net.connect(proxy.port, '127.0.0.1');
    try {
      let text = '';
      const until = (re: RegExp) => new Promise<void>((resolve, reject) => {
        const check = () => (re.test(text) ? (socket.off('data', onData), resolve()) : undefined);
        const onData = (d: Buffer) => ((text += d.toString('latin1')), check());
        socket.on('data', onData);
        socket.once('end', () => reject(new Error(`bb ended the client connection; it had sent: ${JSON.stringify(text)}`)));
        check();
      });
      socket.write(`GET http://127.0.0.1:${plainPort}/ HTTP/1.1\r\nHost: 127.0.0.1:${plainPort}\r\n\r\n`);
      await until(/\r\n\r\nplain$/);
      socket.write(`CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\nHost: 127.0.0.1:${echoPort}\r\n\r\n`);
      await until(/HTTP\/1\.1 200 [^\r]*\r\n(?:[^\r]+\r\n)*\r\n$/);
      await upstreamClosed;
      text = '';
      socket.write('still here');
      await until(/^still here$/);
    } finally {
      socket.destroy();
      plain.close();
      echo.close();
    }
  });

  it('pipes a server-speaks-first tunnel after the first-bytes wait', async () => {
    const banner = net.createServer((s) => {
      s.write('220 hello\r\n');
      s.on('data', (d) => s.end(`got ${d.toString()}`));
    });
    await new Promise<void>((r) => banner.listen(0, '127.0.0.1', r));
    const port = (banner.address() as net.AddressInfo).port;
    const quick = await startForwardProxy({ leaves: proxy.leaves, firstBytesTimeoutMs: 150 });
    try {
      const { socket } = await connectRaw(quick.port, `127.0.0.1:${port}`);
      const greeting = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString())));
      assert.equal(greeting, '220 hello\r\n');
      const reply = await new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString()));
        socket.once('end', () => resolve(text));
        socket.write('QUIT');
      });
      assert.equal(reply, 'got QUIT');
    } finally {
      await quick.close(100);
      banner.close();
    }
  });

  it('tunnels a host outside --hosts without interception and records the tunnel', async () => {
    const bus = new FactBus();
    const onlyLog = new FactLog(bus);
    const only = await startForwardProxy({ leaves: proxy.leaves, bus, hosts: ['*.intercepted.test'], upstreamTls: { extraCa: [peers.upstreamCaPem] } });
    try {
      // The client must trust the upstream's own CA: bb does not terminate TLS for this host.
      const res = await curl(['-x', only.url, '--cacert', peers.upstreamCaFile, `https://localhost:${peers.httpsPort}/outside`]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal((JSON.parse(res.stdout) as { url: string }).url, '/outside');
      const withBbCa = await curl(['-x', only.url, '--cacert', peers.caFile, `https://localhost:${peers.httpsPort}/outside`]);
      assert.notEqual(withBbCa.code, 0, 'bb\'s CA does not vouch for a tunnelled host');
      assert.equal(onlyLog.started((f) => f.target === '/outside').length, 0, 'nothing inside the tunnel is recorded');
      const tunnels = onlyLog.started((f) => f.method === 'CONNECT' && f.target === `localhost:${peers.httpsPort}`);
      assert.equal(tunnels.length, 2);
      await onlyLog.waitFor('tunnel end', (f) => f.type === 'exchange-completed' && f.exchangeId === tunnels[0]!.exchangeId);
    } finally {
      await only.close(100);
    }
  });

  it('answers 502 for a tunnel outside --hosts whose upstream refuses', async () => {
    const bus = new FactBus();
    const onlyLog = new FactLog(bus);
    const only = await startForwardProxy({ leaves: proxy.leaves, bus, hosts: ['nothing.test'] });
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    try {
      const { answer } = await connectRaw(only.port, `127.0.0.1:${port}`);
      assert.match(answer, /^HTTP\/1\.1 502 /);
      const failed = (await onlyLog.waitFor('exchange-failed', (f) => f.type === 'exchange-failed')) as { error: { code: string; phase: string } };
      assert.deepEqual([failed.error.code, failed.error.phase], ['ECONNREFUSED', 'connect']);
    } finally {
      await only.close(100);
    }
  });

  it('records a client that refuses bb\'s certificate as a tls client-error', async () => {
    // curl (OpenSSL) sends an "unknown CA" alert mid-handshake; Node's client would just hang up afterwards.
    const from = log.mark();
    const res = await curl(['-x', proxy.url, `https://localhost:${peers.httpsPort}/untrusted`]);
    assert.notEqual(res.code, 0);
    const fact = (await log.waitFor('client-error', (f) => f.type === 'client-error' && f.error.phase === 'tls', 5_000, from)) as { error: { code: string; message: string } };
    assert.match(fact.error.code, /ALERT_UNKNOWN_CA/);
    assert.match(fact.error.message, /localhost:\d+.*bb ca trust-info/);
    assert.equal(log.started((f) => f.target === '/untrusted').length, 0);
  });

  it('refuses a CONNECT without host:port', async () => {
    const { answer } = await connectRaw(proxy.port, 'no-port-here');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /CONNECT needs host:port/);
  });
});
