// `bb ca` through the real CLI (bin/bb.js loads dist/: `npm test` builds first).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir().dir;
let home = join(dir, 'home');

/** `bb ca ...` run to its end with the current bb home. */
const bb = (...args: string[]) => runBb(args, { BB_HOME: home });

describe('bb ca', () => {
  it('path makes the CA on first use and prints its absolute path alone', async () => {
    const first = await bb('ca', 'path');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, `${join(home, 'ca.pem')}\n`);
    assert.match(first.stderr, /made a new CA/);
    assert.equal((await stat(join(home, 'ca.key'))).mode & 0o777, 0o600);
    const second = await bb('ca', 'path');
    assert.equal(second.stdout, first.stdout);
    assert.equal(second.stderr, '');
  });

  it('print shows subject, SHA-256 fingerprint and validity', async () => {
    const { code, stdout } = await bb('ca', 'print');
    assert.equal(code, 0);
    const x509 = new X509Certificate(await readFile(join(home, 'ca.pem')));
    assert.match(stdout, /subject +CN=bb recording proxy CA, O=bb/);
    assert.ok(stdout.includes(x509.fingerprint256), stdout);
    assert.ok(stdout.includes(new Date(x509.validTo).toISOString()), stdout);
  });

  it('export writes the certificate, never the key, and refuses to overwrite without --force', async () => {
    const out = join(dir, 'exported.pem');
    const written = await bb('ca', 'export', '--out', out);
    assert.equal(written.code, 0, written.stderr);
    const pem = await readFile(out, 'utf8');
    assert.equal(pem, await readFile(join(home, 'ca.pem'), 'utf8'));
    assert.doesNotMatch(pem, /PRIVATE KEY/);
    await writeFile(out, 'mine');
    const refused = await bb('ca', 'export', '--out', out);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /exists: pass --force/);
    assert.equal(await readFile(out, 'utf8'), 'mine');
    const forced = await bb('ca', 'export', '--out', out, '--force');
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(await readFile(out, 'utf8'), pem);
    const missing = await bb('ca', 'export');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /needs --out FILE/);
  });

  it('trust-info names curl, Node, NSS and the Debian store with the real path', async () => {
    const { code, stdout } = await bb('ca', 'trust-info');
    assert.equal(code, 0);
    const file = join(home, 'ca.pem');
    assert.ok(stdout.includes(`--cacert ${file}`));
    assert.ok(stdout.includes(`NODE_EXTRA_CA_CERTS=${file}`));
    assert.ok(stdout.includes(`certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n bb -i ${file}`));
    assert.ok(stdout.includes('update-ca-certificates'));
  });

  it('refuses a corrupt CA with exit 2 and says how to regenerate', async () => {
    const corrupt = join(dir, 'corrupt');
    home = corrupt;
    await bb('ca', 'path');
    await writeFile(join(corrupt, 'ca.pem'), 'garbage');
    const { code, stdout, stderr } = await bb('ca', 'print');
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /^bb: .*ca\.pem is not a readable certificate: delete ca\.pem and ca\.key in .* to make a new CA/);
    assert.equal(await readFile(join(corrupt, 'ca.pem'), 'utf8'), 'garbage');
  });
});
