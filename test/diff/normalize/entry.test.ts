// A WebSocket message cut at the body cap (`_bb.truncated` kept bytes,
// `_bb.size` whole; issue 34 item 7) as the readers treat it: `bb diff`
// compares what was kept and says it was cut, `bb frames` shows the whole
// size and how much was recorded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderText } from '../../../diff/index.js';
import { messageLine } from '../../../inspect/index.js';
import type { HarWebSocketMessage } from '../../../capture/har.js';
import { entry, har, wsEntry, type Msg } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

const T0 = '2024-05-01T10:00:00.000Z';
const at = Date.parse(T0) / 1000;

/** A text message cut at `kept` characters of `size` bytes. */
function cut(text: string, size: number): Msg {
  return { type: 'receive', time: at + 1, opcode: 1, data: text, _bb: { seq: 2, truncated: Buffer.byteLength(text), size } };
}
const after: Msg = { type: 'receive', time: at + 2, opcode: 1, data: '{"next":1}', _bb: { seq: 3 } };

describe('a WebSocket message cut at the body cap', () => {
  const t = tempDir();
  const diff = async (a: Msg, b: Msg) =>
    diffCaptures(await t.write(`a-${Math.random()}.har`, har([wsEntry('http://127.0.0.1:1/ws', T0, [a, after])])), await t.write(`b-${Math.random()}.har`, har([wsEntry('http://127.0.0.1:1/ws', T0, [b, after])])));

  it('compares equal when both kept the same bytes of the same size', async () => {
    const r = await diff(cut('{"items":[1,2,3', 73400320), cut('{"items":[1,2,3', 73400320));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('compares what was kept, and the rows say the message was cut', async () => {
    const r = await diff(cut('{"items":[1,2,3', 73400320), cut('{"items":[1,9,3', 73400320));
    assert.deepEqual(r.differences.map((d) => [d.kind, d.path, d.old, d.new]), [['changed', 'ws.messages[0].data.kept', '{"items":[1,2,3', '{"items":[1,9,3']]);
  });

  it('reports a different whole size', async () => {
    const r = await diff(cut('abc', 1000), cut('abc', 2000));
    assert.deepEqual(r.differences.map((d) => [d.path, d.old, d.new]), [['ws.messages[0].data.truncated.size', 1000, 2000]]);
  });

  it('bb frames shows the whole size and how much was recorded', () => {
    const m = cut('{"items":[1,2,3', 73400320) as unknown as HarWebSocketMessage;
    const line = messageLine(m, at, { color: false, width: 120 });
    assert.equal(line, '     2     +1.000s ← text    70.0MB  (recorded 15B) {"items":[1,2,3');
  });
});

describe("the request Host of bb shadow's captures", () => {
  const t = tempDir();
  const side = (host: string, extra: Record<string, unknown>) =>
    har([entry(`http://${host}/items`, T0, { request: { method: 'GET', url: `http://${host}/items`, httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Host', value: host }], queryString: [], headersSize: -1, bodySize: 0 }, ...extra })]);
  const diff = async (extra: Record<string, unknown>) =>
    diffCaptures(await t.write(`p-${Math.random()}.har`, side('127.0.0.1:4000', extra)), await t.write(`c-${Math.random()}.har`, side('candidate.internal:8080', extra)));

  it('is not compared: bb shadow gave each target its own (a difference of bb, not of the builds)', async () => {
    const r = await diff({ _bb: { shadow: { id: 1 } } });
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('is compared in other captures', async () => {
    const r = await diff({});
    assert.equal(r.verdict, 'diff');
    assert.match(renderText(r, { color: false }), /request\.headers\.host/);
  });
});

// bb replay names its target in Host (docs/replay.md "What the target receives"), whatever the
// original named: a capture whose client said `Host: shop.example.com`, replayed to 127.0.0.1, had
// `request.headers.host changed` as a real finding on every entry.
describe('the request Host in a run with a bb replay', () => {
  const t = tempDir();
  const capture = (host: string, extra: Record<string, unknown>, log: Record<string, unknown> = {}) =>
    har([entry(`http://${host}/orders/7`, T0, { request: { method: 'GET', url: `http://${host}/orders/7`, httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Host', value: host }], queryString: [], headersSize: -1, bodySize: 0 }, ...extra })], log);
  const replayOf = { _bb: { format: 1, label: 'replay', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:4001', replayOf: { entries: 1, first: 'x', skipped: [] } } };
  // In memory, through the bounded store in this thread, and through its worker threads.
  const paths = [{}, { boundedThreshold: 0, workers: false }, { boundedThreshold: 0, workers: true }];
  const diff = async (old: unknown, next: unknown, options: Record<string, unknown>) =>
    diffCaptures(await t.write(`o-${Math.random()}.har`, old), await t.write(`n-${Math.random()}.har`, next), options);

  for (const options of paths) {
    it(`is not compared on either side: the replay named its target ${JSON.stringify(options)}`, async () => {
      const r = await diff(capture('shop.example.com', {}), capture('127.0.0.1:3001', {}, replayOf), options);
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
      // Either side may be the replay.
      const back = await diff(capture('127.0.0.1:3001', {}, replayOf), capture('shop.example.com', {}), options);
      assert.equal(back.verdict, 'match', renderText(back, { color: false }));
    });

    it(`a replay of a bb shadow capture compares with it ${JSON.stringify(options)}`, async () => {
      const r = await diff(capture('127.0.0.1:4000', { _bb: { shadow: { id: 1 } } }), capture('127.0.0.1:3001', {}, replayOf), options);
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    });

    it(`is compared between two captures that are no replay ${JSON.stringify(options)}`, async () => {
      const r = await diff(capture('shop.example.com', {}), capture('127.0.0.1:3001', {}), options);
      assert.equal(r.verdict, 'diff');
      assert.match(renderText(r, { color: false }), /request\.headers\.host/);
    });
  }
});

// bb shadow --header sets request headers on a target's copies; the target's capture names them (log._bb.setHeaders).
describe('request headers bb shadow set on a target\'s copies', () => {
  const t = tempDir();
  const side = (headers: Array<[string, string]>, log: Record<string, unknown>) =>
    har(
      [entry('http://127.0.0.1:4000/items', T0, { request: { method: 'GET', url: 'http://127.0.0.1:4000/items', httpVersion: 'HTTP/1.1', cookies: [], headers: headers.map(([name, value]) => ({ name, value })), queryString: [], headersSize: -1, bodySize: 0 }, _bb: { shadow: { id: 1 } } })],
      { _bb: { format: 1, label: 'x', target: '', listen: '', startedDateTime: T0, endedDateTime: T0, complete: true, counts: { entries: 1, webSocketMessages: 0 }, ...log } },
    );
  const diff = async (candidate: Array<[string, string]>, setHeaders?: string[]) =>
    diffCaptures(
      await t.write(`p-${Math.random()}.har`, side([['Accept', '*/*'], ['Authorization', 'Bearer client']], { label: 'primary' })),
      await t.write(`c-${Math.random()}.har`, side(candidate, { label: 'candidate', ...(setHeaders ? { setHeaders } : {}) })),
    );
  const rows = (r: Awaited<ReturnType<typeof diffCaptures>>) => r.findings.map((f) => `${f.kind} ${f.pattern}`).sort();

  it('are left out on both sides, whatever either side had there (the client\'s own value, or none)', async () => {
    const r = await diff([['Accept', '*/*'], ['Authorization', 'Bearer for-candidate'], ['X-Env', 'staging']], ['Authorization', 'x-env']);
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('only those: another header that differs is still a difference; without the names, they are too', async () => {
    assert.deepEqual(rows(await diff([['Accept', 'text/html'], ['Authorization', 'Bearer for-candidate']], ['authorization'])), ['changed request.headers.accept']);
    assert.deepEqual(rows(await diff([['Accept', '*/*'], ['Authorization', 'Bearer for-candidate']])), ['changed request.headers.authorization']);
  });
});

// An HTTP/1.0 client may send no Host; bb shadow's mirrors name their target all the same (a probe's identical
// builds then failed on `request.headers.host added`).
describe("the request Host of a shadow's HTTP/1 exchange", () => {
  const t = tempDir();
  const side = (headers: Array<[string, string]>, label: string, httpVersion = 'HTTP/1.0') =>
    har(
      [entry('http://127.0.0.1:4000/x', T0, { request: { method: 'GET', url: 'http://127.0.0.1:4000/x', httpVersion, cookies: [], headers: headers.map(([name, value]) => ({ name, value })), queryString: [], headersSize: -1, bodySize: 0 }, _bb: { shadow: { id: 1 } } })],
      { _bb: { format: 1, label, target: '', listen: '', startedDateTime: T0, endedDateTime: T0, complete: true, counts: { entries: 1, webSocketMessages: 0 }, shadowRole: label } },
    );
  it('is bb\'s whether the client sent one or not', async () => {
    const r = await diffCaptures(
      await t.write('p.har', side([['Accept', '*/*']], 'primary')),
      await t.write('c.har', side([['Host', '127.0.0.1:5000'], ['Accept', '*/*']], 'candidate', 'HTTP/1.1')),
    );
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });
  it('and a header beside it that differs is still a difference', async () => {
    const r = await diffCaptures(
      await t.write('p2.har', side([['Accept', '*/*']], 'primary')),
      await t.write('c2.har', side([['Host', '127.0.0.1:5000'], ['Accept', 'text/html']], 'candidate', 'HTTP/1.1')),
    );
    assert.deepEqual(r.findings.map((f) => `${f.kind} ${f.pattern}`), ['changed request.headers.accept']);
  });
});
