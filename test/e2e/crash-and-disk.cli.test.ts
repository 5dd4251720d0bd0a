// Recording failures and crashes, with the real `bb capture` as a child
// process: the disk fills (a file-size limit on the child, so writes fail
// with EFBIG as they would with ENOSPC), the capture folder disappears, and
// bb is SIGKILLed under heavy traffic and under random concurrent traffic. The proxy keeps serving, says loudly
// that recording failed, the journal so far stays readable, and `bb recover`
// gets back every exchange the clients saw complete.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import type { Har } from '../../capture/har.js';
import type { JournalRecord } from '../../capture/journal.js';
import { unfoldRecord } from '../../capture/journal-fold.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { get, record, waitUntil } from '../helpers/recording.js';
import { isBbError, mulberry32 } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';
import { walk, walkH2 } from '../helpers/random-walk.js';
import { startShadowService } from '../scenario/shadow/service.js';

/** The body the upstream sends for /item/<id>: checkable by the client and in the HAR. */
const bodyFor = (id: string, size: number): string => `${id}:`.padEnd(size, id.slice(-1) || 'x');

/** Starts `bb capture --quiet` as a child; `fileBlocks` limits the size of each file it writes. */
async function startCaptureChild(args: string[], env: NodeJS.ProcessEnv, fileBlocks?: number): Promise<BbProcess & { url: string }> {
  // `ulimit -f` (512-byte blocks) makes writes past the limit fail with EFBIG, like a full disk.
  const bb = startBb(['capture', '--quiet', ...args], env, fileBlocks === undefined ? {} : { sh: `ulimit -f ${fileBlocks}` });
  await bb.waitFor(/-> http/, 30_000).catch(() => undefined);
  const m = /(http:\/\/127\.0\.0\.1:\d+) -> /.exec(bb.stdout());
  assert.ok(m, `bb capture did not start: ${bb.stdout()} ${bb.stderr()}`);
  return Object.assign(bb, { url: m[1]! });
}

describe('recording failures and crashes of bb capture', () => {
  const cleanups = new Cleanups();
  let target: string;

  before(async () => {
    // /item/<id>?size=N answers N bytes; /stall never answers.
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/stall') return;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = url.pathname.split('/').pop() ?? '';
        const body = bodyFor(id, Number(url.searchParams.get('size') ?? 64));
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body), 'X-Got': String(Buffer.concat(chunks).length) });
        res.end(body);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.add(() => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    });
    target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => cleanups.run());

  it('keeps serving when the disk fills, says so loudly, and keeps the journal readable for bb recover', async () => {
    const dir = tempDir(cleanups).dir;
    const out = join(dir, 'cap.har');
    const env = { BB_HOME: join(dir, 'home') };
    // 384 KiB per file: the bodies file fills after ~24 of the 16 KiB bodies; the journal never does.
    const bb1 = await startCaptureChild(['--target', target, '--out', out, '--upstream-timeout', '300'], env, 768);
    const port = Number(new URL(bb1.url).port);
    const ids = Array.from({ length: 60 }, (_, i) => `full${i}`);
    for (const id of ids) {
      const r = await get(port, `/item/${id}?size=16384`);
      assert.equal(r.status, 200);
      assert.equal(r.body, bodyFor(id, 16384), `the client got all of ${id} although recording failed`);
    }
    // --upstream-timeout from the command line: a 502 after ~300 ms.
    const stalled = await get(port, '/stall');
    assert.equal(stalled.status, 502);
    assert.match(stalled.body, /BB_UPSTREAM_TIMEOUT/);
    assert.match(bb1.stderr(), /RECORDING FAILED/);
    // The journal so far: every line whole, every exchange there.
    // Folded lines (journal format 3) unfold to the records they stand for: a response start carries its done.
    const lines = (await readFile(`${out}.journal`, 'utf8')).split('\n').filter(Boolean).flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord));
    assert.equal(lines.filter((r) => r.r === 'done').length, ids.length);
    bb1.child.kill('SIGTERM');
    const code = await bb1.exited;
    // Writing the HAR hits the same limit: bb says where the journal is and exits non-zero, journal kept.
    assert.notEqual(code, 0, 'recording failures are not a success');
    assert.ok(existsSync(`${out}.journal`) || existsSync(out), 'the recording is kept somewhere');
    if (!existsSync(out)) {
      assert.match(bb1.stderr(), /bb recover/);
      const rec = await runBb(['recover', out], env);
      assert.equal(rec.code, 0, rec.stderr);
    }
    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    const recorded = har.log.entries.filter((e) => e.request.url.includes('/item/full'));
    assert.equal(recorded.length, ids.length, 'every exchange has an entry');
    assert.ok(recorded.every((e) => e.response.status === 200));
    const lost = recorded.filter((e) => e.response.content.text !== bodyFor(new URL(e.request.url).pathname.split('/').pop()!, 16384));
    assert.ok(lost.length > 0, 'some bodies could not be recorded (the disk was full)');
    assert.ok(lost.length < ids.length, 'the bodies written before the disk filled are intact');
  });

  it('keeps serving when the capture folder is removed, and the close says what failed', async () => {
    const root = tempDir(cleanups).dir;
    const errors: Error[] = [];
    const rec = await record(cleanups, target, { out: join(root, 'gone', 'cap.har'), onRecordingError: (e) => errors.push(e) });
    for (let i = 0; i < 5; i++) assert.equal((await get(rec.port, `/item/before${i}`)).status, 200);
    await rm(join(root, 'gone'), { recursive: true, force: true });
    for (let i = 0; i < 5; i++) {
      const r = await get(rec.port, `/item/after${i}`);
      assert.deepEqual(r, { status: 200, body: bodyFor(`after${i}`, 64) });
    }
    await assert.rejects(rec.cap.close(0), (err: Error) => {
      assert.ok(isBbError(err), String(err));
      assert.ok(isBbError(err), String(err));
      assert.equal(exitStatusFor(err), 2);
      assert.doesNotMatch(err.message, /\n/);
      assert.match(err.message, /cap\.har/);
      return true;
    });
  });

  it('recovers after SIGKILL under heavy traffic every exchange the clients saw complete', async () => {
    const dir = tempDir(cleanups).dir;
    const out = join(dir, 'killed.har');
    const env = { BB_HOME: join(dir, 'home') };
    const child = await startCaptureChild(['--target', target, '--out', out], env);
    const port = Number(new URL(child.url).port);
    const completed = new Set<string>();
    let killed = false;
    // 16 keep-alive clients, GETs and POSTs of mixed sizes, until the kill.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    cleanups.add(() => agent.destroy());
    const one = (id: string, size: number, post: boolean) =>
      new Promise<void>((resolve) => {
        const req = http.request({ host: '127.0.0.1', port, agent, method: post ? 'POST' : 'GET', path: `/item/${id}?size=${size}` }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => {
            if (res.statusCode === 200 && body === bodyFor(id, size)) completed.add(id);
            resolve();
          });
          res.on('error', () => resolve());
          res.on('aborted', () => resolve());
        });
        req.on('error', () => resolve());
        req.end(post ? 'x'.repeat(size % 5000) : undefined);
      });
    const loops = Array.from({ length: 16 }, async (_, w) => {
      for (let n = 0; !killed && n < 5000; n++) await one(`k${w}-${n}`, [64, 2000, 70_000][n % 3]!, n % 4 === 1);
    });
    await waitUntil(() => completed.size >= 400, 'traffic to build up', 60_000);
    child.child.kill('SIGKILL');
    killed = true;
    await Promise.all(loops);
    assert.equal(await child.exited, 137);
    const seen = new Set(completed);
    const rec = await runBb(['recover', out], env);
    assert.equal(rec.code, 0, rec.stderr);
    assert.match(rec.stdout, /recovered \d+ exchange/);
    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    assert.equal(har.log._bb?.complete, false);
    const byId = new Map(har.log.entries.map((e) => [new URL(e.request.url).pathname.split('/').pop()!, e]));
    const missing = [...seen].filter((id) => {
      const e = byId.get(id);
      const size = Number(new URL(e?.request.url ?? 'http://x/?size=0').searchParams.get('size'));
      return !e || e.response.status !== 200 || e._bb?.inFlight || e.response.content.text !== bodyFor(id, size);
    });
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${seen.size} completed exchanges are not in the recovered HAR`);
    assert.ok(seen.size >= 400);
  });
});

// The same rule under the random concurrent traffic of random-traffic.test.ts (logins, issued ids read back,
// orders, event streams read in part, chats), over HTTP/1.1 and over h2: whatever moment the kill lands, every
// exchange a client read whole is in what bb recover writes. A stream's events and a socket's messages are
// journaled in the loop turn they cross in, not before the client may read them (docs/capture.md "What the proxy guarantees"):
// what a client's walk read of streams after its last exchange may be missing (CI once killed bb between an echo's
// write and its turn's journal write); everything it read before that exchange must be there (bb answered that
// exchange in a later turn, whose start means the turn of every earlier read was written).
describe('bb capture SIGKILLed under random concurrent traffic', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  // Killed once the clients saw that many things complete (a time would mean less on a loaded machine).
  for (const [protocol, seed, killAt] of [['HTTP/1.1', 1, 40], ['HTTP/1.1', 2, 120], ['h2', 3, 40], ['h2', 4, 120]] as const) {
    it(`${protocol}, killed after ${killAt} things seen: bb recover gets back all that each client saw complete`, async () => {
      const service = await startShadowService('old', 1000, { h2c: protocol === 'h2' });
      cleanups.add(() => service.close());
      const dir = tempDir(cleanups).dir;
      const out = join(dir, 'killed.har');
      const env = { BB_HOME: join(dir, 'home') };
      const bb = await startCaptureChild(['--target', service.url, '--out', out], env);
      const seen: Array<[string, string, number]> = [];
      const opts = { seen: (user: string, what: string) => seen.push([user, what, performance.now()]) };
      // Bounded walks (40 steps each); after the kill each ends at its first failed call.
      const walks = [1, 2, 3, 4, 5, 6].map((user) => (protocol === 'h2' ? walkH2(bb.url, user, mulberry32(seed * 100 + user), 40, { ...opts, events: 2 }) : walk(bb.url, user, mulberry32(seed * 100 + user), 40, 2, opts)).catch(() => undefined));
      for (let i = 0; i < 4000 && seen.length < killAt; i++) await new Promise((r) => setTimeout(r, 5));
      bb.child.kill('SIGKILL');
      await Promise.all(walks);
      await bb.exited;
      assert.ok(seen.length >= killAt, `only ${seen.length} things seen before the kill`);
      const r = await runBb(['recover', out], env);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(unrecorded(JSON.parse(await readFile(out, 'utf8')) as Har, seen), []);
    });
  }
});

/**
 * What a client saw complete (random-walk.ts `seen`, with when) that the capture does not hold, per user (its x-user
 * header), in order: every exchange, and every event and socket message but those seen after its last exchange.
 */
function unrecorded(har: Har, seenAt: ReadonlyArray<[string, string, number]>): string[] {
  const seen = seenAt.map(([user, what]) => [user, what] as [string, string]);
  const streamItem = (what: string) => what.startsWith('WS ') || what.includes(' event ');
  // Per user, the stream items seen after its last exchange (a read of them may have come in the kill's turn).
  const lastRead = new Set<number>();
  for (const user of new Set(seenAt.map(([u]) => u))) {
    const mine = seenAt.flatMap((x, i) => (x[0] === user ? [i] : []));
    for (let k = mine.length - 1; k >= 0 && streamItem(seenAt[mine[k]!]![1]); k--) lastRead.add(mine[k]!);
  }
  const excused = (i: number) => lastRead.has(i);
  const missing: string[] = [];
  const userOf = (e: Har['log']['entries'][number]) => e.request.headers.find((h) => h.name.toLowerCase() === 'x-user')?.value;
  const pathOf = (e: Har['log']['entries'][number]) => new URL(e.request.url).pathname;
  for (const user of new Set(seen.map(([u]) => u))) {
    const mine = seen.filter(([u]) => u === user).map(([, what]) => what);
    const entries = har.log.entries.filter((e) => userOf(e) === user).sort((a, b) => a.startedDateTime.localeCompare(b.startedDateTime));
    // Exchanges read whole: each has an entry of its own, with that status.
    const exchanges = entries.filter((e) => !e._webSocketMessages && pathOf(e) !== '/events').map((e) => `${e.request.method} ${pathOf(e)} ${e.response.status}`);
    for (const what of mine.filter((w) => !w.startsWith('WS ') && !w.includes(' event '))) {
      const i = exchanges.indexOf(what);
      if (i < 0) missing.push(`${user}: ${what}`);
      else exchanges.splice(i, 1);
    }
    // Event streams, in the order the user read them: each holds at least the events its client read in time.
    const read: Array<{ n: number; due: number }> = [];
    seenAt.forEach(([u, what], i) => {
      if (u !== user || !what.includes(' event ')) return;
      const n = Number(what.split(' ').pop());
      if (n === 1) read.push({ n: 0, due: 0 });
      const stream = read[read.length - 1]!;
      stream.n = n;
      if (!excused(i)) stream.due = n;
    });
    const streams = entries.filter((e) => pathOf(e) === '/events');
    read.forEach(({ n, due }, k) => {
      const recorded = streams[k]?._eventSourceMessages?.length ?? 0;
      if (recorded < due) missing.push(`${user}: event stream ${k + 1} read ${n} events (${due} before its last read), ${recorded} recorded`);
    });
    // Chat echoes: each among its sockets' server messages.
    const echoes = entries.flatMap((e) => (e._webSocketMessages ?? []).filter((m) => m.type === 'receive').map((m) => m.data));
    seenAt.forEach(([u, what], k) => {
      if (u !== user || !what.startsWith('WS ')) return;
      const i = echoes.indexOf(what.slice('WS /chat '.length));
      if (i >= 0) echoes.splice(i, 1);
      else if (!excused(k)) missing.push(`${user}: ${what}`);
    });
  }
  return missing;
}
