// A replayed gRPC call, pure: grpc-timeout read (every unit of
// PROTOCOL-HTTP2.md "Timeout") and written again as the time left to the
// original deadline; a message framed again (length prefix, compressed with
// the call's grpc-encoding when it was); the client's messages of a call with
// the server messages each waits for.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { frameMessage, grpcSends, grpcTimeoutLeft, grpcTimeoutMs } from '../../../scenario/replay/grpc.js';
import type { HarEntry } from '../../../capture/index.js';

describe('grpcTimeoutMs', () => {
  const table: Array<[string | undefined, number | undefined]> = [
    ['5000m', 5000], ['2S', 2000], ['1M', 60_000], ['1H', 3_600_000], ['1500u', 1.5], ['2000000n', 2], [' 7m ', 7],
    ['123456789m', undefined], ['5s', undefined], ['m', undefined], ['-1m', undefined], [undefined, undefined],
  ];
  for (const [text, ms] of table) it(`${JSON.stringify(text)} is ${ms} ms`, () => assert.equal(grpcTimeoutMs(text), ms));
});

describe('grpcTimeoutLeft', () => {
  it('sends the time left to the original deadline in whole ms, the recorded text when no time went by, never below 0', () => {
    assert.equal(grpcTimeoutLeft('5S', 5000, 0.4), '5S');
    assert.equal(grpcTimeoutLeft('5S', 5000, 120.7), '4879m');
    assert.equal(grpcTimeoutLeft('400m', 400, 900), '0m');
  });
});

describe('frameMessage', () => {
  it('prefixes flags and a big-endian length; compresses again with grpc-encoding; keeps what stayed compressed', () => {
    assert.deepEqual(frameMessage(Buffer.from('hi'), false, undefined), Buffer.from('00000000026869', 'hex'));
    const gz = frameMessage(Buffer.from('hello'), true, 'gzip');
    assert.equal(gz[0], 1);
    assert.equal(gz.readUInt32BE(1), gz.length - 5);
    assert.equal(gunzipSync(gz.subarray(5)).toString(), 'hello');
    assert.deepEqual(frameMessage(Buffer.from('raw'), true, 'snappy', true), Buffer.concat([Buffer.from('0100000003', 'hex'), Buffer.from('raw')]));
  });
});

describe('grpcSends', () => {
  it("lists a bidi call's client messages, each after the server messages the original had before it; none for a call that is not gRPC", () => {
    const data = (s: string) => Buffer.from(s).toString('base64');
    const entry = {
      request: { headers: [{ name: 'content-type', value: 'application/grpc' }] },
      _grpcMessages: [
        { type: 'send', data: data('a'), compressed: false },
        { type: 'receive', data: data('A'), compressed: false },
        { type: 'send', data: data('b'), compressed: false },
        { type: 'receive', data: data('B'), compressed: false },
        { type: 'receive', data: data('C'), compressed: false },
        { type: 'send', data: data('c'), compressed: false },
      ],
    } as unknown as HarEntry;
    assert.deepEqual(grpcSends(entry)!.map((s) => [s.frame().subarray(5).toString(), s.after]), [['a', 0], ['b', 1], ['c', 3]]);
    assert.equal(grpcSends({ ...entry, request: { headers: [{ name: 'content-type', value: 'application/json' }] } } as unknown as HarEntry), undefined);
  });

  it('sends the messages past those the capture lists (_bb.unlisted) as the recorded body holds them, after the listed', () => {
    const frame = (s: string) => frameMessage(Buffer.from(s), false, undefined);
    const body = Buffer.concat([frame('a'), frame('b'), frame('c'), frame('d')]);
    const entry = {
      request: { headers: [{ name: 'content-type', value: 'application/grpc' }], postData: { mimeType: 'application/grpc', text: body.toString('base64'), _encoding: 'base64' } },
      _grpcMessages: [
        { type: 'send', data: Buffer.from('a').toString('base64'), compressed: false },
        { type: 'receive', data: Buffer.from('A').toString('base64'), compressed: false },
        { type: 'send', data: Buffer.from('b').toString('base64'), compressed: false },
      ],
      _bb: { unlisted: { request: 2 } },
    } as unknown as HarEntry;
    assert.deepEqual(grpcSends(entry)!.map((s) => [s.frame().subarray(5).toString(), s.after]), [['a', 0], ['b', 1], ['c', 1], ['d', 1]]);
  });
});
