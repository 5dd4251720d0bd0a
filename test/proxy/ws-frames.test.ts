// FrameParser (proxy/ws-frames.ts) fed literal frame bytes, whole and a byte at a time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MASK, wsFrame } from '../helpers/ws-frames.js';
import { FrameError, FrameParser, type FrameParserOptions, type ParsedUnit } from '../../proxy/ws-frames.js';

const hex = (s: string) => Buffer.from(s, 'hex');

describe('FrameParser', () => {
  const parse = (bytes: Buffer, opts: Partial<FrameParserOptions> = {}, step = bytes.length) => {
    const units: ParsedUnit[] = [];
    // A compressed message's bytes come as pieces: shown as its unit's data.
    const pieces: Buffer[] = [];
    const parser = new FrameParser({ masked: false, deflate: false, keep: Infinity, ...opts }, (u) => units.push(u.compressed ? { ...u, data: Buffer.concat(pieces.splice(0)) } : u), (p) => pieces.push(p));
    for (let i = 0; i < bytes.length; i += step) parser.push(bytes.subarray(i, i + step), i);
    return units.map((u) => ({ ...u, data: u.data.toString('hex') }));
  };

  it('reports units one byte at a time, with 16- and 64-bit lengths', () => {
    const bytes = Buffer.concat([
      wsFrame({ opcode: 1, payload: 'a'.repeat(300) }),
      wsFrame({ opcode: 2, payload: Buffer.alloc(70000, 7), fin: false }),
      wsFrame({ opcode: 9 }),
      wsFrame({ opcode: 0, payload: '' }),
    ]);
    const ping = { opcode: 9, time: 300 + 4 + 70000 + 10, frames: 1, compressed: false, data: '' };
    const expected = [
      { opcode: 1, time: 0, frames: 1, compressed: false, data: Buffer.from('a'.repeat(300)).toString('hex') },
      ping,
      { opcode: 2, time: 304, frames: 2, compressed: false, data: Buffer.alloc(70000, 7).toString('hex') },
    ];
    assert.deepEqual(parse(bytes, {}, 1), expected);
    assert.deepEqual(parse(bytes, {}, 1000), expected.map((u) => ({ ...u, time: u === ping ? 70000 : 0 })));
    assert.deepEqual(parse(bytes), expected.map((u) => ({ ...u, time: 0 })));
  });

  it('unmasks into a copy and leaves the chunk as it was, whole or split (RFC 6455 section 5.3)', () => {
    const bytes = Buffer.concat([hex('818537fa213d7f9f4d5158'), wsFrame({ opcode: 2, payload: Buffer.alloc(1000, 3), mask: MASK })]);
    const before = Buffer.from(bytes);
    for (const step of [1, 7, bytes.length]) {
      assert.deepEqual(parse(bytes, { masked: true }, step).map((u) => u.data), ['48656c6c6f', Buffer.alloc(1000, 3).toString('hex')]);
      assert.ok(bytes.equals(before), 'the chunk is untouched');
    }
  });

  it('assembles a compressed fragmented message without inflating it, and stops after a close', () => {
    const bytes = Buffer.concat([
      wsFrame({ opcode: 1, rsv1: true, fin: false, payload: 'ab' }),
      wsFrame({ opcode: 0, payload: 'cd' }),
      hex('880203e8'),
      hex('810548656c6c6f'),
    ]);
    assert.deepEqual(parse(bytes, { deflate: true }), [
      { opcode: 1, time: 0, frames: 2, compressed: true, data: '61626364' },
      { opcode: 8, time: 0, frames: 1, compressed: false, data: '03e8' },
    ]);
  });

  it('assembles a message of thousands of one-byte frames with a ping between them, whole and in order, the next one too', () => {
    // 5,000 fragments: gathered into copies by the thousand while they come, the last ones still the frames' own.
    const text = Array.from({ length: 5000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const frames = Array.from(text, (ch, i) => wsFrame({ opcode: i === 0 ? 1 : 0, fin: i === text.length - 1, payload: ch }));
    frames.splice(2500, 0, wsFrame({ opcode: 9, payload: 'p' }));
    const bytes = Buffer.concat([...frames, wsFrame({ opcode: 2, fin: false, payload: 'A' }), wsFrame({ opcode: 0, payload: 'B' })]);
    for (const step of [1, 3000, bytes.length]) {
      const units = parse(bytes, {}, step);
      assert.deepEqual(units.map((u) => [u.opcode, u.frames, Buffer.from(u.data, 'hex').toString()]), [[9, 1, 'p'], [1, 5000, text], [2, 2, 'AB']], `step ${step}`);
    }
  });

  const refusals = [
    { bytes: wsFrame({ opcode: 1, payload: 'x', mask: MASK }), code: 'WS_ERR_UNEXPECTED_MASK' },
    { bytes: wsFrame({ opcode: 1, payload: 'x' }), opts: { masked: true }, code: 'WS_ERR_EXPECTED_MASK' },
    { bytes: hex('8300'), code: 'WS_ERR_INVALID_OPCODE' },
    { bytes: hex('8b00'), code: 'WS_ERR_INVALID_OPCODE' },
    { bytes: hex('8000'), code: 'WS_ERR_INVALID_OPCODE' },
    { bytes: hex('0100' + '0100'), code: 'WS_ERR_INVALID_OPCODE' },
    { bytes: hex('c100'), code: 'WS_ERR_UNEXPECTED_RSV_1' },
    { bytes: hex('0100' + 'c000'), opts: { deflate: true }, code: 'WS_ERR_UNEXPECTED_RSV_1' },
    { bytes: hex('c900'), opts: { deflate: true }, code: 'WS_ERR_UNEXPECTED_RSV_1' },
    { bytes: hex('9100'), code: 'WS_ERR_UNEXPECTED_RSV_2_3' },
    { bytes: hex('0900'), code: 'WS_ERR_EXPECTED_FIN' },
    { bytes: hex('897e00c8'), code: 'WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH' },
    { bytes: hex('880103'), code: 'WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH' },
    { bytes: hex('880203ed'), code: 'WS_ERR_INVALID_CLOSE_CODE' },
    { bytes: hex('827f8000000000000000'), code: 'WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH' },
  ];
  for (const r of refusals) {
    it(`refuses ${r.bytes.subarray(0, 12).toString('hex')} with ${r.code}`, () => {
      for (const step of [1, r.bytes.length]) {
        assert.throws(() => parse(r.bytes, r.opts, step), (err: FrameError) => err instanceof FrameError && err.code === r.code);
      }
    });
  }
});
