// Correlation over a plan: what is bound, what is the client's own, what is
// rewritten with the target's value, and which secrets stop the replay.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Correlation } from '../../../scenario/replay/correlate.js';
import { planReplay } from '../../../scenario/replay/plan.js';
import { requestParts } from '../../../scenario/replay/request.js';
import type { Har, HarEntry } from '../../../capture/index.js';
import { isBbError } from '../../../core/index.js';

function entry(seq: number, method: string, path: string, res: { status?: number; body?: string; headers?: Array<[string, string]> } = {}, req: { body?: string; headers?: Array<[string, string]> } = {}): HarEntry {
  return {
    startedDateTime: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    time: 1,
    connection: 'c',
    request: {
      method, url: `http://127.0.0.1:1${path}`, httpVersion: 'HTTP/1.1', cookies: [], queryString: [], headersSize: -1, bodySize: 0,
      headers: (req.headers ?? []).map(([name, value]) => ({ name, value })),
      ...(req.body ? { postData: { mimeType: 'application/json', text: req.body } } : {}),
    },
    response: {
      status: res.status ?? 200, statusText: '', httpVersion: 'HTTP/1.1', cookies: [], redirectURL: '', headersSize: -1, bodySize: 0,
      headers: [['content-type', 'application/json'] as [string, string], ...(res.headers ?? [])].map(([name, value]) => ({ name, value })),
      content: { size: 0, mimeType: 'application/json', ...(res.body ? { text: res.body } : {}) },
    },
    cache: {},
    timings: { send: 0, wait: 1, receive: 0 },
    _bb: { seq: seq * 2, seqEnd: seq * 2 + 1 },
  };
}
const har = (...entries: HarEntry[]): Har => ({ log: { version: '1.2', creator: { name: 't', version: '1' }, entries } });
const correlate = (h: Har, values: Record<string, string> = {}, headers: Array<[string, string]> = []) => {
  const plan = planReplay(h);
  return { plan, c: new Correlation(plan, { correlate: true, headers, values, file: 'cap.har' }) };
};

describe('Correlation', () => {
  it("rewrites a later use with the target's value from the same place (URL-encoded in paths), numbers too", () => {
    const { plan, c } = correlate(har(
      entry(1, 'POST', '/items', { status: 201, body: '{"id":"item_old1","n":4242}' }, { body: '{"name":"abcd"}' }),
      entry(2, 'PATCH', '/items/item_old1', {}, { body: '{"id":"item_old1","n":4242,"name":"abcd"}' }),
    ));
    c.learnResponse(0, { headers: [], text: '{"id":"itém_new","n":5151}' });
    const parts = c.rewriteRequest(requestParts(plan.exchanges[1]!.entry.request), c.replacementsFor(1));
    assert.equal(parts.target, '/items/it%C3%A9m_new');
    assert.equal(parts.body!.text, '{"id":"itém_new","n":5151,"name":"abcd"}');
    assert.deepEqual(c.rewritten(), [{ from: { entry: '#2', path: 'body:$.id~0' }, uses: 2 }, { from: { entry: '#2', path: 'body:$.n' }, uses: 1 }]);
  });

  it('never binds a value the client sent first (an id it made up, echoed back)', () => {
    const { plan, c } = correlate(har(
      entry(1, 'PUT', '/things/client_made_1', { body: '{"id":"client_made_1"}' }),
      entry(2, 'GET', '/things/client_made_1'),
    ));
    c.learnResponse(0, { headers: [], text: '{"id":"other"}' });
    assert.equal(c.rewriteRequest(requestParts(plan.exchanges[1]!.entry.request), c.replacementsFor(1)).target, '/things/client_made_1');
  });

  it('replaces a session cookie the server set (redacted) with the one the target set, whole', () => {
    const { plan, c } = correlate(har(
      entry(1, 'POST', '/login', { headers: [['set-cookie', 'sid=<redacted:00aa11bb>; Path=/']] }),
      entry(2, 'GET', '/me', {}, { headers: [['Cookie', 'sid=<redacted:00aa11bb>']] }),
    ));
    c.learnResponse(0, { headers: [{ name: 'set-cookie', value: 'sid=new:value==; Path=/' }] });
    assert.deepEqual(c.rewriteRequest(requestParts(plan.exchanges[1]!.entry.request), c.replacementsFor(1)).headers, [['Cookie', 'sid=new:value==']]);
  });

  it('stops on a redacted client secret unless --header or replay.values supplies it', () => {
    const typed = har(entry(1, 'GET', '/x', {}, { headers: [['Authorization', 'Bearer <redacted:0123abcd>']] }));
    assert.throws(() => correlate(typed), (err) => isBbError(err) && err.code === 'BB_REPLAY_SECRET' && /header Authorization: give it with --header 'Authorization: Bearer …'/.test(err.message));
    assert.doesNotThrow(() => correlate(typed, {}, [['authorization', 'Bearer real']]));
    const login = har(entry(1, 'POST', '/login', {}, { body: '{"user":"alice","password":"<redacted:0123abcd>"}' }));
    const { plan, c } = correlate(login, { password: 'hunter2' });
    assert.equal(c.rewriteRequest(requestParts(plan.exchanges[0]!.entry.request), c.replacementsFor(0)).body!.text, '{"user":"alice","password":"hunter2"}');
    assert.doesNotThrow(() => correlate(login, { '<redacted:0123abcd>': 'hunter2' }));
  });

  it('checks client WebSocket messages for secrets too, with --no-correlate as well', () => {
    const ws = { ...entry(1, 'GET', '/ws', { status: 101 }), _resourceType: 'websocket', _webSocketMessages: [{ type: 'send' as const, time: 1767225601, opcode: 1, data: '{"type":"auth","token":"<redacted:0123abcd>"}', _bb: { seq: 3 } }] };
    for (const on of [true, false]) {
      assert.throws(() => new Correlation(planReplay(har(ws)), { correlate: on, headers: [], values: {}, file: 'cap.har' }), (err) => isBbError(err) && /client WebSocket message 1 of #2 GET \/ws .* JSON body field token/.test(err.message));
    }
    const { c } = correlate(har(ws), { token: 'real-token' });
    assert.equal(c.rewriteMessage(ws._webSocketMessages[0]!.data, c.replacementsFor(0, 0)), '{"type":"auth","token":"real-token"}');
  });

  it('checks bytes too: a JWT masked at its length in a client gRPC message or a binary WebSocket message stops the replay, unless given', () => {
    // A protobuf string field (tag 0x0a, length 25) holding a padded placeholder (capture/redact.ts secretBytes).
    const message = Buffer.concat([Buffer.from([0x0a, 25]), Buffer.from('<redacted:0123abcd~~~~~~>', 'latin1')]);
    const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
    const call = {
      ...entry(1, 'POST', '/auth.Auth/Refresh', { headers: [['content-type', 'application/grpc']] }, { headers: [['content-type', 'application/grpc']] }),
      _grpcMessages: [{ type: 'send' as const, time: 1767225601, compressed: false, data: message.toString('base64') }],
    };
    call.request.postData = { mimeType: 'application/grpc', text: framed.toString('base64'), _encoding: 'base64' } as never;
    assert.throws(() => correlate(har(call)), (err) => isBbError(err) && /client gRPC message 1 of #2 POST \/auth\.Auth\/Refresh carries a redacted value <redacted:0123abcd~~~~~~>/.test(err.message));
    assert.doesNotThrow(() => correlate(har(call), { '<redacted:0123abcd~~~~~~>': 'eyJ.real.token' }));
    const ws = { ...entry(1, 'GET', '/ws', { status: 101 }), _resourceType: 'websocket', _webSocketMessages: [{ type: 'send' as const, time: 1767225601, opcode: 2, data: message.toString('base64'), _bb: { seq: 3 } }] };
    assert.throws(() => correlate(har(ws)), (err) => isBbError(err) && /client WebSocket message 1 of #2 GET \/ws carries a redacted value/.test(err.message));
  });
});
