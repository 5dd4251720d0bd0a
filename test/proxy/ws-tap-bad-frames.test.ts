// Invalid WebSocket frames in each direction. The proxy is a tap, never a
// relay: both ends get exactly the bytes the other sent, the first message
// is recorded, the bad frame becomes an error row (opcode -1) in the HAR,
// and other connections are unaffected.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rawClient } from '../helpers/raw.js';
import { scriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { OP, afterHead, deflatePayload, upgradeRequest, upgradeResponse, wsFrame, wsKey } from '../helpers/ws-frames.js';
import { Cleanups } from '../helpers/cleanups.js';
import { Steps } from '../helpers/steps.js';
import { alongside, echoServer, record, waitUntil, type Recording } from '../helpers/recording.js';
import type { Har } from '../../capture/har.js';

/** One invalid frame, built for a direction (masked from the client, unmasked from the server). */
interface BadFrame {
  name: string;
  frame: (fromClient: boolean) => Buffer;
  /** Negotiate permessage-deflate for this case. */
  deflate?: boolean;
  /** The tap records it as a message on purpose (the peers judge it), so no error row. */
  tolerated?: boolean;
}

const badFrames: BadFrame[] = [
  { name: 'a reserved data opcode (3)', frame: (m) => wsFrame({ opcode: 3, payload: 'x', mask: m }) },
  { name: 'a reserved control opcode (11)', frame: (m) => wsFrame({ opcode: 11, payload: 'x', mask: m }) },
  { name: 'RSV2 set', frame: (m) => wsFrame({ payload: 'x', rsv2: true, mask: m }) },
  { name: 'RSV3 set', frame: (m) => wsFrame({ payload: 'x', rsv3: true, mask: m }) },
  { name: 'RSV1 without a negotiated deflate', frame: (m) => wsFrame({ payload: 'x', rsv1: true, mask: m }) },
  { name: 'the wrong masking for its direction', frame: (m) => wsFrame({ payload: 'x', mask: !m }) },
  { name: 'a fragmented ping', frame: (m) => wsFrame({ opcode: OP.ping, payload: 'x', fin: false, mask: m }) },
  { name: 'a ping over 125 bytes', frame: (m) => wsFrame({ opcode: OP.ping, payload: Buffer.alloc(200, 1), mask: m }) },
  { name: 'a continuation with nothing to continue', frame: (m) => wsFrame({ opcode: OP.continuation, payload: 'x', mask: m }) },
  // ws-tap skips UTF-8 validation by design: the text is recorded, the peer decides (1007).
  { name: 'invalid UTF-8 in a text message', tolerated: true, frame: (m) => wsFrame({ payload: Buffer.from([0xc3, 0x28]), mask: m }) },
  { name: 'a close frame with a 1-byte payload', frame: (m) => wsFrame({ opcode: OP.close, payload: Buffer.from([3]), mask: m }) },
  {
    // A length a number cannot hold; a long message bb can count (2^40) is no error: its first bytes are kept.
    name: 'a payload length past 2^53 - 1 (2^60 announced)',
    frame: (m) => wsFrame({ opcode: OP.binary, payload: Buffer.alloc(8), lengthOverride: 2 ** 60, mask: m }),
  },
  {
    name: 'deflate data that does not inflate',
    deflate: true,
    frame: (m) => wsFrame({ payload: Buffer.from('ffffffff0000deadbeef', 'hex'), rsv1: true, mask: m }),
  },
];

const GOOD_FIRST = 'first message';

function goodFirst(fromClient: boolean, deflate: boolean): Buffer {
  return deflate ? wsFrame({ payload: deflatePayload(GOOD_FIRST), rsv1: true, mask: fromClient }) : wsFrame({ payload: GOOD_FIRST, mask: fromClient });
}

describe('invalid WebSocket frames, in each direction', () => {
  const cleanups = new Cleanups();
  let rec: Recording;
  let upstream: ScriptedUpstream;
  let goodTotal = 0;
  // What each case sent, by path, for the HAR checks.
  const cases: Array<{ path: string; direction: 'send' | 'receive'; bad: BadFrame }> = [];
  const serverFrames = new Map<number, Buffer>();
  let good: { url: string };

  before(async () => {
    good = await echoServer(cleanups);
    // Connection i: read the upgrade head, answer 101 (+ frames when the case says), then wait for the client to end.
    upstream = await scriptedUpstream((i) => [
      { wait: 'head' },
      {
        call: (s) => {
          const head = upstream.received(i).toString('latin1');
          const key = /Sec-WebSocket-Key: (\S+)/i.exec(head)?.[1] ?? '';
          const deflate = /permessage-deflate/i.test(head);
          s.write(Buffer.concat([Buffer.from(upgradeResponse(key, deflate ? 'permessage-deflate' : undefined), 'latin1'), serverFrames.get(i) ?? Buffer.alloc(0)]));
        },
      },
      { wait: 'client-end' },
      { close: true },
    ]);
    cleanups.add(() => upstream.close());
    rec = await record(cleanups, upstream.url);
  });
  after(() => cleanups.run());

  // The good client needs an upstream that answers HTTP: a second recording proxy would split the HAR,
  // so the good traffic runs through its own capture in front of the echo server.
  let goodRec: Recording;
  before(async () => {
    goodRec = await record(cleanups, good.url);
  });

  // Each case is sent once, by its own test or by the HAR test, which needs them all.
  const steps = new Steps();
  for (const direction of ['send', 'receive'] as const) {
    for (const bad of badFrames) {
      it(`${direction === 'send' ? 'client → server' : 'server → client'}: ${bad.name} reaches the peer byte for byte and is an error row`, steps.add(async () => {
        goodTotal += await alongside(goodRec.port, async () => {
          const index = upstream.connections();
          const path = `/ws/${direction}/${cases.length}`;
          cases.push({ path, direction, bad });
          const fromClient = direction === 'send';
          const frames = Buffer.concat([goodFirst(fromClient, !!bad.deflate), bad.frame(fromClient), wsFrame({ payload: 'after', mask: fromClient })]);
          if (!fromClient) serverFrames.set(index, frames);
          const c = await rawClient(rec.port);
          const key = wsKey();
          c.send(upgradeRequest(path, 'x', key, bad.deflate ? 'permessage-deflate' : undefined));
          await waitUntil(() => c.bytes().includes('\r\n\r\n'), 'the 101');
          assert.match(c.bytes().toString('latin1'), /^HTTP\/1\.1 101 /);
          if (fromClient) {
            c.send(frames);
            await waitUntil(() => afterHead(upstream.received(index)).length >= frames.length, 'the frames at the server');
            assert.ok(afterHead(upstream.received(index)).equals(frames), 'the server got the exact bytes');
          } else {
            await waitUntil(() => afterHead(c.bytes()).length >= frames.length, 'the frames at the client');
            assert.ok(afterHead(c.bytes()).equals(frames), 'the client got the exact bytes');
          }
          c.socket.end();
          await c.closed;
        });
      }));
    }
  }

  it('records each connection: the first message, then one error row for the bad direction', async (t) => {
    await steps.runAll(t);
    const har: Har = await rec.finish();
    for (const { path, direction, bad } of cases) {
      const entry = har.log.entries.find((e) => e.request.url.endsWith(path));
      assert.ok(entry, `${path}: an entry`);
      assert.equal(entry._resourceType, 'websocket', path);
      const msgs = entry._webSocketMessages ?? [];
      const first = msgs.find((m) => m.type === direction);
      assert.ok(first, `${bad.name} (${direction}): the good first message is recorded`);
      assert.equal(first.data, GOOD_FIRST, `${bad.name} (${direction})`);
      const errors = msgs.filter((m) => m.type === 'error');
      if (bad.tolerated) {
        assert.equal(errors.length, 0, bad.name);
        assert.deepEqual(msgs.filter((m) => m.type === direction).map((m) => m.data).slice(-1), ['after']);
        continue;
      }
      assert.equal(errors.length, 1, `${bad.name} (${direction}): one error row, got ${JSON.stringify(msgs)}`);
      assert.equal(errors[0]!.opcode, -1);
      assert.equal(errors[0]!._bb?.direction, direction, bad.name);
      assert.ok(errors[0]!.data.length > 0, 'the error row says why');
      // After the error that direction is no longer parsed: "after" is not a message of that direction.
      assert.equal(msgs.filter((m) => m.type === direction && m.data === 'after').length, 0);
    }
    const goodHar = await goodRec.finish();
    assert.equal(goodHar.log.entries.length, goodTotal, 'every good request recorded once');
  });
});
