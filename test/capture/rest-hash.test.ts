// The hash of what the body cap did not keep (capture/rest-hash.ts): literal
// facts through a capture with a 4-byte cap, the HAR written and the one
// `bb recover` writes from the journal alone carry the same `_bb.restHash`;
// a body under the cap is never hashed; with redaction on the value is keyed.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FactBus, type Fact } from '../../proxy/events.js';
import { openCapture, recoverCapture } from '../../capture/index.js';
import { RestHashing, restHashScheme } from '../../capture/rest-hash.js';
import type { Har } from '../../capture/har.js';
import { exchange, recordFacts, TEST_T0 } from './capture-harness.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir(cleanups);
const sha = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

/** An exchange whose bodies cross in pieces, then a WebSocket connection with one message cut by the tap and one by the cap. */
function facts(): Fact[] {
  const ws: Fact[] = [
    ...exchange({ id: 90, target: '/ws', status: 101, end: 'none' }).filter((f) => f.type !== 'response-started'),
    { type: 'upgrade-opened', exchangeId: 90, time: TEST_T0 + 10, statusCode: 101, statusMessage: 'Switching Protocols', httpVersion: '1.1', rawHeaders: [] },
    // The tap kept 4 bytes of "abcdefgh" and hashed the rest itself.
    { type: 'ws-message', exchangeId: 90, time: TEST_T0 + 11, direction: 'receive', opcode: 2, data: Buffer.from('abcd'), size: 8, restSha256: createHash('sha256').update('efgh').digest(), frames: 1, compressed: false },
    // The tap kept it whole; the cap cuts it.
    { type: 'ws-message', exchangeId: 90, time: TEST_T0 + 12, direction: 'send', opcode: 1, data: Buffer.from('123456'), frames: 1, compressed: false },
    { type: 'ws-message', exchangeId: 90, time: TEST_T0 + 13, direction: 'send', opcode: 1, data: Buffer.from('ok'), frames: 1, compressed: false },
    { type: 'upgrade-closed', exchangeId: 90, time: TEST_T0 + 14, by: 'client', code: 1000, reason: '' },
  ];
  return [
    ...exchange({ id: 1, method: 'POST', target: '/up', reqBody: [Buffer.from('12'), Buffer.from('3456'), Buffer.from('78')], status: 200, resBody: [Buffer.from('abcdef'), Buffer.from('ghij')] }),
    ...exchange({ id: 2, target: '/small', status: 200, resBody: [Buffer.from('abc')] }),
    ...ws,
  ];
}

describe('rest hash', () => {
  it('hashes only the bytes past the cap, of request, response and messages, and bb recover carries it', async () => {
    const dir = tmp.path('plain');
    const bbHome = join(dir, 'home');
    const out = join(dir, 'cap.har');
    const bus = new FactBus();
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome, bodyCap: 4, redact: false });
    bus.on(capture.listener);
    for (const f of facts()) bus.emit(f);
    // The journal as a kill -9 would leave it, recovered alone.
    await new Promise((r) => setImmediate(r));
    await copyFile(`${out}.journal`, join(dir, 'killed.har.journal'));
    await copyFile(`${out}.bodies`, join(dir, 'killed.har.bodies'));
    await capture.close();
    const journal = await readFile(join(dir, 'killed.har.journal'), 'utf8');
    assert.equal(journal.split('\n').filter((l) => l.includes('"r":"rest"')).length, 2, 'one record per cut body, none for the small one');
    await recoverCapture(join(dir, 'killed.har'), { bbHome });

    for (const file of [out, join(dir, 'killed.har')]) {
      const har = JSON.parse(await readFile(file, 'utf8')) as Har;
      const [up, small, ws] = har.log.entries.sort((a, b) => a._bb!.seq - b._bb!.seq);
      assert.deepEqual(up!._bb?.truncated, { request: 4, response: 4 }, file);
      assert.deepEqual(up!._bb?.restHash, { request: sha('5678'), response: sha('efghij') }, file);
      assert.equal(small!._bb?.restHash, undefined);
      const msgs = ws!._webSocketMessages!;
      assert.deepEqual(msgs.map((m) => m._bb?.restHash), [sha('efgh'), sha('56'), undefined], file);
    }
  });

  it('is keyed with redaction on: the same bytes give one value under one key, and the key is named', async () => {
    const home = tmp.path('keyed-home');
    const run = async (name: string) => recordFacts(tmp.path(name), home, exchange({ target: '/late', status: 200, resBody: [Buffer.from('abcdefgh')] }), { bodyCap: 4, name });
    const [a, b] = [await run('a'), await run('b')];
    const value = a.log.entries[0]!._bb?.restHash?.response ?? '';
    assert.match(value, /^hmac-sha256:[0-9a-f]{8}:[0-9a-f]{64}$/);
    assert.equal(b.log.entries[0]!._bb?.restHash?.response, value);
    assert.ok(!value.endsWith(createHash('sha256').update('efgh').digest('hex')), 'not the plain digest');
    const other = new RestHashing(Buffer.alloc(32, 7)).value(createHash('sha256').update('efgh').digest());
    assert.notEqual(restHashScheme(other), restHashScheme(value), 'another key: another scheme, never compared');
    assert.equal(restHashScheme(sha('x')), 'sha256');
  });
});
