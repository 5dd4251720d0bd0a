// The journal on disk: crash safety, recovery of torn records, refusals,
// owner-only files, finalizing many exchanges, and recording failures.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FactBus, type Fact } from '../../proxy/events.js';
import { loadRedactKey, openCapture, recoverCapture, Redactor } from '../../capture/index.js';
import { parseJournalLine, type HeaderRecord, type JournalRecord } from '../../capture/journal.js';
import { unfoldRecord } from '../../capture/journal-fold.js';
import type { Har } from '../../capture/har.js';
import { assertValidHar } from '../helpers/har-schema.js';
import { exchange } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';

const tmp = tempDir();
let n = 0;
const base = () => ({ label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome });
const fresh = () => join(tmp.dir, `j${++n}.har`);
const readHar = async (path: string) => {
  const har = JSON.parse(await readFile(path, 'utf8')) as Har;
  assertValidHar(har);
  return har;
};

describe('journal', () => {
  it('has the completion record on disk as soon as exchange-completed is delivered', async () => {
    const out = fresh();
    const capture = await openCapture({ ...base(), out });
    const bus = new FactBus();
    bus.on(capture.listener);
    const facts = exchange({ id: 1, status: 200, resHeaders: ['Content-Type', 'text/plain'], resBody: [Buffer.from('seen by the client')] });
    for (const f of facts) bus.emit(f);
    // No await since the last fact: what a SIGKILL now would leave behind.
    const lines = readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).map(parseJournalLine);
    assert.equal(lines[0]?.r, 'bb-journal');
    // Folded (format 3): the start carries its request's end, the response start its body chunk and done.
    assert.deepEqual(lines.map((l) => l?.r), ['bb-journal', 'start', 'rs']);
    assert.deepEqual(lines.slice(1).flatMap((l) => unfoldRecord(l as JournalRecord)).map((l) => l.r), ['start', 'qe', 'rs', 'rb', 'done']);
    // The sidecar is sealed (redaction is on): the bytes are on disk, readable with the bb home's key only.
    const seal = new Redactor(loadRedactKey(tmp.bbHome)).bodySeal((lines[0] as HeaderRecord).seal!);
    assert.notEqual(readFileSync(`${out}.bodies`, 'utf8'), 'seen by the client');
    assert.equal(seal.apply(readFileSync(`${out}.bodies`), 0).toString('utf8'), 'seen by the client');
    await capture.close();
  });

  it('recovers a killed capture, dropping and counting a torn last record', async () => {
    const out = fresh();
    const capture = await openCapture({ ...base(), out });
    const bus = new FactBus();
    bus.on(capture.listener);
    for (let i = 0; i < 5; i++) for (const f of exchange({ id: 10 + i, target: `/n/${i}`, status: 200, resHeaders: [], resBody: [Buffer.from(`body ${i}`)] })) bus.emit(f);
    // One more still under way when the process "dies".
    for (const f of exchange({ id: 20, target: '/open', status: 200, resHeaders: [], resBody: [Buffer.from('half')], end: 'none' })) bus.emit(f);
    await new Promise((r) => setImmediate(r));
    // Snapshot the files as a SIGKILL would leave them, plus half a record.
    const crashed = fresh();
    copyFileSync(`${out}.journal`, `${crashed}.journal`);
    copyFileSync(`${out}.bodies`, `${crashed}.bodies`);
    appendFileSync(`${crashed}.journal`, '{"r":"start","x":99,"seq":');
    await capture.close();

    const result = await recoverCapture(`${crashed}.journal`);
    assert.deepEqual(result, { out: crashed, entries: 6, dropped: 1, open: 1 });
    const har = await readHar(crashed);
    assert.equal(har.log._bb?.complete, false);
    assert.deepEqual(har.log._bb?.recovered, { droppedRecords: 1, openExchanges: 1 });
    assert.deepEqual(har.log.entries.map((e) => new URL(e.request.url).pathname), ['/n/0', '/n/1', '/n/2', '/n/3', '/n/4', '/open']);
    assert.deepEqual(har.log.entries.slice(0, 5).map((e) => e.response.content.text), ['body 0', 'body 1', 'body 2', 'body 3', 'body 4']);
    assert.equal(har.log.entries[5]!._bb?.inFlight, true);
    assert.equal(existsSync(`${crashed}.journal`), false);
    assert.equal(existsSync(`${crashed}.bodies`), false);
  });

  it('refuses to recover without a journal, or over an existing HAR unless forced', async () => {
    const out = fresh();
    await assert.rejects(recoverCapture(out), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'BB_JOURNAL_MISSING');
      assert.ok(isBbError(err), String(err));
      assert.equal(exitStatusFor(err), 2);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    writeFileSync(out, 'keep me');
    writeFileSync(`${out}.journal`, JSON.stringify({ r: 'bb-journal', v: 1, label: 'l', target: 't', listen: 'http://127.0.0.1:1', startedDateTime: new Date().toISOString(), bodyCap: 10, redact: false, creator: { name: 'bb', version: '0' } }) + '\n');
    await assert.rejects(recoverCapture(out), { code: 'BB_OUT_EXISTS' });
    assert.equal(readFileSync(out, 'utf8'), 'keep me');
    const result = await recoverCapture(out, { force: true });
    assert.equal(result.entries, 0);
    assert.equal((await readHar(out)).log._bb?.complete, false);
  });

  it('refuses to overwrite a HAR without force, and to start over a leftover journal', async () => {
    const out = fresh();
    writeFileSync(out, 'precious');
    await assert.rejects(openCapture({ ...base(), out }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'BB_OUT_EXISTS');
      assert.ok(isBbError(err), String(err));
      assert.equal(exitStatusFor(err), 2);
      return true;
    });
    assert.equal(readFileSync(out, 'utf8'), 'precious');
    writeFileSync(`${out}.journal`, '');
    for (const force of [false, true]) {
      await assert.rejects(openCapture({ ...base(), out, force }), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'BB_JOURNAL_LEFTOVER');
        assert.ok(isBbError(err), String(err));
        assert.equal(exitStatusFor(err), 2);
        assert.match(err.message, /bb recover /);
        return true;
      });
    }
    assert.equal(readFileSync(out, 'utf8'), 'precious');
  });

  it('overwrites with force, creates every file owner-only, and removes the journal at close', async () => {
    const out = fresh();
    writeFileSync(out, 'old', { mode: 0o644 });
    const capture = await openCapture({ ...base(), out, force: true });
    assert.equal(statSync(`${out}.journal`).mode & 0o777, 0o600);
    assert.equal(statSync(`${out}.bodies`).mode & 0o777, 0o600);
    const bus = new FactBus();
    bus.on(capture.listener);
    for (const f of exchange({ status: 200, resHeaders: [] })) bus.emit(f);
    const [a, b] = [capture.close(), capture.close()];
    assert.equal(await a, out);
    assert.equal(await b, out);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.equal(existsSync(`${out}.journal`), false);
    assert.equal(existsSync(`${out}.bodies`), false);
    assert.equal(existsSync(`${out}.tmp`), false);
    assert.equal((await readHar(out)).log.entries.length, 1);
  });

  it('finalizes a journal of many interleaved exchanges entry by entry', async () => {
    const out = fresh();
    const capture = await openCapture({ ...base(), out, serverHome: '/home/srv' });
    const bus = new FactBus();
    bus.on(capture.listener);
    const total = 3000;
    const width = 16;
    // Run `width` exchanges at a time, their facts interleaved round-robin.
    for (let first = 0; first < total; first += width) {
      const group: Fact[][] = [];
      for (let i = first; i < Math.min(total, first + width); i++) {
        group.push(exchange({
          id: 1000 + i, connectionId: `c${i % width}`, target: `/item/${i}`, status: 200,
          resHeaders: ['Content-Type', 'application/json'], resBody: [Buffer.from(`{"i":${i},`), Buffer.from(`"pad":"${'x'.repeat(i % 200)}"}`)],
        }));
      }
      for (let step = 0; group.some((g) => step < g.length); step++) for (const g of group) if (step < g.length) bus.emit(g[step]!);
      if (first % 512 === 0) await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(capture.stats(), { entries: total, webSocketMessages: 0, inFlight: 0, recordingErrors: 0, pages: 0 });
    await capture.close();
    const har = await readHar(out);
    assert.equal(har.log.entries.length, total);
    assert.deepEqual(har.log._bb?.counts, { entries: total, webSocketMessages: 0 });
    assert.equal(har.log._bb?.serverHome, '/home/srv');
    for (const e of har.log.entries) {
      const i = Number(new URL(e.request.url).pathname.split('/')[2]);
      assert.deepEqual(JSON.parse(e.response.content.text!), { i, pad: 'x'.repeat(i % 200) });
    }
    const seqs = har.log.entries.map((e) => e._bb!.seq);
    assert.equal(new Set(seqs).size, total);
  });

  it('keeps taking facts when its folder is removed, and says at close where the journal was', async () => {
    const folder = join(tmp.dir, `gone${++n}`);
    const out = join(folder, 'x.har');
    const capture = await openCapture({ ...base(), out });
    const bus = new FactBus();
    bus.on(capture.listener);
    rmSync(folder, { recursive: true });
    for (const f of exchange({ status: 200, resHeaders: [], resBody: [Buffer.from('b')] })) bus.emit(f);
    assert.equal(bus.listenerErrors.length, 0);
    await assert.rejects(capture.close(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'BB_CAPTURE_FINALIZE');
      assert.match(err.message, /bb recover /);
      return true;
    });
  });

  it('reports failing writes through onError and keeps taking facts', async () => {
    // Body bytes land past a file-size limit (EFBIG), in a child under `ulimit -f 16` (8 KiB): the 64 KiB
    // bodies cannot land, the journal's lines can. (A symlink to /dev/full no longer works: bb replaces a
    // symlink at the sidecar's path instead of writing through it, issue 34.)
    const out = fresh();
    const script = join(tmp.dir, `efbig${n}.mjs`);
    writeFileSync(script, `
      const [root, out, home] = process.argv.slice(2);
      const { openCapture } = await import(root + '/capture/index.ts');
      const { FactBus } = await import(root + '/proxy/events.ts');
      const { exchange } = await import(root + '/test/capture/capture-harness.ts');
      const errors = [];
      const capture = await openCapture({ label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: home, out, onError: (e) => errors.push(e.code) });
      const bus = new FactBus();
      bus.on(capture.listener);
      for (let i = 0; i < 3; i++) for (const f of exchange({ target: '/f/' + i, status: 200, resHeaders: [], resBody: [Buffer.alloc(64 * 1024, 'x')] })) bus.emit(f);
      process.stdout.write(JSON.stringify({ errors, listenerErrors: bus.listenerErrors.length, stats: capture.stats() }));
    `);
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const child = spawnSync('sh', ['-c', 'ulimit -f 16; exec "$0" --import tsx "$@"', process.execPath, script, root, out, tmp.bbHome], { cwd: root, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const { errors, listenerErrors, stats } = JSON.parse(child.stdout) as { errors: string[]; listenerErrors: number; stats: { recordingErrors: number; entries: number } };
    assert.equal(listenerErrors, 0);
    assert.deepEqual(errors, ['EFBIG', 'EFBIG', 'EFBIG'], 'onError once per body that could not land');
    assert.equal(stats.recordingErrors, errors.length);
    assert.equal(stats.entries, 3);
    // The journal's lines landed: bb recover writes every exchange, the lost bodies noted.
    await recoverCapture(out);
    const har = await readHar(out);
    assert.equal(har.log.entries.length, 3);
  });
});

// One loop turn can carry hundreds of thousands of records: libuv reads a
// socket up to 32 times a turn (2 MB), 700,000 one-byte WebSocket messages.
// The journal held their lines, the views of their bytes and a live view's
// records until the turn's end (a capture of 3M such messages peaked at
// 460 MB, 650 MB with --ui). It now writes once a turn has queued 1 MiB of
// lines or 16,384 bodies, so what waits for the turn's end stays bounded.
const FLOOD_T = 1764625000123.25;
const MESSAGES = 60_000;

describe('a turn of many records', () => {
  it('is written as it goes, not only at the turn\'s end, and the live view follows it', async () => {
    const out = join(tmp.dir, 'flood.har');
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome });
    const live = capture.live();
    const bus = new FactBus();
    bus.on(capture.listener);
    const sock = () => new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
    bus.emit({ type: 'exchange-started', exchangeId: 1, connectionId: 'c1', time: FLOOD_T, scheme: 'http', method: 'GET', target: '/feed', httpVersion: '1.1', rawHeaders: ['Upgrade', 'websocket'], upstream: 'http://127.0.0.1:3001', upgrade: true } as Fact);
    bus.emit({ type: 'request-ended', exchangeId: 1, time: FLOOD_T, rawTrailers: [] });
    bus.emit({ type: 'upgrade-opened', exchangeId: 1, time: FLOOD_T + 1, statusCode: 101, statusMessage: 'Switching Protocols', httpVersion: '1.1', rawHeaders: ['Upgrade', 'websocket'], client: sock(), upstream: sock() });
    // All in this one turn, as a socket's reads of one turn would bring them.
    for (let i = 0; i < MESSAGES; i++) {
      bus.emit({ type: 'ws-message', exchangeId: 1, time: FLOOD_T + 2 + i / 1000, direction: 'receive', opcode: 1, data: Buffer.from(String(i % 10)), frames: 1, compressed: false });
    }
    const lines = readFileSync(`${out}.journal`, 'utf8').split('\n').filter((l) => l.startsWith('{"r":"wsm"'));
    // Written at least every 16,384 messages (their bodies) within the turn; before, none until it ended.
    assert.ok(lines.length >= MESSAGES - 16_384, `${lines.length} of ${MESSAGES} messages in the journal within the turn`);
    assert.ok(statSync(`${out}.bodies`).size >= lines.length, 'their bytes before them');
    assert.ok(live.rows()[0]!.messages >= MESSAGES - 16_384, 'the live view is told as the lines are written');
    await new Promise((r) => setImmediate(r));
    await capture.close();
    assert.equal(bus.listenerErrors.length, 0);
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    const messages = har.log.entries[0]!._webSocketMessages!;
    assert.equal(messages.length, MESSAGES);
    assert.deepEqual(messages.slice(0, 12).map((m) => m.data), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '1']);
  });
});
