// A mirrored gRPC request body's messages get each target's own values
// (scenario/shadow/mirror-grpc.ts): framed again with their new lengths, a
// compressed one compressed again; a message that does not decompress and a
// cut last frame go as sent.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ClientMessages, grpcBodyTokens, rewriteGrpcBody } from '../../../scenario/shadow/mirror-grpc.js';
import { decodeItem, encodeItem, type ItemValue } from '../../helpers/grpc-items.js';

/** One length-prefixed message (PROTOCOL-HTTP2.md "Length-Prefixed-Message"). */
const frame = (message: Buffer, compressed = false): Buffer => {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
};

/** The body's whole frames: flags and message each. */
const frames = (body: Buffer): Array<{ flags: number; item: ItemValue | Buffer }> => {
  const out: Array<{ flags: number; item: ItemValue | Buffer }> = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const end = at + 5 + body.readUInt32BE(at + 1);
    const message = body.subarray(at + 5, end);
    out.push({ flags: body[at]!, item: body[at]! & 1 ? message : decodeItem(message) });
    at = end;
  }
  return out;
};

describe('rewriteGrpcBody', () => {
  const map = new Map([['item_9f8e7d6c', 'item_0123456789abcdef0123'], ['48213', '7']]);

  it("puts each target's values in every message, each prefix with its new length, a gzip one compressed again (grpc-encoding gzip)", () => {
    const body = Buffer.concat([frame(encodeItem({ name: 'item_9f8e7d6c', n: 48213 })), frame(gzipSync(encodeItem({ name: 'zipped item_9f8e7d6c', n: 3 })), true), frame(encodeItem({ name: 'and item_9f8e7d6c', n: 2 }))]);
    const out = frames(rewriteGrpcBody(body, map, 'gzip'));
    assert.equal(out[1]!.flags, 1);
    assert.deepEqual(decodeItem(gunzipSync(out[1]!.item as Buffer)), { name: 'zipped item_0123456789abcdef0123', n: 3 });
    assert.deepEqual([out[0], out[2]], [
      { flags: 0, item: { name: 'item_0123456789abcdef0123', n: 7 } },
      { flags: 0, item: { name: 'and item_0123456789abcdef0123', n: 2 } },
    ]);
  });

  it('sends a compressed message that does not decompress as it came: an unknown encoding, identity, bytes that are not gzip', () => {
    const zipped = frame(gzipSync(encodeItem({ name: 'item_9f8e7d6c', n: 1 })), true);
    const garbage = frame(Buffer.from('1f8b0800000000000003', 'hex'), true);
    for (const encoding of ['snappy', 'identity', undefined]) assert.equal(rewriteGrpcBody(zipped, map, encoding), zipped, String(encoding));
    assert.equal(rewriteGrpcBody(garbage, map, 'gzip'), garbage);
  });

  it('keeps a cut last frame as it came, and gives the body itself back when nothing changed or nothing is bound', () => {
    const cut = frame(encodeItem({ name: 'item_9f8e7d6c', n: 1 })).subarray(0, 9);
    const out = rewriteGrpcBody(Buffer.concat([frame(encodeItem({ name: 'x', n: 48213 })), cut]), map, undefined);
    assert.deepEqual(out.subarray(out.length - cut.length), cut);
    assert.deepEqual(frames(out.subarray(0, out.length - cut.length)), [{ flags: 0, item: { name: 'x', n: 7 } }]);
    const plain = frame(encodeItem({ name: 'other', n: 5 }));
    assert.equal(rewriteGrpcBody(plain, map, undefined), plain);
    const bound = frame(encodeItem({ name: 'item_9f8e7d6c', n: 5 }));
    assert.equal(rewriteGrpcBody(bound, new Map(), undefined), bound);
  });
});

describe('grpcBodyTokens', () => {
  it("lists the values a body's messages carry, a compressed one's when it decompresses", () => {
    const body = Buffer.concat([frame(encodeItem({ name: 'item_9f8e7d6c', n: 48213 })), frame(gzipSync(encodeItem({ name: 'item_zipped1', n: 0 })), true)]);
    assert.deepEqual(grpcBodyTokens(body, 'gzip'), ['item_9f8e7d6c', '48213', 'item_zipped1']);
    assert.deepEqual(grpcBodyTokens(body, undefined), ['item_9f8e7d6c', '48213']);
  });
});

describe('ClientMessages: a streaming call\'s client messages as they cross', () => {
  it('cuts messages out of any chunking, lets one that waits hold back those after it, writes each with the values known when it goes', async () => {
    const bindings = new Map<string, string>();
    const waits: Array<() => void> = [];
    const written: Buffer[] = [];
    let ended = false;
    const messages = new ClientMessages(
      {
        bindings,
        // A message carrying the ticket waits (the target has not said its own yet); others go at once.
        whenReady: (tokens, go) => (tokens().has('item_9f8e7d6c') ? waits.push(go) : go()),
      },
      { write: (b) => written.push(b), end: () => (ended = true) },
      undefined,
    );
    const body = Buffer.concat([frame(encodeItem({ name: 'hello', n: 1 })), frame(encodeItem({ name: 'item_9f8e7d6c', n: 2 })), frame(encodeItem({ name: 'after', n: 3 }))]);
    for (let i = 0; i < body.length; i += 3) messages.write(body.subarray(i, i + 3));
    messages.end();
    assert.deepEqual(frames(Buffer.concat(written)), [{ flags: 0, item: { name: 'hello', n: 1 } }]);
    assert.equal(ended, false);
    // The target said its ticket: the waiting message goes with it, then the rest, then the end.
    bindings.set('item_9f8e7d6c', 'item_0123456789abcdef0123');
    waits.shift()!();
    assert.deepEqual(frames(Buffer.concat(written)), [
      { flags: 0, item: { name: 'hello', n: 1 } },
      { flags: 0, item: { name: 'item_0123456789abcdef0123', n: 2 } },
      { flags: 0, item: { name: 'after', n: 3 } },
    ]);
    assert.equal(ended, true);
  });

  it('passes a message past 4 MiB through as it crosses, and a cut last one at the end, byte for byte', () => {
    const written: Buffer[] = [];
    const messages = new ClientMessages({ bindings: new Map([['x', 'y']]), whenReady: (_t, go) => go() }, { write: (b) => written.push(b), end: () => {} }, undefined);
    const big = frame(Buffer.alloc(4 * 1024 * 1024 + 10, 0x41));
    const cut = frame(encodeItem({ name: 'item_9f8e7d6c', n: 2 })).subarray(0, 7);
    const body = Buffer.concat([big, cut]);
    for (let i = 0; i < body.length; i += 65536) messages.write(body.subarray(i, i + 65536));
    messages.end();
    assert.ok(Buffer.concat(written).equals(body));
  });
});
