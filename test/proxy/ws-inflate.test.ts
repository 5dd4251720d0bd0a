// MessageInflater (proxy/ws-inflate.ts) and the frame parser's `keep` fed
// literal frames: a message past `keep` hands out its first bytes and its
// size, a compressed one streams its pieces (masked at any offset) into the
// inflater, which keeps a bounded prefix of its output and goes on with the
// next message on the same context (RFC 7692 section 7.2.3.3).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Compressor, MASK, wsFrame } from '../helpers/ws-frames.js';
import { MessageInflater, type Inflated } from '../../proxy/ws-inflate.js';
import { FrameParser, type ParsedUnit } from '../../proxy/ws-frames.js';

const end = (inflater: MessageInflater): Promise<Inflated | Error> => new Promise((resolve) => inflater.end(resolve));

describe('MessageInflater', () => {
  it('keeps the first `keep` bytes of each message and counts the rest, context carried over', async () => {
    const sender = new Compressor(15, false);
    const inflater = new MessageInflater({ windowBits: 15, takeover: true, keep: 10 });
    const big = 'x'.repeat(5 * 1024 * 1024);
    const packed = await sender.message(big);
    // Streamed in odd pieces, as frames arrive.
    for (let i = 0; i < packed.length; i += 777) inflater.write(packed.subarray(i, i + 777));
    const first = end(inflater);
    inflater.write(await sender.message('x'.repeat(20) + 'tail'));
    const second = end(inflater);
    // Past `keep`, the inflated bytes are hashed, not held.
    const sha = (s: string) => createHash('sha256').update(s).digest();
    assert.deepEqual(await first, { data: Buffer.from('x'.repeat(10)), size: big.length, restSha256: sha(big.slice(10)) });
    assert.deepEqual(await second, { data: Buffer.from('x'.repeat(10)), size: 24, restSha256: sha('x'.repeat(10) + 'tail') });
    sender.close();
    inflater.close();
  });

  it('inflates each message of a sender without context takeover on its own', async () => {
    const sender = new Compressor(15, true);
    const inflater = new MessageInflater({ windowBits: 15, takeover: false, keep: Infinity });
    const results = [];
    for (const text of ['hello', 'hello', 'world']) {
      inflater.write(await sender.message(text));
      results.push(end(inflater));
    }
    assert.deepEqual((await Promise.all(results)).map((r) => (r as Inflated).data.toString()), ['hello', 'hello', 'world']);
    sender.close();
    inflater.close();
  });

  it('fails a message that does not inflate, and every one after it', async () => {
    const inflater = new MessageInflater({ windowBits: 15, takeover: true, keep: Infinity });
    inflater.write(Buffer.from('ffffffff', 'hex'));
    const bad = await end(inflater);
    assert.ok(bad instanceof Error && (bad as Error & { code?: string }).code === 'Z_DATA_ERROR', String(bad));
    inflater.write(Buffer.from('00', 'hex'));
    assert.ok((await end(inflater)) instanceof Error);
    inflater.close();
  });
});

describe('FrameParser keep', () => {
  const parse = (bytes: Buffer, step: number, keep: number, masked = false) => {
    const units: ParsedUnit[] = [];
    const pieces: Buffer[] = [];
    const parser = new FrameParser({ masked, deflate: true, keep }, (u) => units.push(u), (p) => pieces.push(p));
    for (let i = 0; i < bytes.length; i += step) parser.push(bytes.subarray(i, i + step), 0);
    return { units: units.map((u) => ({ opcode: u.opcode, frames: u.frames, data: u.data.toString(), size: u.size, ...(u.restSha256 ? { rest: u.restSha256.toString('hex') } : {}) })), compressed: Buffer.concat(pieces).toString() };
  };

  it('hands out the first `keep` bytes of a message, its size and the hash of the rest, whole or fragmented, masked or not, in any split', () => {
    const rest = (s: string) => createHash('sha256').update(s).digest('hex');
    for (const masked of [false, true]) {
      const mask = masked ? MASK : undefined;
      const bytes = Buffer.concat([
        wsFrame({ opcode: 1, payload: 'abcdef', mask }),
        wsFrame({ opcode: 2, payload: 'ab', fin: false, mask }),
        wsFrame({ opcode: 9, payload: 'p', mask }),
        wsFrame({ opcode: 0, payload: 'cdefgh', mask }),
        wsFrame({ opcode: 1, payload: 'abc', mask }),
      ]);
      for (const step of [1, 3, bytes.length]) {
        assert.deepEqual(parse(bytes, step, 4, masked).units, [
          { opcode: 1, frames: 1, data: 'abcd', size: 6, rest: rest('ef') },
          { opcode: 9, frames: 1, data: 'p', size: undefined },
          { opcode: 2, frames: 2, data: 'abcd', size: 8, rest: rest('efgh') },
          { opcode: 1, frames: 1, data: 'abc', size: undefined },
        ], `masked ${masked}, step ${step}`);
      }
    }
  });

  it('streams every byte of a compressed message, unmasked at any offset, and keeps none of it', () => {
    const text = 'The quick brown fox jumps over the lazy dog';
    const bytes = Buffer.concat([
      wsFrame({ opcode: 1, rsv1: true, fin: false, payload: text.slice(0, 13), mask: MASK }),
      wsFrame({ opcode: 0, payload: text.slice(13), mask: MASK }),
    ]);
    for (const step of [1, 2, 3, 5, 7, bytes.length]) {
      assert.deepEqual(parse(bytes, step, 4, true), { units: [{ opcode: 1, frames: 2, data: '', size: undefined }], compressed: text }, `step ${step}`);
    }
  });
});
