import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import forge from 'node-forge';
import { createLeafFactory, loadOrCreateCa, type Ca, type LeafFactory } from '../../../proxy/tls/index.js';
import { normalizeHost } from '../../../proxy/tls/leaf.js';
import { tempDir } from '../../helpers/tmp.js';

const DAY = 24 * 60 * 60 * 1000;
let home: string;
let ca: Ca;
let leaves: LeafFactory;
let server: tls.Server;
let port: number;

before(async () => {
  home = tempDir().dir;
  ca = await loadOrCreateCa(home);
  leaves = createLeafFactory(ca);
  server = tls.createServer({
    ALPNProtocols: ['http/1.1'],
    SNICallback: (name, done) => leaves.contextFor(name).then((ctx) => done(null, ctx), (err: Error) => done(err)),
  });
  server.on('secureConnection', (socket) => socket.end('hello'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  await new Promise((done) => server.close(done));
});

/**
 * Connects with bb's CA as the only trust anchor; resolves with the peer certificate and what the server said.
 * Without a servername (IP hosts) the server mints its leaf for `fallbackHost`.
 */
async function connect(servername?: string, fallbackHost = '127.0.0.1'): Promise<{ cert: tls.PeerCertificate; text: string; alpn: string | false }> {
  // Without SNI (IP hosts) the server uses its default context: point it at the fallback host's leaf,
  // and let the test check the identity itself (the socket goes to 127.0.0.1 whatever the leaf names).
  const noSni = servername === undefined;
  if (noSni) {
    const pem = await leaves.pemFor(fallbackHost);
    server.setSecureContext({ key: pem.keyPem, cert: pem.chainPem });
  }
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      ca: [ca.certPem],
      servername,
      ALPNProtocols: ['http/1.1'],
      ...(noSni ? { checkServerIdentity: () => undefined } : {}),
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('end', () => resolve({ cert: socket.getPeerCertificate(true), text, alpn: socket.alpnProtocol }));
  });
}

describe('createLeafFactory', () => {
  it('serves a leaf that verifies against the CA for a DNS name', async () => {
    const { cert, text, alpn } = await connect('shop.bb.test');
    assert.equal(text, 'hello');
    assert.equal(alpn, 'http/1.1');
    assert.equal(cert.subjectaltname, 'DNS:shop.bb.test');
    assert.equal(tls.checkServerIdentity('shop.bb.test', cert), undefined);
    assert.ok(tls.checkServerIdentity('other.bb.test', cert) instanceof Error);
  });

  it('is refused by a client that does not trust the CA', async () => {
    await assert.rejects(
      new Promise((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, servername: 'shop.bb.test' });
        socket.on('secureConnect', resolve);
        socket.on('error', reject);
      }),
      { code: 'SELF_SIGNED_CERT_IN_CHAIN' }, // the CA travels in the chain, untrusted
    );
  });

  it('serves leaves with IP SANs for IPv4 and IPv6 hosts', async () => {
    const v4 = await connect(undefined, '127.0.0.1');
    assert.equal(v4.cert.subjectaltname, 'IP Address:127.0.0.1');
    assert.equal(tls.checkServerIdentity('127.0.0.1', v4.cert), undefined);
    assert.ok(tls.checkServerIdentity('127.0.0.2', v4.cert) instanceof Error);
    const v6 = await connect(undefined, '[::1]');
    assert.equal(tls.checkServerIdentity('::1', v6.cert), undefined);
    assert.ok(tls.checkServerIdentity('::2', v6.cert) instanceof Error);
  });

  it('sends the CA certificate in the chain', async () => {
    const pem = await leaves.pemFor('chain.bb.test');
    const certs = pem.chainPem.match(/-----BEGIN CERTIFICATE-----/g) ?? [];
    assert.equal(certs.length, 2);
    assert.ok(pem.chainPem.endsWith(ca.certPem));
    const { cert } = await connect('chain.bb.test');
    assert.equal(cert.issuerCertificate.fingerprint256, ca.x509.fingerprint256);
  });

  it('makes leaves modern clients accept: usages, validity, serial, key ids', async () => {
    const pem = await leaves.pemFor('usage.bb.test');
    const x509 = new X509Certificate(pem.certPem);
    assert.equal(x509.ca, false);
    assert.ok(x509.checkIssued(ca.x509));
    assert.ok(x509.verify(ca.x509.publicKey));
    assert.deepEqual(x509.keyUsage, ['1.3.6.1.5.5.7.3.1']); // Node names extKeyUsage "keyUsage": serverAuth
    const notBefore = new Date(x509.validFrom).getTime();
    const notAfter = new Date(x509.validTo).getTime();
    assert.ok(notBefore < Date.now() - DAY && notBefore > Date.now() - 3 * DAY, x509.validFrom);
    assert.ok(notAfter - notBefore > 360 * DAY && notAfter - notBefore < 400 * DAY, x509.validTo);
    assert.match(x509.serialNumber, /^[0-7][0-9A-F]{31}$/);
    const cert = forge.pki.certificateFromPem(pem.certPem);
    const usage = cert.getExtension('keyUsage') as { digitalSignature: boolean; keyEncipherment: boolean; keyCertSign?: boolean };
    assert.deepEqual([usage.digitalSignature, usage.keyEncipherment, usage.keyCertSign ?? false], [true, true, false]);
    const aki = cert.extensions.find((e: { name: string }) => e.name === 'authorityKeyIdentifier') as { value: string };
    assert.ok(aki.value.includes(ca.keyId), 'AKI holds the CA key id');
    assert.notEqual(new X509Certificate((await leaves.pemFor('other.bb.test')).certPem).serialNumber, x509.serialNumber);
  });

  it('makes one certificate for concurrent first requests for one host', async () => {
    const issued = leaves.stats.issued;
    const pems = await Promise.all(Array.from({ length: 10 }, () => leaves.pemFor('Same.BB.test')));
    const contexts = await Promise.all(Array.from({ length: 5 }, () => leaves.contextFor('same.bb.test.')));
    assert.equal(leaves.stats.issued, issued + 1);
    assert.equal(new Set(pems.map((p) => p.certPem)).size, 1);
    assert.equal(new Set(contexts).size, 1);
  });

  it('drops the least recently used host past its capacity', async () => {
    const small = createLeafFactory(ca, { cacheSize: 2 });
    await small.pemFor('a.test');
    await small.pemFor('b.test');
    await small.pemFor('a.test'); // a is now the most recent
    await small.pemFor('c.test'); // evicts b
    assert.deepEqual(small.stats, { issued: 3, cached: 1 });
    await small.pemFor('a.test');
    assert.equal(small.stats.issued, 3);
    await small.pemFor('b.test');
    assert.equal(small.stats.issued, 4);
  });

  it('normalizes host names and refuses what cannot be one', () => {
    const table: Array<[string, string]> = [
      ['Example.COM', 'example.com'],
      ['example.com.', 'example.com'],
      ['[::1]', '::1'],
      ['127.0.0.1', '127.0.0.1'],
      ['_dmarc.x-y.test', '_dmarc.x-y.test'],
    ];
    for (const [raw, want] of table) assert.equal(normalizeHost(raw), want, raw);
    for (const bad of ['', 'a b', 'a/b', 'x'.repeat(254), 'a..b']) assert.throws(() => normalizeHost(bad), /cannot make a certificate/, bad);
  });
});
