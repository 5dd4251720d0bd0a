// A server certificate for https://localhost from a CA of its own (not bb's): what a dev server with mkcert's or
// its own CA has. Tests start the server with `key` and `cert`, and trust `caPem` (`--upstream-ca caFile`).
import { writeFile } from 'node:fs/promises';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';

/** A localhost certificate. */
export interface LocalhostCert {
  key: string;
  cert: string;
  /** The CA that signed it, PEM, and that PEM written to `<dir>.pem`. */
  caPem: string;
  caFile: string;
}

/** A CA kept in `dir` (made on first use) and its certificate for localhost. */
export async function localhostCert(dir: string): Promise<LocalhostCert> {
  const ca = await loadOrCreateCa(dir);
  const pem = await createLeafFactory(ca).pemFor('localhost');
  const caFile = `${dir}.pem`;
  await writeFile(caFile, ca.certPem);
  return { key: pem.keyPem, cert: pem.chainPem, caPem: ca.certPem, caFile };
}
