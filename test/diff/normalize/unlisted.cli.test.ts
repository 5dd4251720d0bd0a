// Messages past those a capture lists (MESSAGES_LISTED, 100,000 a direction):
// a gRPC-Web call, an event stream and a WebSocket of real servers on
// loopback, recorded by a real proxy, carry more messages than that. The HAR
// lists the first 100,000 and counts the rest (`_bb.unlisted`); the journal
// holds a gRPC message record for the listed ones only, and none past the
// body cap; the real `bb diff` compares the unlisted ones as a count and a
// digest of their normalized forms (a WebSocket's, in no body, by a hash of
// their bytes): two recordings of one build match (their times differ), a
// changed or an added message past the listed is found.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import type { Har, HarEntry } from '../../../capture/har.js';
import { MESSAGES_LISTED } from '../../../capture/options.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir(cleanups);

/** One length-prefixed gRPC frame. */
function frame(payload: Buffer, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** A protobuf message of string fields (field number → value; wire type 2, lengths under 128). */
function proto(fields: Record<number, string>): Buffer {
  return Buffer.concat(Object.entries(fields).map(([n, v]) => {
    const bytes = Buffer.from(v);
    return Buffer.concat([Buffer.from([(Number(n) << 3) | 2, bytes.length]), bytes]);
  }));
}

/** The listed ones, empty messages: 5 bytes each. */
const LISTED_FRAMES = Buffer.concat(Array.from({ length: MESSAGES_LISTED }, () => frame(Buffer.alloc(0))));

/** A build: its unlisted messages say `word` (and the time they were sent); `extra` adds one more event to /more. */
async function build(word: string, extra: boolean): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/demo.Feed/Watch') {
        res.writeHead(200, { 'content-type': 'application/grpc-web+proto' });
        res.write(LISTED_FRAMES);
        for (let k = 0; k < 5; k++) res.write(frame(proto({ 1: k === 3 ? word : 'same', 2: new Date().toISOString() })));
        res.end(frame(Buffer.from('grpc-status: 0\r\n'), 0x80));
      } else if (req.url === '/events' || req.url === '/more') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"n":0}\n\n'.repeat(MESSAGES_LISTED));
        const past = req.url === '/more' && extra ? 4 : 3;
        for (let k = 0; k < past; k++) res.write(`id: ${k}\ndata: ${JSON.stringify({ said: req.url === '/events' && k === 1 ? word : 'same', at: new Date().toISOString() })}\n\n`);
        res.end();
      } else if (req.url === '/capped') {
        // 200,000 empty messages, past a 64 KiB body cap.
        res.writeHead(200, { 'content-type': 'application/grpc-web+proto' });
        res.write(LISTED_FRAMES);
        res.end(LISTED_FRAMES);
      } else res.end('ok');
    });
  });
  // A feed: 100,000 messages and three more, the middle one `word`; the client's messages are not answered.
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    for (let k = 0; k < MESSAGES_LISTED; k++) ws.send('x');
    for (const m of ['same', word, 'same']) ws.send(m);
    ws.close(1000, 'done');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => new Promise<void>((r) => {
    for (const c of wss.clients) c.terminate();
    server.closeAllConnections();
    server.close(() => r());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Drives one recording of a build; returns its HAR path, the HAR, and the journal's message records when the calls were done. */
async function recordBuild(name: string, target: string, bbHome?: string): Promise<{ path: string; har: Har; gm: number }> {
  const rec = await record(cleanups, target, bbHome ? { bbHome } : {});
  const base = `http://127.0.0.1:${rec.port}`;
  const call = await request(`${base}/demo.Feed/Watch`, { method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' }, body: frame(proto({ 1: 'hi' })) });
  await call.body.arrayBuffer();
  for (const path of ['/events', '/more']) await (await request(`${base}${path}`)).body.text();
  const ws = new WebSocket(`ws://127.0.0.1:${rec.port}/feed`, { perMessageDeflate: false });
  let heard = 0;
  ws.on('message', () => heard++);
  await new Promise((r) => ws.once('close', r));
  assert.equal(heard, MESSAGES_LISTED + 3);
  // What a kill -9 now would leave: the exchanges are complete, so their records are in the journal.
  const journal = await readFile(join(rec.dir, 'cap.har.journal'), 'utf8');
  const gm = journal.split('\n').filter((l) => l.includes('"r":"gm"')).length;
  const har = await rec.finish();
  const path = tmp.path(`${name}.har`);
  await writeFile(path, JSON.stringify(har));
  return { path, har, gm };
}

const byPath = (har: Har, path: string): HarEntry => har.log.entries.find((e) => new URL(e.request.url).pathname === path)!;

describe('messages past those listed', () => {
  it('lists the first 100,000 a direction, counts the rest, and records a message record for the listed only', async () => {
    const { har, gm, path } = await recordBuild('listed', await build('old', false));
    const call = byPath(har, '/demo.Feed/Watch');
    assert.equal(call._grpcMessages!.filter((m) => m.type === 'receive').length, MESSAGES_LISTED);
    assert.equal(call._grpcMessages!.filter((m) => m.type === 'send').length, 1);
    assert.deepEqual(call._bb!.unlisted, { response: 5 });
    assert.match(call.comment!, /receive: 5 messages past the first 100000 are not listed/);
    assert.equal(call._bb!.grpc!.status, 0, 'the trailer frame past them is read');
    assert.ok(call._grpcMessages!.every((m) => typeof m._bb?.seq === 'number'), 'each listed message has its seq');
    // One send and 100,000 listed receives: no record for a message the HAR does not list.
    assert.equal(gm, 1 + MESSAGES_LISTED);
    const events = byPath(har, '/events');
    assert.equal(events._eventSourceMessages!.length, MESSAGES_LISTED);
    assert.deepEqual(events._bb!.unlisted, { response: 3 });
    assert.match(events.comment!, /3 events past the first 100000 are not listed/);
    const feed = byPath(har, '/feed');
    assert.equal(feed._webSocketMessages!.filter((m) => m.type === 'receive').length, MESSAGES_LISTED);
    // The three past the list, and the server's close frame.
    assert.deepEqual(feed._bb!.unlisted, { response: 4 });
    assert.match(feed._bb!.unlistedHash!.response!, /^hmac-sha256:[0-9a-f]{8}:[0-9a-f]{64}$/);
    assert.match(feed.comment!, /4 messages the server sent past the first 100000 are not listed: their count and a hash are kept/);
    // bb frames says so under each stream, and bb show counts them.
    const frames = await runBb(['frames', path]);
    assert.equal(frames.code, 0, frames.stderr);
    assert.deepEqual(frames.stdout.split('\n').filter((l) => l.includes('not listed')), [
      '(and 5 more not listed: the recorded body holds them)',
      '(and 3 more not listed: the recorded body holds them)',
      '(and 3 more not listed: the recorded body holds them)',
      '(and 4 more not listed: only their count and a hash were kept)',
    ]);
    const show = await runBb(['show', path]);
    assert.match(show.stdout, new RegExp(`${MESSAGES_LISTED + 1 + 5}\\s+http\\S+/demo\\.Feed/Watch`));
  });

  it('records no message past the body cap in the journal', async () => {
    const rec = await record(cleanups, await build('old', false), { bodyCap: 64 * 1024 });
    const call = await request(`http://127.0.0.1:${rec.port}/capped`, { method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' }, body: frame(Buffer.alloc(0)) });
    assert.equal((await call.body.arrayBuffer()).byteLength, 2 * LISTED_FRAMES.length);
    const journal = await readFile(join(rec.dir, 'cap.har.journal'), 'utf8');
    const whole = Math.floor((64 * 1024) / 5);
    // Before: a record for each of the 200,000 that crossed.
    assert.equal(journal.split('\n').filter((l) => l.includes('"r":"gm"')).length, 1 + whole);
    const har = await rec.finish();
    assert.equal(har.log.entries[0]!._grpcMessages!.filter((m) => m.type === 'receive' && m._bb?.truncated === undefined).length, whole);
  });

  it('bb diff: two recordings of one build match; a change or one more message past the listed is found', async () => {
    const old = await build('old', false);
    // One bb home: WebSocket hashes past the list are keyed by its redaction key, as the user's captures are.
    const home = tmp.path('home');
    const a = await recordBuild('a', old, home);
    const b = await recordBuild('b', old, home);
    const c = await recordBuild('c', await build('new', true), home);
    const same = await runBb(['diff', a.path, b.path]);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    assert.match(same.stdout, /MATCH/);
    const json = tmp.path('diff.json');
    const changed = await runBb(['diff', a.path, c.path, '--json', json]);
    assert.equal(changed.code, 1, changed.stdout + changed.stderr);
    const report = JSON.parse(await readFile(json, 'utf8')) as { differences?: Array<{ route: string; path: string; old?: unknown; new?: unknown; class: string }>; findings?: unknown };
    const rows = (report.differences ?? []).filter((d) => d.class === 'real').map((d) => `${d.route} ${d.path} ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`).sort();
    assert.deepEqual(rows, [
      'GET /events response.unlisted.digest "the messages past those listed" → "other messages past those listed (compared by a digest of their normalized forms)"',
      'GET /feed ws.unlisted.receive.digest "the messages past those listed" → "other messages past those listed (compared by hash)"',
      'GET /more response.unlisted.count 3 → 4',
      'POST /demo.Feed/Watch grpc.unlisted.receive.digest "the messages past those listed" → "other messages past those listed (compared by a digest of their normalized forms)"',
    ]);
  });
});
