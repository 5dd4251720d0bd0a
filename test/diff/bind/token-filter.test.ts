// The binding pass's filter before its Map of sent values (diff/bind/token-filter.ts):
// never a wrong "no" (a sent value passed over would not bind), and most
// strings never added answered "no" (else it saves nothing).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TokenFilter } from '../../../diff/bind/token-filter.js';

describe('TokenFilter', () => {
  it('answers maybe for every string added, of any length', () => {
    const f = new TokenFilter();
    const added = ['', 'a', 'ab', '1999', '127.0.0.1', 'sess_9f8e7d', '<redacted:0a1b2c3d>', 'é…😀', ...Array.from({ length: 50_000 }, () => randomUUID())];
    for (const s of added) f.add(s);
    assert.deepEqual(added.filter((s) => !f.mayHave(s)), []);
  });

  it('answers no for most UUIDs never added, with 50,000 added (the diff bench)', () => {
    const f = new TokenFilter();
    for (let i = 0; i < 50_000; i++) f.add(randomUUID());
    const others = Array.from({ length: 20_000 }, () => randomUUID());
    const maybe = others.filter((s) => f.mayHave(s)).length;
    assert.ok(maybe < others.length * 0.1, `${maybe} of ${others.length} answered maybe`);
  });
});
