// gRPC calls in the diff: messages compared as a sequence like WebSocket
// messages, each decoded from the protobuf wire format without a schema;
// grpc-status compared. In memory and on the bounded path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderText, type DiffResult } from '../../diff/index.js';
import type { Har, HarGrpcMessage } from '../../capture/har.js';
import { capture } from '../helpers/har.js';
import { diffBothPaths } from './diff-bounded.js';
import { tempDir } from '../helpers/tmp.js';

const show = (r: DiffResult) => renderText(r, { color: false, rows: true });
const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex').toString('base64');

/** One gRPC call: request message, response messages, status in the trailers. */
function call(receive: string[], status = '0', message?: string, at = 0): Har {
  const har = capture([{ url: 'http://127.0.0.1:1/demo.Echo/Stream', method: 'POST', status: 200, mime: 'application/grpc', body: '' }]);
  const e = har.log.entries[0]!;
  const t = 1_767_225_600 + at;
  const msgs: HarGrpcMessage[] = [{ type: 'send', time: t, compressed: false, data: hex('0a 02 67 6f') }];
  receive.forEach((r, i) => msgs.push({ type: 'receive', time: t + 0.1 * (i + 1) + at, compressed: false, data: hex(r) }));
  e._grpcMessages = msgs;
  e.response._trailers = [{ name: 'grpc-status', value: status }, ...(message ? [{ name: 'grpc-message', value: message }] : [])];
  return har;
}

describe('gRPC messages in the diff', () => {
  const t = tempDir();
  const both = (a: Har, b: Har) => diffBothPaths(t, a, b);
  const rows = (r: DiffResult) => r.differences.map((d) => [d.kind, d.path, d.old, d.new]);

  it('the same messages at other times match', async () => {
    for (const r of await both(call(['08 96 01', '08 97 01']), call(['08 96 01', '08 97 01'], '0', undefined, 30))) assert.equal(r.verdict, 'match', show(r));
  });

  it('a changed field is one row at its field number; a missing message is one missing row', async () => {
    for (const r of await both(call(['08 96 01', '12 02 6f 6b']), call(['08 97 01', '12 02 6f 6b']))) {
      assert.deepEqual(rows(r), [['changed', 'grpc.messages[1].data["1"]', 150, 151]], show(r));
    }
    for (const r of await both(call(['08 01', '08 02', '08 03']), call(['08 01', '08 03']))) {
      assert.deepEqual(r.differences.map((d) => [d.kind, d.path]), [['missing', 'grpc.messages[2]']], show(r));
    }
  });

  it('a grpc-status change is a finding', async () => {
    for (const r of await both(call(['08 01']), call(['08 01'], '14', 'going%20away'))) {
      assert.equal(r.verdict, 'diff', show(r));
      assert.deepEqual(rows(r).sort(), [['changed', 'grpc.message', null, 'going away'], ['changed', 'grpc.status', 0, 14]], show(r));
      assert.ok(r.findings.some((f) => f.pattern === 'grpc.status' && f.class === 'real'), show(r));
    }
  });

  it('a message that is not protobuf compares as its bytes', async () => {
    for (const r of await both(call(['ff ff']), call(['ff fe']))) assert.deepEqual(r.differences.map((d) => d.path), ['grpc.messages[1].data'], show(r));
  });
});
