// bb ca path | print | export --out FILE [--force] | trust-info
// Shows bb's CA certificate (made on first use) and how to trust it. Never prints or writes the key.
import { resolve } from 'node:path';
import type { BbCommand } from '../command.js';
import { loadOrCreateCa, type Ca } from '../../proxy/index.js';
import { BbError } from '../../core/index.js';
import { writeOutFile } from '../../capture/index.js';

const ACTIONS = ['path', 'print', 'export', 'trust-info'] as const;
type Action = (typeof ACTIONS)[number];

function describeCa(ca: Ca): string {
  const x = ca.x509;
  return [
    `subject      ${x.subject.split('\n').join(', ')}`,
    `sha256       ${x.fingerprint256}`,
    `valid from   ${new Date(x.validFrom).toISOString()}`,
    `valid until  ${new Date(x.validTo).toISOString()}`,
    `certificate  ${ca.certPath}`,
    '',
  ].join('\n');
}

function trustInfo(ca: Ca): string {
  const file = ca.certPath;
  return [
    `bb's CA certificate: ${file}`,
    `(sha256 ${ca.x509.fingerprint256})`,
    '',
    'curl:',
    `  curl --cacert ${file} -x http://127.0.0.1:8080 https://example.com/`,
    'Node.js (read at start-up, added to the bundled roots):',
    `  NODE_EXTRA_CA_CERTS=${file} node app.js`,
    'Chromium / Chrome on Linux (NSS database; certutil comes with libnss3-tools):',
    `  certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n bb -i ${file}`,
    'Debian / Ubuntu system store (curl, wget, OpenSSL-based tools; needs root):',
    `  sudo cp ${file} /usr/local/share/ca-certificates/bb-ca.crt && sudo update-ca-certificates`,
    '',
    'Anyone holding ca.key can impersonate any site to clients that trust this CA: keep it private,',
    'and remove the trust when you no longer record (certutil -D -n bb; delete the .crt and run',
    'update-ca-certificates --fresh).',
    '',
  ].join('\n');
}

export const caCommand: BbCommand = {
  command: 'ca <action>',
  describe: "show bb's CA certificate (made on first use) and how to trust it: path | print | export | trust-info",
  builder: (yargs) =>
    yargs
      .positional('action', { choices: ACTIONS, describe: 'what to do', type: 'string' })
      .option('out', { type: 'string', describe: 'export: the file to write the certificate (PEM) to' })
      .option('force', { type: 'boolean', default: false, describe: 'export: overwrite an existing file' }),
  run: async (argv, environment) => {
    const action = argv['action'] as Action;
    const out = argv['out'] as string | undefined;
    if (action === 'export' && !out) throw new BbError('BB_USAGE', 'bb ca export needs --out FILE, the file to write the certificate to.');
    if (action !== 'export' && out !== undefined) throw new BbError('BB_USAGE', `--out only goes with bb ca export, not bb ca ${action}.`);
    const ca = await loadOrCreateCa(environment.home.path);
    if (ca.created) process.stderr.write(`bb: made a new CA in ${ca.certPath}\n`);
    switch (action) {
      case 'path':
        process.stdout.write(`${ca.certPath}\n`);
        return 0;
      case 'print':
        process.stdout.write(describeCa(ca));
        return 0;
      case 'trust-info':
        process.stdout.write(trustInfo(ca));
        return 0;
      case 'export': {
        const target = resolve(out!);
        // The HAR writer's rule: refused when taken without --force, and a symlink is replaced, never written through.
        await writeOutFile(target, ca.certPem, { force: Boolean(argv['force']), mode: 0o644 });
        process.stdout.write(`${target}\n`);
        return 0;
      }
    }
  },
};
