// How the live comparison cuts its batches: up to 400 exchanges, and up to
// 20,000 stream messages, so long WebSocket conversations that all end with
// the run are compared a few at a time, not in one batch holding them all.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HarEntry } from '../../../capture/index.js';
import { batchLength, type Group } from '../../../scenario/shadow/compare.js';

const entry = (messages: number): HarEntry =>
  ({ _webSocketMessages: Array.from({ length: messages }, () => ({ type: 'send', time: 0, opcode: 1, data: 'x' })) }) as unknown as HarEntry;
const group = (messages: number): [number, Group] => [0, { primary: entry(messages), candidate: entry(messages), secondary: entry(messages), since: 0 }];

describe('the live comparison batches', () => {
  it('holds up to 400 plain exchanges', () => {
    assert.equal(batchLength(Array.from({ length: 1000 }, () => group(0))), 400);
    assert.equal(batchLength(Array.from({ length: 7 }, () => group(0))), 7);
  });
  it('cuts before the stream messages pass 20,000, and takes a huge conversation alone', () => {
    assert.equal(batchLength(Array.from({ length: 10 }, () => group(3000))), 2);
    assert.equal(batchLength([group(50_000), group(1)]), 1);
  });
  it('counts a conversation handed over with its first messages by all of them', () => {
    const whole = { messages: 12_000, build: () => assert.fail('batching builds nothing') };
    const deferred: [number, Group] = [0, { primary: entry(64), candidate: entry(64), whole: { primary: whole, candidate: whole }, since: 0 }];
    assert.equal(batchLength([deferred, deferred, group(1)]), 1);
    assert.equal(batchLength([group(64), group(64)]), 2);
  });
});
