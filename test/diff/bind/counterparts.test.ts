// A target's counterparts of the primary's issued values (diff/bind/counterparts.ts):
// what bb shadow's relay rewrites mirrored requests with and its live
// comparison binds across batches.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counterparts, type ResponseView } from '../../../diff/bind/index.js';
import { encodeItem } from '../../helpers/grpc-items.js';

const answer = (body: unknown, headers: Array<{ name: string; value: string }> = []): ResponseView => ({ headers, text: JSON.stringify(body) });

describe('Counterparts', () => {
  it('learns the values issued at the same place that differ, from body fields and Set-Cookie', () => {
    const c = new Counterparts();
    c.learn(answer({ id: 1042, status: 'open', owner: 'user_7f3a' }, [{ name: 'Set-Cookie', value: 'sid=AAAA1111; Path=/' }]), answer({ id: 5017, status: 'open', owner: 'user_7f3a' }, [{ name: 'Set-Cookie', value: 'sid=BBBB2222; Path=/' }]));
    assert.equal(c.get('1042'), '5017');
    assert.equal(c.get('AAAA1111'), 'BBBB2222');
    // The same value on both sides has no counterpart; nor has a value the primary did not issue.
    assert.equal(c.get('user_7f3a'), undefined);
    assert.equal(c.get('5017'), undefined);
    assert.equal(c.size, 2);
  });

  it('a value under a key that names a quantity: the relay learns its counterpart (the client echoes what it was given), the live comparison (track) does not (bb diff binds none)', () => {
    const [relay, track] = [new Counterparts(), new Counterparts(true)];
    for (const c of [relay, track]) {
      const learned = c.learn(answer({ id: 1042, price_cents: 1999, maxPageSize: 1000 }), answer({ id: 5017, price_cents: 2099, maxPageSize: 5000 }));
      // Only the id is told as learned (what the relay hands the comparison from streams).
      assert.deepEqual(learned, ['1042']);
    }
    assert.deepEqual([relay.get('1042'), relay.get('1999'), relay.get('1000')], ['5017', '2099', '5000']);
    assert.deepEqual([track.get('1042'), track.get('1999'), track.get('1000')], ['5017', undefined, undefined]);
    // Nor is a quantity the target did not answer taken for one it issued nothing for.
    track.learnNone(answer({ total: 4200 }));
    assert.equal(track.unlike('4200'), false);
  });

  it('learns nothing from the same answer, nor where the primary issued nothing at that place', () => {
    const c = new Counterparts();
    c.learn(answer({ id: 1042 }), answer({ id: 1042 }));
    c.learn(answer({ n: 1 }), answer({ id: 5017 }));
    c.learn(answer({ id: 1042 }), answer({ other: 5017 }));
    assert.equal(c.size, 0);
  });

  it('with track, tells a value the target issued alike from one it issued nothing for (no place, no answer)', () => {
    const c = new Counterparts(true);
    // Alike: the price. Unlike: the coupon its answer lacks. A counterpart: the id.
    c.learn(answer({ id: 1042, price: 1999, coupon: 'SAVE-8841' }), answer({ id: 5017, price: 1999 }));
    assert.equal(c.get('1042'), '5017');
    assert.equal(c.unlike('1999'), false);
    assert.equal(c.unlike('SAVE-8841'), true);
    assert.equal(c.unlike('1042'), false);
    // A request it gave no answer to: each value the primary issued there; a value the client sent first is its own.
    c.learnNone(answer({ id: 1043, name: 'nick_0042' }), (v) => v === 'nick_0042');
    assert.equal(c.unlike('1043'), true);
    assert.equal(c.unlike('nick_0042'), false);
    // Learned a counterpart later: no longer unlike.
    c.learn(answer({ id: 1043 }), answer({ id: 5018 }));
    assert.equal(c.unlike('1043'), false);
    // The primary's values under a key that says id, where the answers differed: ids by where they stood.
    c.learn(answer({ items: [{ id: 3001, price: 2999 }], productIds: [3002], owner_id: 'u_9f2e71' }), answer({ items: [{ id: 7001, price: 2999 }], productIds: [7002], owner_id: 'u_77aa01' }));
    assert.deepEqual(['3001', '3002', 'u_9f2e71', '2999', '1042', '1999'].map((v) => c.isId(v)), [true, true, true, false, true, false]);
    // Without track nothing is remembered but counterparts.
    const plain = new Counterparts();
    plain.learn(answer({ id: 1042, coupon: 'SAVE-8841' }), answer({ id: 5017 }));
    plain.learnNone(answer({ id: 1044 }));
    assert.equal(plain.unlike('SAVE-8841'), false);
    assert.equal(plain.unlike('1044'), false);
  });

  it('keeps the newest counterpart of a value learned again', () => {
    const c = new Counterparts();
    c.learn(answer({ id: 1042 }), answer({ id: 5017 }));
    c.learn(answer({ id: 1042 }), answer({ id: 5018 }));
    assert.equal(c.get('1042'), '5018');
    assert.equal(c.size, 1);
  });

  it('is bounded by count and by characters: the oldest go (a hostile server issuing long tokens cannot grow it past its cap)', () => {
    const byCount = new Counterparts();
    for (let i = 0; i < 100_010; i++) byCount.learn(answer({ id: 10_000_000 + i }), answer({ id: 50_000_000 + i }));
    assert.equal(byCount.size, 100_000);
    assert.equal(byCount.get('10000000'), undefined);
    assert.equal(byCount.get(String(10_000_000 + 100_009)), String(50_000_000 + 100_009));

    const byChars = new Counterparts();
    const long = (tag: string, i: number) => `${tag}${String(i).padStart(6, '0')}`.padEnd(4000, 'x');
    // 3,000 pairs of ~8,000 characters: past the 8 Mi-character cap after ~1,048 of them.
    for (let i = 0; i < 3000; i++) byChars.learn(answer({ token: long('P', i) }), answer({ token: long('C', i) }));
    assert.ok(byChars.size < 1100 && byChars.size > 1000, `kept ${byChars.size}`);
    assert.equal(byChars.get(long('P', 0)), undefined);
    assert.equal(byChars.get(long('P', 2999)), long('C', 2999));
  });
  it("learns from a stream's r-th message on each side: text (a WebSocket's, an event's) or a gRPC message's bytes, never one of each", () => {
    const c = new Counterparts();
    assert.deepEqual(c.learnMessage(0, '{"ticket":"t_1a2b3c"}', '{"ticket":"t_9z8y7x"}'), ['t_1a2b3c']);
    assert.deepEqual(c.learnMessage(1, encodeItem({ name: 'item_aaaa1111', n: 48213 }), encodeItem({ name: 'item_bbbb2222', n: 50170 })), ['item_aaaa1111', '48213']);
    assert.deepEqual([c.get('t_1a2b3c'), c.get('item_aaaa1111'), c.get('48213')], ['t_9z8y7x', 'item_bbbb2222', '50170']);
    assert.deepEqual(c.learnMessage(2, encodeItem({ name: 'item_cccc3333', n: 1 }), encodeItem({ name: 'item_cccc3333', n: 1 })), []);
    assert.deepEqual(c.learnMessage(3, '{"id":"x_12345"}', encodeItem({ name: 'x_67890', n: 1 })), []);
  });
});
