// The diff config's validation (diff/config.ts): a key no part of bb reads is
// refused with the nearest real one, at every level, instead of being ignored
// while its differences show as real; `$…` and `//…` keys are the user's own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configProtoSchema, validateDiffConfig } from '../../diff/index.js';
import { ITEMS_PROTO } from '../helpers/grpc-items.js';
import { tempDir } from '../helpers/tmp.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';

describe('validateDiffConfig: unknown keys', () => {
  const refusals: Array<[string, unknown, RegExp]> = [
    ['a misspelt top-level key', { normalise: { headers: ['x-trace'] } }, /^config bb\.json: unknown key "normalise": did you mean "normalize"\?$/],
    ['a top-level key far from any', { frobnicate: 1 }, /^config bb\.json: unknown key "frobnicate": the keys here are normalize, pairing, known, servers, scenario, stepTimeoutMs, replay \(and "\/\/…" for a comment\)$/],
    ['a misspelt normalize key', { normalize: { header: ['x-trace'] } }, /^config bb\.json normalize: unknown key "header": did you mean "headers"\?$/],
    ['a misspelt key rule key', { normalize: { keys: [{ key: 'sid', replce: '<SID>' }] } }, /^config bb\.json normalize\.keys\[0\]: unknown key "replce": did you mean "replace"\?$/],
    ['a misspelt pattern key', { normalize: { patterns: [{ regex: 'a+', replace: '<A>', ordnal: 'A' }] } }, /^config bb\.json normalize\.patterns\[0\]: unknown key "ordnal": did you mean "ordinal"\?$/],
    ['a misspelt path rule key', { normalize: { paths: [{ path: 'response.body.at', ingore: true }] } }, /^config bb\.json normalize\.paths\[0\]: unknown key "ingore": did you mean "ignore"\?$/],
    ['a misspelt pairing key', { pairing: { arraykeys: [] } }, /^config bb\.json pairing: unknown key "arraykeys": did you mean "arrayKeys"\?$/],
    ['a misspelt route key', { pairing: { keys: [{ route: 'POST /graphql', bye: 'graphql' }] } }, /^config bb\.json pairing\.keys\[0\]: unknown key "bye": did you mean "by"\?$/],
    ['a misspelt array key', { pairing: { arrayKeys: [{ path: 'response.body.items', keys: 'sku' }] } }, /^config bb\.json pairing\.arrayKeys\[0\]: unknown key "keys": did you mean "key"\?$/],
    ['a misspelt known key', { known: [{ where: '*', path: 'x', reason: 'r', olds: 1 }] }, /^config bb\.json known\[0\]: unknown key "olds": did you mean "old"\?$/],
    ['a path rule type that is no JSON type', { normalize: { paths: [{ path: 'x', pattern: '^a$', type: 'int' }] } }, /^config bb\.json normalize\.paths\[0\]\.type: must be "string", "number" or "boolean", got "int"$/],
    ['a path rule type without a pattern', { normalize: { paths: [{ path: 'x', type: 'number' }] } }, /^config bb\.json normalize\.paths\[0\]: "type" says which values a "pattern" masks: give the pattern too$/],
  ];
  for (const [name, doc, message] of refusals) {
    it(`refuses ${name} with exit code 2 and the nearest real key`, () => {
      assert.throws(() => validateDiffConfig(doc, 'bb.json'), (err: Error) => isBbError(err) && exitStatusFor(err) === 2 && message.test(err.message));
    });
  }

  it('reads every key the docs name, and keeps $schema and "//" comments at any level', () => {
    const config = validateDiffConfig(
      {
        $schema: './bb.schema.json',
        '//': 'rules for the orders service',
        normalize: { '// why': 'the ids are random', disable: [], keys: [{ key: 'sid', replace: '<SID>' }], patterns: [{ name: 'conn', regex: 'c_[0-9]+', flags: 'i', replace: '<C>' }], headers: ['X-Trace'], keep: ['id'], paths: [{ where: '*', path: 'response.body.at', replace: '<AT>' }], unorderedArrays: ['response.body.tags'] },
        pairing: { keys: [{ route: 'POST /graphql', by: 'graphql' }], unordered: ['GET /v1/*'], arrayKeys: [{ path: 'response.body.items', key: 'sku' }], wsOrder: 'total' },
        known: [{ where: '*', path: 'response.body.v', kind: 'changed', old: 1, new: 2, reason: 'v2', since: '1.4', tracking: 'T-1' }],
        servers: {},
        scenario: 's.ts',
        stepTimeoutMs: 1000,
        replay: { values: {} },
      },
      'bb.json',
    );
    assert.deepEqual(config.normalize.headers, ['x-trace']);
    assert.equal(config.known[0]!.tracking, 'T-1');
  });
});

describe('configProtoSchema', () => {
  const tmp = tempDir();

  it('gives the schema validation parsed (a config\'s .proto files are parsed once), and parses a list built elsewhere', () => {
    const proto = join(tmp.dir, 'items.proto');
    writeFileSync(proto, ITEMS_PROTO);
    const config = validateDiffConfig({ normalize: { proto: 'items.proto' } }, join(tmp.dir, 'bb.json'));
    const schema = configProtoSchema(config);
    assert.ok(schema);
    assert.equal(configProtoSchema(config), schema, 'the same schema each time: not parsed again');
    // A config whose list validation never saw (a copy) still gets its files parsed.
    const copy = { ...config, normalize: { ...config.normalize, proto: [...config.normalize.proto!] } };
    const other = configProtoSchema(copy);
    assert.ok(other && other !== schema);
  });
});
