// `bb frames --follow` tails a capture journal (format: capture/journal.ts) as it grows,
// and ends when the journal goes away (a clean stop renames it into the HAR).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { har, wsEntry } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
const ts = Date.parse('2024-05-01T10:00:00.000Z');

/** Writes journal + bodies the way capture's JournalAppender lays them out. */
class FakeJournal {
  constructor(readonly out: string) {
    writeFileSync(`${out}.bodies`, '');
    writeFileSync(`${out}.journal`, '');
  }
  record(rec: Record<string, unknown>): void {
    appendFileSync(`${this.out}.journal`, JSON.stringify(rec) + '\n');
  }
  body(bytes: Buffer): { o: number; n: number; w: number } {
    const o = statSync(`${this.out}.bodies`).size;
    appendFileSync(`${this.out}.bodies`, bytes);
    return { o, n: bytes.length, w: bytes.length };
  }
  message(x: number, seq: number, d: 'send' | 'receive', op: number, payload: Buffer, extra: Record<string, unknown> = {}): void {
    this.record({ r: 'wsm', x, ts: ts + seq, seq, d, op, ...this.body(payload), f: 1, z: false, ...extra });
  }
}

/** The whole lines bb has printed so far (a line still being written is not one yet). */
function lines(bb: BbProcess): { readonly all: string[]; until(n: number): Promise<void> } {
  const whole = () => bb.stdout().split('\n').slice(0, -1);
  return {
    get all() {
      return whole();
    },
    async until(n) {
      for (let i = 0; i < 300 && whole().length < n; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(whole().length >= n, `expected ${n} lines, got ${JSON.stringify(whole())}`);
    },
  };
}

describe('bb frames --follow', () => {
  it('prints what is journaled, then each message as it arrives, one JSON object per line', async () => {
    const tmp = tempDir();
    const out = join(tmp.dir, 'live.har');
    const j = new FakeJournal(out);
    j.record({ r: 'bb-journal', v: 1, label: 'new', target: 'http://127.0.0.1:3000', listen: 'http://127.0.0.1:4000', startedDateTime: new Date(ts).toISOString(), bodyCap: 1024, redact: false, creator: { name: 'bb', version: '0' } });
    j.record({ r: 'start', x: 1, seq: 1, c: 'c1', ts, scheme: 'http', method: 'GET', target: '/chat', v: '1.1', h: ['Host', '127.0.0.1:4000', 'Upgrade', 'websocket'], up: 'http://127.0.0.1:3000', upg: true });
    j.record({ r: 'upg', x: 1, ts: ts + 1, st: 101, sm: 'Switching Protocols', v: '1.1', h: ['Upgrade', 'websocket'] });
    j.message(1, 2, 'send', 1, Buffer.from('hello'));

    const child = startBb(['frames', out, '--follow', '--json']);
    const got = lines(child);
    await got.until(1);
    j.message(1, 3, 'receive', 2, Buffer.from([0, 255]));
    j.record({ r: 'wse', x: 1, ts: ts + 4, seq: 4, d: 'receive', code: 'WS_ERR_INVALID_OPCODE', msg: 'Invalid WebSocket frame: invalid opcode 3' });
    // A torn line (no newline yet) waits for the rest.
    const close = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')]);
    const slice = j.body(close);
    const closeLine = JSON.stringify({ r: 'wsm', x: 1, ts: ts + 5, seq: 5, d: 'send', op: 8, ...slice, f: 1, z: false, cc: 1000, cr: 'bye' });
    appendFileSync(`${out}.journal`, closeLine.slice(0, 20));
    await got.until(3);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(got.all.length, 3, 'the torn line is not printed yet');
    appendFileSync(`${out}.journal`, closeLine.slice(20) + '\n');
    await got.until(4);
    // The clean stop: the journal goes away, following ends.
    rmSync(`${out}.journal`);
    assert.equal(await child.exited, 0);

    const objects = got.all.map((l) => JSON.parse(l));
    assert.deepEqual(objects.map((o) => [o.kind, o.connection, o.url, o.message.type, o.message.opcode, o.message.data]), [
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'send', 1, 'hello'],
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'receive', 2, 'AP8='],
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'error', -1, 'Invalid WebSocket frame: invalid opcode 3'],
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'send', 8, close.toString('base64')],
    ]);
    assert.deepEqual(objects[3].message._bb, { seq: 5, frames: 1, compressed: false, code: 1000, reason: 'bye' });
    assert.equal(objects[0].message.time, (ts + 2) / 1000);
  });

  it('prints text lines with filters, HTTP entries with --timeline, and stops on SIGINT', async () => {
    const tmp = tempDir();
    const out = join(tmp.dir, 'live.har');
    const j = new FakeJournal(out);
    j.record({ r: 'bb-journal', v: 1, label: 'x', target: 'http://127.0.0.1:3000', listen: 'http://127.0.0.1:4000', startedDateTime: new Date(ts).toISOString(), bodyCap: 1024, redact: false, creator: { name: 'bb', version: '0' } });
    j.record({ r: 'start', x: 1, seq: 1, c: 'c1', ts, scheme: 'http', method: 'GET', target: '/ws', v: '1.1', h: ['Host', 'h.test'], up: 'http://127.0.0.1:3000', upg: true });
    j.message(1, 2, 'send', 1, Buffer.from('keep me'));
    j.message(1, 3, 'send', 1, Buffer.from('drop me'));
    j.record({ r: 'start', x: 2, seq: 4, c: 'c2', ts: ts + 4, scheme: 'http', method: 'POST', target: '/api', v: '1.1', h: ['Host', 'h.test'], up: 'http://127.0.0.1:3000', upg: false });
    j.record({ r: 'rs', x: 2, ts: ts + 5, st: 201, sm: 'Created', v: '1.1', h: [] });
    j.record({ r: 'done', x: 2, ts: ts + 6, seq: 5, tr: [] });
    const child = startBb(['frames', out, '--follow', '--timeline', '--grep', 'keep'], { COLUMNS: '100' });
    const got = lines(child);
    await got.until(4);
    child.child.kill('SIGINT');
    assert.equal(await child.exited, 0);
    assert.equal(got.all.length, 4);
    assert.match(got.all[3]!, /^ +5 #4 +\+0\.006s ◀ http 201 POST http:\/\/h\.test\/api$/);
    assert.match(got.all[0]!, /^ +1 #1 +\+0\.000s ▶ http GET http:\/\/h\.test\/ws$/);
    assert.match(got.all[1]!, /^ +2 c1 +\+0\.002s → text +7B {2}keep me$/);
    assert.match(got.all[2]!, /^ +4 #4 +\+0\.004s ▶ http POST http:\/\/h\.test\/api$/);
  });

  it('prints the finished HAR when the capture has already stopped, and refuses a path with neither', async () => {
    const tmp = tempDir();
    const none = startBb(['frames', join(tmp.dir, 'nothing.har'), '--follow']);
    assert.equal(await none.exited, 2);
    assert.match(none.stderr(), /^bb: no running capture at .*nothing\.har/);
    const done = await tmp.write('done.har', har([wsEntry('ws://h.test/x', '2024-05-01T10:00:00.000Z', [{ type: 'send', time: ts / 1000, opcode: 1, data: 'over' }])]));
    const finished = startBb(['frames', done, '--follow']);
    const got = lines(finished);
    assert.equal(await finished.exited, 0);
    assert.match(got.all[0]!, /^connection 0 {2}#0 {2}ws:\/\/h\.test\/x/);
    assert.match(got.all[1]!, /→ text +4B {2}over$/);
  });
});
