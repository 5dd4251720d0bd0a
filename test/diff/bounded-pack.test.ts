import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { packSummaries, unpackSummaries } from '../../diff/bounded-pack.js';
import type { Summary } from '../../diff/bounded-side.js';

describe('summaries packed for the trip from a worker', () => {
  const list: Summary[] = [
    { index: 0, key: '\nGET /a', route: 'GET /a', page: '', id: '/GET /a#1', token: '\nGET /a\nAAA', shape: 0 },
    { index: 7, key: 'p\nPOST /b', route: 'POST /b', page: 'p', id: 'p/POST /b#1', token: 'p\nPOST /b\nBBB', shape: 3, seq: 12, kept: { chunk: 2, at: 4_194_000, text: 900, rest: 40 }, marks: [0, 0] },
    { index: 1, key: '\nGET /a', route: 'GET /a', page: '', id: '/GET /a#2', token: '\nGET /a\nCCC', shape: 0, seq: 0, marks: [18, 6], times: { ttfb: 1.5, total: 3 } },
    { index: 2, key: '\nGET /a', route: 'GET /a', page: '', id: '/GET /a#3', token: '\nGET /a\nCCC', shape: 1, times: { ttfb: -1, total: -1, skip: 'untimed' } },
  ];

  it('comes back as it went, across a real message port with the numbers transferred', async () => {
    const packed = packSummaries(list);
    // Keys, routes and pages repeat across entries: each crosses once.
    assert.deepEqual([...packed.names].sort(), ['', '\nGET /a', 'GET /a', 'POST /b', 'p', 'p\nPOST /b'].sort());
    const { port1, port2 } = new MessageChannel();
    const got = new Promise<unknown>((resolve) => port2.once('message', resolve));
    port1.postMessage(packed, [packed.numbers.buffer as ArrayBuffer]);
    const back = unpackSummaries((await got) as typeof packed);
    port1.close();
    assert.equal(packed.numbers.byteLength, 0, 'the numbers were transferred, not copied');
    assert.deepEqual(back, list);
  });

  it('leaves out fields no summary had, and packs an empty side', () => {
    const back = unpackSummaries(packSummaries([list[0]!]));
    assert.deepEqual(Object.keys(back[0]!).sort(), ['id', 'index', 'key', 'page', 'route', 'shape', 'token']);
    assert.deepEqual(unpackSummaries(packSummaries([])), []);
  });
});
