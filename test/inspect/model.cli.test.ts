// bb frames lists gRPC calls like WebSocket connections (one per call, in
// the timeline too) and bb show marks them with their status; through the CLI.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Har } from '../../capture/har.js';
import { capture } from '../helpers/har.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

function grpcCapture(): Har {
  const har = capture([
    { url: 'http://127.0.0.1:1/demo.Echo/Unary', method: 'POST', mime: 'application/grpc-web+proto', body: '' },
    { url: 'http://127.0.0.1:1/plain', body: 'hi' },
    { url: 'http://127.0.0.1:1/demo.Echo/Stream', method: 'POST', mime: 'application/grpc-web+proto', body: '' },
  ]);
  const [unary, , stream] = har.log.entries;
  const t = Date.parse(unary!.startedDateTime) / 1000;
  unary!._grpcMessages = [
    { type: 'send', time: t + 0.001, compressed: false, data: b64('089601') },
    { type: 'receive', time: t + 0.002, compressed: true, data: b64('089601') },
  ];
  unary!._bb!.grpc = { status: 0 };
  const s = Date.parse(stream!.startedDateTime) / 1000;
  stream!._grpcMessages = [
    { type: 'send', time: s + 0.001, compressed: false, data: b64('0a026f6b') },
    { type: 'receive', time: s + 0.01, compressed: false, data: b64('0801') },
    { type: 'receive', time: s + 0.02, compressed: false, data: b64('0802') },
  ];
  stream!.response._trailers = [{ name: 'grpc-status', value: '14' }, { name: 'grpc-message', value: 'going%20away' }];
  return har;
}

describe('gRPC calls in bb frames and bb show', () => {
  const t = tempDir();
  const bb = async (...args: string[]) => {
    const r = await runBb(args, { NO_COLOR: '1', COLUMNS: '160' });
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };

  it('bb frames lists each call with its messages and status; --json and --timeline carry them', async () => {
    const file = await t.write('grpc.har', grpcCapture());
    const text = await bb('frames', file);
    assert.match(text, /grpc call #1 .*\/demo\.Echo\/Unary.*\(2 messages; grpc 0 OK\)/);
    assert.match(text, /grpc call #3 .*\/demo\.Echo\/Stream.*\(3 messages; grpc 14 UNAVAILABLE: going away\)/);
    assert.match(text, /→ grpc\s+3B\s+\{1: 150\}$/m);
    assert.equal((text.match(/← grpc/g) ?? []).length, 3);

    const json = JSON.parse(await bb('frames', file, '--json')) as { connections: Array<{ id: string; entry: number; grpc?: { status: number | null }; messages: Array<{ type: string; data: string }> }> };
    assert.deepEqual(json.connections.map((c) => [c.id, c.entry, c.grpc?.status, c.messages.length]), [['#1', 0, 0, 2], ['#3', 2, 14, 3]]);
    assert.equal(json.connections[1]!.messages[2]!.data, b64('0802'));

    const timeline = (await bb('frames', file, '--timeline')).split('\n').filter(Boolean);
    const order = timeline.map((l) => (/▶ http POST \S+Unary/.test(l) ? 'unary' : /▶ http GET/.test(l) ? 'plain' : /▶ http POST \S+Stream/.test(l) ? 'stream' : / grpc /.test(l) ? 'msg' : ''));
    assert.deepEqual(order.filter((x) => x !== ''), ['unary', 'msg', 'msg', 'plain', 'stream', 'msg', 'msg', 'msg'], timeline.join('\n'));
  });

  it('bb show marks gRPC calls with their status, and --entry lists the messages', async () => {
    const file = await t.write('grpc-show.har', grpcCapture());
    const rows = (await bb('show', file)).split('\n');
    assert.match(rows.find((l) => l.includes('Unary'))!, /\s2\s+http:\S+Unary\s+\[grpc 0 OK\]/);
    assert.match(rows.find((l) => l.includes('Stream'))!, /\[grpc 14 UNAVAILABLE: going away\]/);
    assert.doesNotMatch(rows.find((l) => l.includes('/plain'))!, /grpc/);
    const one = await bb('show', file, '--entry', '#3', '--body');
    assert.match(one, /grpc 14 UNAVAILABLE: going away; 3 gRPC messages:/);
    assert.match(one, /← grpc\s+2B\s+\{1: 2\}$/m);
  });
});
