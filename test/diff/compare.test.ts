// Message sequences compared (diff/compare.ts): WebSocket messages per
// direction or as one sequence, and gRPC calls' messages, each decoded from
// the protobuf wire format without a schema, with grpc-status compared; the
// gRPC cases in memory and on the bounded path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderText, validateDiffConfig, type DiffOptions, type DiffResult } from '../../diff/index.js';
import { capture, runTime, uuid, type ExchangeSpec } from '../helpers/har.js';
import { lineUpMessages } from '../../diff/compare.js';
import { wsColumnsHtml, type PairView } from '../../diff/report/html-pair.js';
import { tempDir } from '../helpers/tmp.js';
import type { Har, HarGrpcMessage } from '../../capture/har.js';
import { diffBothPaths } from './diff-bounded.js';

const show = (r: DiffResult) => renderText(r, { color: false });

type Msg = NonNullable<ExchangeSpec['ws']>[number];
const hello: Msg = { type: 'send', data: { type: 'client_hello', v: 1 } };
const sub: Msg = { type: 'send', data: { type: 'subscribe', cursor: 0 } };
const ev = (n: number, extra: object = {}): Msg => ({ type: 'receive', data: { type: 'event', seq: n, at: runTime(), ...extra } });

function conn(messages: Msg[], close = { code: 1000, reason: 'bye', by: 'client' as const }): ExchangeSpec {
  return { url: 'http://127.0.0.1:1/ws', ws: messages, close };
}

describe('WebSocket sequences', () => {
  const t = tempDir();
  async function diff(a: Msg[], b: Msg[], closeB?: Parameters<typeof conn>[1], options: DiffOptions = {}): Promise<DiffResult> {
    const n = uuid();
    return diffCaptures(await t.write(`${n}-a.har`, capture([conn(a)])), await t.write(`${n}-b.har`, capture([conn(b, closeB)])), options);
  }
  const rows = (r: DiffResult) => r.differences.map((d) => [d.kind, d.path]);

  it('the same messages with fresh timestamps match', async () => {
    const r = await diff([hello, sub, ev(1), ev(2)], [hello, sub, ev(1), ev(2)]);
    assert.equal(r.verdict, 'match', show(r));
  });

  it('a reordered message is one reordered row', async () => {
    const r = await diff([hello, sub, ev(1), ev(2), ev(3)], [hello, sub, ev(2), ev(1), ev(3)]);
    assert.deepEqual(rows(r), [['reordered', 'ws.messages[2]']], show(r));
    // The row says which message moved, not only the two positions.
    const moved = 'receive text {"type":"event","seq":1,"at":"<TS>"}';
    assert.deepEqual([r.differences[0]!.old, r.differences[0]!.new], [`at 2: ${moved}`, `at 3: ${moved}`], show(r));
    assert.match(renderText(r, { color: false, rows: true }), new RegExp(`ws\\.messages\\[2\\]: moved 2 → 3: ${moved.replace(/[{}[\]()"^$.*+?|\\]/g, '\\$&')}\n`));
  });

  it('how the two directions interleave is timing, not protocol: compared per direction by default, as one sequence with wsOrder "total"', async () => {
    // A client that sends three requests without waiting; the server answers each.
    const req = (n: number): Msg => ({ type: 'send', data: { type: 'get', n } });
    const res = (n: number): Msg => ({ type: 'receive', data: { type: 'got', n } });
    const run1 = [req(1), res(1), req(2), res(2), req(3), res(3)];
    const run2 = [req(1), req(2), res(1), req(3), res(2), res(3)];
    const r = await diff(run1, run2);
    assert.equal(r.verdict, 'match', show(r));
    const total = await diff(run1, run2, undefined, { config: validateDiffConfig({ pairing: { wsOrder: 'total' } }) });
    assert.equal(total.verdict, 'diff', show(total));
    assert.ok(total.differences.every((d) => d.kind === 'reordered'), show(total));
    // Order within a direction still counts, and rows name places in the whole connection.
    const swapped = await diff(run1, [req(1), res(2), req(2), res(1), req(3), res(3)]);
    assert.deepEqual(rows(swapped), [['reordered', 'ws.messages[1]']], show(swapped));
    const changed = await diff(run1, [req(1), res(1), req(2), { type: 'receive', data: { type: 'got', n: 9 } }, req(3), res(3)]);
    assert.deepEqual(changed.differences.map((d) => [d.kind, d.path, d.old, d.new]), [['changed', 'ws.messages[3].data.n', 2, 9]], show(changed));
  });

  it('the HTML report lines the two columns up the way the rows were compared', () => {
    const m = (type: 'send' | 'receive', n: number) => ({ type, opcode: 1, data: { type: type === 'send' ? 'get' : 'got', n } });
    const a = [m('send', 1), m('receive', 1), m('send', 2), m('receive', 2)];
    const b = [m('send', 1), m('send', 2), m('receive', 1), m('receive', 2)];
    const entry = (messages: typeof a) => ({ request: {}, response: {}, ws: { messages, close: null } }) as unknown as PairView['old'];
    const statuses = (html: string) => [...html.matchAll(/<tr class="ws-(\w+)">/g)].map((x) => x[1]);
    assert.deepEqual(statuses(wsColumnsHtml({ old: entry(a), new: entry(b) })), ['same', 'same', 'same', 'same', 'close']);
    assert.ok(statuses(wsColumnsHtml({ old: entry(a), new: entry(b), wsOrder: 'total' })).includes('reordered'));
    assert.deepEqual(lineUpMessages(a, b).map((l) => [l.old, l.new]), [[0, 0], [1, 2], [2, 1], [3, 3]]);
  });

  it('refuses a wsOrder it does not know, saying what it takes', () => {
    assert.throws(() => validateDiffConfig({ pairing: { wsOrder: 'strict' } }), /pairing\.wsOrder.*"direction".*"total"/);
  });

  it('a missing message is one missing row, the rest pairs', async () => {
    const r = await diff([hello, sub, ev(1), ev(2), ev(3)], [hello, sub, ev(1), ev(3)]);
    assert.deepEqual(rows(r), [['missing', 'ws.messages[3]']], show(r));
  });

  it('an extra message is one extra row', async () => {
    const r = await diff([hello, sub, ev(1), ev(2)], [hello, sub, ev(1), ev(5), ev(2)]);
    assert.deepEqual(rows(r), [['extra', 'ws.messages[3]']], show(r));
  });

  it('a changed message reports the field inside it', async () => {
    const r = await diff([hello, sub, ev(1), ev(2)], [hello, sub, ev(1, { grade: 'a' }), ev(2)]);
    assert.deepEqual(rows(r), [['added', 'ws.messages[2].data.grade']], show(r));
    const r2 = await diff([hello, sub, ev(1), ev(2)], [hello, { type: 'send', data: { type: 'subscribe', cursor: 7 } }, ev(1), ev(2)]);
    assert.deepEqual(r2.differences.map((d) => [d.kind, d.path, d.old, d.new]), [['changed', 'ws.messages[1].data.cursor', 0, 7]], show(r2));
  });

  it('a different close code is ws.close.code', async () => {
    const r = await diff([hello], [hello], { code: 1011, reason: 'bye', by: 'client' });
    assert.deepEqual(rows(r), [['changed', 'ws.close.code']], show(r));
  });

  it('Playwright’s millisecond times and Chrome’s seconds compare equal', async () => {
    const a = capture([{ ...conn([hello, ev(1)]), wsTimeUnit: 's' }], { creator: 'WebInspector' });
    const b = capture([{ ...conn([hello, ev(1)]), wsTimeUnit: 'ms' }], { creator: 'Playwright' });
    delete a.log._bb;
    delete b.log._bb;
    for (const e of [...a.log.entries, ...b.log.entries]) delete e._bb;
    const r = await diffCaptures(await t.write('chrome-ws.har', a), await t.write('pw-ws.har', b));
    assert.equal(r.verdict, 'match', show(r));
  });
});

// gRPC calls in the diff: messages compared as a sequence like WebSocket
// messages.
const showRows = (r: DiffResult) => renderText(r, { color: false, rows: true });
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
    for (const r of await both(call(['08 96 01', '08 97 01']), call(['08 96 01', '08 97 01'], '0', undefined, 30))) assert.equal(r.verdict, 'match', showRows(r));
  });

  it('a changed field is one row at its field number; a missing message is one missing row', async () => {
    for (const r of await both(call(['08 96 01', '12 02 6f 6b']), call(['08 97 01', '12 02 6f 6b']))) {
      assert.deepEqual(rows(r), [['changed', 'grpc.messages[1].data["1"]', 150, 151]], showRows(r));
    }
    for (const r of await both(call(['08 01', '08 02', '08 03']), call(['08 01', '08 03']))) {
      assert.deepEqual(r.differences.map((d) => [d.kind, d.path]), [['missing', 'grpc.messages[2]']], showRows(r));
    }
  });

  it('a grpc-status change is a finding', async () => {
    for (const r of await both(call(['08 01']), call(['08 01'], '14', 'going%20away'))) {
      assert.equal(r.verdict, 'diff', showRows(r));
      assert.deepEqual(rows(r).sort(), [['changed', 'grpc.message', null, 'going away'], ['changed', 'grpc.status', 0, 14]], showRows(r));
      assert.ok(r.findings.some((f) => f.pattern === 'grpc.status' && f.class === 'real'), showRows(r));
    }
  });

  it('a message that is not protobuf compares as its bytes', async () => {
    for (const r of await both(call(['ff ff']), call(['ff fe']))) assert.deepEqual(r.differences.map((d) => d.path), ['grpc.messages[1].data'], showRows(r));
  });
});
