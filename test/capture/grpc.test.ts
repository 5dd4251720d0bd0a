// gRPC and gRPC-Web bodies split into their messages: literal frames for the
// pure splitter, then a node:http server speaking gRPC-Web framing by hand
// and a real undici client through bb's proxy.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync, deflateSync } from 'node:zlib';
import { request } from 'undici';
import { grpcMedia, grpcMessageFeed, grpcStatus, splitGrpcBody } from '../../capture/grpc.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';

/** One length-prefixed message: flags, 4-byte length, payload. */
function frame(payload: Buffer | string, flags = 0): Buffer {
  const p = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(p.length, 1);
  return Buffer.concat([head, p]);
}

const WEB = { web: true, text: false };
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

describe('grpcMedia', () => {
  it('names every gRPC flavour and nothing else', () => {
    assert.deepEqual(grpcMedia('application/grpc'), { web: false, text: false });
    assert.deepEqual(grpcMedia('application/grpc+proto'), { web: false, text: false });
    assert.deepEqual(grpcMedia('application/grpc-web'), { web: true, text: false });
    assert.deepEqual(grpcMedia('application/grpc-web+proto; charset=x'), { web: true, text: false });
    assert.deepEqual(grpcMedia('Application/gRPC-Web-Text'), { web: true, text: true });
    assert.equal(grpcMedia('application/json'), undefined);
    assert.equal(grpcMedia('application/grpcx'), undefined);
    assert.equal(grpcMedia(undefined), undefined);
  });
});

describe('splitGrpcBody', () => {
  it('splits messages across chunks and times each by the chunk holding its last byte', () => {
    // 08 96 01 is field 1 = 150 (protobuf encoding docs); a second message spans two chunks.
    const bytes = Buffer.concat([frame(Buffer.from('089601', 'hex')), frame('hello')]);
    const split = splitGrpcBody([{ bytes: bytes.subarray(0, 10), ts: 1000 }, { bytes: bytes.subarray(10), ts: 2500 }], { type: 'receive', media: { web: false, text: false }, truncated: false });
    assert.deepEqual(split.messages, [
      { type: 'receive', time: 1, compressed: false, data: b64(Buffer.from('089601', 'hex')) },
      { type: 'receive', time: 2.5, compressed: false, data: b64('hello') },
    ]);
    assert.deepEqual(split.notes, []);
  });

  it('decompresses gzip and deflate messages and keeps an unknown encoding compressed, saying so', () => {
    const gz = splitGrpcBody([{ bytes: frame(gzipSync('zipped'), 1), ts: 0 }], { type: 'send', media: WEB, encoding: 'gzip', truncated: false });
    assert.equal(Buffer.from(gz.messages[0]!.data, 'base64').toString(), 'zipped');
    assert.equal(gz.messages[0]!.compressed, true);
    const df = splitGrpcBody([{ bytes: frame(deflateSync('deflated'), 1), ts: 0 }], { type: 'send', media: WEB, encoding: 'deflate', truncated: false });
    assert.equal(Buffer.from(df.messages[0]!.data, 'base64').toString(), 'deflated');
    const sn = splitGrpcBody([{ bytes: frame('not-snappy', 1), ts: 0 }], { type: 'send', media: WEB, encoding: 'snappy', truncated: false });
    assert.equal(Buffer.from(sn.messages[0]!.data, 'base64').toString(), 'not-snappy');
    assert.match(sn.messages[0]!._bb!.undecoded!, /snappy: no decoder, kept compressed/);
    assert.match(sn.notes[0]!, /snappy/);
  });

  it('reads the gRPC-Web trailer frame (flag 0x80) as trailers, not a message', () => {
    const body = Buffer.concat([frame('m'), frame('grpc-status: 5\r\ngrpc-message: not%20found\r\n', 0x80)]);
    const split = splitGrpcBody([{ bytes: body, ts: 0 }], { type: 'receive', media: WEB, truncated: false });
    assert.equal(split.messages.length, 1);
    assert.deepEqual(split.trailers, [{ name: 'grpc-status', value: '5' }, { name: 'grpc-message', value: 'not%20found' }]);
    assert.deepEqual(grpcStatus(undefined, split.trailers), { status: 5, message: 'not found' });
  });

  it('decodes gRPC-Web-text written as separately padded base64 pieces', () => {
    const text = frame('a').toString('base64') + frame('bc').toString('base64') + frame('grpc-status:0\r\n', 0x80).toString('base64');
    const split = splitGrpcBody([{ bytes: Buffer.from(text), ts: 0 }], { type: 'receive', media: { web: true, text: true }, truncated: false });
    assert.deepEqual(split.messages.map((m) => Buffer.from(m.data, 'base64').toString()), ['a', 'bc']);
    assert.deepEqual(grpcStatus(split.trailers), { status: 0 });
  });

  it('lists `listed` messages at most and counts the later whole ones, reading a trailer frame past them', () => {
    const body = Buffer.concat([frame('a'), frame('b'), frame('c'), frame('d'), frame('grpc-status: 0\r\n', 0x80), frame('0123456789').subarray(0, 8)]);
    const split = splitGrpcBody([{ bytes: body, ts: 0 }], { type: 'receive', media: WEB, truncated: true, listed: 2 });
    assert.deepEqual(split.messages.map((m) => Buffer.from(m.data, 'base64').toString()), ['a', 'b']);
    assert.equal(split.unlisted, 2);
    assert.deepEqual(split.trailers, [{ name: 'grpc-status', value: '0' }]);
    assert.deepEqual(split.notes, ['receive: last message cut short, 3 of 10 bytes recorded', 'receive: 2 messages past the first 2 are not listed (the body holds them)']);
  });

  it('keeps a message cut short as truncated, with what was recorded, and never throws', () => {
    const body = Buffer.concat([frame('whole'), frame('0123456789')]).subarray(0, 20);
    const split = splitGrpcBody([{ bytes: body, ts: 0 }], { type: 'receive', media: WEB, truncated: true });
    assert.equal(split.messages.length, 2);
    assert.deepEqual(split.messages[1]!._bb, { truncated: 5, length: 10 });
    assert.equal(Buffer.from(split.messages[1]!.data, 'base64').toString(), '01234');
    assert.match(split.notes[0]!, /cut short, 5 of 10 bytes/);
    const prefix = splitGrpcBody([{ bytes: Buffer.from([0, 0, 0]), ts: 0 }], { type: 'send', media: WEB, truncated: false });
    assert.deepEqual(prefix.messages, []);
    assert.match(prefix.notes[0]!, /prefix cut short/);
  });
});

describe('gRPC-Web over HTTP/1.1 through the proxy', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  async function grpcWebServer(): Promise<string> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const head = { 'Content-Type': 'application/grpc-web+proto', 'grpc-encoding': 'gzip' };
        if (req.url === '/demo.Echo/Unary') {
          res.writeHead(200, head);
          res.end(Buffer.concat([frame(gzipSync(Buffer.concat(chunks).subarray(5)), 1), frame('grpc-status: 0\r\n', 0x80)]));
        } else if (req.url === '/demo.Echo/Stream') {
          res.writeHead(200, head);
          for (const word of ['one', 'two', 'three']) {
            res.write(frame(word));
            await sleep(40);
          }
          res.end(frame('grpc-status: 14\r\ngrpc-message: going%20away\r\n', 0x80));
        } else if (req.url === '/demo.Echo/Trailers') {
          // Plain gRPC framing with its status in HTTP/1.1 chunked trailers.
          res.writeHead(200, { 'Content-Type': 'application/grpc', Trailer: 'grpc-status, grpc-message' });
          res.write(frame(Buffer.from('0801', 'hex')));
          res.addTrailers({ 'grpc-status': '3', 'grpc-message': 'bad%20arg' });
          res.end();
        } else {
          res.writeHead(200, head);
          res.end(frame('x'.repeat(4000)));
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.add(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('records unary and server-streaming calls with _grpcMessages, times and status; a capped one as truncated', async () => {
    const target = await grpcWebServer();
    const rec = await record(cleanups, target, { bodyCap: 1000 });
    const call = async (path: string, body: Buffer) => {
      const res = await request(`http://127.0.0.1:${rec.port}${path}`, {
        method: 'POST', body, headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
      });
      return Buffer.from(await res.body.arrayBuffer());
    };
    const unary = await call('/demo.Echo/Unary', frame(Buffer.from('089601', 'hex')));
    assert.equal(unary[0], 1, 'the client got the compressed frame as the server sent it');
    await call('/demo.Echo/Stream', frame('go'));
    const big = await call('/demo.Echo/Big', frame('big'));
    await call('/demo.Echo/Trailers', frame(''));
    assert.equal(big.length, 4005, 'the capped body still crossed whole');
    const har = await rec.finish();
    const [u, s, b, tr] = har.log.entries;

    assert.deepEqual(u!._grpcMessages!.map((m) => [m.type, m.compressed, Buffer.from(m.data, 'base64').toString('hex')]), [
      ['send', false, '089601'],
      ['receive', true, '089601'],
    ]);
    assert.deepEqual(u!._bb!.grpc, { status: 0 });
    assert.deepEqual(u!.response._trailers, [{ name: 'grpc-status', value: '0' }]);

    const msgs = s!._grpcMessages!;
    assert.deepEqual(msgs.map((m) => [m.type, Buffer.from(m.data, 'base64').toString()]), [['send', 'go'], ['receive', 'one'], ['receive', 'two'], ['receive', 'three']]);
    assert.ok(msgs[3]!.time - msgs[1]!.time >= 0.06, `each streamed message has its own time (${msgs[1]!.time} .. ${msgs[3]!.time})`);
    // Over HTTP/1.1 too, each whole message took a seq in the capture's order as its last byte crossed.
    const seqs = msgs.map((m) => m._bb?.seq);
    assert.ok(seqs.every((q, i) => typeof q === 'number' && q > s!._bb!.seq && q < s!._bb!.seqEnd! && (i === 0 || q > seqs[i - 1]!)), JSON.stringify(seqs));
    assert.deepEqual(s!._bb!.grpc, { status: 14, message: 'going away' });

    const [bigSend, bigReceive] = b!._grpcMessages!;
    assert.equal(Buffer.from(bigSend!.data, 'base64').toString(), 'big');
    assert.equal(bigReceive!._bb!.length, 4000);
    assert.equal(bigReceive!._bb!.seq, undefined, 'a message cut at the cap has no seq of its own');
    assert.ok(bigReceive!._bb!.truncated! > 0 && bigReceive!._bb!.truncated! < 1000, `recorded ${bigReceive!._bb!.truncated}`);
    assert.deepEqual(b!._bb!.grpc, { status: null });
    assert.match(b!.comment ?? '', /cut short/);

    assert.deepEqual(tr!._grpcMessages!.map((m) => [m.type, Buffer.from(m.data, 'base64').toString('hex')]), [['send', ''], ['receive', '0801']]);
    assert.deepEqual(tr!._bb!.grpc, { status: 3, message: 'bad arg' });
  });
});

describe('grpcMessageFeed: a gRPC call\'s messages as they cross', () => {
  const frame = (message: Buffer, compressed = false) => {
    const prefix = Buffer.alloc(5);
    prefix[0] = compressed ? 1 : 0;
    prefix.writeUInt32BE(message.length, 1);
    return Buffer.concat([prefix, message]);
  };
  it('hands over each message whole, however the chunks cut it: an empty one, a gzip one decompressed, one past the bound as undefined', () => {
    const got: Array<string | undefined> = [];
    const feed = grpcMessageFeed('gzip', 256 * 1024, (m) => got.push(m && Buffer.from(m).toString('hex')));
    const big = Buffer.alloc(256 * 1024 + 1, 7);
    const body = Buffer.concat([frame(Buffer.from('0a03616263', 'hex')), frame(Buffer.alloc(0)), frame(gzipSync(Buffer.from('0801', 'hex')), true), frame(big), frame(Buffer.from('1002', 'hex'))]);
    // One byte at a time, each chunk a buffer the tap reuses (overwritten once handed over).
    for (let i = 0; i < body.length; i++) {
      const chunk = Buffer.from([body[i]!]);
      feed(chunk);
      chunk[0] = 0xee;
    }
    assert.deepEqual(got, ['0a03616263', '', '0801', undefined, '1002']);
  });
});
