// The one error type and the table of codes: every code bb raises or records
// is in the table, and the CLI is the only place statuses come from.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BbError, isBbError, ERROR_CODES, FAILURE_CODES } from '../../core/index.js';
import * as built from '../../dist/core/index.js';
import { exitStatusFor } from '../../cli/exit.js';
import { allSources, repoRoot } from '../helpers/sources.js';

const root = repoRoot;
// BB_ names that are environment variables, not codes.
const ENV_NAMES = new Set(['BB_HOME', 'BB_PROGRESS_AFTER_MS', 'BB_DIFF_BOUNDED_BYTES', 'BB_DIFF_STAGE_TIMES', 'BB_DIFF_WORKERS', 'BB_REDACT_KEY_FILE']);

const files = allSources();

describe('BbError', () => {
  it('carries a code, a sentence and a cause', () => {
    const cause = new Error('EACCES');
    const err = new BbError('BB_CAPTURE_UNREADABLE', 'x.har is not readable: check the path.', { cause });
    assert.equal(err.code, 'BB_CAPTURE_UNREADABLE');
    assert.equal(err.message, 'x.har is not readable: check the path.');
    assert.equal(err.cause, cause);
    assert.ok(err instanceof Error);
    assert.equal('exitCode' in err, false, 'library errors carry no exit status');
  });

  it('is recognised by its brand across module copies, and nothing else is', () => {
    const fromDist = new built.BbError('BB_USAGE', 'from the built copy');
    assert.equal(fromDist instanceof BbError, false, 'two copies of the class');
    assert.equal(isBbError(fromDist), true);
    assert.equal(built.isBbError(new BbError('BB_USAGE', 'from the sources')), true);
    for (const other of [new Error('plain'), Object.assign(new Error('duck'), { code: 'BB_USAGE', exitCode: 2 }), { code: 'BB_USAGE' }, null, 'BB_USAGE']) {
      assert.equal(isBbError(other), false, String(other));
    }
  });
});

describe('exit statuses', () => {
  it('maps every code to 2 (could not run) but an interruption to 130, and a bug to 2', () => {
    for (const code of Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[]) {
      assert.equal(exitStatusFor(new BbError(code, 'x')), code === 'BB_INTERRUPTED' ? 130 : 2, code);
    }
    assert.equal(exitStatusFor(new TypeError('a bug')), 2);
  });

  // A comparison's verdict (DiffResult.exitCode, 0 same or 1 different) is a result, not a status for errors.
  it('are set only in cli/: no library layer gives an error an exit status or calls process.exit', () => {
    const offenders = files
      .filter((f) => !relative(root, f).startsWith('cli/') && !relative(root, f).startsWith('scenario/compare/demo/'))
      .filter((f) => /\bexitCode\s*[:=]\s*[2-9]|readonly exitCode|exitCode\?: number|process\.exit\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f));
    assert.deepEqual(offenders, []);
  });
});

describe('the table of codes', () => {
  it('lists every BB_ code the sources use, each once, each described', () => {
    const table = new Set([...Object.keys(ERROR_CODES), ...Object.keys(FAILURE_CODES)]);
    assert.equal(table.size, Object.keys(ERROR_CODES).length + Object.keys(FAILURE_CODES).length, 'a code in both tables');
    for (const [code, meaning] of [...Object.entries(ERROR_CODES), ...Object.entries(FAILURE_CODES)]) {
      assert.match(code, /^BB_[A-Z0-9_]+$/);
      assert.ok(meaning.length > 10, code);
    }
    const unknown: string[] = [];
    const used = new Set<string>();
    for (const f of files) {
      if (f.endsWith(join('core', 'codes.ts'))) continue;
      for (const m of readFileSync(f, 'utf8').matchAll(/['"`](BB_[A-Z0-9_]+)['"`]/g)) {
        if (ENV_NAMES.has(m[1]!)) continue;
        used.add(m[1]!);
        if (!table.has(m[1]!)) unknown.push(`${relative(root, f)}: ${m[1]}`);
      }
    }
    assert.deepEqual(unknown, []);
    const unused = [...table].filter((c) => !used.has(c));
    assert.deepEqual(unused, [], 'codes in the table that nothing raises');
  });
});

describe('the codes page', () => {
  it('docs/reliability.md lists every code with the meaning the table gives', () => {
    const page = readFileSync(join(root, 'docs', 'reliability.md'), 'utf8');
    for (const [code, meaning] of [...Object.entries(ERROR_CODES), ...Object.entries(FAILURE_CODES)]) {
      assert.ok(page.includes(`| \`${code}\` | ${meaning} |`), `${code} is not on the page as the table says`);
    }
  });
});

describe('unreadableWhy', () => {
  it('says why a file could not be read in words, not as an errno code', async () => {
    const { unreadableWhy } = await import('../../core/index.js');
    const { readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const failure = (path: string): unknown => {
      try {
        readFileSync(path);
      } catch (err) {
        return err;
      }
      throw new Error(`${path} was read`);
    };
    assert.equal(unreadableWhy(failure(join(tmpdir(), `bb-no-such-file-${process.pid}`))), 'it does not exist');
    assert.equal(unreadableWhy(failure(tmpdir())), 'it is a folder, not a file');
    assert.equal(unreadableWhy(Object.assign(new Error('x'), { code: 'EACCES' })), 'permission denied');
    assert.equal(unreadableWhy(Object.assign(new Error('x'), { code: 'EMFILE' })), 'EMFILE');
  });
});

describe('listenFailureWhy', () => {
  it('says why a port could not be taken, and what to give the flag instead', async () => {
    const { listenFailureWhy } = await import('../../core/index.js');
    const err = (code: string) => Object.assign(new Error(`listen ${code}`), { code });
    assert.equal(listenFailureWhy(err('EADDRINUSE'), '--admin'), 'the port is in use (pick another --admin port, or 0 for any)');
    assert.equal(listenFailureWhy(err('EACCES'), '--listen'), 'permission denied (a port below 1024 needs privileges: pick a higher --listen port, or 0 for any)');
    assert.equal(listenFailureWhy(err('EMFILE'), '--ui'), 'listen EMFILE');
  });
});
