// The recorder writes its hottest records (qb, rb, wsm) as hand-built JSON:
// each line must be exactly what JSON.stringify writes for the record, field
// order included, whatever the optional fields and the body cap do.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FactBus, type Fact } from '../../proxy/events.js';
import { createHash } from 'node:crypto';
import { loadRedactKey, openCapture } from '../../capture/index.js';
import { RestHashing } from '../../capture/rest-hash.js';
import type { JournalRecord } from '../../capture/journal.js';
import { unfoldRecord } from '../../capture/journal-fold.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
const T = 1764625000123.4567;
const closePayload = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye "quoted" \\ \u2028 é\n')]);

describe('recorder journal lines', () => {
  it('writes qb, rb and wsm records as JSON.stringify would, byte for byte', async () => {
    // Read before close(): a clean close removes the journal once the HAR is written.
    const out = join(tmp.dir, 'lines.har');
    const capture = await openCapture({
      out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, bodyCap: 10,
    });
    const bus = new FactBus();
    bus.on(capture.listener);
    const ws = (extra: Partial<Extract<Fact, { type: 'ws-message' }>>): Fact => ({
      type: 'ws-message', exchangeId: 2, time: T + 5, direction: 'receive', opcode: 1, data: Buffer.from('hi'), frames: 1,
      compressed: false, ...extra,
    });
    const facts: Fact[] = [
      {
        type: 'exchange-started', exchangeId: 1, connectionId: 'c1', time: T, scheme: 'http', method: 'POST', target: '/',
        httpVersion: '1.1', rawHeaders: [], upstream: 'http://127.0.0.1:3001', upgrade: false,
      },
      { type: 'request-body', exchangeId: 1, time: T + 1, chunk: Buffer.from('12345678') },
      // Past the 10-byte cap: 2 of 4 recorded, then none (no "o").
      { type: 'request-body', exchangeId: 1, time: T + 2, chunk: Buffer.from('abcd') },
      { type: 'request-body', exchangeId: 1, time: T + 3, chunk: Buffer.from('efgh') },
      { type: 'response-body', exchangeId: 1, time: T + 4, chunk: Buffer.from('ok') },
      ws({ direction: 'send', opcode: 2, data: Buffer.alloc(0), frames: 3, compressed: true }),
      ws({}),
      ws({ opcode: 8, data: closePayload, closeCode: 1000, closeReason: 'bye "quoted" \\ \u2028 é\n' }),
      ws({ opcode: 8, data: Buffer.alloc(0) }),
    ];
    for (const f of facts.slice(0, 6)) bus.emit(f);
    capture.step('a "step"');
    for (const f of facts.slice(6)) bus.emit(f);
    await new Promise((r) => setImmediate(r));
    const lines = readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean);
    await capture.close();
    assert.equal(bus.listenerErrors.length, 0);

    // The request's chunks fold into its start (journal format 3, the same turn): that line is
    // JSON.stringify's text of the folded record, and unfolds to the qb records a v2 journal held.
    const start = lines.find((l) => l.startsWith('{"r":"start"'))!;
    assert.equal(start, JSON.stringify({
      r: 'start', x: 1, seq: 1, c: 'c1', ts: T, scheme: 'http', method: 'POST', target: '/', v: '1.1', h: [], up: 'http://127.0.0.1:3001', upg: false,
      qb: [{ ts: T + 1, o: 0, n: 8, w: 8 }, { ts: T + 2, o: 8, n: 2, w: 4 }, { ts: T + 3, n: 0, w: 4 }],
    }));
    const hot = lines.flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord)).filter((r) => /^(qb|rb|wsm)$/.test(r.r)).map((r) => JSON.stringify(r));
    const expected = [
      { r: 'qb', x: 1, ts: T + 1, o: 0, n: 8, w: 8 },
      { r: 'qb', x: 1, ts: T + 2, o: 8, n: 2, w: 4 },
      { r: 'qb', x: 1, ts: T + 3, n: 0, w: 4 },
      { r: 'rb', x: 1, ts: T + 4, o: 10, n: 2, w: 2 },
      { r: 'wsm', x: 2, ts: T + 5, seq: 2, d: 'send', op: 2, n: 0, w: 0, f: 3, z: true },
      { r: 'wsm', x: 2, ts: T + 5, seq: 3, d: 'receive', op: 1, o: 12, n: 2, w: 2, f: 1, z: false, page: 'page_1' },
      {
        r: 'wsm', x: 2, ts: T + 5, seq: 4, d: 'receive', op: 8, o: 14, n: 10, w: closePayload.length, f: 1, z: false, cc: 1000,
        // Cut at the cap: the rest is hashed (keyed: the capture is redacted).
        cr: 'bye "quoted" \\ \u2028 é\n', h: new RestHashing(loadRedactKey(tmp.bbHome)).value(createHash('sha256').update(closePayload.subarray(10)).digest()), page: 'page_1',
      },
      { r: 'wsm', x: 2, ts: T + 5, seq: 5, d: 'receive', op: 8, n: 0, w: 0, f: 1, z: false, page: 'page_1' },
    ];
    assert.deepEqual(hot, expected.map((r) => JSON.stringify(r)));
  });
});
