// bb capture's line per exchange (cli/live-log.ts), fed facts directly: what
// it prints for a failed exchange is what the client got.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { liveLog } from '../../cli/live-log.js';
import type { Fact } from '../../proxy/index.js';

function run(facts: object[]): string[] {
  const lines: string[] = [];
  const log = liveLog({ color: false, write: (l) => lines.push(l) });
  for (const f of facts) log(f as Fact);
  return lines.map((l) => l.replace(/ \d+ ms/, ' N ms'));
}

const started = { type: 'exchange-started', exchangeId: 1, time: Date.now(), method: 'GET', target: '/x' };
const failure = { code: 'ECONNRESET', message: 'reset', phase: 'response' };

describe('live log', () => {
  it("counts bb's own 502 body, which is what the client received", () => {
    const body = Buffer.from('{"error":"bb_upstream_failed","code":"ECONNREFUSED"}');
    const lines = run([started, { type: 'exchange-failed', exchangeId: 1, time: Date.now(), error: { ...failure, code: 'ECONNREFUSED' }, response: { statusCode: 502, statusMessage: 'Bad Gateway', rawHeaders: [], body } }]);
    assert.deepEqual(lines, [`#1 GET /x 502 ${body.length} B N ms (bb: ECONNREFUSED)`]);
  });

  it('keeps the status the server sent when the upstream fails after the response started', () => {
    const lines = run([
      started,
      { type: 'response-started', exchangeId: 1, time: Date.now(), statusCode: 200 },
      { type: 'response-body', exchangeId: 1, time: Date.now(), chunk: Buffer.alloc(10) },
      { type: 'exchange-failed', exchangeId: 1, time: Date.now(), error: failure },
    ]);
    assert.deepEqual(lines, ['#1 GET /x 200 10 B N ms (bb: ECONNRESET)']);
  });
});
