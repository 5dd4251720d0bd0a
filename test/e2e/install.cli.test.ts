// Running bb from another folder, as README's set-up says: `npm install -g
// <checkout>` or `npm link` in the checkout, here into a temporary prefix so
// nothing global changes. The checkout is already built (npm test builds
// first), so the install runs offline and without scripts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entry, har } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

const checkout = fileURLToPath(new URL('../../', import.meta.url));
const version = (JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { version: string }).version;

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const ways: Array<[string, (prefix: string) => [string[], NodeJS.ProcessEnv]]> = [
  ['npm install -g <checkout>', (prefix) => [['install', '-g', checkout, '--prefix', prefix], {}]],
  ['npm link in the checkout', (prefix) => [['link'], { NPM_CONFIG_PREFIX: prefix }]],
];

for (const [way, argsFor] of ways) {
  test(`${way} puts bb on PATH: bb --version and bb show work from another folder`, async (t) => {
    const tmp = tempDir(t).dir;
    const prefix = join(tmp, 'prefix');
    const [args, env] = argsFor(prefix);
    const installed = await run('npm', [...args, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: checkout, env });
    assert.equal(installed.code, 0, installed.stderr);

    const elsewhere = join(tmp, 'elsewhere');
    const path = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}` };
    mkdirSync(elsewhere);
    const v = await run('bb', ['--version'], { cwd: elsewhere, env: path });
    assert.equal(v.code, 0, v.stderr);
    assert.equal(v.stdout.trim(), version);
    // A relative path is read from the folder bb runs in.
    writeFileSync(join(elsewhere, 'x.har'), JSON.stringify(har([entry('http://h.test/here', '2024-05-01T10:00:00.000Z')])));
    const show = await run('bb', ['show', 'x.har'], { cwd: elsewhere, env: { ...path, NO_COLOR: '1' } });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^#0 .*GET .*http:\/\/h\.test\/here$/m);
  });
}
