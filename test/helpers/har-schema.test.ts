// The HAR validator the suite checks every capture with (test/helpers/har-schema.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Har } from '../../capture/har.js';
import { entry, har } from './har.js';
import { harProblems } from './har-schema.js';

describe('the HAR validator', () => {
  // The suite's smallest hand-made HAR: the validator takes it as it is.
  const valid = () => har([entry('http://h/', '2025-01-01T00:00:00.000Z')]) as Har;
  it('accepts a minimal valid HAR', () => {
    assert.deepEqual(harProblems(valid()), []);
  });
  it('flags negative timings, missing fields and wrong types', () => {
    const a = valid();
    a.log.entries[0]!.timings.wait = -2;
    assert.match(harProblems(a).join('\n'), /timings\/wait must be ≥ 0 or -1/);
    const b = valid() as unknown as { log: Record<string, unknown> };
    delete b.log.creator;
    assert.match(harProblems(b).join('\n'), /creator/);
    const c = valid();
    (c.log.entries[0]!.response.content as { size: unknown }).size = 'big';
    assert.match(harProblems(c).join('\n'), /content\/size/);
  });
});
