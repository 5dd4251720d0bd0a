// What is prose (never issued) and what is a value (issue 36 item 3).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isProse } from '../../../diff/bind/prose.js';

describe('isProse', () => {
  const table: Array<[string, boolean]> = [
    ['Item not found', true],
    ['Item a1b2c3d4e5f6 not found', true],
    ['Cannot query field "name" on type "Query".', true],
    ['Internal Server Error', true],
    ['<!DOCTYPE html><html><body>x</body></html>', true],
    ['<p>Hello</p>', true],
    ['  <div class="x">y</div>', true],
    ['a1b2c3d4e5f6', false],
    ['active', false],
    ['Bearer eyJhbGciOi.eyJzdWIi.sig', false],
    ['Thu, 03 Dec 2026 05:00:00 GMT', false],
    ['/items/a1b2c3d4e5f6', false],
    ['id1234 id5678 id9012', false],
    ['V1StGXR8_Z5jdHi6B-myT', false],
    ['<redacted:0123abcd>', false],
    ['', false],
  ];
  for (const [text, prose] of table) it(`${JSON.stringify(text)} is ${prose ? '' : 'not '}prose`, () => assert.equal(isProse(text), prose));
});
