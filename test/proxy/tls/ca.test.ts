import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';
import { loadOrCreateCa, type Ca } from '../../../proxy/tls/index.js';
import { CA_CERT_FILE, CA_KEY_FILE } from '../../../proxy/tls/ca.js';
import { tempDir } from '../../helpers/tmp.js';
import { isBbError } from '../../../core/index.js';
import { exitStatusFor } from '../../../cli/exit.js';

const DAY = 24 * 60 * 60 * 1000;
/** A bb home that does not exist yet (so loadOrCreateCa makes it), in a fresh temp folder. */
async function tempHome(): Promise<string> {
  return tempDir().bbHome;
}

async function rejectsWith(promise: Promise<Ca>, code: string): Promise<Error> {
  const err = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e as Error & { code: string },
  );
  assert.equal((err as { code?: string }).code, code, err.message);
  assert.ok(isBbError(err), String(err));
  assert.equal(exitStatusFor(err), 2);
  assert.match(err.message, /delete ca\.pem and ca\.key/);
  return err;
}

describe('loadOrCreateCa', () => {
  it('creates the key 0600 in a 0700 folder, with a CA certificate', async () => {
    const home = await tempHome();
    const ca = await loadOrCreateCa(home);
    assert.equal(ca.created, true);
    assert.equal(ca.certPath, join(home, CA_CERT_FILE));
    assert.equal((await stat(home)).mode & 0o777, 0o700);
    assert.equal((await stat(ca.keyPath)).mode & 0o777, 0o600);
    assert.equal(await readFile(ca.certPath, 'utf8'), ca.certPem);
    assert.doesNotMatch(ca.certPem, /PRIVATE KEY/);
    assert.equal(ca.x509.ca, true);
    assert.equal(ca.x509.verify(ca.x509.publicKey), true, 'self-signed');
    const notBefore = new Date(ca.x509.validFrom).getTime();
    const notAfter = new Date(ca.x509.validTo).getTime();
    assert.ok(notBefore < Date.now() - DAY && notBefore > Date.now() - 3 * DAY, ca.x509.validFrom);
    assert.ok(notAfter - notBefore > 9.9 * 365 * DAY, ca.x509.validTo);
    assert.match(ca.x509.serialNumber, /^[0-7][0-9A-F]+$/, 'positive serial');
  });

  it('marks basicConstraints and keyUsage critical and carries a subjectKeyIdentifier', async () => {
    const ca = await loadOrCreateCa(await tempHome());
    const cert = forge.pki.certificateFromPem(ca.certPem);
    const basic = cert.getExtension('basicConstraints') as { cA: boolean; critical: boolean };
    const usage = cert.getExtension('keyUsage') as { keyCertSign: boolean; cRLSign: boolean; digitalSignature?: boolean; critical: boolean };
    const ski = cert.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier: string } | null;
    assert.deepEqual([basic.cA, basic.critical], [true, true]);
    assert.deepEqual([usage.keyCertSign, usage.cRLSign, usage.critical], [true, true, true]);
    assert.ok(ski && ski.subjectKeyIdentifier.length === 40);
    assert.equal(Buffer.from(ca.keyId, 'binary').toString('hex'), ski.subjectKeyIdentifier);
  });

  it('reuses the CA on later calls', async () => {
    const home = await tempHome();
    const first = await loadOrCreateCa(home);
    const second = await loadOrCreateCa(home);
    assert.equal(second.created, false);
    assert.equal(second.x509.fingerprint256, first.x509.fingerprint256);
  });

  it('makes one CA when two first uses race', async () => {
    const home = await tempHome();
    const [a, b] = await Promise.all([loadOrCreateCa(home), loadOrCreateCa(home)]);
    assert.equal(a.x509.fingerprint256, b.x509.fingerprint256);
    assert.equal((await loadOrCreateCa(home)).x509.fingerprint256, a.x509.fingerprint256);
  });

  it('refuses a corrupt certificate and leaves the files alone', async () => {
    const home = await tempHome();
    const ca = await loadOrCreateCa(home);
    await writeFile(ca.certPath, '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n');
    const keyBefore = await readFile(ca.keyPath, 'utf8');
    await rejectsWith(loadOrCreateCa(home), 'BB_CA_CORRUPT');
    assert.equal(await readFile(ca.keyPath, 'utf8'), keyBefore);
    assert.match(await readFile(ca.certPath, 'utf8'), /not base64/);
  });

  it('refuses a corrupt key', async () => {
    const home = await tempHome();
    const ca = await loadOrCreateCa(home);
    await writeFile(ca.keyPath, 'garbage');
    await rejectsWith(loadOrCreateCa(home), 'BB_CA_CORRUPT');
  });

  it('refuses a key that does not belong to the certificate', async () => {
    const home = await tempHome();
    const ca = await loadOrCreateCa(home);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    await writeFile(ca.keyPath, other.export({ type: 'pkcs8', format: 'pem' }) as string);
    await rejectsWith(loadOrCreateCa(home), 'BB_CA_MISMATCH');
  });

  it('refuses a half CA instead of making a new one', async () => {
    const home = await tempHome();
    const ca = await loadOrCreateCa(home);
    await unlink(ca.keyPath);
    await rejectsWith(loadOrCreateCa(home), 'BB_CA_INCOMPLETE');
    await assert.rejects(stat(ca.keyPath), { code: 'ENOENT' });
  });

  it('refuses an unreadable file', async () => {
    const home = await tempHome();
    await mkdir(join(home, CA_KEY_FILE), { recursive: true }); // a folder where the key should be: EISDIR, even as root
    await writeFile(join(home, CA_CERT_FILE), 'x');
    await rejectsWith(loadOrCreateCa(home), 'BB_CA_UNREADABLE');
  });
});
