// One flush per loop turn for every completion of the turn, and held bytes
// released only after it (the crash rule at a turn's cost).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FactBus } from '../../proxy/events.js';
import { TurnFlush } from '../../proxy/turn-flush.js';

test('many completions in one turn: one flush fact, then every release, in the order deferred', async () => {
  const bus = new FactBus();
  const seen: string[] = [];
  bus.on((f) => seen.push(f.type));
  const turn = TurnFlush.of(bus);
  assert.equal(TurnFlush.of(bus), turn, 'one per bus');
  for (const name of ['a', 'b', 'c']) turn.defer(() => seen.push(`release ${name}`));
  assert.deepEqual(seen, [], 'nothing before the end of the turn');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, ['flush', 'release a', 'release b', 'release c']);
  turn.defer(() => seen.push('release d'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen.slice(4), ['flush', 'release d'], 'a later turn flushes again');
});

test('flushNow emits the flush fact at once', () => {
  const bus = new FactBus();
  const seen: string[] = [];
  bus.on((f) => seen.push(f.type));
  TurnFlush.of(bus).flushNow();
  assert.deepEqual(seen, ['flush']);
});
