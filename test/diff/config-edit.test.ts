// Writing triage into a config file (diff/config-edit.ts), the one writer of
// `bb known add` and of `bb shadow --ui`'s actions: other keys and indentation
// kept, an equal entry not written twice, the file replaced atomically.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { addToConfigFile, addPathRuleToConfigText } from '../../diff/config-edit.js';
import { tempDir } from '../helpers/tmp.js';

describe('addToConfigFile', () => {
  it('creates the config, then adds to it keeping its keys, indentation and mode; equal entries once', async () => {
    const dir = tempDir().dir;
    const path = join(dir, 'bb.config.json');
    const known = { where: '*/GET /items#*', path: 'response.body.total', kind: 'changed' as const, old: 1, new: 2, reason: 'new bundle' };
    assert.deepEqual(await addToConfigFile(path, { known: [known] }), { known: [true], paths: [] });
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), { known: [known] });
    writeFileSync(path, '{\n    "pairing": { "keys": [] },\n    "known": []\n}\n');
    chmodSync(path, 0o640);
    const rule = { where: '*', path: 'response.body.id', pattern: '^[0-9a-f]{24}$', replace: '<HEX24>' };
    assert.deepEqual(await addToConfigFile(path, { known: [known, known], paths: [rule] }), { known: [true, false], paths: [true] });
    const text = readFileSync(path, 'utf8');
    assert.match(text, /^\{\n {4}"pairing"/);
    assert.deepEqual(JSON.parse(text), { pairing: { keys: [] }, known: [known], normalize: { paths: [rule] } });
    assert.equal(statSync(path).mode & 0o777, 0o640);
    assert.deepEqual(readdirSync(dir), ['bb.config.json']);
    assert.deepEqual(await addToConfigFile(path, { known: [known], paths: [rule] }), { known: [false], paths: [false] });
  });

  it('refuses a config that is not JSON, and leaves it as it was', async () => {
    const path = join(tempDir().dir, 'bad.json');
    writeFileSync(path, '{ nope');
    await assert.rejects(addToConfigFile(path, { known: [{ where: '*', path: 'a', reason: 'r' }] }), { code: 'BB_CONFIG_INVALID', message: /is not valid JSON/ });
    assert.equal(readFileSync(path, 'utf8'), '{ nope');
  });

  it('adds a path rule to a config text, once', () => {
    const rule = { where: '*', path: 'response.body.at', pattern: '^\\d+$', replace: '<N>' };
    const once = addPathRuleToConfigText('{"normalize":{"keys":["x"]}}', rule)!;
    assert.deepEqual(JSON.parse(once), { normalize: { keys: ['x'], paths: [rule] } });
    assert.equal(addPathRuleToConfigText(once, rule), undefined);
  });
});
