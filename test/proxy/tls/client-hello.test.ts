// The ClientHello reader on literal bytes: the RFC 8448 §3 hello, hellos
// spanning records and cut at every byte, and a table of malformed ones,
// each refused with a reason rather than guessed at. Then bb's reader against
// Node's own TLS server on the same bytes: real ClientHellos from node:tls,
// curl and Chromium reach a server that reads them with readClientHello, then
// hands them to a TLSSocket whose SNICallback and ALPNCallback say what
// OpenSSL read. Both must agree.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { join } from 'node:path';
import { createLeafFactory, loadOrCreateCa } from '../../../proxy/tls/index.js';
import { readClientHello } from '../../../proxy/tls/alpn-mirror.js';
import { parseClientHello, type ClientHelloInfo, type ClientHelloOutcome } from '../../../proxy/tls/client-hello.js';
import { tempDir } from '../../helpers/tmp.js';
import { CHROMIUM } from '../../helpers/browser-app.js';
import { curl } from '../forward-harness.js';
import { alpnExtension, clientHello, extension, records, RFC8448_CLIENT_HELLO, sniExtension } from './client-hello-bytes.js';

const ok = (out: ClientHelloOutcome) => {
  assert.equal(out.state, 'ok', JSON.stringify(out));
  return out as Extract<ClientHelloOutcome, { state: 'ok' }>;
};

/** Where the extensions block's length sits in a hello from clientHello() (no session id, three suites, one compression method). */
const EXTENSIONS_AT = 4 + 2 + 32 + 1 + 2 + 6 + 1 + 1;

function withExtensionsLength(message: Buffer, length: number): Buffer {
  const copy = Buffer.from(message);
  copy.writeUInt16BE(length, EXTENSIONS_AT);
  return copy;
}

describe('parseClientHello', () => {
  it('reads the RFC 8448 §3 ClientHello: SNI "server", no ALPN', () => {
    assert.equal(RFC8448_CLIENT_HELLO.length, 196, 'the literal is the RFC\'s 196 octets');
    const bytes = records(RFC8448_CLIENT_HELLO);
    const out = ok(parseClientHello(bytes));
    assert.deepEqual(out.hello, { servername: 'server' });
    assert.equal(out.length, 201);
  });

  it('reads a hello spanning two records, and one record per byte', () => {
    const message = clientHello({ extensions: [sniExtension(['api.example.com']), alpnExtension(['h2', 'http/1.1'])] });
    const want = { servername: 'api.example.com', alpn: ['h2', 'http/1.1'] };
    assert.deepEqual(ok(parseClientHello(records(message, [50]))).hello, want);
    const perByte = records(message, Array.from({ length: message.length - 1 }, (_, i) => i + 1));
    const out = ok(parseClientHello(perByte));
    assert.deepEqual(out.hello, want);
    assert.equal(out.length, perByte.length);
  });

  it('says partial for every cut of the records before the hello is whole', () => {
    for (const bytes of [records(RFC8448_CLIENT_HELLO), records(RFC8448_CLIENT_HELLO, [3, 100])]) {
      for (let cut = 0; cut < bytes.length; cut++) assert.equal(parseClientHello(bytes.subarray(0, cut)).state, 'partial', `cut at ${cut}`);
      assert.equal(parseClientHello(bytes).state, 'ok');
    }
  });

  it('keeps ALPN names in order, with unusual bytes as latin1', () => {
    const names = ['grpc-exp', 'h2', 'http/1.1', 'x\u00ff\u0001'];
    assert.deepEqual(ok(parseClientHello(records(clientHello({ extensions: [alpnExtension(names)] })))).hello, { alpn: names });
  });

  it('reads a hello without extensions (allowed before TLS 1.3) as offering nothing', () => {
    assert.deepEqual(ok(parseClientHello(records(clientHello()))).hello, {});
    assert.deepEqual(ok(parseClientHello(records(clientHello({ extensions: [] })))).hello, {});
  });

  it('ignores extensions it does not read, and data after the hello in later records', () => {
    const message = clientHello({ extensions: [extension(0xff01, Buffer.of(0)), extension(43, Buffer.from('020304', 'hex')), alpnExtension(['h2'])] });
    const bytes = Buffer.concat([records(message), Buffer.from('1403030001011703030005', 'hex')]);
    const out = ok(parseClientHello(bytes));
    assert.deepEqual(out.hello, { alpn: ['h2'] });
    assert.equal(out.length, records(message).length);
  });

  const good = clientHello({ extensions: [sniExtension(['a.test']), alpnExtension(['h2'])] });
  const refusals: Array<[string, Buffer, RegExp]> = [
    ['an application-data record first', Buffer.concat([Buffer.from('1703030005', 'hex'), Buffer.alloc(5)]), /record type 23/],
    ['an SSL 2.0-era record version', records(good, [], 0x0200), /record version 0x0200/],
    ['a TLS 1.3 record version (0x0304 is never on the wire)', records(good, [], 0x0304), /record version 0x0304/],
    ['an empty record', Buffer.concat([Buffer.from('1603010000', 'hex'), records(good)]), /record length 0/],
    ['a record over 2^14 bytes', Buffer.from('1603014001', 'hex'), /record length 16385/],
    ['a ServerHello', records(Buffer.concat([Buffer.of(2), good.subarray(1)])), /type 2 where a ClientHello/],
    ['a hello over the cap', records(clientHello({ extensions: [extension(21, Buffer.alloc(17_000))] }), [16_000]), /over bb's 16384/],
    ['bytes after the hello inside its record', records(Buffer.concat([good, Buffer.from('0b000000', 'hex')])), /bytes follow the ClientHello/],
    ['a session id of 33 bytes', records(clientHello({ sessionId: Buffer.alloc(33) })), /session id of 33/],
    ['an odd cipher suite list', records(clientHello({ suites: Buffer.from('130113', 'hex') })), /odd length/],
    ['no cipher suites', records(clientHello({ suites: Buffer.alloc(0) })), /cipher suites of 0/],
    ['no compression methods', records(clientHello({ compression: Buffer.alloc(0) })), /compression methods of 0/],
    ['a version that is not 3.x', records(clientHello({ version: 0x0202 })), /ClientHello version/],
    ['the same extension twice', records(clientHello({ extensions: [alpnExtension(['h2']), alpnExtension(['h2'])] })), /extension 16 appears twice/],
    ['an extensions block longer than the hello', records(withExtensionsLength(good, good.readUInt16BE(EXTENSIONS_AT) + 1)), /cut short/],
    ['an extensions block shorter than the hello', records(withExtensionsLength(good, good.readUInt16BE(EXTENSIONS_AT) - 1)), /cut short|stray bytes/],
    ['two server names', records(clientHello({ extensions: [sniExtension(['a.test', 'b.test'])] })), /more than one server name/],
    ['a server name of another type', records(clientHello({ extensions: [sniExtension(['a.test'], 1)] })), /server name type 1/],
    ['an empty host name', records(clientHello({ extensions: [sniExtension([''])] })), /host name of 0/],
    ['a host name with a NUL', records(clientHello({ extensions: [sniExtension(['a\u0000b'])] })), /not visible ASCII/],
    ['an empty server_name extension', records(clientHello({ extensions: [extension(0, Buffer.alloc(0))] })), /cut short/],
    ['an empty ALPN list', records(clientHello({ extensions: [extension(16, Buffer.from('0000', 'hex'))] })), /protocol name list of 0/],
    ['an empty protocol name', records(clientHello({ extensions: [extension(16, Buffer.from('000402683200', 'hex'))] })), /protocol name of 0|cut short/],
    ['a truncated protocol name', records(clientHello({ extensions: [extension(16, Buffer.from('0003056832', 'hex'))] })), /cut short/],
    ['bytes after the ALPN list', records(clientHello({ extensions: [extension(16, Buffer.from('000302683200', 'hex'))] })), /stray bytes/],
  ];
  for (const [name, bytes, reason] of refusals) {
    it(`refuses ${name}`, () => {
      const out = parseClientHello(bytes);
      assert.equal(out.state, 'refused', `${name}: ${JSON.stringify(out)}`);
      assert.match((out as { reason: string }).reason, reason);
    });
  }
});

interface Seen {
  bb: ClientHelloInfo | { refused: string } | { closed: true };
  node: ClientHelloInfo;
  /** Bytes of the records that held the hello. */
  length: number;
  /** The first record's size as its header declares it (5 + length field), read from the bytes bb put back. */
  firstRecord: number;
}

let server: net.Server;
let port: number;
const seen: Seen[] = [];

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
    // Each of these clients sends its hello in one record (under 16 KiB), so
    // bb's length is exactly that record: its 5-byte header and the length it declares.
    assert.equal(s.length, s.firstRecord);
    if (want) assert.deepEqual(s.bb, want);
  }
}

describe('ClientHellos of real clients, read by bb and by OpenSSL', () => {
  before(async () => {
    const { dir } = tempDir();
    const leaves = createLeafFactory(await loadOrCreateCa(join(dir, 'ca')));
    const ctx = await leaves.contextFor('localhost');
    server = net.createServer(async (raw) => {
      raw.on('error', () => {});
      const read = await readClientHello(raw, 5_000);
    // readClientHello puts the bytes it read back; read them once more for the first record's header.
    const held = raw.read() as Buffer | null;
    if (held) raw.unshift(held);
    const firstRecord = held && held.length >= 5 ? 5 + held.readUInt16BE(3) : -1;
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
        seen.push({ bb: 'hello' in read ? read.hello : read, node, length: 'length' in read ? read.length : 0, firstRecord });
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
