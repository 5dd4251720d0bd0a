// JSON nested 5,000 levels deep (a valid body a real server can send) is
// compared, not a RangeError with a stack trace (issue 34 item 10): down to
// MAX_COMPARED_DEPTH levels field by field, and each value nested deeper as
// its JSON text (whitespace aside), marked so in the report.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { runBb } from '../../helpers/cli.js';
import { capture } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { MAX_COMPARED_DEPTH } from '../../../diff/normalize/json.js';

const nested = (depth: number, leaf: string) => '{"a":'.repeat(depth) + JSON.stringify(leaf) + '}'.repeat(depth);
const nestedArray = (depth: number, leaf: string) => '['.repeat(depth) + JSON.stringify(leaf) + ']'.repeat(depth);

/** A one-exchange capture whose JSON response body (and one WebSocket message, when given) is `text`. */
function deepCapture(text: string, wsText?: string) {
  const doc = capture([
    { url: 'http://127.0.0.1:1/deep', body: 'PLACEHOLDER', mime: 'application/json' },
    ...(wsText ? [{ url: 'http://127.0.0.1:1/socket', ws: [{ type: 'receive' as const, data: wsText }] }] : []),
  ]);
  doc.log.entries[0]!.response.content.text = text;
  return doc;
}

type Row = { kind: string; path: string; old?: unknown; new?: unknown };
const pathAt = (root: string, depth: number) => root + '.a'.repeat(depth);

describe('bb diff on JSON nested 5,000 levels deep', () => {
  const t = tempDir();

  it('says MATCH for a capture against itself, objects and arrays alike', async () => {
    for (const text of [nested(5000, 'x'), nestedArray(5000, 'x')]) {
      const a = await t.write('self.har', deepCapture(text, text));
      const r = await runBb(['diff', a, a]);
      assert.equal(r.stderr, '');
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^MATCH/);
    }
  });

  // BB_DIFF_BOUNDED_BYTES=1: the bounded store, its sides in worker threads (values cross by structured clone).
  for (const env of [{}, { BB_DIFF_BOUNDED_BYTES: '1' }]) it(`finds a changed leaf as one difference where the compared depth ends, in every report ${JSON.stringify(env)}`, async () => {
    const a = await t.write('old.har', deepCapture(nested(5000, 'x'), nested(5000, 'x')));
    const b = await t.write('new.har', deepCapture(nested(5000, 'y'), nested(5000, 'y')));
    const dir = tempDir();
    const r = await runBb(['diff', a, b, '--json', dir.path('r.json'), '--html', dir.path('r.html'), '--junit', dir.path('r.xml')], env);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 1);
    const rows = (JSON.parse(await readFile(dir.path('r.json'), 'utf8')) as { differences: Row[] }).differences;
    assert.deepEqual(rows.map((d) => [d.kind, d.path]), [
      ['changed', pathAt('response.body', MAX_COMPARED_DEPTH)],
      ['changed', pathAt('ws.messages[0].data', MAX_COMPARED_DEPTH)],
    ]);
    const old = rows[0]!.old as string;
    assert.ok(old.startsWith(`(nested deeper than ${MAX_COMPARED_DEPTH} levels, compared as text) {"a":{"a":`), old.slice(0, 100));
    assert.ok(old.endsWith('"x"' + '}'.repeat(5000 - MAX_COMPARED_DEPTH)));
    assert.match(await readFile(dir.path('r.html'), 'utf8'), /compared as text/);
    assert.match(await readFile(dir.path('r.xml'), 'utf8'), /<failure/);
  });

  it('compares field by field down to the stated depth', async () => {
    const a = await t.write('old-limit.har', deepCapture(nested(MAX_COMPARED_DEPTH, 'x')));
    const b = await t.write('new-limit.har', deepCapture(nested(MAX_COMPARED_DEPTH, 'y')));
    const r = await runBb(['diff', a, b, '--json', t.path('limit.json'), '--html', t.path('limit.html')]);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 1);
    const rows = (JSON.parse(await readFile(t.path('limit.json'), 'utf8')) as { differences: Row[] }).differences;
    assert.deepEqual(rows.map((d) => [d.kind, d.path, d.old, d.new]), [['changed', pathAt('response.body', MAX_COMPARED_DEPTH), 'x', 'y']]);
  });

  it('keeps whitespace out of the comparison past the stated depth', async () => {
    const spaced = nested(5000, 'x').replace(/:/g, ' :\n ');
    const a = await t.write('tight.har', deepCapture(nested(5000, 'x')));
    const b = await t.write('spaced.har', deepCapture(spaced));
    const r = await runBb(['diff', a, b]);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0, r.stdout);
  });
});
