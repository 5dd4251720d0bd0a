// The frames page's search script (FRAMES_SEARCH_SCRIPT), run as the page
// runs it: evaluated as plain script text, no DOM.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { FRAMES_SEARCH_SCRIPT } from '../../inspect/frames-search.js';

interface Search {
  build(items: Array<{ text: string; dir: number; lane: number }>, lanes: Array<{ id: string; text: string }>): unknown;
  run(index: unknown, query: string): Int32Array | null;
}
const search = runInNewContext(`${FRAMES_SEARCH_SCRIPT};bbFrameSearch`) as Search;
const index = search.build([
  { text: 'text 5B hello', dir: 0, lane: 0 },
  { text: 'text 30B {"type":"ack","of":"hello"}', dir: 1, lane: 0 },
  { text: 'text 9B Hello World', dir: 0, lane: 1 },
  { text: 'sse 25B <script>alert(1)</script>', dir: 1, lane: 2 },
], [{ id: 'c1', text: 'connection c1 ws://h.test/chat?room=a' }, { id: 'c10', text: 'connection c10 ws://h.test/feed' }, { id: '#7', text: 'sse stream #7 http://h.test/events' }]);
const found = (q: string) => { const r = search.run(index, q); return r === null ? null : [...r]; };

describe('bbFrameSearch', () => {
  const table: Array<[string, number[] | null]> = [
    ['', null],
    ['   ', null],
    ['hello', [0, 1, 2]],
    ['HELLO world', [2]],
    ['"hello world"', [2]],
    ['"of":"hello"', [1]],
    ['dir:send hello', [0, 2]],
    ['← hello', [1]],
    ['conn:c1', [0, 1]],
    ['conn:c1 dir:receive', [1]],
    ['conn:feed', [2]],
    ['conn:events', [3]],
    ['<script>', [3]],
    ['nothing-like-this', []],
  ];
  for (const [q, want] of table) it(`finds ${JSON.stringify(want)} for ${JSON.stringify(q)}`, () => assert.deepEqual(found(q), want));

  it('narrows 50,000 rows to exactly the matching ones (its time printed, not asserted: shared cores)', (t) => {
    const many = search.build(Array.from({ length: 50_000 }, (_, i) => ({ text: `text 40B {"type":"tick","n":${i},"user":"u${i % 97}"}`, dir: i % 2, lane: i % 5 })), [0, 1, 2, 3, 4].map((k) => ({ id: `c${k}`, text: `connection c${k}` })));
    const t0 = performance.now();
    const r = search.run(many, 'u42" dir:receive')!;
    const ms = performance.now() - t0;
    // User u42 (not u420: the quote ends the name), received (dir 1).
    const want = Array.from({ length: 50_000 }, (_, i) => i).filter((i) => i % 97 === 42 && i % 2 === 1);
    assert.deepEqual([...r], want);
    t.diagnostic(`searched 50,000 rows in ${ms.toFixed(1)} ms`);
  });
});
