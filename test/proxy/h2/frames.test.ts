// H2FrameParser (proxy/h2/frames.ts) fed literal frame bytes: whole, a byte
// at a time and cut in two at every byte; each frame type, padding,
// CONTINUATION, and every connection error the issue names.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { H2FrameParser, errorCode, errorName, type H2ConnectionError, type H2Frame, type H2FrameParserOptions } from '../../../proxy/h2/frames.js';
import { HpackDecoder } from '../../../proxy/h2/hpack.js';
import { EMPTY_SETTINGS, F, PREFACE, T, h2Frame } from '../../helpers/h2-frames.js';
import { examples, hex } from '../../helpers/hpack-examples.js';

type Plain = Record<string, unknown>;

/** Feeds `bytes` in the given chunks; DATA pieces of one frame are joined (their split follows the chunks). */
function parse(chunks: Buffer[], opts: Partial<H2FrameParserOptions> = {}): { frames: Plain[]; error?: H2ConnectionError } {
  const frames: Plain[] = [];
  let open: Plain | undefined;
  const parser = new H2FrameParser({ fromClient: false, ...opts }, (f: H2Frame) => {
    const plain: Plain = { ...f, time: 0 };
    for (const key of ['data', 'block', 'debug'] as const) if (key in f) plain[key] = (f as Record<string, Buffer>)[key]!.toString('hex');
    if (f.type === 'DATA') {
      if (open) open.data = `${open.data}${plain.data}`;
      else open = plain;
      if (!f.last) return;
      Object.assign(open, { last: true, endStream: f.endStream });
      frames.push(open);
      open = undefined;
      return;
    }
    frames.push(plain);
  });
  let error: H2ConnectionError | undefined;
  chunks.forEach((c, i) => (error = parser.push(c, i)));
  return error ? { frames, error } : { frames };
}
const whole = (bytes: Buffer) => [bytes];
const bytewise = (bytes: Buffer) => [...bytes].map((b) => Buffer.from([b]));
const cutAt = (bytes: Buffer, cut: number) => [bytes.subarray(0, cut), bytes.subarray(cut)];

/** Asserts the same result for the bytes whole, byte by byte and cut in two at every byte. */
function parseEveryWay(bytes: Buffer, opts: Partial<H2FrameParserOptions> = {}) {
  const expected = parse(whole(bytes), opts);
  assert.deepEqual(parse(bytewise(bytes), opts), expected, 'byte by byte');
  for (let cut = 1; cut < bytes.length; cut++) assert.deepEqual(parse(cutAt(bytes, cut), opts), expected, `cut at ${cut}`);
  return expected;
}

describe('H2FrameParser', () => {
  it('ignores the reserved bit of the stream identifier and reads 24-bit lengths and 31-bit ids, whole and split (RFC 9113 section 4.1)', () => {
    const small = Buffer.concat([
      EMPTY_SETTINGS,
      hex('000001 01 05 80000001 82'), // HEADERS on stream 1 with the reserved bit set
      hex('000004 08 00 ffffffff 00000001'), // WINDOW_UPDATE on the largest stream id, reserved bit set
    ]);
    const { frames, error } = parseEveryWay(small);
    assert.equal(error, undefined);
    assert.deepEqual(frames.map((f) => [f.type, f.streamId]), [['SETTINGS', undefined], ['HEADERS', 1], ['WINDOW_UPDATE', 0x7fffffff]]);
    // DATA of 70,000 bytes (a length past 16 bits) on stream 2^31 - 3: whole, and cut at every byte of its header.
    const big = Buffer.concat([EMPTY_SETTINGS, hex('011170 00 01 7ffffffd'), Buffer.alloc(70_000, 0x61)]);
    const expected = parse(whole(big), { maxFrameSize: 100_000 });
    assert.equal(expected.error, undefined);
    assert.deepEqual(expected.frames.map((f) => [f.type, f.streamId, (f.data as string | undefined)?.length]), [['SETTINGS', undefined, undefined], ['DATA', 0x7ffffffd, 140_000]]);
    for (let cut = 9; cut <= 18; cut++) assert.deepEqual(parse(cutAt(big, cut), { maxFrameSize: 100_000 }), expected, `cut at ${cut}`);
  });

  it('reads every frame type after the client preface, whole, byte by byte and cut at every byte', () => {
    const bytes = Buffer.concat([
      PREFACE,
      hex('000006 04 00 00000000 0003 00000064'), // SETTINGS MAX_CONCURRENT_STREAMS=100
      hex('000000 04 01 00000000'), // SETTINGS ACK
      hex('000004 08 00 00000000 0000ffff'), // WINDOW_UPDATE connection +65535
      hex('000001 01 05 00000001 82'), // HEADERS END_STREAM|END_HEADERS ":method: GET"
      hex('000005 00 00 00000003 68656c6c6f'), // DATA "hello"
      hex('000006 00 09 00000003 02 686921 0000'), // DATA PADDED|END_STREAM "hi!" + 2 padding
      hex('000005 02 00 00000005 80000003 0f'), // PRIORITY exclusive on 3, weight 15
      hex('000004 03 00 00000003 00000008'), // RST_STREAM CANCEL
      hex('000008 06 00 00000000 0102030405060708'), // PING
      hex('000008 06 01 00000000 0102030405060708'), // PING ACK
      hex('000003 fa 07 00000001 aabbcc'), // unknown type 0xfa: ignored (section 5.5)
      hex('00000a 07 00 00000000 00000003 00000000 6869'), // GOAWAY last 3 NO_ERROR "hi"
    ]);
    const { frames, error } = parseEveryWay(bytes, { fromClient: true });
    assert.equal(error, undefined);
    assert.deepEqual(frames, [
      { type: 'SETTINGS', time: 0, ack: false, settings: [[3, 100]] },
      { type: 'SETTINGS', time: 0, ack: true, settings: [] },
      { type: 'WINDOW_UPDATE', streamId: 0, time: 0, increment: 65535 },
      { type: 'HEADERS', streamId: 1, time: 0, endStream: true, block: '82', frames: 1 },
      { type: 'DATA', streamId: 3, time: 0, data: '68656c6c6f', last: true, endStream: false },
      { type: 'DATA', streamId: 3, time: 0, data: '686921', last: true, endStream: true },
      { type: 'PRIORITY', streamId: 5, time: 0, priority: { exclusive: true, dependency: 3, weight: 15 } },
      { type: 'RST_STREAM', streamId: 3, time: 0, errorCode: 8, error: 'CANCEL' },
      { type: 'PING', time: 0, ack: false, data: '0102030405060708' },
      { type: 'PING', time: 0, ack: true, data: '0102030405060708' },
      { type: 'UNKNOWN', frameType: 0xfa, flags: 7, streamId: 1, time: 0, length: 3 },
      { type: 'GOAWAY', time: 0, lastStreamId: 3, errorCode: 0, error: 'NO_ERROR', debug: '6869' },
    ]);
  });

  it('strips HEADERS padding and priority, and joins CONTINUATIONs into one block', () => {
    const bytes = Buffer.concat([
      EMPTY_SETTINGS,
      hex('00000b 01 29 00000001 03 00000000 ff 8286 000000'), // PADDED|PRIORITY|END_STREAM, no END_HEADERS
      hex('000001 09 00 00000001 84'), // CONTINUATION
      hex('000000 09 00 00000001'), // empty CONTINUATION
      hex('000001 09 04 00000001 87'), // CONTINUATION END_HEADERS
      hex('00000a 05 0c 00000001 03 00000002 8287 000000'), // PUSH_PROMISE PADDED|END_HEADERS, promised 2
    ]);
    const { frames, error } = parseEveryWay(bytes);
    assert.equal(error, undefined);
    assert.deepEqual(frames.slice(1), [
      { type: 'HEADERS', streamId: 1, time: 0, endStream: true, priority: { exclusive: false, dependency: 0, weight: 255 }, block: '82868487', frames: 4 },
      { type: 'PUSH_PROMISE', streamId: 1, time: 0, promisedStreamId: 2, block: '8287', frames: 1 },
    ]);
  });

  it('hands DATA payloads out as subarrays of the chunks, leaving the chunks as they were', () => {
    const bytes = Buffer.concat([EMPTY_SETTINGS, h2Frame(T.DATA, F.PADDED | F.END_STREAM, 1, Buffer.concat([Buffer.from([4]), Buffer.alloc(20000, 7), Buffer.alloc(4)]))]);
    const before = Buffer.from(bytes);
    for (const step of [1, 1000, bytes.length]) {
      const pieces: Buffer[] = [];
      const chunks: Buffer[] = [];
      const parser = new H2FrameParser({ fromClient: false, maxFrameSize: 32768 }, (f) => f.type === 'DATA' && pieces.push(f.data));
      for (let i = 0; i < bytes.length; i += step) {
        const chunk = Buffer.from(bytes.subarray(i, i + step));
        chunks.push(chunk);
        assert.equal(parser.push(chunk, i), undefined);
      }
      assert.ok(pieces.every((p) => chunks.some((c) => c.buffer === p.buffer)), 'every piece views a chunk');
      assert.ok(Buffer.concat(pieces).equals(Buffer.alloc(20000, 7)));
    }
    assert.ok(bytes.equals(before));
  });

  it('names error codes both ways, unknown ones by their hex (RFC 9113 section 7)', () => {
    assert.deepEqual([0, 1, 8, 9, 11, 13].map(errorName), ['NO_ERROR', 'PROTOCOL_ERROR', 'CANCEL', 'COMPRESSION_ERROR', 'ENHANCE_YOUR_CALM', 'HTTP_1_1_REQUIRED']);
    assert.equal(errorName(0x1f), '0x1f');
    assert.deepEqual((['NO_ERROR', 'FRAME_SIZE_ERROR', 'HTTP_1_1_REQUIRED'] as const).map(errorCode), [0, 6, 13]);
  });

  it('times a frame by its header\'s first byte and a DATA piece by its chunk', () => {
    const ping = hex('000008 06 00 00000000 0102030405060708');
    const data = hex('000004 00 01 00000001 61626364');
    const seen: Array<[string, number]> = [];
    const parser = new H2FrameParser({ fromClient: false }, (f) => seen.push([f.type, f.time]));
    const chunks = [EMPTY_SETTINGS, ping.subarray(0, 3), Buffer.concat([ping.subarray(3), data.subarray(0, 11)]), data.subarray(11)];
    chunks.forEach((c, i) => parser.push(c, 100 + i));
    assert.deepEqual(seen, [['SETTINGS', 100], ['PING', 101], ['DATA', 102], ['DATA', 103]]);
  });

  it('follows SETTINGS_MAX_FRAME_SIZE from the next frame header on', () => {
    const big = h2Frame(T.DATA, 0, 1, Buffer.alloc(20000));
    const parser = new H2FrameParser({ fromClient: false }, () => {});
    assert.equal(parser.push(EMPTY_SETTINGS, 0), undefined);
    parser.setMaxFrameSize(20000);
    assert.equal(parser.push(big, 1), undefined);
    parser.setMaxFrameSize(16384);
    assert.equal(parser.push(big, 2)?.code, 'FRAME_SIZE_ERROR');
  });

  it('reports stream errors as facts and reads on', () => {
    const bytes = Buffer.concat([
      EMPTY_SETTINGS,
      hex('000004 08 00 00000001 00000000'), // WINDOW_UPDATE 0 on stream 1
      hex('000005 02 00 00000003 00000003 10'), // PRIORITY depending on itself
      hex('000004 02 00 00000003 00000001'), // PRIORITY of 4 bytes
      hex('000004 08 00 00000001 00000001'),
    ]);
    const { frames, error } = parseEveryWay(bytes);
    assert.equal(error, undefined);
    assert.deepEqual(frames.slice(1).map((f) => [f.type, f.streamId, f.code]), [
      ['STREAM_ERROR', 1, 'PROTOCOL_ERROR'],
      ['STREAM_ERROR', 3, 'PROTOCOL_ERROR'],
      ['STREAM_ERROR', 3, 'FRAME_SIZE_ERROR'],
      ['WINDOW_UPDATE', 1, undefined],
    ]);
  });

  it('assembles the RFC 7541 Appendix C blocks split into HEADERS + CONTINUATION at every byte, fed cut at every byte', () => {
    for (const example of examples) {
      const decoder = new HpackDecoder({ maxTableSize: example.tableSize });
      for (const step of example.steps) {
        const block = hex(step.block);
        let reference: Plain[] | undefined;
        for (let split = 0; split <= block.length; split++) {
          const bytes = Buffer.concat([
            EMPTY_SETTINGS,
            h2Frame(T.HEADERS, split === block.length ? F.END_HEADERS : 0, 1, block.subarray(0, split)),
            ...(split < block.length ? [h2Frame(T.CONTINUATION, F.END_HEADERS, 1, block.subarray(split))] : []),
          ]);
          const { frames, error } = parseEveryWay(bytes);
          assert.equal(error, undefined);
          assert.equal(frames[1]!.block, block.toString('hex'), `${example.name} split at ${split}`);
          reference ??= frames;
        }
        const result = decoder.decode(Buffer.from(reference![1]!.block as string, 'hex'));
        assert.ok(!('code' in result));
        assert.deepEqual(result.headers, step.headers);
      }
    }
  });

  const settings = EMPTY_SETTINGS.toString('hex');
  const headersOpen = '000001 01 00 00000001 82';
  const refusals: Array<{ name: string; bytes: string; opts?: Partial<H2FrameParserOptions>; code: string; says: RegExp }> = [
    { name: 'a bad preface (an HTTP/1.1 request)', bytes: Buffer.from('GET / HTTP/1.1\r\n\r\n').toString('hex'), opts: { fromClient: true }, code: 'PROTOCOL_ERROR', says: /client preface/ },
    { name: 'a preface wrong in its last byte', bytes: PREFACE.toString('hex').slice(0, -2) + '0b', opts: { fromClient: true }, code: 'PROTOCOL_ERROR', says: /client preface/ },
    { name: 'a first frame that is not SETTINGS', bytes: '000008 06 00 00000000 0000000000000000', code: 'PROTOCOL_ERROR', says: /first frame is PING/ },
    { name: 'a first SETTINGS that is an ACK', bytes: '000000 04 01 00000000', code: 'PROTOCOL_ERROR', says: /first frame/ },
    { name: 'DATA on stream 0', bytes: settings + '000001 00 00 00000000 61', code: 'PROTOCOL_ERROR', says: /DATA frame on stream 0/ },
    { name: 'HEADERS on stream 0', bytes: settings + '000001 01 04 00000000 82', code: 'PROTOCOL_ERROR', says: /HEADERS frame on stream 0/ },
    { name: 'RST_STREAM on stream 0', bytes: settings + '000004 03 00 00000000 00000008', code: 'PROTOCOL_ERROR', says: /stream 0/ },
    { name: 'SETTINGS on stream 1', bytes: settings + '000000 04 00 00000001', code: 'PROTOCOL_ERROR', says: /SETTINGS frame on stream 1/ },
    { name: 'PING on stream 1', bytes: settings + '000008 06 00 00000001 0000000000000000', code: 'PROTOCOL_ERROR', says: /PING frame on stream 1/ },
    { name: 'GOAWAY on stream 1', bytes: settings + '000008 07 00 00000001 0000000000000000', code: 'PROTOCOL_ERROR', says: /GOAWAY frame on stream 1/ },
    { name: 'a frame over SETTINGS_MAX_FRAME_SIZE', bytes: settings + '004001 00 00 00000001', code: 'FRAME_SIZE_ERROR', says: /16385 bytes exceeds SETTINGS_MAX_FRAME_SIZE 16384/ },
    { name: 'an unknown frame over SETTINGS_MAX_FRAME_SIZE', bytes: settings + '004001 fa 00 00000001', code: 'FRAME_SIZE_ERROR', says: /frame type 0xfa/ },
    { name: 'a 3-byte RST_STREAM', bytes: settings + '000003 03 00 00000001 000008', code: 'FRAME_SIZE_ERROR', says: /4 bytes/ },
    { name: 'a 7-byte PING', bytes: settings + '000007 06 00 00000000 00000000000000', code: 'FRAME_SIZE_ERROR', says: /8 bytes/ },
    { name: 'a 7-byte GOAWAY', bytes: settings + '000007 07 00 00000000 00000000000000', code: 'FRAME_SIZE_ERROR', says: /at least 8/ },
    { name: 'a 5-byte SETTINGS', bytes: '000005 04 00 00000000 0001000000', code: 'FRAME_SIZE_ERROR', says: /multiple of 6/ },
    { name: 'a SETTINGS ACK with a payload', bytes: settings + '000006 04 01 00000000 000100000000', code: 'FRAME_SIZE_ERROR', says: /ACK is empty/ },
    { name: 'a 3-byte WINDOW_UPDATE', bytes: settings + '000003 08 00 00000000 000001', code: 'FRAME_SIZE_ERROR', says: /4 bytes/ },
    { name: 'SETTINGS_ENABLE_PUSH 2', bytes: '000006 04 00 00000000 0002 00000002', code: 'PROTOCOL_ERROR', says: /ENABLE_PUSH is 2/ },
    { name: 'SETTINGS_INITIAL_WINDOW_SIZE 2^31', bytes: '000006 04 00 00000000 0004 80000000', code: 'FLOW_CONTROL_ERROR', says: /INITIAL_WINDOW_SIZE/ },
    { name: 'SETTINGS_MAX_FRAME_SIZE 16383', bytes: '000006 04 00 00000000 0005 00003fff', code: 'PROTOCOL_ERROR', says: /MAX_FRAME_SIZE is 16383/ },
    { name: 'a WINDOW_UPDATE of 0 on the connection', bytes: settings + '000004 08 00 00000000 00000000', code: 'PROTOCOL_ERROR', says: /increment 0/ },
    { name: 'PUSH_PROMISE from the client', bytes: PREFACE.toString('hex') + settings + '000005 05 04 00000001 00000002 82', opts: { fromClient: true }, code: 'PROTOCOL_ERROR', says: /client sent PUSH_PROMISE/ },
    { name: 'DATA padding as long as the payload', bytes: settings + '000003 00 08 00000001 03 6161', code: 'PROTOCOL_ERROR', says: /more padding than payload/ },
    { name: 'an empty PADDED DATA', bytes: settings + '000000 00 08 00000001', code: 'FRAME_SIZE_ERROR', says: /pad length/ },
    { name: 'HEADERS padding longer than the payload', bytes: settings + '000003 01 0c 00000001 05 8286', code: 'PROTOCOL_ERROR', says: /more padding than payload/ },
    { name: 'HEADERS too short for PRIORITY', bytes: settings + '000003 01 24 00000001 000000', code: 'FRAME_SIZE_ERROR', says: /too short/ },
    { name: 'a frame of another type inside a header block', bytes: settings + headersOpen + '000008 06 00 00000000 0000000000000000', code: 'PROTOCOL_ERROR', says: /PING frame on stream 0 interrupts the header block of stream 1/ },
    { name: 'a CONTINUATION of another stream', bytes: settings + headersOpen + '000001 09 04 00000003 84', code: 'PROTOCOL_ERROR', says: /CONTINUATION frame on stream 3 interrupts/ },
    { name: 'an unknown frame inside a header block', bytes: settings + headersOpen + '000000 fa 00 00000001', code: 'PROTOCOL_ERROR', says: /interrupts/ },
    { name: 'a CONTINUATION after a closed block', bytes: settings + '000001 01 04 00000001 82' + '000001 09 04 00000001 84', code: 'PROTOCOL_ERROR', says: /follows no open header block/ },
    { name: 'a CONTINUATION flood of empty frames', bytes: settings + headersOpen + '000000 09 00 00000001'.repeat(9), opts: { maxContinuations: 8 }, code: 'ENHANCE_YOUR_CALM', says: /more than 8 CONTINUATION frames/ },
    { name: 'a header block over the cap', bytes: settings + headersOpen + ('000004 09 00 00000001 ' + 'aa'.repeat(4)).repeat(4), opts: { maxHeaderBlock: 16 }, code: 'ENHANCE_YOUR_CALM', says: /exceeds 16 bytes/ },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name} with ${r.code}, and reads nothing after it`, () => {
      const bytes = Buffer.concat([hex(r.bytes), EMPTY_SETTINGS, hex('000008 06 00 00000000 0000000000000000')]);
      for (const chunks of [whole(bytes), bytewise(bytes)]) {
        const { frames, error } = parse(chunks, r.opts);
        assert.equal(error?.code, r.code, error?.message);
        assert.match(error!.message, r.says);
        assert.ok(!frames.some((f) => f.type === 'PING'), 'nothing read after the error');
      }
    });
  }
});
