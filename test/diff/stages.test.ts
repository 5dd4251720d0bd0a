// The read stage (diff/stages.ts openStores): an empty capture is refused (an
// empty comparison is never a match), except a `bb shadow` mirror's segment in
// which nothing was mirrored, compared with its primary (`bb shadow --rotate`
// cuts a segment in which the client only sent requests the shadow did not
// mirror: `bb diff` of that segment's captures refused to run, exit 2).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderText } from '../../diff/index.js';
import { capture } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

describe('an empty capture', () => {
  const t = tempDir();
  const origin = 'http://127.0.0.1:4000';
  const labelled = (label: string, doc: ReturnType<typeof capture>) => ((doc.log._bb!.label = label), doc);
  /** A shadow capture: each entry tagged with its shared id, those in `skipped` as not mirrored. */
  const shadowCapture = (label: string, ids: number[], skipped: number[] = []) => {
    const doc = labelled(label, capture(ids.map((id) => ({ method: skipped.includes(id) ? 'POST' : 'GET', url: `${origin}/orders`, body: { id } }))));
    doc.log.entries.forEach((e, i) => (e._bb!.shadow = { id: ids[i]!, ...(skipped.includes(ids[i]!) ? { skipped: 'unsafe' } : {}) }));
    return doc;
  };
  const empty = (label: string) => labelled(label, capture([]));
  const file = (name: string, doc: unknown) => t.write(`${name}-${Math.random()}.har`, doc);

  for (const options of [{}, { boundedThreshold: 0, workers: false }, { boundedThreshold: 0, workers: true }]) {
    it(`a mirror's segment that holds nothing, against its primary whose exchanges were all left to it: MATCH, no pair ${JSON.stringify(options)}`, async () => {
      const primary = await file('primary', shadowCapture('primary', [7, 8], [7, 8]));
      const r = await diffCaptures(primary, await file('candidate', empty('candidate')), { ...options, noisePath: await file('secondary', empty('secondary')) });
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
      assert.equal(r.pairs.length, 0);
      // Either way round.
      assert.equal((await diffCaptures(await file('candidate', empty('candidate')), primary, options)).verdict, 'match');
    });

    it(`against a primary segment with mirrored exchanges, those are missing ${JSON.stringify(options)}`, async () => {
      const r = await diffCaptures(await file('primary', shadowCapture('primary', [7, 8], [8])), await file('candidate', empty('candidate')), options);
      assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.entries}`), ['real missing 1']);
    });
  }

  it('is refused against any other capture, and two empty ones are refused', async () => {
    const other = await file('other', capture([{ url: `${origin}/orders`, body: { id: 1 } }]));
    for (const [a, b] of [[other, await file('candidate', empty('candidate'))], [await file('candidate', empty('candidate')), await file('secondary', empty('secondary'))]] as const) {
      await assert.rejects(diffCaptures(a, b), (err: { code?: string }) => err.code === 'BB_CAPTURE_EMPTY');
    }
  });
});
