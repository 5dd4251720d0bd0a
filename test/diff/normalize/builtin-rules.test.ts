// The built-in rules' table: the names `normalize.disable` takes come from it,
// and its value rules run in step order with the config's patterns at theirs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_RULES, BUILTIN_RULE_NAMES, CONFIG_PATTERNS_STEP } from '../../../diff/normalize/builtin-rules.js';
import { compileRules } from '../../../diff/normalize/rules.js';

describe('the built-in rules table', () => {
  it('lists the names in the order docs/diff.md shows them', () => {
    assert.deepEqual(BUILTIN_RULE_NAMES, [
      'timestamp-keys', 'epoch-ms-keys', 'request-id-keys', 'iso-time', 'http-dates', 'runtime-dates', 'epoch-timestamps', 'multipart-boundary', 'server-home',
      'ipv4-mapped-loopback', 'loopback-port', 'session-id', 'ulid', 'uuid', 'redacted', 'generated-ids', 'numeric-ids', 'id-key-tokens', 'volatile-headers',
      'ws-ping-pong', 'cookies', 'issued-values',
    ]);
  });

  it('gives each value rule its own step, none at the config patterns\' step', () => {
    const steps = BUILTIN_RULES.flatMap((r) => (r.value ? [r.value.step] : []));
    assert.equal(new Set(steps).size, steps.length);
    assert.ok(!steps.includes(CONFIG_PATTERNS_STEP));
  });

  it('compiles value rules in step order: rewrites, the config\'s patterns, then ordinal ids and generated shapes', () => {
    const rules = compileRules({ patterns: [{ name: 'mine', regex: 'x', replace: 'y' }] });
    assert.deepEqual(rules.valueRules.map((r) => r.name), [
      'server-home', 'ipv4-mapped-loopback', 'loopback-port', 'multipart-boundary', 'iso-time', 'http-dates', 'runtime-dates', 'epoch-timestamps', 'mine', 'session-id', 'ulid', 'uuid', 'redacted', 'generated-ids',
    ]);
  });

  it('drops a disabled rule from every part it contributes to', () => {
    const on = compileRules({});
    const off = compileRules({ disable: ['request-id-keys', 'volatile-headers', 'ws-ping-pong', 'epoch-timestamps', 'cookies', 'http-dates', 'numeric-ids', 'generated-ids', 'id-key-tokens'] });
    assert.equal(on.maskedHeaders.get('x-request-id'), '<ID>');
    assert.equal(on.maskedHeaders.get('date'), '<VOLATILE>');
    assert.equal(on.maskedHeaders.get('grpc-timeout'), '<VOLATILE>', "a gRPC call's deadline left is a clock reading");
    for (const name of ['traceresponse', 'x-b3-traceid', 'x-amz-request-id', 'x-ms-request-id', 'x-github-request-id']) assert.equal(on.maskedHeaders.get(name), '<ID>', name);
    assert.equal(on.maskedHeaders.get('x-timer'), '<VOLATILE>');
    assert.ok(on.keyRules.some((r) => r.name === 'request-id-keys'));
    assert.equal(off.maskedHeaders.size, 0);
    assert.ok(!off.keyRules.some((r) => r.name === 'request-id-keys'));
    assert.deepEqual([on.maskBodyLength, on.dropPingPong, off.maskBodyLength, off.dropPingPong], [true, true, false, false]);
    assert.deepEqual([on.epochNumbers, on.cookies, on.cookieLifetimes, off.epochNumbers, off.cookies, off.cookieLifetimes], [true, true, true, false, false, false]);
    assert.deepEqual([on.numericIds, off.numericIds, on.idKeyTokens, off.idKeyTokens], [true, false, true, false]);
    // The shapes' ordinal classes come and go with their rules.
    assert.ok(on.ordinalClasses.includes('HEX12') && on.ordinalClasses.includes('INT') && on.ordinalClasses.includes('B64_8'));
    assert.ok(!off.ordinalClasses.includes('HEX12') && !off.ordinalClasses.includes('INT') && !off.ordinalClasses.includes('B64_8'));
  });
});
