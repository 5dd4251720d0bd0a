// H2Session (proxy/h2/session.ts): which SETTINGS bind which direction, on
// literal frames; then differential against node:http2 (seeded random
// traffic through a plain relay that feeds the session a copy), curl and nghttp.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { H2Session, type H2Fact } from '../../../proxy/h2/session.js';
import { EMPTY_SETTINGS, F, PREFACE, T, h2Frame } from '../../helpers/h2-frames.js';
import { hex } from '../../helpers/hpack-examples.js';

const settings = (pairs: Array<[number, number]>) =>
  h2Frame(T.SETTINGS, 0, 0, Buffer.concat(pairs.map(([id, v]) => { const b = Buffer.alloc(6); b.writeUInt16BE(id); b.writeUInt32BE(v, 2); return b; })));
const ACK = h2Frame(T.SETTINGS, F.ACK, 0);
const headers = (streamId: number, block: string, flags = F.END_HEADERS) => h2Frame(T.HEADERS, flags, streamId, hex(block));

function session() {
  const facts: H2Fact[] = [];
  const s = new H2Session({}, (f) => facts.push(f));
  const kinds = () => facts.filter((f) => f.type !== 'settings').map((f) => (f.type === 'headers' ? `${f.from} ${f.kind} ${f.streamId} ${f.headers.map((h) => h.join(': ')).join(', ')}` : f.type === 'error' ? `${f.from} ${f.code}` : `${f.type} ${'streamId' in f ? f.streamId : ''}`));
  return { s, facts, kinds };
}

describe('H2Session SETTINGS', () => {
  it("follows the client's SETTINGS_HEADER_TABLE_SIZE in what the server sends, from the server's ACK on", () => {
    const { s, kinds } = session();
    assert.equal(s.fromClient(Buffer.concat([PREFACE, settings([[1, 0]])]), 0), undefined);
    // Before its ACK the server may still index into a 4096-octet table.
    assert.equal(s.fromServer(Buffer.concat([EMPTY_SETTINGS, headers(1, '48 03 333032'), headers(3, 'be')]), 1), undefined);
    assert.deepEqual(kinds(), ['server response 1 :status: 302', 'server response 3 :status: 302']);
    // After it, the table is 0 octets: index 62 is gone.
    assert.equal(s.fromServer(Buffer.concat([ACK, headers(5, 'be')]), 2)?.code, 'COMPRESSION_ERROR');
  });

  it("does not let the client's own SETTINGS widen what the client may send", () => {
    const { s, kinds } = session();
    // The client offers an 8192-octet table; the server keeps 4096.
    s.fromClient(Buffer.concat([PREFACE, settings([[1, 8192]])]), 0);
    s.fromServer(Buffer.concat([EMPTY_SETTINGS, ACK, headers(1, '3fe13f 88')]), 1);
    assert.deepEqual(kinds(), ['server response 1 :status: 200']);
    assert.equal(s.fromClient(Buffer.concat([ACK, headers(1, '3fe13f 82')]), 2)?.code, 'COMPRESSION_ERROR');
  });

  it('accepts a size update up to a larger SETTINGS_HEADER_TABLE_SIZE still waiting for its ACK', () => {
    // The server may act on the client's SETTINGS before its ACK is on the wire.
    const { s, kinds } = session();
    s.fromClient(Buffer.concat([PREFACE, settings([[1, 8192]])]), 0);
    assert.equal(s.fromServer(Buffer.concat([EMPTY_SETTINGS, headers(1, '3fe13f 88')]), 1), undefined);
    assert.deepEqual(kinds(), ['server response 1 :status: 200']);
  });

  it('pairs each ACK with the oldest unacknowledged SETTINGS for SETTINGS_MAX_FRAME_SIZE', () => {
    const { s } = session();
    const big = h2Frame(T.DATA, 0, 1, Buffer.alloc(20000));
    s.fromClient(Buffer.concat([PREFACE, settings([[5, 32768]]), settings([[5, 16384]])]), 0);
    assert.equal(s.fromServer(Buffer.concat([EMPTY_SETTINGS, big, ACK, big]), 1), undefined, 'allowed until the second ACK');
    assert.equal(s.fromServer(Buffer.concat([ACK, big]), 2)?.code, 'FRAME_SIZE_ERROR');
  });

  it("refuses an HPACK bomb far over the server's SETTINGS_MAX_HEADER_LIST_SIZE with ENHANCE_YOUR_CALM, and reads nothing after", () => {
    const { s, facts } = session();
    s.fromServer(Buffer.concat([settings([[6, 8192]])]), 0);
    // A 4000-octet value indexed once, then referenced 200 times: 800 KB from a 4 KB block.
    const bomb = Buffer.concat([hex('82 40 01 78 7f a1 1e'), Buffer.alloc(4000, 0x76), Buffer.alloc(200, 0xbe)]);
    const error = s.fromClient(Buffer.concat([PREFACE, EMPTY_SETTINGS, ACK, h2Frame(T.HEADERS, F.END_HEADERS, 1, bomb)]), 1);
    assert.equal(error?.code, 'ENHANCE_YOUR_CALM');
    assert.match(error!.message, /more than 32768 octets/);
    assert.equal(s.fromClient(headers(3, '82'), 2)?.code, 'ENHANCE_YOUR_CALM');
    assert.deepEqual(facts.filter((f) => f.type === 'headers' || f.type === 'error').map((f) => f.type), ['error']);
  });

  it('refuses a bad preface, a frame on stream 0, an oversized frame and a CONTINUATION flood, each on its own connection', () => {
    const cases: Array<[Buffer, string]> = [
      [Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), 'PROTOCOL_ERROR'],
      [Buffer.concat([PREFACE, EMPTY_SETTINGS, headers(0, '82')]), 'PROTOCOL_ERROR'],
      [Buffer.concat([PREFACE, EMPTY_SETTINGS, h2Frame(T.DATA, 0, 1, Buffer.alloc(16385))]), 'FRAME_SIZE_ERROR'],
      // Empty CONTINUATIONs grow nothing but never end: the count cap stops them.
      [Buffer.concat([PREFACE, EMPTY_SETTINGS, headers(1, '82', 0), ...Array.from({ length: 2000 }, () => h2Frame(T.CONTINUATION, 0, 1))]), 'ENHANCE_YOUR_CALM'],
      // 16 KiB CONTINUATIONs: the size cap (1 MiB with no SETTINGS_MAX_HEADER_LIST_SIZE) stops them.
      [Buffer.concat([PREFACE, EMPTY_SETTINGS, headers(1, '82', 0), ...Array.from({ length: 70 }, () => h2Frame(T.CONTINUATION, 0, 1, Buffer.alloc(16384)))]), 'ENHANCE_YOUR_CALM'],
    ];
    for (const [bytes, code] of cases) {
      const { s, facts } = session();
      assert.equal(s.fromClient(bytes, 0)?.code, code);
      assert.deepEqual(facts.filter((f) => f.type === 'error').map((f) => f.type === 'error' && f.code), [code]);
    }
  });

  it('refuses SETTINGS that pile up unacknowledged with ENHANCE_YOUR_CALM', () => {
    const { s } = session();
    const sixtyFour = Buffer.concat(Array.from({ length: 64 }, () => settings([[3, 100]])));
    assert.equal(s.fromClient(Buffer.concat([PREFACE, sixtyFour]), 0), undefined);
    assert.equal(s.fromClient(settings([[3, 100]]), 1)?.code, 'ENHANCE_YOUR_CALM');
  });

  it('holds no state for ended, reset or closed streams over 10000 streams', () => {
    const { s, facts } = session();
    s.fromClient(Buffer.concat([PREFACE, EMPTY_SETTINGS]), 0);
    s.fromServer(EMPTY_SETTINGS, 0);
    for (let i = 0; i < 5000; i++) {
      const ended = 4 * i + 1;
      const reset = 4 * i + 3;
      s.fromClient(Buffer.concat([headers(ended, '82', F.END_HEADERS | F.END_STREAM), headers(reset, '82'), h2Frame(T.RST_STREAM, 0, reset, '00000008')]), i);
      // The server's answers race the reset: they name a closed stream.
      s.fromServer(Buffer.concat([headers(ended, '88'), h2Frame(T.DATA, F.END_STREAM, ended, 'aa'), headers(reset, '88'), h2Frame(T.DATA, F.END_STREAM, reset, 'bb')]), i);
    }
    assert.equal(s.openStreams, 0);
    assert.equal(facts.filter((f) => f.type === 'error').length, 0);
    assert.equal(facts.filter((f) => f.type === 'data' && f.endStream).length, 10000);
  });

  it('refuses a PUSH_PROMISE once the client has turned push off, and not while that is unacknowledged', () => {
    const promise = h2Frame(T.PUSH_PROMISE, F.END_HEADERS, 1, hex('00000002 82'));
    const { s, kinds } = session();
    s.fromClient(Buffer.concat([PREFACE, settings([[2, 0]]), headers(1, '82')]), 0);
    assert.equal(s.fromServer(Buffer.concat([EMPTY_SETTINGS, promise]), 1), undefined);
    assert.equal(s.fromServer(Buffer.concat([ACK, promise]), 2)?.code, 'PROTOCOL_ERROR');
    assert.deepEqual(kinds(), ['client request 1 :method: GET', 'push 1', 'server PROTOCOL_ERROR']);
  });

  it('names each HEADERS block by its place and drops ended and reset streams', () => {
    const { s, kinds, facts } = session();
    s.fromClient(Buffer.concat([PREFACE, EMPTY_SETTINGS, headers(1, '82'), h2Frame(T.DATA, 0, 1, 'aa'), headers(1, '00 01 74 01 31', F.END_HEADERS | F.END_STREAM), headers(3, '82', F.END_HEADERS | F.END_STREAM)]), 0);
    assert.equal(s.openStreams, 2);
    s.fromServer(Buffer.concat([
      EMPTY_SETTINGS,
      headers(1, '08 03 313033'),
      headers(1, '88'),
      h2Frame(T.DATA, F.END_STREAM, 1, 'bb'),
      h2Frame(T.PUSH_PROMISE, F.END_HEADERS, 3, hex('00000002 82 04 02 2f70')),
      h2Frame(T.RST_STREAM, 0, 3, '00000008'),
      headers(2, '88', F.END_HEADERS | F.END_STREAM),
      h2Frame(T.GOAWAY, 0, 0, '00000003 00000000'),
    ]), 1);
    assert.deepEqual(kinds(), [
      'client request 1 :method: GET', 'data 1', 'client trailers 1 t: 1', 'client request 3 :method: GET',
      'server informational 1 :status: 103', 'server response 1 :status: 200', 'data 1', 'push 3', 'reset 3', 'server response 2 :status: 200', 'goaway ',
    ]);
    const push = facts.find((f) => f.type === 'push');
    assert.deepEqual(push && push.type === 'push' && push.headers, [[':method', 'GET'], [':path', '/p']]);
    assert.equal(s.openStreams, 0);
  });
});
