// bb capture's line per exchange (cli/live-log.ts), fed facts directly: what
// it prints for a failed exchange is what the client got. Facts' times come from
// bb's clock (core/clock.ts, monotonic), as the proxy's do: Date.now() steps
// when the system's clock is set (a CI run once saw "-4 ms").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { liveLog } from '../../cli/live-log.js';
import { now } from '../../core/index.js';
import type { Fact } from '../../proxy/index.js';

function run(facts: object[]): string[] {
  const lines: string[] = [];
  const log = liveLog({ color: false, write: (l) => lines.push(l) });
  for (const f of facts) log(f as Fact);
  return lines.map((l) => l.replace(/ \d+ ms/, ' N ms'));
}

const started = { type: 'exchange-started', exchangeId: 1, time: now(), method: 'GET', target: '/x' };
const failure = { code: 'ECONNRESET', message: 'reset', phase: 'response' };

describe('live log', () => {
  it("counts bb's own 502 body, which is what the client received", () => {
    const body = Buffer.from('{"error":"bb_upstream_failed","code":"ECONNREFUSED"}');
    const lines = run([started, { type: 'exchange-failed', exchangeId: 1, time: now(), error: { ...failure, code: 'ECONNREFUSED' }, response: { statusCode: 502, statusMessage: 'Bad Gateway', rawHeaders: [], body } }]);
    assert.deepEqual(lines, [`#1 GET /x 502 ${body.length} B N ms (bb: ECONNREFUSED)`]);
  });

  it('writes a target\'s control and bidi characters as escapes: a peer cannot colour, move or reverse the terminal\'s text', () => {
    const lines = run([{ ...started, target: '/e\u001b[31mred\u202Eyz' }, { type: 'response-started', exchangeId: 1, time: now(), statusCode: 200, rawHeaders: [] }, { type: 'exchange-completed', exchangeId: 1, time: now() }]);
    assert.deepEqual(lines, ['#1 GET /e\\u001B[31mred\\u202Eyz 200 0 B N ms']);
  });

  it('keeps the status the server sent when the upstream fails after the response started', () => {
    const lines = run([
      started,
      { type: 'response-started', exchangeId: 1, time: now(), statusCode: 200, rawHeaders: [] },
      { type: 'response-body', exchangeId: 1, time: now(), chunk: Buffer.alloc(10) },
      { type: 'exchange-failed', exchangeId: 1, time: now(), error: failure },
    ]);
    assert.deepEqual(lines, ['#1 GET /x 200 10 B N ms (bb: ECONNRESET)']);
  });

  it('names the host of a forward-mode h2 stream from :authority, as it does from Host for HTTP/1.1', () => {
    const lines: string[] = [];
    const log = liveLog({ color: false, forward: true, write: (l) => lines.push(l) });
    const h2 = ['https', [':method', 'GET', ':scheme', 'https', ':authority', 'api.test', ':path', '/x']] as const;
    const h1 = ['https', ['Host', 'api.test:8443']] as const;
    for (const [id, [scheme, rawHeaders]] of [h2, h1].entries()) {
      log({ type: 'exchange-started', exchangeId: id + 1, time: now(), scheme, method: 'GET', target: '/x', rawHeaders: [...rawHeaders], httpVersion: id ? '1.1' : '2.0' } as unknown as Fact);
      log({ type: 'response-started', exchangeId: id + 1, time: now(), statusCode: 200, rawHeaders: [] } as unknown as Fact);
      log({ type: 'exchange-completed', exchangeId: id + 1, time: now(), rawTrailers: [] } as unknown as Fact);
    }
    assert.deepEqual(lines.map((l) => l.replace(/ \d+ ms/, ' N ms')), ['#1 GET https://api.test/x 200 0 B N ms', '#2 GET https://api.test:8443/x 200 0 B N ms']);
  });

  it('says a gRPC call failed by its status, from the trailers or a trailers-only response; a call that succeeded keeps 200', () => {
    const grpcHead = ['content-type', 'application/grpc'];
    const lines = run([
      { ...started, method: 'POST' },
      { type: 'response-started', exchangeId: 1, time: now(), statusCode: 200, rawHeaders: grpcHead },
      { type: 'exchange-completed', exchangeId: 1, time: now(), rawTrailers: ['grpc-status', '5', 'grpc-message', 'no%20such%20item'] },
      { ...started, exchangeId: 2, method: 'POST' },
      { type: 'response-started', exchangeId: 2, time: now(), statusCode: 200, rawHeaders: [...grpcHead, 'grpc-status', '16'] },
      { type: 'exchange-completed', exchangeId: 2, time: now(), rawTrailers: [] },
      { ...started, exchangeId: 3, method: 'POST' },
      { type: 'response-started', exchangeId: 3, time: now(), statusCode: 200, rawHeaders: grpcHead },
      { type: 'exchange-completed', exchangeId: 3, time: now(), rawTrailers: ['grpc-status', '0'] },
      // Not gRPC: a grpc-status trailer means nothing to the log.
      { ...started, exchangeId: 4 },
      { type: 'response-started', exchangeId: 4, time: now(), statusCode: 200, rawHeaders: [] },
      { type: 'exchange-completed', exchangeId: 4, time: now(), rawTrailers: ['grpc-status', '5'] },
    ]);
    assert.deepEqual(lines, ['#1 POST /x grpc 5 NOT_FOUND 0 B N ms', '#2 POST /x grpc 16 UNAUTHENTICATED 0 B N ms', '#3 POST /x 200 0 B N ms', '#4 GET /x 200 0 B N ms']);
  });
});
