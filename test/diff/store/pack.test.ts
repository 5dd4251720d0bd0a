import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { packSummaries, unpackSummaries } from '../../../diff/store/pack.js';
import type { EntrySummary } from '../../../diff/context.js';
import type { KeptRef } from '../../../diff/store/side-work.js';

describe('summaries packed for the trip from a worker', () => {
  // The side's marker list; each summary's marks are a view into it, as SideWork.finish makes them.
  const markers = Uint32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
  const list: EntrySummary[] = [
    { index: 0, key: '\nGET /a', route: 'GET /a', page: '', id: '/GET /a#1', token: '\nGET /a\nAAA', shape: 0 },
    { index: 7, key: 'p\nPOST /b', route: 'POST /b', page: 'p', id: 'p/POST /b#1', token: 'p\nPOST /b\nBBB', shape: 3, seq: 12, marks: markers.subarray(0, 0) },
    { index: 1, key: '\nGET /a', route: 'GET /a', page: '', id: '/GET /a#2', token: '\nGET /a\nCCC', shape: 0, seq: 0, marks: markers.subarray(18, 24), times: { ttfb: 1.5, total: 3 } },
    { index: 2, key: '\nGET /a', route: 'GET /a', page: '', id: '/GET /a#3', token: '\nGET /a\nCCC', shape: 1, times: { ttfb: -1, total: -1, skip: 'untimed' } },
  ];
  const kept: Array<KeptRef | undefined> = [undefined, { chunk: 2, at: 4_194_000, text: 900, rest: 40 }, undefined, undefined];

  it('comes back as it went, across a real message port with the numbers and markers transferred', async () => {
    const packed = packSummaries(list, kept);
    // Keys, routes and pages repeat across entries: each crosses once.
    assert.deepEqual([...packed.names].sort(), ['', '\nGET /a', 'GET /a', 'POST /b', 'p', 'p\nPOST /b'].sort());
    const sent = markers.slice();
    const { port1, port2 } = new MessageChannel();
    const got = new Promise<unknown>((resolve) => port2.once('message', resolve));
    port1.postMessage({ packed, markers: sent }, [packed.numbers.buffer as ArrayBuffer, sent.buffer as ArrayBuffer]);
    const arrived = (await got) as { packed: typeof packed; markers: Uint32Array };
    const back = unpackSummaries(arrived.packed, arrived.markers);
    port1.close();
    assert.equal(packed.numbers.byteLength, 0, 'the numbers were transferred, not copied');
    assert.equal(sent.byteLength, 0, 'the markers were transferred, not copied');
    assert.deepEqual(back.kept, kept);
    assert.deepEqual(back.summaries.map((s) => ({ ...s, ...(s.marks ? { marks: [...s.marks] } : {}) })), list.map((s) => ({ ...s, ...(s.marks ? { marks: [...s.marks] } : {}) })));
    assert.equal(back.summaries[2]!.marks!.buffer, arrived.markers.buffer, 'marks are views into the one marker list');
  });

  it('leaves out fields no summary had, and packs an empty side', () => {
    const back = unpackSummaries(packSummaries([list[0]!], [undefined]), new Uint32Array());
    assert.deepEqual(Object.keys(back.summaries[0]!).sort(), ['id', 'index', 'key', 'page', 'route', 'shape', 'token']);
    assert.deepEqual(back.kept, [undefined]);
    assert.deepEqual(unpackSummaries(packSummaries([], []), new Uint32Array()), { summaries: [], kept: [] });
  });
});
