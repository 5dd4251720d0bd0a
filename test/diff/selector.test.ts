// Field paths (diff/selector.ts): joinPath writes a key that is not a plain identifier as a JSON string in
// brackets, and parseFieldPath reads exactly that back, whatever the key holds (the live view's page runs the
// same parser: test/ui/assets/views/shadow.test.ts). splitPath, what selectors match by, reads them the same.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { joinPath, parseFieldPath, pathMatcher, pathPattern, splitPath } from '../../diff/selector.js';
import { HOSTILE_KEYS } from '../helpers/hostile-keys.js';

describe('parseFieldPath', () => {
  it('reads back each key joinPath wrote, at the top, after a key and after an index', () => {
    for (const key of HOSTILE_KEYS) {
      assert.deepEqual(parseFieldPath(joinPath('', key)), [key], joinPath('', key));
      assert.deepEqual(parseFieldPath(joinPath(joinPath('response.body', key), 'next')), ['response', 'body', key, 'next'], joinPath('response.body', key));
      assert.deepEqual(parseFieldPath(joinPath(joinPath(joinPath('response.body.items', 2), key), 0)), ['response', 'body', 'items', 2, key, 0]);
    }
  });

  it('reads every key of one path written from all of them', () => {
    const path = HOSTILE_KEYS.reduce((p: string, k) => joinPath(p, k), 'response.body');
    assert.deepEqual(parseFieldPath(path), ['response', 'body', ...HOSTILE_KEYS]);
  });

  for (const [path, segments] of [
    ['response.body.items[0].id', ['response', 'body', 'items', 0, 'id']],
    ['response.body.items[].id', ['response', 'body', 'items', -1, 'id']],
    ['response.headers["x-\'cand-only\'"]', ['response', 'headers', "x-'cand-only'"]],
    ['response.body["@odata.count"]', ['response', 'body', '@odata.count']],
    ['response.body["[3]"][3]', ['response', 'body', '[3]', 3]],
    ['response.body["a\\\\"][0]', ['response', 'body', 'a\\', 0]],
    ['', []],
  ] as const) {
    it(`reads ${path || '(empty)'}`, () => assert.deepEqual(parseFieldPath(path), segments));
  }
});

describe('splitPath', () => {
  it('names an index by its brackets and a key by its text', () => {
    assert.deepEqual(splitPath('a.b[0]["x.y"][]'), ['a', 'b', '[0]', 'x.y', '[]']);
  });

  it('matches a selector on a quoted key as joinPath wrote it', () => {
    for (const key of HOSTILE_KEYS.filter((k) => !/^\[\d*\]$/.test(k))) {
      assert.equal(pathMatcher(joinPath('body', key))(joinPath('response.body', key)), true, key);
    }
  });
});

describe('pathPattern', () => {
  it('replaces each index by [] and leaves a quoted key as it is, brackets and digits in it too', () => {
    assert.equal(pathPattern('response.body.items[3].tags[0]'), 'response.body.items[].tags[]');
    for (const key of HOSTILE_KEYS) {
      const path = joinPath(joinPath(joinPath('response.body.items', 3), key), 12);
      assert.equal(pathPattern(path), joinPath(joinPath('response.body.items[]', key), 12).replace(/\[12\]$/, '[]'), key);
    }
  });
});
