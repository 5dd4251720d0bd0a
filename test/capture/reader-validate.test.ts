// The reader's checks of bb's own response fields (capture/reader-validate.ts): `_informational`, the 1xx heads
// before a response, is read typed (status, statusText, headers) and refused with its path when it is not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HarShapeError, validateEntry, validateLogHeader } from '../../capture/reader-validate.js';
import { entry } from '../helpers/har.js';

describe('validateEntry: response._informational', () => {
  const withHeads = (heads: unknown) => {
    const e = entry('http://127.0.0.1:1/x', '2026-01-01T00:00:00.000Z') as unknown as { response: Record<string, unknown> };
    e.response._informational = heads;
    return e;
  };
  it('fills what is missing (statusText, headers) and keeps the rest', () => {
    const e = validateEntry(withHeads([{ status: 103, headers: [{ name: 'Link', value: '</a.css>; rel=preload' }] }, { status: 100 }]), 'log.entries[0]');
    assert.deepEqual(e.response._informational, [
      { status: 103, statusText: '', headers: [{ name: 'Link', value: '</a.css>; rel=preload' }] },
      { status: 100, statusText: '', headers: [] },
    ]);
  });
  it('refuses a head without a numeric status, naming its path', () => {
    assert.throws(() => validateEntry(withHeads([{ status: '103' }]), 'log.entries[0]'), (err: Error) => err instanceof HarShapeError && /log\.entries\[0\]\.response\._informational\[0\]\.status/.test(err.message));
    assert.throws(() => validateEntry(withHeads({ status: 103 }), 'log.entries[0]'), (err: Error) => err instanceof HarShapeError && /_informational/.test(err.message));
  });
});

describe('validateLogHeader: log._bb.shadowRole', () => {
  const log = (shadowRole: unknown) => ({ version: '1.2', creator: { name: 'bb', version: '0' }, pages: [], entries: [], _bb: { shadowRole } });
  it("reads 'primary', 'candidate' and 'secondary', and refuses anything else with its path", () => {
    for (const role of ['primary', 'candidate', 'secondary']) assert.equal(validateLogHeader(log(role))._bb?.shadowRole, role);
    for (const bad of ['old', 1, {}]) {
      assert.throws(() => validateLogHeader(log(bad)), (err: Error) => err instanceof HarShapeError && /log\._bb\.shadowRole/.test(err.message));
    }
  });
});
