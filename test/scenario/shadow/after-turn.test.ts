// What bb shadow does for its mirrors waits for the primary tap's turn
// (scenario/shadow/after-turn.ts): a job queued while the tap holds a
// completed response runs only after the turn's flush released it, even when
// it was queued first (a mirror goes at the response head, before the
// completion); with no flush in the turn it still runs, on the next turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FactBus } from '../../../proxy/events.js';
import { TurnFlush } from '../../../proxy/turn-flush.js';
import { AfterTurn } from '../../../scenario/shadow/after-turn.js';

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

function wired(): { bus: FactBus; after: AfterTurn; seen: string[] } {
  const bus = new FactBus();
  const after = new AfterTurn();
  bus.on((f) => after.fact(f));
  return { bus, after, seen: [] };
}

test('a mirror queued at the response head runs after the turn released the held response', async () => {
  const { bus, after, seen } = wired();
  after.later(() => seen.push('mirror a'));
  TurnFlush.of(bus).defer(() => seen.push('release a'));
  after.later(() => seen.push('mirror b'));
  assert.deepEqual(seen, [], 'nothing before the end of the turn');
  await turns(1);
  assert.deepEqual(seen, ['release a', 'mirror a', 'mirror b']);
});

test('flushNow (a path that writes at once): the jobs wait for that synchronous write too', async () => {
  const { bus, after, seen } = wired();
  after.later(() => seen.push('mirror'));
  TurnFlush.of(bus).flushNow();
  seen.push('write');
  await Promise.resolve();
  assert.deepEqual(seen, ['write', 'mirror']);
});

test('no flush in the turn (a response still streaming): the jobs run on the next turn, in order, once', async () => {
  const { after, seen } = wired();
  after.later(() => seen.push('a'));
  after.later(() => seen.push('b'));
  await turns(3);
  assert.deepEqual(seen, ['a', 'b']);
  after.later(() => seen.push('c'));
  await turns(3);
  assert.deepEqual(seen, ['a', 'b', 'c']);
});

test('a job that throws does not stop the others', async () => {
  const { after, seen } = wired();
  after.later(() => {
    throw new Error('mirror broke');
  });
  after.later(() => seen.push('next'));
  await turns(3);
  assert.deepEqual(seen, ['next']);
});
