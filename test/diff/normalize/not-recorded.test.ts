// Bodies the producer did not record (docs/diff.md "What is compared"): a
// browser's HAR without postData though the request had a body, or a response
// with a size and no text. Such a body is not compared, and its content-length
// is not masked on one side only. Real exports from ../shared/fixtures/har/,
// read in place, with the body taken out as a browser's "without content"
// export does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { renderText, type DiffResult } from '../../../diff/index.js';
import { requestNotRecorded, responseNotRecorded } from '../../../diff/normalize/not-recorded.js';
import type { Har, HarEntry } from '../../../capture/har.js';
import { capture } from '../../helpers/har.js';
import { diffBothPaths } from '../diff-bounded.js';
import { tempDir } from '../../helpers/tmp.js';
import { sharedFixture } from '../../helpers/fixtures.js';

const show = (r: DiffResult) => renderText(r, { color: false });

async function fixture(name: string): Promise<Har> {
  return JSON.parse((await readFile(sharedFixture(undefined, name)!, 'utf8')).replace(/^\uFEFF/, '')) as Har;
}

describe('bodies the producer did not record', () => {
  const t = tempDir();

  const both = (a: Har, b: Har) => diffBothPaths(t, a, b);

  it('a Chrome POST exported without postData matches the export with it, both ways, on both paths', async (t2) => {
    if (!sharedFixture(t2)) return;
    const recorded = await fixture('postdata.har');
    const bare = structuredClone(recorded);
    delete bare.log.entries[0]!.request.postData;
    assert.equal(requestNotRecorded(bare.log.entries[0]!), true);
    assert.equal(requestNotRecorded(recorded.log.entries[0]!), false);
    for (const r of [...(await both(recorded, bare)), ...(await both(bare, recorded))]) assert.equal(r.verdict, 'match', show(r));
  });

  it('a response exported without its text matches the export with it (mitmproxy JSON, Insomnia HTML)', async (t2) => {
    if (!sharedFixture(t2)) return;
    for (const [name, i] of [['mitmproxy-export.har', 1], ['insomnia.har', 0]] as const) {
      const recorded = await fixture(name);
      const bare = structuredClone(recorded);
      delete bare.log.entries[i]!.response.content.text;
      delete bare.log.entries[i]!.response.content.encoding;
      assert.equal(responseNotRecorded(bare.log.entries[i]!), true, name);
      for (const r of [...(await both(recorded, bare)), ...(await both(bare, recorded))]) assert.equal(r.verdict, 'match', `${name}\n${show(r)}`);
    }
  });

  it('what else differs in such a pair is still reported', async (t2) => {
    if (!sharedFixture(t2)) return;
    const recorded = await fixture('mitmproxy-export.har');
    const bare = structuredClone(recorded);
    const e = bare.log.entries[1]!;
    delete e.response.content.text;
    e.response.status = 500;
    for (const r of await both(recorded, bare)) assert.deepEqual(r.differences.map((d) => [d.kind, d.path]), [['changed', 'response.status']], show(r));
  });

  it('responses without a body by definition are never "not recorded"', () => {
    const base = capture([{ url: 'http://127.0.0.1:1/x', body: '' }]).log.entries[0]!;
    const withLength = (method: string, status: number, size: number): HarEntry => ({
      ...base,
      request: { ...base.request, method },
      response: { ...base.response, status, headers: [{ name: 'Content-Length', value: '78258' }], content: { size, mimeType: 'application/octet-stream' } },
    });
    assert.equal(responseNotRecorded(withLength('HEAD', 200, 78258)), false);
    assert.equal(responseNotRecorded(withLength('GET', 304, 78258)), false);
    assert.equal(responseNotRecorded(withLength('GET', 204, 0)), false);
    assert.equal(responseNotRecorded(withLength('GET', 200, 0)), true);
    assert.equal(responseNotRecorded(withLength('GET', 200, 78258)), true);
  });

  it('the Firefox HEAD with Content-Length and no body still matches itself and keeps its length compared', async (t2) => {
    if (!sharedFixture(t2)) return;
    const head = await fixture('head-content-length.har');
    const other = structuredClone(head);
    other.log.entries[0]!.response.headers = other.log.entries[0]!.response.headers.map((h) => (h.name.toLowerCase() === 'content-length' ? { ...h, value: '1' } : h));
    for (const r of await both(head, other)) assert.deepEqual(r.differences.map((d) => [d.path, d.old, d.new]), [['response.headers.content-length', '78258', '1']], show(r));
  });
});
