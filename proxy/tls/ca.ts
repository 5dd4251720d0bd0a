// bb's certificate authority: made on first use, kept under bb's home, reused.
//
// Files: <bbHome>/ca.pem (certificate) and <bbHome>/ca.key (PKCS#8 private key,
// mode 0600; the folder is created 0700). A file that exists but cannot be read
// or parsed is an error that says how to start over, never a silent new CA:
// users may have trusted the old one in browsers and OS stores.
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { chmod, link, readFile, unlink, writeFile, rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type forge from 'node-forge';
import { daysFrom, nodeForge, randomSerial, signCertificate, subjectKeyId } from './x509.js';
import { BbError, isBbError, makeDirsSync } from '../../core/index.js';

/** File name of the CA certificate inside bb's home. */
export const CA_CERT_FILE = 'ca.pem';
/** File name of the CA private key inside bb's home. */
export const CA_KEY_FILE = 'ca.key';

/** The subject (and issuer) common name of bb's CA. */
export const CA_COMMON_NAME = 'bb recording proxy CA';

/** bb's loaded certificate authority. */
export interface Ca {
  /** Absolute path of the CA certificate (PEM). */
  certPath: string;
  /** Absolute path of the CA private key (PEM, 0600). */
  keyPath: string;
  /** The CA certificate, PEM. */
  certPem: string;
  /** The CA certificate parsed by node:crypto (subject, fingerprint256, validity, verify). */
  x509: X509Certificate;
  /** The CA certificate parsed by forge (issuer name for leaves). */
  cert: forge.pki.Certificate;
  /** The CA private key (signs leaves). */
  key: KeyObject;
  /** The CA's subjectKeyIdentifier (binary string), the leaves' authorityKeyIdentifier. */
  keyId: string;
  /** True when this call made the CA (first use). */
  created: boolean;
}

/** Loads bb's CA from `bbHome`, creating it (and the folder, 0700) on first use. */
export async function loadOrCreateCa(bbHome: string): Promise<Ca> {
  const home = resolve(bbHome);
  const paths = { home, certPath: join(home, CA_CERT_FILE), keyPath: join(home, CA_KEY_FILE) };
  // A concurrent first use may be between writing the key and the certificate: wait a little for it.
  for (let attempt = 0; ; attempt++) {
    const certPem = await readIfExists(paths.certPath, paths);
    const keyPem = await readIfExists(paths.keyPath, paths);
    if (certPem !== undefined && keyPem !== undefined) return parseCa(certPem, keyPem, paths, false);
    if (certPem === undefined && keyPem === undefined) {
      const made = await createCa(paths);
      if (made) return made;
      continue; // another process won the race; load its CA
    }
    if (attempt >= 20) {
      const missing = certPem === undefined ? CA_CERT_FILE : CA_KEY_FILE;
      throw new BbError('BB_CA_INCOMPLETE', `bb's CA in ${home} is incomplete (${missing} is missing): delete ${CA_CERT_FILE} and ${CA_KEY_FILE} there to make a new CA.`);
    }
    await new Promise((done) => setTimeout(done, 50));
  }
}

interface CaPaths {
  home: string;
  certPath: string;
  keyPath: string;
}

function regenerateHint(paths: CaPaths): string {
  return `delete ${CA_CERT_FILE} and ${CA_KEY_FILE} in ${paths.home} to make a new CA (then trust the new one again)`;
}

async function readIfExists(path: string, paths: CaPaths): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new BbError('BB_CA_UNREADABLE', `cannot read ${path} (${code ?? (err as Error).message}): fix its permissions, or ${regenerateHint(paths)}.`);
  }
}

function parseCa(certPem: string, keyPem: string, paths: CaPaths, created: boolean): Ca {
  let x509: X509Certificate;
  let cert: forge.pki.Certificate;
  try {
    x509 = new X509Certificate(certPem);
    cert = nodeForge().pki.certificateFromPem(certPem);
  } catch {
    throw new BbError('BB_CA_CORRUPT', `${paths.certPath} is not a readable certificate: ${regenerateHint(paths)}.`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    throw new BbError('BB_CA_CORRUPT', `${paths.keyPath} is not a readable private key: ${regenerateHint(paths)}.`);
  }
  if (!x509.checkPrivateKey(key)) {
    throw new BbError('BB_CA_MISMATCH', `${paths.keyPath} does not belong to ${paths.certPath}: ${regenerateHint(paths)}.`);
  }
  if (!x509.ca) {
    throw new BbError('BB_CA_CORRUPT', `${paths.certPath} is not a CA certificate: ${regenerateHint(paths)}.`);
  }
  if (new Date(x509.validTo).getTime() < Date.now()) {
    throw new BbError('BB_CA_EXPIRED', `bb's CA in ${paths.certPath} expired on ${x509.validTo}: ${regenerateHint(paths)}.`);
  }
  return { certPath: paths.certPath, keyPath: paths.keyPath, certPem, x509, cert, key, keyId: subjectKeyId(cert), created };
}

/** Builds a new self-signed CA certificate for `key` (about 10 years, notBefore 2 days back). */
export function buildCaCertificate(key: KeyObject, at = new Date()): string {
  const { pki } = nodeForge();
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string);
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = daysFrom(at, -2);
  cert.validity.notAfter = daysFrom(at, 10 * 365);
  const name = [
    { name: 'commonName', value: CA_COMMON_NAME },
    { name: 'organizationName', value: 'bb' },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  return signCertificate(cert, key);
}

// Writes both files under temporary names, then links the key into place
// (link fails if it exists, so two first uses cannot mix their files) and
// renames the certificate after it. Returns undefined when another process won.
async function createCa(paths: CaPaths): Promise<Ca | undefined> {
  try {
    const createdHome = makeDirsSync(paths.home, 0o700);
    // The mode given to mkdir passes through the umask; say it once more.
    if (createdHome !== undefined) await chmod(paths.home, 0o700);
  } catch (err) {
    throw new BbError('BB_CA_UNREADABLE', `cannot create bb's home ${paths.home} (${(err as NodeJS.ErrnoException).code}): set BB_HOME to a writable folder.`);
  }
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const certPem = buildCaCertificate(privateKey);
  const suffix = `.tmp-${process.pid}-${Date.now()}`;
  const keyTmp = paths.keyPath + suffix;
  const certTmp = paths.certPath + suffix;
  try {
    await writeFile(keyTmp, keyPem, { mode: 0o600, flag: 'wx' });
    await chmod(keyTmp, 0o600);
    await writeFile(certTmp, certPem, { mode: 0o644, flag: 'wx' });
    try {
      await link(keyTmp, paths.keyPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw err;
    }
    await rename(certTmp, paths.certPath);
  } catch (err) {
    if (isBbError(err)) throw err;
    throw new BbError('BB_CA_UNREADABLE', `cannot write bb's CA in ${paths.home} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): set BB_HOME to a writable folder.`);
  } finally {
    await unlink(keyTmp).catch(() => undefined);
    await unlink(certTmp).catch(() => undefined);
  }
  return parseCa(certPem, keyPem, paths, true);
}
