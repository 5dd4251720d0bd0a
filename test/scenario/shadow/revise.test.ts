// The verdicts the live comparison may give again (scenario/shadow/revise.ts): found by a value sent back
// that they have not bound yet, bounded by count and by their entries' size (the oldest go first).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REVISABLE, Revisables, groupBytes, signature, type Revisable } from '../../../scenario/shadow/revise.js';
import type { Difference } from '../../../diff/index.js';
import type { HarEntry } from '../../../capture/index.js';

const entry = (bodyChars: number): HarEntry => ({ request: {}, response: { content: { text: 'x'.repeat(bodyChars) } } }) as unknown as HarEntry;
const verdict = (values: string[], bodyChars = 0, used: string[] = []): Revisable => ({
  g: { primary: entry(bodyChars), candidate: entry(bodyChars), since: 0 },
  values: new Set(values), diffs: [], counted: { route: 'POST /orders', verdict: 'noise', id: 1, findings: [] }, used: new Set(used),
  bytes: groupBytes({ primary: entry(bodyChars), candidate: entry(bodyChars), since: 0 }),
});

describe('Revisables', () => {
  it('finds a verdict by a value sent back that it has not bound yet', () => {
    const kept = new Revisables();
    const a = verdict(['1000', '1001'], 0, ['1000']);
    const b = verdict(['2000']);
    kept.keep(a);
    kept.keep(b);
    assert.deepEqual([...kept.due(['1000'])], []);
    assert.deepEqual([...kept.due(['1001', '2000', '3000'])], [a, b]);
    kept.drop(b);
    assert.deepEqual([...kept.due(['2000'])], []);
  });

  it(`keeps the newest ${MAX_REVISABLE}, and answers of 64 MiB at most`, () => {
    const kept = new Revisables();
    const all = Array.from({ length: MAX_REVISABLE + 1 }, (_, i) => verdict([`v${i}`]));
    for (const r of all) kept.keep(r);
    assert.deepEqual([...kept.due(['v0', `v${MAX_REVISABLE}`])], [all[MAX_REVISABLE]]);
    const big = new Revisables();
    const first = verdict(['a1'], 20 * 1024 * 1024);
    big.keep(first);
    big.keep(verdict(['b2'], 20 * 1024 * 1024));
    assert.equal(big.due(['a1']).size, 0, 'the first of 80 MiB went');
    assert.equal(big.due(['b2']).size, 1);
  });

  it('tells verdicts apart by what they count, not by the values they show', () => {
    const d = (cls: Difference['class'], pattern: string, old: unknown) => ({ class: cls, kind: 'changed', pattern, old, new: 2 }) as unknown as Difference;
    assert.equal(signature([d('real', 'response.body.a', 1), d('real', 'response.body.a', 7)]), signature([d('real', 'response.body.a', 3)]));
    assert.notEqual(signature([d('real', 'response.body.a', 1)]), signature([d('noise', 'response.body.a', 1)]));
    assert.equal(signature([]), '');
  });
});
