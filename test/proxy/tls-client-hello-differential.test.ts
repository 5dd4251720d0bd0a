// bb's ClientHello reader against Node's own TLS server on the same bytes:
// real ClientHellos from node:tls, curl and Chromium reach a server that
// reads them with readClientHello, then hands them to a TLSSocket whose
// SNICallback and ALPNCallback say what OpenSSL read. Both must agree.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { join } from 'node:path';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';
import { readClientHello } from '../../proxy/tls/alpn-mirror.js';
import type { ClientHelloInfo } from '../../proxy/tls/client-hello.js';
import { tempDir } from '../helpers/tmp.js';
import { CHROMIUM } from '../helpers/browser-app.js';
import { curl } from './forward-harness.js';

interface Seen {
  bb: ClientHelloInfo | { refused: string } | { closed: true };
  node: ClientHelloInfo;
  /** Bytes of the records that held the hello. */
  length: number;
}

let server: net.Server;
let port: number;
const seen: Seen[] = [];

before(async () => {
  const { dir } = tempDir();
  const leaves = createLeafFactory(await loadOrCreateCa(join(dir, 'ca')));
  const ctx = await leaves.contextFor('localhost');
  server = net.createServer(async (raw) => {
    raw.on('error', () => {});
    const read = await readClientHello(raw, 5_000);
    const node: ClientHelloInfo = {};
    const socket = new tls.TLSSocket(raw, {
      isServer: true,
      secureContext: ctx,
      SNICallback: (name, done) => {
        node.servername = name;
        done(null, ctx);
      },
      ALPNCallback: ({ protocols }) => {
        node.alpn = protocols;
        return protocols[0];
      },
    });
    let recorded = false;
    const record = (): void => {
      if (recorded) return;
      recorded = true;
      seen.push({ bb: 'hello' in read ? read.hello : read, node, length: 'length' in read ? read.length : 0 });
      socket.destroy();
    };
    socket.once('secure', record);
    socket.once('error', record);
    socket.once('close', record);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  await new Promise((r) => server.close(r));
});

/** Waits (bounded) until `n` more hellos were seen since `from`, and returns them. */
async function hellos(from: number, n = 1, timeoutMs = 15_000): Promise<Seen[]> {
  const deadline = Date.now() + timeoutMs;
  while (seen.length < from + n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(seen.length >= from + n, `saw ${seen.length - from} ClientHellos, wanted ${n}`);
  return seen.slice(from);
}

function assertAgree(list: Seen[], want?: ClientHelloInfo): void {
  for (const s of list) {
    assert.deepEqual(s.bb, s.node, 'bb reads what OpenSSL reads');
    assert.ok(s.length > 0);
    if (want) assert.deepEqual(s.bb, want);
  }
}

describe('ClientHellos of real clients, read by bb and by OpenSSL', () => {
  const nodeCases: Array<[string, tls.ConnectionOptions, ClientHelloInfo]> = [
    ['h2 and http/1.1 with SNI', { servername: 'a.test', ALPNProtocols: ['h2', 'http/1.1'] }, { servername: 'a.test', alpn: ['h2', 'http/1.1'] }],
    ['http/1.1 only', { servername: 'b.test', ALPNProtocols: ['http/1.1'] }, { servername: 'b.test', alpn: ['http/1.1'] }],
    ['no ALPN', { servername: 'c.test' }, { servername: 'c.test' }],
    ['no SNI (an IP host), three protocols', { ALPNProtocols: ['grpc-exp', 'h2', 'spdy/3.1'] }, { alpn: ['grpc-exp', 'h2', 'spdy/3.1'] }],
    ['TLS 1.2 only', { servername: 'd.test', ALPNProtocols: ['h2'], maxVersion: 'TLSv1.2' }, { servername: 'd.test', alpn: ['h2'] }],
    ['a long host name', { servername: `${'x'.repeat(63)}.${'y'.repeat(63)}.test`, ALPNProtocols: ['h2'] }, { servername: `${'x'.repeat(63)}.${'y'.repeat(63)}.test`, alpn: ['h2'] }],
  ];
  for (const [name, options, want] of nodeCases) {
    it(`node:tls, ${name}`, async () => {
      const from = seen.length;
      const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options });
      socket.on('error', () => {});
      const [one] = await hellos(from);
      socket.destroy();
      assertAgree([one!], want);
    });
  }

  const curlCases: Array<[string, string[], ClientHelloInfo]> = [
    ['--http2', ['--http2'], { servername: 'curl.test', alpn: ['h2', 'http/1.1'] }],
    ['--http1.1', ['--http1.1'], { servername: 'curl.test', alpn: ['http/1.1'] }],
    ['--no-alpn', ['--no-alpn'], { servername: 'curl.test' }],
    ['--tls-max 1.2', ['--http2', '--tls-max', '1.2'], { servername: 'curl.test', alpn: ['h2', 'http/1.1'] }],
  ];
  for (const [name, args, want] of curlCases) {
    it(`curl ${name}`, async () => {
      const from = seen.length;
      await curl(['--insecure', '--max-time', '5', '--resolve', `curl.test:${port}:127.0.0.1`, ...args, `https://curl.test:${port}/`]);
      assertAgree(await hellos(from), want);
    });
  }

  it('Chromium (a post-quantum key share: a ClientHello over 1.5 KiB)', { skip: CHROMIUM ? false : 'no chromium' }, async () => {
    const from = seen.length;
    const { dir } = tempDir();
    const child = spawn(CHROMIUM!, [
      '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', `--user-data-dir=${dir}`,
      `--host-resolver-rules=MAP chromium.test 127.0.0.1`, `https://chromium.test:${port}/`,
    ], { stdio: 'ignore' });
    try {
      const list = await hellos(from, 1, 30_000);
      assertAgree(list);
      assert.equal((list[0]!.bb as ClientHelloInfo).servername, 'chromium.test');
      assert.deepEqual((list[0]!.bb as ClientHelloInfo).alpn, ['h2', 'http/1.1']);
      assert.ok(list[0]!.length > 1500, `Chromium's hello took ${list[0]!.length} bytes`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
