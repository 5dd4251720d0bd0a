// `bb ca` through the real CLI (bin/bb.js loads dist/: `npm test` builds first).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

/** `bb ca ...` run to its end with `home` as the bb home (each test makes its own). */
const bb = (home: string, ...args: string[]) => runBb(args, { BB_HOME: home });

describe('bb ca', () => {
  it('path makes the CA on first use and prints its absolute path alone', async (t) => {
    const home = tempDir(t).bbHome;
    const first = await bb(home, 'ca', 'path');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, `${join(home, 'ca.pem')}\n`);
    assert.match(first.stderr, /made a new CA/);
    assert.equal((await stat(join(home, 'ca.key'))).mode & 0o777, 0o600);
    const second = await bb(home, 'ca', 'path');
    assert.equal(second.stdout, first.stdout);
    assert.equal(second.stderr, '');
  });

  it('print shows subject, SHA-256 fingerprint and validity', async (t) => {
    const home = tempDir(t).bbHome;
    const { code, stdout } = await bb(home, 'ca', 'print');
    assert.equal(code, 0);
    const x509 = new X509Certificate(await readFile(join(home, 'ca.pem')));
    assert.match(stdout, /subject +CN=bb recording proxy CA, O=bb/);
    assert.ok(stdout.includes(x509.fingerprint256), stdout);
    assert.ok(stdout.includes(new Date(x509.validTo).toISOString()), stdout);
  });

  it('export writes the certificate, never the key, and refuses to overwrite without --force', async (t) => {
    const tmp = tempDir(t);
    const home = tmp.bbHome;
    const out = tmp.path('exported.pem');
    const written = await bb(home, 'ca', 'export', '--out', out);
    assert.equal(written.code, 0, written.stderr);
    const pem = await readFile(out, 'utf8');
    assert.equal(pem, await readFile(join(home, 'ca.pem'), 'utf8'));
    assert.doesNotMatch(pem, /PRIVATE KEY/);
    await writeFile(out, 'mine');
    const refused = await bb(home, 'ca', 'export', '--out', out);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /already exists.*--force/);
    assert.equal(await readFile(out, 'utf8'), 'mine');
    const forced = await bb(home, 'ca', 'export', '--out', out, '--force');
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(await readFile(out, 'utf8'), pem);
    const missing = await bb(home, 'ca', 'export');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /needs --out FILE/);
  });

  it('trust-info names curl, Node, NSS and the Debian store with the real path', async (t) => {
    const home = tempDir(t).bbHome;
    const { code, stdout } = await bb(home, 'ca', 'trust-info');
    assert.equal(code, 0);
    const file = join(home, 'ca.pem');
    assert.ok(stdout.includes(`--cacert ${file}`));
    assert.ok(stdout.includes(`NODE_EXTRA_CA_CERTS=${file}`));
    assert.ok(stdout.includes(`certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n bb -i ${file}`));
    assert.ok(stdout.includes('update-ca-certificates'));
  });

  it('refuses a corrupt CA with exit 2 and says how to regenerate', async (t) => {
    const corrupt = tempDir(t).path('corrupt');
    await bb(corrupt, 'ca', 'path');
    await writeFile(join(corrupt, 'ca.pem'), 'garbage');
    const { code, stdout, stderr } = await bb(corrupt, 'ca', 'print');
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /^bb: .*ca\.pem is not a readable certificate: delete ca\.pem and ca\.key in .* to make a new CA/);
    assert.equal(await readFile(join(corrupt, 'ca.pem'), 'utf8'), 'garbage');
  });
});
