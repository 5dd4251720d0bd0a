// A JSON text cut short is read up to its last complete member (diff/bind/json-prefix.ts):
// bb shadow keeps 256 KiB of the primary's answer for binding, and a bigger answer's
// id, issued before the cut, must bind at the same place as in the target's whole answer.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonPrefix } from '../../../diff/bind/json-prefix.js';
import { Counterparts } from '../../../diff/bind/index.js';

describe('parseJsonPrefix', () => {
  it('keeps the complete members and elements, closing what was open', () => {
    assert.deepEqual(parseJsonPrefix('{"id":1042,"items":[{"a":"x,y"},{"b":"cut he'), { value: { id: 1042, items: [{ a: 'x,y' }] } });
    assert.deepEqual(parseJsonPrefix('[{"id":"a\\"1"},{"id":7'), { value: [{ id: 'a"1' }] });
    assert.deepEqual(parseJsonPrefix('{"receipt":"abc'), undefined);
  });

  it('a cut answer binds what it issued before the cut; an answer kept whole is read as before', () => {
    const whole = JSON.stringify({ id: 5017, receipt: 'x'.repeat(100) });
    const cut = JSON.stringify({ id: 1042, receipt: 'y'.repeat(100) }).slice(0, 40);
    const values = new Counterparts();
    values.learn({ headers: [], text: cut }, { headers: [], text: whole });
    assert.equal(values.get('1042'), undefined, 'not marked as cut: not read');
    values.learn({ headers: [], text: cut, truncated: true }, { headers: [], text: whole });
    assert.equal(values.get('1042'), '5017');
  });
});
