// A body holding one unbroken run of token characters millions long (a hex
// dump, a base64url blob: a valid answer, under the 16 MiB body cap) is
// compared, not "Maximum call stack size exceeded" (found probing bb shadow
// with a 9 MB JSON answer: its live comparison and `bb diff` of the captures
// both died in the shape scan, diff/normalize/shapes.ts; the cause and the rule:
// test/structure/regex-quantifiers.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runBb } from '../../helpers/cli.js';
import { capture } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

function blobCapture(hex: string) {
  const doc = capture([{ url: 'http://127.0.0.1:1/dump', body: 'PLACEHOLDER', mime: 'application/json' }]);
  doc.log.entries[0]!.response.content.text = JSON.stringify({ name: 'dump', hex });
  return doc;
}

describe('bb diff of answers holding a 9-million-character token', () => {
  const t = tempDir();
  const hex = 'a1b2c3d4e5f6'.repeat(750_000);

  it('says MATCH for a capture against itself', async () => {
    const a = await t.write('self.har', blobCapture(hex));
    const r = await runBb(['diff', a, a]);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^MATCH/);
  });

  it('finds the one changed character, in memory and in the bounded store', async () => {
    const a = await t.write('old.har', blobCapture(hex));
    const b = await t.write('new.har', blobCapture(`${hex.slice(0, -1)}0`));
    for (const env of [{}, { BB_DIFF_BOUNDED_BYTES: '1' }]) {
      const r = await runBb(['diff', a, b], env);
      assert.equal(r.stderr, '', JSON.stringify(env));
      assert.equal(r.code, 1, JSON.stringify(env));
      assert.match(r.stdout, /response\.body\.hex/, JSON.stringify(env));
    }
  });
});
