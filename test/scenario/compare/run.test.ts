// claimRunFolder: two runs started in the same second (two `bb demo` or `bb compare` side by side) get a folder each.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { claimRunFolder } from '../../../scenario/compare/run.js';
import { tempDir } from '../../helpers/tmp.js';

describe('claimRunFolder', () => {
  it('makes <prefix>-<UTC time>, then -2, -3 for runs started in the same second: never one folder for two runs', (t) => {
    const parent = join(tempDir(t).dir, 'captures');
    const when = new Date('2026-12-05T05:54:29.123Z');
    const folders = [claimRunFolder(parent, 'demo', when), claimRunFolder(parent, 'demo', when), claimRunFolder(parent, 'demo', when)];
    assert.deepEqual(folders.map((f) => basename(f)), ['demo-20261205-055429', 'demo-20261205-055429-2', 'demo-20261205-055429-3']);
    for (const f of folders) assert.ok(existsSync(f) && statSync(f).isDirectory());
    assert.equal(readdirSync(parent).length, 3);
  });
});
