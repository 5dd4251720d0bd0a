// An exchange's cut (scenario/replay/connection.ts armCut): after the original client's patience or --timeout,
// whichever comes first, and reported as after the bound it kept. A timer may fire a little before its delay by
// performance.now() (libuv counts from the loop's cached time): CI once reported a 500 ms --timeout as cut after
// 499 ms.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { armCut } from '../../../scenario/replay/connection.js';

const fired = (limits: Parameters<typeof armCut>[0]) =>
  new Promise<[string, number | undefined]>((resolve) => armCut(limits, (why, boundMs) => resolve([why, boundMs])));

describe('armCut', () => {
  it('cuts at --timeout, or at the client\'s patience when that comes first, and names the bound it kept', async () => {
    assert.deepEqual(await fired({ timeoutMs: 20 }), ['timeout', 20]);
    assert.deepEqual(await fired({ timeoutMs: 50, clientAbortMs: 10 }), ['client', 10]);
    assert.deepEqual(await fired({ timeoutMs: 10, clientAbortMs: 30 }), ['timeout', 10]);
  });
});
